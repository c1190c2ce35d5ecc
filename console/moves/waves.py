"""Waves: a reviewed plan cut into bounded pieces (pure).

Waves bound how much moves at once: adding replicas per broker (default
:data:`console.core.limits.MOVES_PER_BROKER`), partitions per request (default
:data:`console.core.limits.PARTITIONS_PER_WAVE`, never more than :data:`console.core.limits.REQUEST_LIMIT`) and,
optionally, bytes per wave (bytes copied over the network and between the log dirs of a broker
alike: both take the wave's time). Entries are placed first-fit, in plan order, so a wave is as full
as the limits allow. Entries that change nothing are not sent.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from console.core.limits import MOVES_PER_BROKER, PARTITIONS_PER_WAVE, REQUEST_LIMIT
from console.core.model import ClusterState
from console.moves.progress import estimate_seconds
from console.plans.columns import partitions_for
from console.plans.diff import ChangeKind, change_of
from console.plans.plan import Plan, PlanEntry


@dataclass(frozen=True)
class WaveLimits:
    moves_per_broker: int = MOVES_PER_BROKER
    partitions: int = PARTITIONS_PER_WAVE
    bytes: int | None = None


def plan_waves(state: ClusterState, plan: Plan, limits: WaveLimits = WaveLimits()) -> list[tuple[PlanEntry, ...]]:
    """The plan's entries that change something, in waves within ``limits`` (first fit)."""
    moving = []
    for e, p in zip(plan.entries, partitions_for(state, plan.entries), strict=True):
        c = change_of(p, e)
        if c.kind not in (ChangeKind.NONE, ChangeKind.UNKNOWN):
            moving.append((e, c.adding, c.bytes_to_copy + c.dir_bytes_to_copy if c.dir_copies else c.bytes_to_copy))
    waves: list[list[PlanEntry]] = []
    for (e, _, _), w in zip(moving, first_fit([(adding, copy) for _, adding, copy in moving], limits), strict=False):
        if w == len(waves):
            waves.append([])
        waves[w].append(e)
    return [tuple(w) for w in waves]


def first_fit(moves: Iterable[tuple[Sequence[int], int]], limits: WaveLimits = WaveLimits()) -> list[int]:
    """The wave of each move (its adding brokers, its bytes to copy), in order: the first wave with
    room for it within ``limits``, else a new one. Waves are numbered from 0 in order of creation."""
    starts = [0]
    flat: list[int] = []
    copies: list[int] = []
    for adding, copy in moves:
        flat.extend(adding)
        starts.append(len(flat))
        copies.append(copy)
    return first_fit_flat(starts, flat, copies, limits)


def first_fit_flat(
    starts: Sequence[int], flat: Sequence[int], copies: Sequence[int], limits: WaveLimits = WaveLimits()
) -> list[int]:
    """:func:`first_fit` of moves given column-wise (as a job collects them): move ``i`` adds the
    brokers ``flat[starts[i]:starts[i + 1]]`` and copies ``copies[i]`` bytes.

    The same waves as trying every wave in order, faster: waves before ``open_from`` hold a whole
    request's partitions, and waves before ``room[b]`` have broker ``b``'s moves already, so
    nothing more of it fits there (loads only grow); the search starts past both."""
    per_request = max(1, min(limits.partitions, REQUEST_LIMIT))
    most = limits.moves_per_broker
    cap = limits.bytes
    count: list[int] = []
    size: list[int] = []
    load: list[dict[int, int]] = []
    room: dict[int, int] = {}
    out = [0] * len(copies)
    waves = 0
    open_from = 0
    for i, copy in enumerate(copies):
        lo = starts[i]
        hi = starts[i + 1]
        while open_from < waves and count[open_from] >= per_request:
            open_from += 1
        w = open_from
        if hi - lo == 1:  # the usual move: one broker added
            b = flat[lo]
            r = room.get(b, 0)
            if r > w:
                w = r
            while w < waves:
                n = count[w]
                if n < per_request and load[w].get(b, 0) < most and (cap is None or not n or size[w] + copy <= cap):
                    break
                w += 1
            adding: Sequence[int] = (b,)
        else:
            adding = flat[lo:hi]
            for b in adding:
                r = room.get(b, 0)
                if r > w:
                    w = r
            while w < waves:
                n = count[w]
                if n < per_request and (cap is None or not n or size[w] + copy <= cap):
                    lw = load[w]
                    if all(lw.get(b, 0) < most for b in adding):
                        break
                w += 1
        if w == waves:
            count.append(0)
            size.append(0)
            load.append({})
            waves += 1
        count[w] += 1
        size[w] += copy
        lw = load[w]
        for b in adding:
            n = lw.get(b, 0) + 1
            lw[b] = n
            if n >= most and room.get(b, 0) == w:  # full for b: its first wave with room is further on
                r = w + 1
                while r < waves and load[r].get(b, 0) >= most:
                    r += 1
                room[b] = r
        out[i] = w
    return out


def plan_estimate(
    state: ClusterState, plan: Plan, throttle: int | None, limits: WaveLimits = WaveLimits()
) -> float | None:
    """Seconds a run of ``plan`` would take at ``throttle`` within ``limits`` (the submit dialog's
    estimate), its copies between log dirs at ``throttle`` too (the run sets it as the log-dir
    throttle); None when unthrottled or sizes are unknown."""
    return estimate_seconds(state, plan_waves(state, plan, limits), throttle)


def tiered_copied(state: ClusterState, plan: Plan) -> list[str]:
    """The tiered topics (``remote.storage.enable=true``) among those of a generated ``plan`` (each of
    its entries moves a replica, between brokers or log dirs): their copies count the local log only."""
    tiered = state.tiered
    return [t for t in plan.topics if t in tiered] if tiered else []
