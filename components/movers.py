"""Other movers on the cluster, as Overview and Live say them: reassignments in flight that this
console did not start, and (Overview) the balancers the cluster shows signs of."""

from __future__ import annotations

import streamlit as st

from components import deps
from console.access.settings import ConnectionSettings
from console.core.model import ClusterState, cluster_key
from console.moves.balancers import Certainty, recognise
from console.moves.others import OtherMove, moves_text, other_moves, since_text


def others_in_flight(settings: ConnectionSettings, state: ClusterState) -> list[OtherMove]:
    """Reassignments in flight in ``state`` that no active run of this console moves, with since
    when this console has seen each."""
    ours = deps.store().runs.active_partitions(cluster_key(state, settings.name))
    return other_moves(state, ours, deps.first_seen(settings))


def other_moves_notice(settings: ConnectionSettings, state: ClusterState) -> list[OtherMove]:
    """A warning naming the other movers' reassignments (nothing when there are none)."""
    others = others_in_flight(settings, state)
    if others:
        st.warning(
            f"**Another mover is reassigning on this cluster.** {moves_text(others)} {since_text(others)} "
            "They compete with the console's runs for the same brokers, bandwidth and throttles: a submit is "
            "refused while they are in flight unless confirmed (audited).",
            icon=":material/swap_horiz:",
        )
    return others


def balancers_notice(settings: ConnectionSettings, state: ClusterState) -> None:
    """The balancers the cluster shows signs of (certain ones, guesses said as guesses)."""
    configs = deps.balancer_configs(settings, state)
    signs = recognise(state.topics, configs)
    if not signs:
        st.caption(
            "No sign of a known balancer (Cruise Control, Confluent's self-balancing) in the cluster's topics"
            + (" or broker configs." if configs is not None else "; broker configs not read.")
        )
        return
    for sign in signs:
        (st.info if sign.certainty is Certainty.CERTAIN else st.caption)(f"Balancer: {sign.text}")
