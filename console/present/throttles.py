"""Overview's view of the replication throttles set now: one table saying of each whether anything
needs it, and what a sweep removed, in words (pure)."""

from __future__ import annotations

from collections.abc import Sequence

from console.core.limits import TOPIC_THROTTLE_KEYS
from console.core.model import ClusterState
from console.moves.throttles import Leftover, LeftoverKind
from console.present.live import throttle_rows, throttle_value_text


def setting_text(key: str, value: str) -> str:
    """A throttle setting's value as Overview lists it: rates human (``9.5 MB/s``); a replica list
    (``0:1,0:2``) with a space after each comma (``0:1, 0:2``), so a long one wraps on the page
    (Kafka reads the list the same with the spaces)."""
    if key in TOPIC_THROTTLE_KEYS:
        return ", ".join(item.strip() for item in value.split(","))
    return throttle_value_text(key, value)


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
            "value": setting_text(row["config"], row["value"]),
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
    return "  \n".join(f"{lo.where}: {lo.key} ({setting_text(lo.key, lo.value)})" for lo in removed)
