"""Another mover on the cluster: a submit is refused while reassignments this console did not start
are in flight (they compete for the same brokers, bandwidth and throttles), unless the operator
overrides it; the override is recorded with the run's audit entry."""

from __future__ import annotations

from collections.abc import Mapping

from console.access.auth import Identity
from console.core.model import ClusterState
from console.moves.others import OtherMove, moves_text, other_moves, since_text
from console.services.guard import refuse
from console.storage.store import Store

AUDITED_AT_MOST = 100
"""Partitions named in an audit entry; the rest are counted."""


def others_in_flight(store: Store, key: str, state: ClusterState) -> list[OtherMove]:
    """Reassignments in flight in ``state`` that no active run of this console moves."""
    return other_moves(state, store.runs.active_partitions(key))


def check_other_moves(
    store: Store, who: Identity, key: str, state: ClusterState, allow: bool, asked: Mapping[str, object]
) -> dict[str, object]:
    """Refuse the submit (audited; :class:`console.core.errors.NotPermitted` naming the partitions)
    while other reassignments are in flight, unless ``allow``; then what the run's audit entry
    records of the override (empty when nothing else moves)."""
    others = others_in_flight(store, key, state)
    if not others:
        return {}
    named = {
        "other_moves": len(others),
        "other_partitions": [m.name for m in others[:AUDITED_AT_MOST]],
    }
    if not allow:
        refuse(
            store,
            who,
            "submit",
            key,
            f"Another mover is reassigning on this cluster: {moves_text(others)} {since_text(others)} "
            "Two movers compete for the same brokers, bandwidth and throttles.",
            "Wait until they finish (Live shows them), cancel them, or submit anyway "
            "(submit --allow-other-moves; in the submit dialog: “Submit while other reassignments are in flight”), which is audited.",
            {**asked, **named},
        )
    return {"allow_other_moves": True, **named}
