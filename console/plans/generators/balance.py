"""Balance by moving replicas (add brokers, rebalance by count or bytes): the loop that moves one
replica at a time from the most loaded source to the least loaded destination until even
(:func:`balance`), the balance goals' lower bound (:func:`balance_bound`), and preferred leaders
evened out by reordering replicas (:func:`even_leaders`). Which replica moves is
:mod:`~console.plans.generators.candidates`."""

from __future__ import annotations

import heapq
import math
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np

from console.core.model import Severity
from console.plans.generators.candidates import (
    ALLOWS,
    Candidates,
    candidates_of,
    pick,
    pick_passing_over,
    pick_zoned,
)
from console.plans.generators.context import Context
from console.plans.generators.options import Goal, Metric
from console.plans.generators.zones import Zones
from console.plans.layout import Layout
from console.plans.quality import excess_bound

_DESTINATIONS = 16
"""Destinations a balance step tries before it gives up on its source broker."""


def balance(ctx: Context, metric: Metric, sources: list[int], dests: list[int]) -> bool:
    """Move replicas from the most loaded of ``sources`` to the least loaded of ``dests`` until even
    (or the budget is spent, or nothing can move); whether the goal's balance was reached.

    The loop runs once per move (up to hundreds of thousands at 1M partitions), so it works on
    plain lists: the loads are mirrored as Python ints (and floats, the heaps' keys), each row's
    racks are bit masks built once with numpy, and the moves are applied to the layout at the end."""
    lay = ctx.lay
    run = _Run.start(ctx, metric, sources, dests)
    budget_hit = _move_until_even(run)
    lay.move_many(run.moved_rows, run.moved_from, run.moved_to)
    active = [i for i in sources if i not in run.inactive]
    final = lay.count if run.even.by_count else lay.bytes
    hi, lo = final[np.array(sources, np.int64)].max(), final[np.array(dests, np.int64)].min()
    reached = bool(run.even.holds(hi, lo))
    if not reached:
        _not_reached(ctx, run.even.by_count, budget_hit or (run.max_bytes >= 0 and bool(active)))
    return reached


@dataclass(frozen=True, slots=True)
class _Even:
    """When a balance is even: by count, within one replica (or every broker at the mean rounded
    up or down); by bytes, within the tolerance of the mean (or the source no heavier)."""

    by_count: bool
    mean_b: float
    top_c: int
    floor_c: int
    high_b: float
    low_b: float

    @staticmethod
    def of(lay: Layout, metric: Metric, pool: list[int], tolerance: float) -> _Even:
        """The targets over the brokers of ``pool`` (their means at the start)."""
        mean_c = float(lay.count[pool].sum()) / len(pool)
        mean_b = float(lay.bytes[pool].sum()) / len(pool)
        high_b, low_b = mean_b * (1 + tolerance), mean_b * (1 - tolerance)
        return _Even(metric is Metric.COUNT, mean_b, math.ceil(mean_c), math.floor(mean_c), high_b, low_b)

    def holds(self, hi: float, lo: float) -> bool:
        """Whether a source at ``hi`` and a destination at ``lo`` are even (in the metric's unit)."""
        if self.by_count:
            return hi - lo <= 1 or (hi <= self.top_c and lo >= self.floor_c)
        return (hi <= self.high_b and lo >= self.low_b) or hi <= lo


@dataclass(slots=True)
class _Run:
    """One balance run's working state, as plain lists (see :func:`balance`): the loads mirrored,
    the heaps of brokers, each source's candidates, the moves chosen so far."""

    even: _Even
    cands: list[Candidates | None]
    bit: list[int]
    """Each position's rack as one bit (as :func:`rack_masks` numbers racks)."""
    check_racks: bool
    tie: list[float]
    ids: list[int]
    position: dict[int, int]
    reps: list[list[int]]
    row_size: list[int]
    count: list[int]
    size_b: list[int]
    load: list[int]
    """``count`` or ``size_b``: what the metric evens out."""
    key: list[float]
    """``float(load[i])``: the heaps' keys, and how a heap entry is known to be current."""
    over: list[tuple[float, float, int]]
    under: list[tuple[float, float, int]]
    """Heaps of (load, tie-break, position) of the sources (negated: the most loaded first) and the
    destinations, updated lazily: an entry whose load is no longer the broker's is skipped (a move
    changes two loads; the loop never scans all brokers)."""
    is_src: set[int]
    is_dst: set[int]
    max_moves: int
    max_bytes: int
    """The budget (-1: none)."""
    zones: Zones | None = None
    """The least cross-zone bytes preference, when asked."""
    mean_size: float = 1.0
    """The mean replica size over the brokers balanced (the weight's bytes in replicas, by count)."""
    inactive: set[int] = field(default_factory=set)
    """Sources none of whose replicas can move to any destination tried."""
    moved_rows: list[int] = field(default_factory=list)
    moved_from: list[int] = field(default_factory=list)
    moved_to: list[int] = field(default_factory=list)

    @staticmethod
    def start(ctx: Context, metric: Metric, sources: list[int], dests: list[int]) -> _Run:
        lay, opts = ctx.lay, ctx.options
        pool = sorted(set(sources) | set(dests))
        even = _Even.of(lay, metric, pool, opts.tolerance)
        tie = ctx.tiebreak.tolist()
        count, size_b = lay.count.tolist(), lay.bytes.tolist()
        load = count if even.by_count else size_b
        key = [float(x) for x in load]
        over = [(-key[i], -tie[i], i) for i in sources]
        under = [(key[i], tie[i], i) for i in dests]
        heapq.heapify(over)
        heapq.heapify(under)
        return _Run(
            even,
            candidates_of(ctx, sources),
            [1 << (k + 1) for k in lay.rack],
            ctx.rack_aware,
            tie,
            lay.ids,
            lay.position,
            lay.reps,
            lay.size,
            count,
            size_b,
            load,
            key,
            over,
            under,
            set(sources),
            set(dests),
            opts.max_moves if opts.max_moves is not None else -1,
            opts.max_bytes if opts.max_bytes is not None else -1,
            ctx.zones,
            max(float(lay.bytes[pool].sum()), 1.0) / max(float(lay.count[pool].sum()), 1.0),
        )


def _move_until_even(run: _Run) -> bool:
    """Move one replica at a time, from the most loaded source still active to the least loaded
    destination that can take one of its replicas (:func:`_pick_destination`), until the two are
    even, the budget is spent or no source can move anything; whether the budget stopped it short
    of even. Each move updates the mirrored loads and the heaps, and the moved partition leaves
    every source's candidates (it moves once)."""
    over, under, key, load, tie, inactive = run.over, run.under, run.key, run.load, run.tie, run.inactive
    count, size_b, cands, position, reps, ids = run.count, run.size_b, run.cands, run.position, run.reps, run.ids
    is_src, is_dst, row_size = run.is_src, run.is_dst, run.row_size
    moved_rows, moved_from, moved_to = run.moved_rows, run.moved_from, run.moved_to
    heappop, heappush = heapq.heappop, heapq.heappush
    moves = spent = 0
    while True:
        s = -1
        while over:  # the most loaded source still active
            value, _, i = over[0]
            if i in inactive or -value != key[i]:
                heappop(over)
                continue
            s = i
            break
        if s < 0:
            return False
        row, d, kept, finished, budget_hit = (_pick_destination if run.zones is None else _pick_destination_zoned)(
            run, s, moves, spent
        )
        if finished:
            return budget_hit
        if not kept:
            return False
        if row < 0:
            for entry in kept:
                heappush(under, entry)
            inactive.add(s)
            continue
        size = row_size[row]
        sb = ids[s]
        left = True  # pick took it out of the source's candidates (once: a broker twice in a row is there twice)
        for b in reps[row]:  # the partition moves once: it leaves every source's candidates
            if b == sb and left:
                left = False
            elif (other := cands[position[b]]) is not None:
                other.forget(row, size)
        moved_rows.append(row)
        moved_from.append(sb)
        moved_to.append(ids[d])
        count[s] -= 1
        count[d] += 1
        size_b[s] -= size
        size_b[d] += size
        for i in (s, d):
            key[i] = float(load[i])
            if i in is_src:
                heappush(over, (-key[i], -tie[i], i))
            if i in is_dst:
                heappush(under, (key[i], tie[i], i))
        for entry in kept:  # back in the heap unless the move made it stale (s's and d's were pushed afresh)
            if entry[0] == key[entry[2]]:
                heappush(under, entry)
        moves += 1
        spent += size


def _pick_destination(
    run: _Run, s: int, moves: int, spent: int
) -> tuple[int, int, list[tuple[float, float, int]], bool, bool]:
    """For source ``s`` (``moves`` made and ``spent`` bytes so far): the least loaded destination
    (of the first :data:`_DESTINATIONS` tried) that can take one of its replicas, and that replica,
    taken out of ``s``'s candidates (-1: none); the destinations looked at (least loaded first, out
    of the heap: the caller puts them back); whether the balance is finished (the least loaded is
    even with ``s``, or the budget of moves is spent) and whether the budget stopped it short of even.

    The replica's ideal size: by count, the average size the destination still needs to reach the
    mean bytes; by bytes, the smaller of the source's excess and the destination's shortfall (half
    the gap when one is past the mean)."""
    under, key, load, even = run.under, run.key, run.load, run.even
    bit, cands, reps, ids, check_racks = run.bit, run.cands, run.reps, run.ids, run.check_racks
    max_moves, max_bytes, heappop = run.max_moves, run.max_bytes, heapq.heappop
    min_gap = 1 if even.by_count else 0
    passing = even.by_count and max_bytes < 0  # every candidate counts toward the window (see pick)
    picked = d = -1
    kept: list[tuple[float, float, int]] = []
    seen: set[int] = set()
    tried = 0
    while under and tried < _DESTINATIONS:
        entry = heappop(under)
        d = entry[2]
        if entry[0] != key[d] or d in seen:
            continue  # stale, or seen already
        kept.append(entry)
        seen.add(d)
        if d == s:
            continue
        if not tried and (even.holds(key[s], key[d]) or moves == max_moves):
            return picked, d, kept, True, moves == max_moves and not even.holds(key[s], key[d])
        gap = load[s] - load[d]
        if gap <= min_gap:
            break
        tried += 1
        ideal, limit = _ideal(run, s, d)
        room = -1 if max_bytes < 0 else max_bytes - spent
        rs, rd = bit[s], bit[d]
        rack = rd if check_racks and rs != rd else 0
        c = cands[s]
        assert c is not None  # a source: it has candidates
        if passing and rack and c.narrow and (allows := ALLOWS.get(rack)) is not None:
            picked = pick_passing_over(c, reps, ids[s], ids[d], allows, ideal)  # what pick would call
        else:
            picked = pick(c, reps, ids[s], ids[d], rack, ideal, limit, room)
        if picked >= 0:
            break
    return picked, d, kept, False, False


def _ideal(run: _Run, s: int, d: int) -> tuple[float, int]:
    """The size a replica moving from ``s`` to ``d`` ideally has, and the limit it must stay under
    (-1: none): by count, the average size ``d`` still needs to reach the mean bytes; by bytes, the
    smaller of the source's excess and the destination's shortfall (half the gap when one is past
    the mean), under the gap."""
    even, load = run.even, run.load
    if even.by_count:
        need = max(1, even.top_c - run.count[d])
        return max(0.0, (even.mean_b - float(run.size_b[d])) / need), -1
    gap = load[s] - load[d]
    above, below = run.key[s] - even.mean_b, even.mean_b - run.key[d]
    return (min(above, below) if above > 0 and below > 0 else gap / 2), gap


def _pick_destination_zoned(
    run: _Run, s: int, moves: int, spent: int
) -> tuple[int, int, list[tuple[float, float, int]], bool, bool]:
    """:func:`_pick_destination` with the least cross-zone bytes preference
    (:mod:`~console.plans.generators.zones`): the destinations it would try, ordered by their load
    plus the weight's penalty when outside ``s``'s zone (those as loaded, in ``s``'s zone first),
    each offered the window's candidate copying in its zone first (:func:`pick_zoned`)."""
    under, key, load, even, zones = run.under, run.key, run.load, run.even, run.zones
    assert zones is not None  # only called with the preference
    min_gap = 1 if even.by_count else 0
    kept: list[tuple[float, float, int]] = []
    seen: set[int] = set()
    tried: list[int] = []
    d = -1
    while under and len(tried) < _DESTINATIONS:
        entry = heapq.heappop(under)
        d = entry[2]
        if entry[0] != key[d] or d in seen:
            continue
        kept.append(entry)
        seen.add(d)
        if d == s:
            continue
        if not tried and (even.holds(key[s], key[d]) or moves == run.max_moves):
            return -1, d, kept, True, moves == run.max_moves and not even.holds(key[s], key[d])
        if load[s] - load[d] <= min_gap:
            break
        tried.append(d)
    if not tried:
        return -1, d, kept, False, False
    penalty = zones.weight * _ideal(run, s, tried[0])[0] / (run.mean_size if even.by_count else 1.0)
    order = sorted(tried, key=lambda x: (load[x] + penalty * zones.crosses(s, x), zones.crosses(s, x), run.tie[x]))
    c = run.cands[s]
    assert c is not None  # a source: it has candidates
    room = -1 if run.max_bytes < 0 else run.max_bytes - spent
    for d in order:
        ideal, limit = _ideal(run, s, d)
        rs, rd = run.bit[s], run.bit[d]
        rack = rd if run.check_racks and rs != rd else 0
        row = pick_zoned(c, run.reps, run.ids[s], run.ids[d], rack, (ideal, limit, room), zones, d)
        if row >= 0:
            return row, d, kept, False, False
    return -1, d, kept, False, False


def _not_reached(ctx: Context, by_count: bool, budget_spent: bool) -> None:
    """Say why the balance goal was not reached: the budget spent, or no move left within the rules."""
    opts = ctx.options
    what = "replicas" if by_count else "bytes"
    why = (
        (
            "the budget ("
            + ", ".join(
                x
                for x in (
                    f"{opts.max_moves} moves" if opts.max_moves is not None else "",
                    f"{opts.max_bytes:,} bytes" if opts.max_bytes is not None else "",
                )
                if x
            )
            + ") is spent"
        )
        if budget_spent
        else "no further move is possible within the rules (racks, partitions that may move, one move per partition)"
    )
    ctx.note(
        "balance-not-reached",
        Severity.INFO,
        f"The brokers are not fully even by {what}: {why}.",
        "Raise the budget, or include more topics or brokers.",
    )


def balance_bound(ctx: Context, before: tuple[np.ndarray, np.ndarray, np.ndarray]) -> tuple[int, int]:
    """Balance goals: replicas and bytes any plan must move to reach the balance this one reaches."""
    lay, idx = ctx.lay, ctx.balance
    if not idx:
        return 0, 0
    replicas = excess_bound(before[0][idx], lay.count[idx])
    size = excess_bound(before[2][idx], lay.bytes[idx])
    if ctx.options.metric is Metric.COUNT or ctx.options.goal is not Goal.REBALANCE:
        # each broker above the reached maximum sheds at least its excess in replicas: at least its smallest ones
        top = int(lay.count[idx].max())
        size = ctx.smallest({i: int(before[0][i]) - top for i in idx if before[0][i] > top})
    return replicas, size


def even_leaders(ctx: Context, rows: Iterable[int], budget: int | None = None) -> bool:
    """Even out preferred leaders over the balanced brokers by reordering the replicas of ``rows``
    (no data moves); whether they end within one of each other."""
    lay = ctx.lay
    balance = ctx.balance
    if len(balance) < 2:
        return True
    position, ids = lay.position, lay.ids
    lead = lay.leaders.tolist()
    tie = ctx.tiebreak.tolist()
    inside = [False] * len(ids)
    for i in balance:
        inside[i] = True
    led: dict[int, list[int]] = {}
    for row in rows:
        if ctx.movable[row] and lay.reps[row]:
            led.setdefault(position[lay.reps[row][0]], []).append(row)
    changes = 0
    for _round in range(3):
        # heaps of (leaders, tie-break, position), stale entries skipped (as in _Run)
        over = [(-lead[i], -tie[i], i) for i in balance]
        under = [(lead[i], tie[i], i) for i in balance]
        heapq.heapify(over)
        heapq.heapify(under)
        cursor: dict[int, int] = {}
        inactive: set[int] = set()
        progress = False
        while over:
            value, _, k = over[0]
            if -value != lead[k] or k in inactive:
                heapq.heappop(over)
                continue
            while under[0][0] != lead[under[0][2]]:
                heapq.heappop(under)
            if lead[k] - under[0][0] <= 1 or (budget is not None and changes >= budget):
                break
            mine = led.get(k, [])
            at = cursor.get(k, 0)
            found = False
            while at < len(mine):
                row = mine[at]
                at += 1
                r = lay.reps[row]
                if position[r[0]] != k:
                    continue
                best, threshold = -1, lead[k] - 1
                for b in r[1:]:
                    i = position[b]
                    if inside[i] and lead[i] < threshold and (best < 0 or (lead[i], tie[i]) < (lead[best], tie[best])):
                        best = i
                if best >= 0:
                    lay.lead(row, ids[best])
                    lead[k] -= 1
                    lead[best] += 1
                    for i in (k, best):
                        heapq.heappush(over, (-lead[i], -tie[i], i))
                        heapq.heappush(under, (lead[i], tie[i], i))
                    led.setdefault(best, []).append(row)
                    changes += 1
                    found = progress = True
                    break
            cursor[k] = at
            if not found:
                inactive.add(k)
        if not progress:
            break
    after = lay.leaders[balance]
    return bool(after.max() - after.min() <= 1)
