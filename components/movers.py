"""Other movers on the cluster, as Overview and Live say them: reassignments in flight that this
console did not start, and (Overview) the balancers the cluster shows signs of."""

from __future__ import annotations

import streamlit as st

from components import deps
from console.access.settings import ConnectionSettings
from console.core.format import plural
from console.core.model import ClusterState, cluster_key
from console.moves.balancers import Certainty, recognise
from console.moves.others import OtherMove, detail_rows, headline, other_moves, since_text

DETAIL_ROWS = 500
"""The other movers' partitions listed in the notice's detail; the rest are counted."""


def others_in_flight(settings: ConnectionSettings, state: ClusterState) -> list[OtherMove]:
    """Reassignments in flight in ``state`` that no active run of this console moves, with since
    when this console has seen each."""
    ours = deps.store().runs.active_partitions(cluster_key(state, settings.name))
    return other_moves(state, ours, deps.first_seen(settings))


OTHERS_ANCHOR = "other-movers"
"""The anchor of the other movers' detail when it is drawn apart from the notice (Live: at the end)."""


def other_moves_notice(
    settings: ConnectionSettings, state: ClusterState, detail_apart: bool = False
) -> list[OtherMove]:
    """A warning of one line summarising the other movers' reassignments (nothing when there are
    none), their partitions in an expander below it, or with ``detail_apart`` behind a link to
    :func:`other_moves_detail`, drawn elsewhere on the page."""
    others = others_in_flight(settings, state)
    if others:
        link = f" [Which partitions](#{OTHERS_ANCHOR})" if detail_apart else ""
        st.warning(f"**Another mover is reassigning**: {headline(others)}.{link}", icon=":material/swap_horiz:")
        if not detail_apart:
            with st.expander(f"Another mover's {plural(len(others), 'partition')}"):
                _detail(others)
    return others


def other_moves_detail(others: list[OtherMove]) -> None:
    """The other movers' partitions under a heading the notice links to (nothing when there are none)."""
    if others:
        st.subheader(f"Another mover's {plural(len(others), 'partition')}", anchor=OTHERS_ANCHOR)
        _detail(others)


def _detail(others: list[OtherMove]) -> None:
    st.caption(
        f"{since_text(others)} They compete with the console's runs for the same brokers, bandwidth and "
        "throttles: a submit is refused while they are in flight unless confirmed (audited)."
    )
    st.dataframe(detail_rows(others[:DETAIL_ROWS]), hide_index=True, width="stretch")
    if len(others) > DETAIL_ROWS:
        st.caption(f"The first {DETAIL_ROWS:,} of {len(others):,}; `python -m console list` lists them all.")


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
