"""Overview's view of the replication throttles set now: one table saying of each whether anything
needs it, and what a sweep removed, in words (pure)."""

from __future__ import annotations

from collections.abc import Sequence

from console.core.model import ClusterState
from console.moves.throttles import Leftover, LeftoverKind
from console.present.live import throttle_rows, throttle_value_text


def throttle_table(state: ClusterState, left: Sequence[Leftover], kept: Sequence[Leftover]) -> list[dict[str, str]]:
    """Overview's one table of the throttle configs set now (:func:`console.present.live.throttle_rows`),
    each with whether anything needs it: ``left over`` (nothing in flight needs it: the sweep
    removes it), ``cluster default, kept`` (set on purpose for every broker), or ``in use``."""

    def named(lo: Leftover) -> tuple[str, str]:
        where = "cluster default (every broker)" if lo.kind is LeftoverKind.CLUSTER_DEFAULT else lo.where
        return where, lo.key

    leftover, default = {named(lo) for lo in left}, {named(lo) for lo in kept}
    return [
        {
            **row,
            "needed": "left over: nothing in flight needs it"
            if (row["entity"], row["config"]) in leftover
            else "cluster default, kept"
            if (row["entity"], row["config"]) in default
            else "in use",
        }
        for row in throttle_rows(state)
    ]


def removed_text(removed: Sequence[Leftover]) -> str:
    """What a sweep removed, one setting a line: ``broker 2: follower.replication.throttled.rate (5.0 MB/s)``."""
    return "  \n".join(f"{lo.where}: {lo.key} ({throttle_value_text(lo.key, lo.value)})" for lo in removed)
