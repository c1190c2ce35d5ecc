"""Waves: a reviewed plan cut into bounded pieces (pure).

Waves bound how much moves at once: adding replicas per broker (default 5), partitions per
request (default 500, never more than :data:`console.core.limits.REQUEST_LIMIT`) and,
optionally, bytes per wave. Entries are placed first-fit, in plan order, so a wave is as full
as the limits allow. Entries that change nothing are not sent.
"""

from __future__ import annotations

from dataclasses import dataclass

from console.core.limits import REQUEST_LIMIT
from console.core.model import BrokerId, ClusterState
from console.plans.diff import ChangeKind, change_of
from console.plans.plan import Plan, PlanEntry
from console.runs.progress import estimate_seconds


@dataclass(frozen=True)
class WaveLimits:
    moves_per_broker: int = 5
    partitions: int = 500
    bytes: int | None = None


def plan_waves(state: ClusterState, plan: Plan, limits: WaveLimits = WaveLimits()) -> list[tuple[PlanEntry, ...]]:
    """The plan's entries that change something, in waves within ``limits`` (first fit)."""
    per_request = max(1, min(limits.partitions, REQUEST_LIMIT))
    waves: list[list[PlanEntry]] = []
    load: list[dict[BrokerId, int]] = []
    size: list[int] = []
    index = state.partition_index
    for e in plan.entries:
        c = change_of(index.get(e.key), e)
        if c.kind in (ChangeKind.NONE, ChangeKind.UNKNOWN):
            continue
        copy = c.bytes_to_copy
        for w, entries in enumerate(waves):
            if (len(entries) < per_request
                    and all(load[w].get(b, 0) < limits.moves_per_broker for b in c.adding)
                    and (limits.bytes is None or not entries or size[w] + copy <= limits.bytes)):
                break
        else:
            waves.append([])
            load.append({})
            size.append(0)
            w = len(waves) - 1
        waves[w].append(e)
        size[w] += copy
        for b in c.adding:
            load[w][b] = load[w].get(b, 0) + 1
    return [tuple(w) for w in waves]




def plan_estimate(state: ClusterState, plan: Plan, throttle: int | None, limits: WaveLimits = WaveLimits()) -> float | None:
    """Seconds a run of ``plan`` would take at ``throttle`` within ``limits`` (the submit dialog's
    estimate); None when unthrottled or sizes are unknown."""
    return estimate_seconds(state, plan_waves(state, plan, limits), throttle)
