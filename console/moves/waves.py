"""Waves: a reviewed plan cut into bounded pieces (pure).

Waves bound how much moves at once: adding replicas per broker (default
:data:`console.core.limits.MOVES_PER_BROKER`), partitions per request (default
:data:`console.core.limits.PARTITIONS_PER_WAVE`, never more than :data:`console.core.limits.REQUEST_LIMIT`) and,
optionally, bytes per wave. Entries are placed first-fit, in plan order, so a wave is as full
as the limits allow. Entries that change nothing are not sent.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from console.core.limits import MOVES_PER_BROKER, PARTITIONS_PER_WAVE, REQUEST_LIMIT
from console.core.model import ClusterState
from console.moves.progress import estimate_seconds
from console.plans.diff import ChangeKind, change_of
from console.plans.plan import Plan, PlanEntry


@dataclass(frozen=True)
class WaveLimits:
    moves_per_broker: int = MOVES_PER_BROKER
    partitions: int = PARTITIONS_PER_WAVE
    bytes: int | None = None


def plan_waves(state: ClusterState, plan: Plan, limits: WaveLimits = WaveLimits()) -> list[tuple[PlanEntry, ...]]:
    """The plan's entries that change something, in waves within ``limits`` (first fit)."""
    index = state.partition_index
    moving = []
    for e in plan.entries:
        c = change_of(index.get(e.key), e)
        if c.kind not in (ChangeKind.NONE, ChangeKind.UNKNOWN):
            moving.append((e, c.adding, c.bytes_to_copy))
    waves: list[list[PlanEntry]] = []
    for (e, _, _), w in zip(moving, first_fit([(adding, copy) for _, adding, copy in moving], limits), strict=False):
        if w == len(waves):
            waves.append([])
        waves[w].append(e)
    return [tuple(w) for w in waves]


def first_fit(moves: Iterable[tuple[Sequence[int], int]], limits: WaveLimits = WaveLimits()) -> list[int]:
    """The wave of each move (its adding brokers, its bytes to copy), in order: the first wave with
    room for it within ``limits``, else a new one. Waves are numbered from 0 in order of creation."""
    per_request = max(1, min(limits.partitions, REQUEST_LIMIT))
    count: list[int] = []
    load: list[dict[int, int]] = []
    size: list[int] = []
    out = []
    open_from = 0  # waves before it hold a whole request's partitions: nothing more fits there
    for adding, copy in moves:
        while open_from < len(count) and count[open_from] >= per_request:
            open_from += 1
        for w in range(open_from, len(count)):
            if (
                count[w] < per_request
                and all(load[w].get(b, 0) < limits.moves_per_broker for b in adding)
                and (limits.bytes is None or not count[w] or size[w] + copy <= limits.bytes)
            ):
                break
        else:
            count.append(0)
            load.append({})
            size.append(0)
            w = len(count) - 1
        count[w] += 1
        size[w] += copy
        for b in adding:
            load[w][b] = load[w].get(b, 0) + 1
        out.append(w)
    return out


def plan_estimate(
    state: ClusterState, plan: Plan, throttle: int | None, limits: WaveLimits = WaveLimits()
) -> float | None:
    """Seconds a run of ``plan`` would take at ``throttle`` within ``limits`` (the submit dialog's
    estimate); None when unthrottled or sizes are unknown."""
    return estimate_seconds(state, plan_waves(state, plan, limits), throttle)
