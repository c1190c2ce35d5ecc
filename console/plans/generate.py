"""Plan generators (pure): decommission, add brokers, rebalance, replication factor, fix racks,
drain a log dir and the official tool's ``--generate``, each over a snapshot, each with a quality
report.

Rules every goal keeps (docs/ARCHITECTURE.md, "Generators"):

* only partitions that may move are touched: not in flight (left alone, and said so), not
  offline, in the chosen topics, not matched by ``exclude_topics``;
* only eligible brokers receive replicas (KIP-841: registered, live, not fenced), never one in
  ``exclude_brokers``, one being drained, nor one that is cordoned (KIP-1066: every log dir
  cordoned; the report says so; a broker with some dirs cordoned still receives replicas, into its
  other dirs, since the generators place brokers, not dirs; draining a log dir places dirs, and
  never picks a cordoned or an offline one);
* no broker twice in a partition; the replication factor is kept unless the goal changes it;
* racks: a replica goes to a rack the partition lacks when one is free, and no move lowers the
  number of racks a partition spans (a finding says when the racks cannot allow it, e.g. RF 3 on
  2 racks);
* deterministic: the same snapshot, options and ``seed`` give the same plan; ties go to the lower
  broker id, after a tie-break order drawn from ``seed``;
* a goal that cannot be reached raises :class:`~console.core.errors.GoalImpossible` naming why,
  and input that cannot be used raises :class:`~console.core.errors.ConfigError`: no plan either way.

Balance goals move replicas from the most loaded broker to the least loaded one that can take
one, choosing the replica whose size brings the two closest to the mean, until the brokers are
within one replica (count) or within the tolerance of the mean (bytes), or the budget is spent.
Each partition moves at most once per plan. Preferred leaders (first replicas) are then evened
out by reordering the replicas of the partitions the plan already changes (no data moves).

Draining a log dir is the one goal that places dirs: a replica moves to another dir of its broker
(an entry with the same replicas and ``log_dirs`` naming the new dir) while one has room, else to
another broker as a decommission would move it.
"""

from __future__ import annotations

import heapq
import math
import random
from array import array
from bisect import bisect_left
from collections.abc import Callable, Iterable, MutableSequence, Sequence
from dataclasses import dataclass
from operator import mul
from time import perf_counter
from typing import TYPE_CHECKING, cast

import numpy as np

from console.core.errors import ClusterUnavailable, ConfigError, GoalImpossible
from console.core.format import human_bytes, ids_text, plural
from console.core.model import Broker, BrokerId, ClusterState, Finding, Partition, Severity, replicas_in_dir
from console.core.perf import without_gc
from console.plans.columns import PAD, columns_of, distinct, member, widen
from console.plans.generators.options import (
    GenerateOptions as GenerateOptions,
)
from console.plans.generators.options import (
    Goal as Goal,
)
from console.plans.generators.options import (
    Metric as Metric,
)
from console.plans.generators.options import (
    check_options as check_options,
)
from console.plans.generators.options import (
    chosen_topics as chosen_topics,
)
from console.plans.generators.options import (
    on_racks as on_racks,
)
from console.plans.generators.options import (
    topics_matching as topics_matching,
)
from console.plans.kafka_assign import rack_aware, rack_unaware
from console.plans.layout import Layout
from console.plans.plan import Plan
from console.plans.quality import BrokerLoad, Report, excess_bound

if TYPE_CHECKING:
    import pandas as pd


@dataclass(frozen=True)
class Generated:
    """A generated plan (only partitions that change) and its report."""

    plan: Plan
    report: Report

    def __repr__(self) -> str:
        return f"<Generated: {self.report.headline()}>"

    def to_pandas(self) -> pd.DataFrame:
        """The plan's entries (the report's per-broker table is ``report.to_pandas()``)."""
        return self.plan.to_pandas()


_WINDOW = 64
"""Candidate replicas a balance step looks at around the ideal size."""
_DESTINATIONS = 16
"""Destinations a balance step tries before it gives up on its source broker."""


# ------------------------------------------------------------------------------------------
# Entry point
# ------------------------------------------------------------------------------------------
@without_gc
def generate(state: ClusterState, options: GenerateOptions) -> Generated:
    """The plan for ``options.goal`` on ``state`` and its quality report."""
    started = perf_counter()
    check_options(options)
    options = on_racks(state, options)
    lay = Layout.of(state)
    ctx = _Context(lay, options)
    before = (lay.count.copy(), lay.leaders.copy(), lay.bytes.copy())
    racks_before = lay.rack_violations(ctx.rack_pool)
    bound, reached = _GOALS[options.goal](ctx)
    rows = lay.changed()
    plan = lay.plan(rows)
    moved, moved_bytes, leaders_moved, removed = _moved(lay, rows)
    if options.goal in (Goal.REBALANCE, Goal.ADD_BROKERS, Goal.OFFICIAL):
        bound = _balance_bound(ctx, before)
    report = Report(
        goal=options.describe(),
        moved_replicas=moved,
        moved_bytes=moved_bytes,
        lower_bound_replicas=bound[0],
        lower_bound_bytes=bound[1],
        leaders_moved=leaders_moved,
        partitions_changed=len(plan),
        brokers_before=_loads(lay, *before),
        brokers_after=_loads(lay, lay.count, lay.leaders, lay.bytes),
        balanced=tuple(lay.ids[i] for i in ctx.balance),
        rack_violations_before=racks_before,
        rack_violations_after=lay.rack_violations(ctx.rack_pool),
        reached=reached,
        findings=tuple(ctx.findings),
        seconds=perf_counter() - started,
        lower_bound_leaders=excess_bound(before[1][ctx.balance], lay.leaders[ctx.balance]) if ctx.balance else 0,
        removed_replicas=removed,
    )
    return Generated(plan, report)


def _moved(lay: Layout, rows: list[int]) -> tuple[int, int, int, int]:
    """Replicas copied to a new broker, their bytes, preferred leaders changed, replicas dropped
    without a copy elsewhere, over the changed ``rows`` (worked out on the position matrices)."""
    if not rows:
        return 0, 0, 0, 0
    at = np.array(rows, np.int64)
    m, lens = lay.matrix()
    s, start_lens = lay.start()
    width = max(m.shape[1], s.shape[1])
    new, old = widen(m[at], width), widen(s[at], width)
    new_lens, old_lens = lens[at], start_lens[at]
    added = ((new != PAD) & ~member(new, old)).sum(axis=1)
    # a broker twice in a row counts once (as a set): such rows, and those with a dir chosen, one by one
    odd = np.flatnonzero(distinct(np.where(new == PAD, -1, new)) < new_lens).tolist()
    if lay.dirs:
        odd = sorted(set(odd) | {k for k, row in enumerate(rows) if row in lay.dirs})
    for k in odd:
        row = rows[k]
        added[k] = len(set(lay.reps[row]) - set(lay.original[row])) + len(
            lay.dir_moves(row)
        )  # a move between dirs copies the replica too
    size = sum(map(mul, added.tolist(), map(lay.size.__getitem__, rows)))
    leaders = int(((new_lens > 0) & (old_lens > 0) & (new[:, 0] != old[:, 0])).sum())
    removed = int(np.maximum(old_lens - new_lens, 0).sum())
    return int(added.sum()), size, leaders, removed


def _loads(lay: Layout, count: np.ndarray, leaders: np.ndarray, size: np.ndarray) -> tuple[BrokerLoad, ...]:
    return tuple(
        BrokerLoad(
            b, lay.rack_names[lay.rack[i]] if lay.rack[i] >= 0 else None, int(count[i]), int(leaders[i]), int(size[i])
        )
        for i, b in enumerate(lay.ids)
    )


def _balance_bound(ctx: _Context, before: tuple[np.ndarray, np.ndarray, np.ndarray]) -> tuple[int, int]:
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


# ------------------------------------------------------------------------------------------
# What every goal shares: which partitions may move, which brokers receive, how load scores
# ------------------------------------------------------------------------------------------
def _check_named(lay: Layout, options: GenerateOptions) -> None:
    """Refuse brokers and topics the options name that the cluster does not have."""
    known = set(lay.ids)
    for name, ids in (
        ("--exclude-brokers", options.exclude_brokers),
        (
            "the brokers to drain"
            if options.goal is Goal.DECOMMISSION
            else "the broker of the log dir"
            if options.goal is Goal.DRAIN_LOG_DIR
            else "the brokers",
            options.brokers,
        ),
    ):
        unknown = sorted(set(ids) - known)
        if unknown:
            raise ConfigError(
                f"{name}: no broker {ids_text(unknown)} in this cluster (it has {ids_text(lay.ids)}).",
                "Pick brokers from the cluster's broker list (python -m console state).",
            )
    topics = set(options.topics)
    every = lay.state.topics
    missing = sorted(topics - set(every))
    if missing:
        raise ConfigError(
            f"No topic {', '.join(missing)} in this cluster.", "Check the topic names (python -m console state)."
        )


class _Context:
    def __init__(self, lay: Layout, options: GenerateOptions) -> None:
        self.lay = lay
        self.options = options
        self.findings: list[Finding] = []
        state = lay.state
        parts = state.partitions
        _check_named(lay, options)
        every = state.topics
        chosen = chosen_topics(options, every)
        cols = columns_of(state)
        if len(chosen) == len(every):  # every topic
            in_topics = np.ones(len(parts), np.bool_)
        else:
            in_topics = np.fromiter((p.topic in chosen for p in parts), np.bool_, len(parts))
        led = cols.leader != PAD
        self.movable_mask = in_topics & ~cols.reassigning & led & (cols.replicas != PAD).any(axis=1)
        """Partitions that may move (numpy); :attr:`movable` as a list."""
        self.movable: list[bool] = self.movable_mask.tolist()
        flight = int((in_topics & cols.reassigning).sum())
        if flight:
            self.note(
                "in-flight-left-alone",
                Severity.INFO,
                f"{plural(flight, 'partition')} of the chosen topics {'is' if flight == 1 else 'are'} being reassigned now "
                "and left alone; they count at their target.",
                "Generate again once they complete to include them.",
            )
        offline = int((in_topics & ~cols.reassigning & ~led).sum())
        if offline:
            self.note(
                "offline-left-alone",
                Severity.WARNING,
                f"{plural(offline, 'partition')} of the chosen topics {'has' if offline == 1 else 'have'} no leader and "
                "cannot be moved: left alone.",
                "Bring their brokers back first.",
            )
        drained = set(options.brokers) if options.goal is Goal.DECOMMISSION else set()
        excluded_b = set(options.exclude_brokers)
        self.drained_positions = {lay.position[b] for b in drained}
        self.cordoned = {b for b, c in zip(lay.ids, lay.cordoned, strict=False) if c}
        """Broker ids cordoned as a whole (KIP-1066): never a destination."""
        self.dest = np.array(
            [
                e and b not in excluded_b and b not in drained and b not in self.cordoned
                for b, e in zip(lay.ids, lay.eligible, strict=False)
            ],
            np.bool_,
        )
        self.balance = [int(i) for i in np.flatnonzero(self.dest)]
        """Positions of the brokers that are balanced and reported on."""
        self.rack_pool = self.balance
        self.rack_codes = np.array(lay.rack, np.int64)
        self._means: tuple[float, float] | None = None
        self.rack_of = dict(zip(lay.ids, lay.rack, strict=False))
        """Broker id → rack code."""
        self.racks = len({lay.rack[i] for i in self.balance})
        self.rack_aware = lay.racks_known
        down = [b for b, e in zip(lay.ids, lay.eligible, strict=False) if not e]
        if down:
            self.note(
                "ineligible-brokers",
                Severity.INFO,
                f"Broker{'s' if len(down) > 1 else ''} {ids_text(down)} {'are' if len(down) > 1 else 'is'} not live "
                "(or fenced): never a destination.",
            )
        self._cordon_notes(state, down)
        self._rack_notes()
        order = list(range(len(lay.ids)))
        random.Random(options.seed).shuffle(order)
        self.tiebreak = np.empty(len(lay.ids), np.float64)
        self.tiebreak[order] = np.arange(len(lay.ids)) * 1e-9

    def _rack_notes(self) -> None:
        """Say when racks are not taken into account, or are fewer than a replication factor."""
        lay = self.lay
        with_rack = [lay.rack[i] >= 0 for i, e in enumerate(lay.eligible) if e]
        if any(with_rack) and not all(with_rack):
            self.note(
                "racks-partial",
                Severity.WARNING,
                "Only some live brokers have a rack: racks are not taken into account.",
                "Set broker.rack on every broker.",
            )
        elif self.rack_aware and self.balance:
            lens = lay.start()[1][self.movable_mask]
            widest = int(lens.max()) if len(lens) else 0
            if widest > self.racks:
                self.note(
                    "racks-fewer-than-rf",
                    Severity.INFO,
                    f"Replication factor {widest} on {plural(self.racks, 'rack')}: such partitions can span only "
                    f"{self.racks} racks, so some racks hold two of their replicas.",
                )

    def note(self, code: str, severity: Severity, message: str, hint: str = "") -> None:
        self.findings.append(Finding(code, severity, message, hint))

    def _cordon_notes(self, state: ClusterState, down: list[int]) -> None:
        """Say which brokers are cordoned (never a destination) and which have only some log dirs
        cordoned (still destinations, into their other dirs); brokers down are said already."""
        for b in sorted(self.cordoned - set(down)):
            self.note(
                "cordoned-broker",
                Severity.INFO,
                f"Broker {b} is cordoned: never a destination.",
                f"Uncordon it (python -m console uncordon --broker {b}) to let it receive replicas again.",
            )
        for broker in state.brokers:
            dirs = broker.cordoned_dirs
            if broker.cordoned is False and broker.eligible and dirs:
                self.note(
                    "cordoned-log-dirs",
                    Severity.INFO,
                    f"Broker {broker.id} has {len(dirs)} of {plural(len(broker.log_dirs), 'log dir')} cordoned "
                    f"({', '.join(dirs)}): it still receives replicas, into its other dirs.",
                )

    def rows_with(self, positions: Iterable[int]) -> list[int]:
        """Rows (partitions) holding a replica on any of ``positions``."""
        m, _ = self.lay.matrix()
        hit = np.isin(m, np.array(sorted(positions), np.int64)) & (m != PAD)
        return [int(i) for i in np.flatnonzero(hit.any(axis=1))]

    def smallest(self, wanted: dict[int, int]) -> int:
        """Bytes of the ``wanted[i]`` smallest replicas position ``i`` held at the start, summed over ``wanted``."""
        if not wanted:
            return 0
        lay = self.lay
        m, _ = lay.start()
        size = np.array(lay.size, np.int64)
        by_size = np.argsort(size, kind="stable")  # rows from the smallest
        ordered = m[by_size]
        table = np.zeros(len(lay.ids) + 1, np.bool_)  # the positions wanted (the last cell: padding)
        table[list(wanted)] = True
        at, col = np.nonzero(
            table[np.where(ordered == PAD, len(lay.ids), ordered)] & self.movable_mask[by_size][:, None]
        )
        pos, sizes = ordered[at, col], size[by_size[at]]
        # by position, the smallest first within each: a stable sort on small ints (a radix sort)
        order = np.argsort(pos.astype(np.int16) if len(lay.ids) < 2**15 else pos, kind="stable")
        pos, sizes = pos[order], sizes[order]
        total = 0
        for i, k in wanted.items():
            a, b = np.searchsorted(pos, [i, i + 1])
            total += int(sizes[a : min(b, a + k)].sum())
        return total

    def score(self) -> np.ndarray:
        """How loaded each broker is, replicas and bytes weighed alike against their means (at the start)."""
        lay, idx = self.lay, self.balance
        if self._means is None:
            self._means = (
                max(float(lay.count[idx].mean()), 1.0) if idx else 1.0,
                max(float(lay.bytes[idx].mean()), 1.0) if idx else 1.0,
            )
        out: np.ndarray = lay.count / self._means[0] + lay.bytes / self._means[1] + self.tiebreak
        return out

    def destination(self, row: int, leaving: int | None = None, need_new_rack: bool = False) -> int | None:
        """The least loaded broker that may take a replica of ``row`` (in place of ``leaving``):
        eligible, not in the partition, on a rack the partition lacks when one has room."""
        lay = self.lay
        members = [b for b in lay.reps[row] if b != leaving]
        cand = self.dest.copy()
        for b in members:
            cand[lay.position[b]] = False
        if leaving is not None:
            cand[lay.position[leaving]] = False
        if not cand.any():
            return None
        if self.rack_aware:
            present = np.zeros(len(lay.rack_names) + 1, np.bool_)  # the last cell stands for "no rack" (-1)
            present[[lay.rack[lay.position[b]] for b in members]] = True
            fresh = cand & ~present[self.rack_codes]
            if fresh.any():
                cand = fresh
            elif need_new_rack:
                return None
        score = np.where(cand, self.score(), np.inf)
        return lay.ids[int(np.argmin(score))]

    def lighter_leader(self, row: int) -> int:
        """The replica of ``row`` that leads the fewest partitions (eligible ones first)."""
        lay = self.lay
        return min(
            lay.reps[row],
            key=lambda b: (
                not lay.eligible[lay.position[b]],
                lay.leaders[lay.position[b]] + self.tiebreak[lay.position[b]],
            ),
        )

    def by_size(self, rows: Iterable[int]) -> list[int]:
        size = self.lay.size
        return sorted(rows, key=lambda r: (-size[r], r))


# ------------------------------------------------------------------------------------------
# Goals: each returns (lower bound replicas, lower bound bytes) and whether the goal was reached
# ------------------------------------------------------------------------------------------
Bound = tuple[tuple[int, int], bool]


def _decommission(ctx: _Context) -> Bound:
    lay, drained = ctx.lay, set(ctx.options.brokers)
    if not ctx.balance:
        raise GoalImpossible(
            f"Draining {ids_text(sorted(drained))} leaves no eligible broker to move replicas to.",
            "Bring brokers back, or exclude fewer brokers.",
        )
    rows = ctx.rows_with(ctx.drained_positions)
    stuck = [r for r in rows if not ctx.movable[r]]
    movable = [r for r in rows if ctx.movable[r]]
    widest = max(movable, key=lambda r: (len(lay.reps[r]), -r), default=None)
    if widest is not None and len(lay.reps[widest]) > len(ctx.balance):
        p = lay.state.partitions[widest]
        raise GoalImpossible(
            f"Draining {ids_text(sorted(drained))} would leave {plural(len(ctx.balance), 'eligible broker')}, fewer than the "
            f"{len(lay.reps[widest])} replicas of {p.name} (topic {p.topic}).",
            "Drain fewer brokers, add brokers first, or lower the topic's replication factor.",
        )
    if stuck:
        ctx.note(
            "drain-incomplete",
            Severity.WARNING,
            f"{plural(len(stuck), 'partition')} with a replica on {ids_text(sorted(drained))} cannot move now (in flight, "
            "offline or excluded): the brokers will not be empty after this plan.",
            "Generate again once those partitions can move.",
        )
    moved = size = 0
    for row in ctx.by_size(movable):
        r = lay.reps[row]
        led_by_drained = r[0] in drained
        for b in [b for b in r if b in drained]:
            d = ctx.destination(row, leaving=b)
            if d is None:
                p = lay.state.partitions[row]
                raise GoalImpossible(
                    f"No eligible broker can take {p.name}'s replica on {b}: every other one is drained, "
                    "excluded, down, cordoned or holds it already.",
                    "Drain fewer brokers or exclude fewer.",
                )
            lay.move(row, b, d)
            moved += 1
            size += lay.size[row]
        if led_by_drained:
            lay.lead(row, ctx.lighter_leader(row))
    _even_leaders(ctx, lay.changed())
    return (moved, size), not stuck


def _add_brokers(ctx: _Context) -> Bound:
    lay, new = ctx.lay, set(ctx.options.brokers)
    down = sorted(b for b in new if not lay.eligible[lay.position[b]])
    if down:
        raise GoalImpossible(
            f"Broker {ids_text(down)} is not live (or fenced): it cannot receive replicas.",
            "Start it and wait until it is registered, then generate again.",
        )
    cordoned = sorted(new & ctx.cordoned)
    if cordoned:
        raise GoalImpossible(
            f"Broker {ids_text(cordoned)} is cordoned: never a destination.",
            f"Uncordon it first (python -m console uncordon --broker {cordoned[0]}), then generate again.",
        )
    excluded = sorted(new & set(ctx.options.exclude_brokers))
    if excluded:
        raise GoalImpossible(
            f"Broker {ids_text(excluded)} is both to fill and excluded.", "Drop it from --exclude-brokers."
        )
    dests = [i for i in ctx.balance if lay.ids[i] in new]
    sources = [i for i in ctx.balance if lay.ids[i] not in new]
    if not sources:
        raise GoalImpossible("There are no other eligible brokers to take replicas from.")
    reached = _balance(ctx, Metric.COUNT, sources, dests)
    _even_leaders(ctx, lay.changed())
    return (0, 0), reached


def _rebalance(ctx: _Context) -> Bound:
    metric = ctx.options.metric
    if len(ctx.balance) < 2:
        raise GoalImpossible("Fewer than two eligible brokers: there is nothing to balance between.")
    if metric is Metric.LEADERS:
        before = ctx.lay.leaders[ctx.balance].copy()
        reached = _even_leaders(ctx, [r for r, ok in enumerate(ctx.movable) if ok], budget=ctx.options.max_moves)
        after = ctx.lay.leaders[ctx.balance]
        if not reached:
            ctx.note(
                "leaders-not-even",
                Severity.INFO,
                f"Reordering replicas evens preferred leaders to {int(after.max())}–{int(after.min())} per broker "
                f"(from {int(before.max())}–{int(before.min())}); more needs replicas to move.",
                "Rebalance by count first, then by leaders.",
            )
        return (0, 0), reached
    reached = _balance(ctx, metric, ctx.balance, ctx.balance)
    _even_leaders(ctx, ctx.lay.changed())
    return (0, 0), reached


def _replication_factor(ctx: _Context) -> Bound:
    lay, opts = ctx.lay, ctx.options
    n = opts.replication_factor or 0  # check_options: 1 or more
    if n > len(ctx.balance):
        raise GoalImpossible(
            f"Replication factor {n} needs {n} eligible brokers; this cluster has {len(ctx.balance)}"
            + (" (after exclusions and cordons)." if opts.exclude_brokers or ctx.cordoned else "."),
            "Lower the replication factor or add brokers.",
        )
    moved = size = 0
    parts = lay.state.partitions
    rows = [r for r, ok in enumerate(ctx.movable) if ok]
    _refuse_below_min_isr(lay.state, [parts[r] for r in rows if len(lay.reps[r]) > n], n)
    for row in ctx.by_size(rows):
        r = lay.reps[row]
        while len(r) < n:
            d = ctx.destination(row)
            if d is None:
                raise GoalImpossible(f"No eligible broker can take a new replica of {parts[row].name}.")
            lay.add(row, d)
            moved += 1
            size += lay.size[row]
        while len(r) > n:
            lay.drop(row, _removal(ctx, row, parts[row].leader))
    return (moved, size), True


def _refuse_below_min_isr(state: ClusterState, lowered: Sequence[Partition], n: int) -> None:
    """Review refuses a plan that lowers a partition's replication factor below its topic's
    ``min.insync.replicas`` (it would then refuse writes with acks=all): the goal is refused first."""
    mins = state.min_insync_index
    below = sorted({p.topic for p in lowered if mins.get(p.topic, 0) > n})
    if below:
        t = below[0]
        raise GoalImpossible(
            f"Replication factor {n} is fewer than min.insync.replicas={mins[t]} of topic {t}"
            + (f" (and of {plural(len(below) - 1, 'more topic')})" if len(below) > 1 else "")
            + ": Kafka completes such a move, and the partitions then refuse writes with acks=all.",
            f"Keep at least {mins[t]} replicas, or lower the topic's min.insync.replicas first.",
        )


def _removal(ctx: _Context, row: int, leader: int | None) -> int:
    """The replica of ``row`` to remove: never the current leader; from the rack with the most
    replicas of the partition, then the most loaded broker."""
    lay = ctx.lay
    r = lay.reps[row]
    keep = leader if leader in r else r[0]
    racks = [lay.rack[lay.position[b]] for b in r]
    score = ctx.score()
    return max(
        (b for b in r if b != keep),
        key=lambda b: (racks.count(lay.rack[lay.position[b]]) if ctx.rack_aware else 0, score[lay.position[b]]),
    )


def _fix_racks(ctx: _Context) -> Bound:
    lay = ctx.lay
    if not ctx.rack_aware:
        ctx.note("no-racks", Severity.INFO, "The brokers have no racks (or only some do): there is nothing to fix.")
        return (0, 0), True
    moved = size = 0
    unfixable = 0
    for row in ctx.by_size(r for r in lay.short_of_racks(ctx.rack_pool).tolist() if ctx.movable[r]):
        r = lay.reps[row]
        cap = min(len(r), ctx.racks)
        while lay.rack_count(row) < cap:
            racks = [lay.rack[lay.position[b]] for b in r]
            shared = [b for b, k in zip(r, racks, strict=False) if racks.count(k) > 1]
            score = ctx.score()
            victim = max(shared, key=lambda b: (b != r[0], score[lay.position[b]]))
            d = ctx.destination(row, leaving=victim, need_new_rack=True)
            if d is None:
                unfixable += 1
                break
            lay.move(row, victim, d)
            moved += 1
            size += lay.size[row]
    if unfixable:
        ctx.note(
            "racks-unfixable",
            Severity.WARNING,
            f"{plural(unfixable, 'partition')} could not be spread further: no eligible broker on a missing rack can "
            "take them.",
            "Check which racks have live, non-excluded brokers.",
        )
    return (moved, size), not unfixable


def _official(ctx: _Context) -> Bound:
    """``kafka-reassign-partitions.sh --generate``: AdminUtils.assignReplicasToBrokers per topic, with
    the start index and replica shift drawn from ``seed`` (the tool draws them at random)."""
    lay, opts = ctx.lay, ctx.options
    excluded = set(opts.exclude_brokers) | ctx.cordoned
    live = [b for b in sorted(set(opts.brokers)) if lay.eligible[lay.position[b]] and b not in excluded]
    dropped = sorted(set(opts.brokers) - set(live))
    if dropped:
        ctx.note(
            "official-dropped-brokers",
            Severity.WARNING,
            f"Broker {ids_text(dropped)} of the broker list {'are' if len(dropped) > 1 else 'is'} not live, cordoned "
            "or excluded, and left out (the official tool drops brokers that are not live without a word).",
        )
    if not live:
        raise GoalImpossible("No broker of the broker list is live, uncordoned and not excluded.")
    racks = {b: lay.rack[lay.position[b]] for b in live}
    with_rack = [k >= 0 for k in racks.values()]
    if any(with_rack) and not all(with_rack):
        raise GoalImpossible(
            "Not all brokers have rack information. Add --disable-rack-aware in command line to make "
            "replica assignment without rack information.",
            "The console follows the official tool here; give only brokers with racks, or none.",
        )
    rnd = random.Random(opts.seed)
    rows_of: dict[str, list[int]] = {}
    for i, p in enumerate(lay.state.partitions):
        if p.topic in opts.topics:
            rows_of.setdefault(p.topic, []).append(i)
    for topic in sorted(rows_of):
        rows = sorted(rows_of[topic], key=lambda r: lay.state.partitions[r].partition)
        rf = len(lay.reps[rows[0]])
        if rf > len(live):
            raise GoalImpossible(
                f"Replication factor: {rf} larger than available brokers: {len(live)} (topic {topic})."
            )
        assignment = (
            rack_aware(live, racks, len(rows), rf, rnd) if all(with_rack) else rack_unaware(live, len(rows), rf, rnd)
        )
        for row, target in zip(rows, assignment, strict=False):
            if ctx.movable[row] and target != lay.reps[row]:
                _assign(lay, row, target)
    return (0, 0), True


def _assign(lay: Layout, row: int, target: list[int]) -> None:
    """Set partition ``row``'s replicas to ``target`` (a reorder, moves and changes of length alike)."""
    for b in [b for b in lay.reps[row] if b not in target]:
        lay.drop(row, b)
    for b in target:
        if b not in lay.reps[row]:
            lay.add(row, b)
    for b in reversed(target):
        lay.lead(row, b)


def _drained_broker(state: ClusterState, b: int, path: str) -> Broker:
    """The broker whose log dir ``path`` is drained, refused when its dirs are unknown or it has no such dir."""
    broker = state.broker(BrokerId(b))
    if broker is None or not broker.log_dirs:
        why = (
            "it is not registered"
            if broker is None or not broker.registered
            else "it is down (only a live broker answers DescribeLogDirs)"
            if not broker.live
            else "they were not read (DescribeLogDirs)"
        )
        raise (ClusterUnavailable if broker is not None and broker.live else ConfigError)(
            f"Broker {b} reports no log dirs: {why}.",
            "Take a snapshot that has them (the Overview page lists each broker's log dirs).",
        )
    dirs = {d.path: d for d in broker.log_dirs}
    drained = dirs.get(path)
    if drained is None:
        raise ConfigError(
            f"Broker {b} has no log dir {path} (its dirs: {', '.join(dirs)}).",
            "Pick one of the broker's log dirs (the Overview page lists them).",
        )
    return broker


def _drain_notes(
    ctx: _Context, where: str, movable: list[int], within: dict[str, list[int]], across: list[int], stays: list[int]
) -> None:
    """What draining the dir does: how much goes to the broker's other dirs and to other brokers, what stays."""
    lay = ctx.lay
    kept = [r for rs in within.values() for r in rs]
    moved = kept + across

    def size_of(rs: list[int]) -> int:
        return sum(lay.size[r] for r in rs)

    if moved:
        per_dir = ", ".join(f"{plural(len(rs), 'replica')} to {k}" for k, rs in sorted(within.items()))
        ctx.note(
            "drain-log-dir",
            Severity.INFO,
            f"Of {plural(len(movable), 'replica')} ({human_bytes(size_of(movable))}) that may move out of {where}: "
            f"{len(kept):,} ({human_bytes(size_of(kept))}) to its other dirs"
            + (f" ({per_dir})" if per_dir else "")
            + f", {len(across):,} ({human_bytes(size_of(across))}) to other brokers.",
            "A move between dirs of one broker copies on that broker's disks only (no network, no replication "
            "throttle; replica.alter.log.dirs.io.max.bytes.per.second throttles it).",
        )
    if stays:
        ctx.note(
            "drain-dir-no-room",
            Severity.WARNING,
            f"{plural(len(stays), 'replica')} ({human_bytes(size_of(stays))}) {'stays' if len(stays) == 1 else 'stay'} "
            f"in {where}: no other dir of the broker has room for {'it' if len(stays) == 1 else 'them'} and no "
            f"eligible broker can take {'it' if len(stays) == 1 else 'them'} without lowering the partition's racks: "
            f"{_names(lay, stays)}.",
            "Free space in the broker's other dirs, or add brokers, then generate again.",
        )


def _drain_log_dir(ctx: _Context) -> Bound:
    """Empty log dir ``options.log_dir`` of broker ``options.brokers[0]``: each replica in it goes to
    another dir of the same broker while one has room (usable bytes, less what moves into it now),
    biggest replicas first, each into the dir with the most room left (the least data first): so
    the most bytes stay on the broker and the least cross the network. What does not fit goes to
    another broker as a decommission moves it (eligible, not cordoned nor excluded, racks kept).
    Never into the dir drained, a cordoned dir (KIP-1066), an offline dir, or one whose room is not
    known. Every replica leaving the dir is copied, so the lower bound is what leaves it."""
    lay, opts = ctx.lay, ctx.options
    b, path = opts.brokers[0], opts.log_dir or ""
    state = lay.state
    broker = _drained_broker(state, b, path)
    parts = state.partitions
    on_b = [r for r, p in enumerate(parts) if b in p.replicas]
    inside = {p.key for p in replicas_in_dir((parts[r] for r in on_b), broker, path)}
    rows = [r for r in on_b if parts[r].key in inside]
    moving_dirs = {r for r in on_b if any(g.broker == b and g.is_future for g in parts[r].logs)}
    stuck = [r for r in rows if not ctx.movable[r] or r in moving_dirs or b not in lay.reps[r]]
    left = set(stuck)
    movable = [r for r in rows if r not in left]
    where = f"log dir {path} of broker {b}"
    if stuck:
        ctx.note(
            "drain-dir-incomplete",
            Severity.WARNING,
            f"{plural(len(stuck), 'partition')} with a replica in {where} cannot move now (being reassigned or "
            f"moved between dirs, offline, or excluded): {_names(lay, stuck)}. The dir will not be empty after this plan.",
            "Generate again once those partitions can move.",
        )
    if not rows:
        ctx.note("empty-log-dir", Severity.INFO, f"No replica of the chosen topics is in {where}: nothing to move.")
    room = _dir_room(ctx, broker, path, on_b)
    within: dict[str, list[int]] = {}
    across: list[int] = []
    stays: list[int] = []
    for row in ctx.by_size(movable):  # biggest first
        size = max(lay.size[row], parts[row].size_on(BrokerId(b)) or 0)  # what lands on the disk: its own log
        best = min(room, key=lambda k: (-room[k], k), default=None)
        if best is not None and room[best] >= size:
            lay.move_dir(row, b, best)
            room[best] -= size
            within.setdefault(best, []).append(row)
            continue
        d = ctx.destination(row, leaving=b)
        if d is None or (ctx.rack_aware and lay.rack_count(row, without=b, plus=d) < lay.rack_count(row)):
            stays.append(row)
            continue
        lay.move(row, b, d)
        across.append(row)
    if movable and not within and not across:
        raise GoalImpossible(
            f"No replica in {where} can move: no other dir of the broker may take them (full, cordoned, "
            "offline, or none), and no eligible broker can take them without lowering their racks (every other "
            "one is down, excluded, cordoned or holds them already).",
            "Free space in the broker's other dirs, uncordon a dir, or add brokers.",
        )
    kept = [r for rs in within.values() for r in rs]
    moved = kept + across
    _drain_notes(ctx, where, movable, within, across, stays)
    return (len(moved), sum(lay.size[r] for r in moved)), not stuck and not stays


def _dir_room(ctx: _Context, broker: Broker, path: str, on_b: list[int]) -> dict[str, int]:
    """The other log dirs of ``broker`` that may receive replicas of ``path`` and the bytes each has
    room for (usable bytes less what is being copied into it now); the notes say why others may not."""
    lay, b = ctx.lay, int(broker.id)
    drained = next(d for d in broker.log_dirs if d.path == path)
    where = f"log dir {path} of broker {b}"
    others = [d for d in broker.log_dirs if d.path != path]
    if not others:
        return {}
    if not broker.eligible:
        why = "is not live (or fenced)"
    elif b in ctx.options.exclude_brokers:
        why = "is excluded"
    elif drained.offline:
        why = f"reports {path} offline (DescribeLogDirs: {drained.error}), so its replicas cannot be read there"
    else:
        why = ""
    if why:
        ctx.note(
            "drain-dir-other-brokers",
            Severity.INFO,
            f"Broker {b} {why}: the replicas in {where} go to other brokers (copied from their leaders), "
            "not to its other dirs.",
        )
        return {}
    pending: dict[str, int] = {}
    for r in on_b:
        p = lay.state.partitions[r]
        for g in p.logs:
            if g.broker == b and g.is_future:  # a copy into that dir is under way: it takes its full size
                pending[g.log_dir] = pending.get(g.log_dir, 0) + max(0, (p.size or 0) - g.size)
    room: dict[str, int] = {}
    skipped: list[str] = []
    for d in others:
        if d.offline:
            skipped.append(f"{d.path} is offline")
        elif broker.dir_cordoned(d.path):
            skipped.append(f"{d.path} is cordoned")
        elif d.usable_bytes is None:
            skipped.append(f"{d.path} does not report its free space (DescribeLogDirs before v4)")
        else:
            room[d.path] = d.usable_bytes - pending.get(d.path, 0)
    if skipped:
        ctx.note(
            "drain-dir-skipped-dirs",
            Severity.INFO,
            f"Not a destination on broker {b}: {'; '.join(skipped)}.",
        )
    return room


def _names(lay: Layout, rows: list[int], most: int = 5) -> str:
    """The partitions of ``rows`` by name, the first ``most`` of them."""
    names = [lay.state.partitions[r].name for r in sorted(rows)[:most]]
    return ", ".join(names) + (f" and {len(rows) - most:,} more" if len(rows) > most else "")


_GOALS: dict[Goal, Callable[[_Context], Bound]] = {
    Goal.DECOMMISSION: _decommission,
    Goal.ADD_BROKERS: _add_brokers,
    Goal.REBALANCE: _rebalance,
    Goal.REPLICATION_FACTOR: _replication_factor,
    Goal.FIX_RACKS: _fix_racks,
    Goal.OFFICIAL: _official,
    Goal.DRAIN_LOG_DIR: _drain_log_dir,
}


# ------------------------------------------------------------------------------------------
# Balance by moving replicas
# ------------------------------------------------------------------------------------------
def _balance(ctx: _Context, metric: Metric, sources: list[int], dests: list[int]) -> bool:
    """Move replicas from the most loaded of ``sources`` to the least loaded of ``dests`` until even
    (or the budget is spent, or nothing can move); whether the goal's balance was reached.

    The loop runs once per move (up to hundreds of thousands at 1M partitions), so it works on
    plain lists: the loads are mirrored as Python ints (and floats, the heaps' keys), each row's
    racks are bit masks built once with numpy, and the moves are applied to the layout at the end."""
    lay, opts = ctx.lay, ctx.options
    pool = sorted(set(sources) | set(dests))
    mean_c = float(lay.count[pool].sum()) / len(pool)
    mean_b = float(lay.bytes[pool].sum()) / len(pool)
    top_c = math.ceil(mean_c)
    floor_c = math.floor(mean_c)
    tol = opts.tolerance
    high_b, low_b = mean_b * (1 + tol), mean_b * (1 - tol)
    by_count = metric is Metric.COUNT
    cands = _candidates(ctx, sources)
    bit = [1 << (k + 1) for k in lay.rack]  # as _rack_masks numbers racks
    src = np.array(sources, np.int64)
    dst = np.array(dests, np.int64)
    is_src, is_dst = set(sources), set(dests)
    tie = ctx.tiebreak.tolist()
    ids, position, reps, row_size = lay.ids, lay.position, lay.reps, lay.size
    check_racks = ctx.rack_aware
    count, size_b = lay.count.tolist(), lay.bytes.tolist()
    load = count if by_count else size_b
    key = [float(x) for x in load]
    """``float(load[i])``: the heaps' keys, and how a heap entry is known to be current."""
    # heaps of (load, tie-break, position), updated lazily: an entry whose load is no longer the
    # broker's is skipped (a move changes two loads; the loop never scans all brokers)
    over = [(-key[i], -tie[i], i) for i in sources]
    under = [(key[i], tie[i], i) for i in dests]
    heapq.heapify(over)
    heapq.heapify(under)
    inactive: set[int] = set()
    moved_rows: list[int] = []
    moved_from: list[int] = []
    moved_to: list[int] = []
    moves = spent = 0
    max_moves = opts.max_moves if opts.max_moves is not None else -1
    max_bytes = opts.max_bytes if opts.max_bytes is not None else -1
    min_gap = 1 if by_count else 0

    def even(s: int, d: int) -> bool:
        hi, lo = key[s], key[d]
        if by_count:
            return hi - lo <= 1 or (hi <= top_c and lo >= floor_c)
        return (hi <= high_b and lo >= low_b) or hi <= lo

    heappop, heappush = heapq.heappop, heapq.heappush
    passing = by_count and max_bytes < 0  # every candidate counts toward the window (see _pick)
    budget_hit = finished = False
    while not finished:
        s = -1
        while over:  # the most loaded source still active
            value, _, i = over[0]
            if i in inactive or -value != key[i]:
                heappop(over)
                continue
            s = i
            break
        if s < 0:
            break
        picked = -1
        d = -1
        kept: list[tuple[float, float, int]] = []  # destinations looked at, least loaded first: back in the heap after
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
            if not tried and (even(s, d) or moves == max_moves):
                finished, budget_hit = True, moves == max_moves and not even(s, d)
                break
            gap = load[s] - load[d]
            if gap <= min_gap:
                break
            tried += 1
            if by_count:
                need = max(1, top_c - count[d])
                ideal = max(0.0, (mean_b - float(size_b[d])) / need)
                limit = -1
            else:
                above, below = key[s] - mean_b, mean_b - key[d]
                ideal = min(above, below) if above > 0 and below > 0 else gap / 2
                limit = gap
            room = -1 if max_bytes < 0 else max_bytes - spent
            rs, rd = bit[s], bit[d]
            rack = rd if check_racks and rs != rd else 0
            c = cands[s]
            assert c is not None  # a source: it has candidates
            if passing and rack and c.narrow and (allows := _ALLOWS.get(rack)) is not None:
                picked = _pick_passing_over(c, reps, ids[s], ids[d], allows, ideal)  # what _pick would call
            else:
                picked = _pick(c, reps, ids[s], ids[d], rack, ideal, limit, room)
            if picked >= 0:
                break
        if finished or not kept:
            break
        if picked < 0:
            for entry in kept:
                heappush(under, entry)
            inactive.add(s)
            continue
        row = picked
        size = row_size[row]
        sb = ids[s]
        left = True  # _pick took it out of the source's candidates (once: a broker twice in a row is there twice)
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
    lay.move_many(moved_rows, moved_from, moved_to)
    active = [i for i in sources if i not in inactive]
    final = lay.count if by_count else lay.bytes
    hi, lo = final[src].max(), final[dst].min()
    if by_count:
        reached = bool(hi - lo <= 1 or (hi <= top_c and lo >= floor_c))
    else:
        reached = bool(hi <= high_b and lo >= low_b) or bool(hi <= lo)
    if not reached:
        _not_reached(ctx, by_count, budget_hit or (max_bytes >= 0 and bool(active)))
    return reached


def _not_reached(ctx: _Context, by_count: bool, budget_spent: bool) -> None:
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


_BLOCK = 256
"""Candidates per block of :class:`_Candidates`: removing one copies at most this many entries."""


@dataclass(slots=True)
class _Candidates:
    """One source broker's movable replicas for :func:`_pick`, sorted by (size, row), cut in blocks
    of at most :data:`_BLOCK` so that removing one copies the rest of its block only (at 1M
    partitions a broker has thousands: a flat sequence copied half of them per removal). Per
    block, three aligned sequences: the rows, their sizes, and the rack bits a destination must not
    be on for the row to move there (worked out once what :func:`_pick` asks of every candidate);
    and each block's last size, to find the block a size falls in. No block is empty."""

    rows: list[MutableSequence[int]]
    sizes: list[MutableSequence[int]]
    fails: list[MutableSequence[int]]
    last: list[int]
    narrow: bool = False
    """The fails are bytes (up to 7 racks): :func:`_pick` may pass over those a rack rules out in bulk."""

    @staticmethod
    def of(rows: np.ndarray, sizes: np.ndarray, fails: np.ndarray) -> _Candidates:
        """From aligned arrays sorted by (size, row)."""
        cuts = range(0, len(rows), _BLOCK)
        block_sizes = [_ints(sizes[a : a + _BLOCK]) for a in cuts]
        narrow = fails.dtype != object and (not len(fails) or (int(fails.min()) >= 0 and int(fails.max()) < 256))
        return _Candidates(
            [_ints(rows[a : a + _BLOCK]) for a in cuts],
            block_sizes,
            [
                bytearray(fails[a : a + _BLOCK].astype(np.uint8).tobytes()) if narrow else _ints(fails[a : a + _BLOCK])
                for a in cuts
            ],
            [s[-1] for s in block_sizes],
            narrow,
        )

    def remove(self, b: int, i: int) -> None:
        """Remove entry ``i`` of block ``b``."""
        sizes = self.sizes[b]
        del self.rows[b][i], sizes[i], self.fails[b][i]
        if not sizes:
            del self.rows[b], self.sizes[b], self.fails[b], self.last[b]
        elif i == len(sizes):
            self.last[b] = sizes[-1]

    def forget(self, row: int, size: int) -> None:
        """Remove ``row`` (of ``size``) when it is among the candidates."""
        last, blocks = self.last, self.sizes
        b = bisect_left(last, size)
        while b < len(last):
            sizes, rows = blocks[b], self.rows[b]
            i = bisect_left(sizes, size)
            n = len(sizes)
            while i < n and sizes[i] == size:
                if rows[i] == row:
                    del rows[i], sizes[i], self.fails[b][i]
                    if i == n - 1:
                        if i:
                            last[b] = sizes[-1]
                        else:
                            del self.rows[b], self.sizes[b], self.fails[b], last[b]
                    return
                i += 1
            if i < n:
                return
            b += 1  # the same size may go on in the next block

    def flat(self) -> tuple[list[int], list[int], list[int]]:
        """The rows, sizes and fails in order (for tests)."""
        return (
            [x for s in self.rows for x in s],
            [x for s in self.sizes for x in s],
            [x for s in self.fails for x in s],
        )


def _candidates(ctx: _Context, sources: list[int]) -> list[_Candidates | None]:
    """Per broker position: the candidates of each of ``sources`` (None for the others).

    A move from ``s`` to ``d`` on another rack must not lower the racks the partition spans: it
    may not go when ``d``'s rack is among the partition's other replicas unless ``s``'s rack stays
    among them too. Both are bit masks of the row's racks (every rack of its replicas; the racks
    two of its brokers share), so a candidate's ``fails`` is 0 when another of its brokers is on
    ``s``'s rack, else the bits of all its racks."""
    lay = ctx.lay
    m, _ = lay.matrix()
    size = np.array(lay.size, np.int64)
    by_size = np.argsort(size, kind="stable")  # rows in (size, row) order
    ordered = m[by_size]
    is_source = np.zeros(len(lay.ids) + 1, np.bool_)  # the last cell: padding
    is_source[sources] = True
    at, col = np.nonzero(
        is_source[np.where(ordered == PAD, len(lay.ids), ordered)] & ctx.movable_mask[by_size][:, None]
    )
    pos = ordered[at, col]
    # by position, keeping (size, row) order within each: a stable sort on small ints (a radix sort)
    order = np.argsort(pos.astype(np.int16) if len(lay.ids) < 2**15 else pos, kind="stable")
    r_idx, pos = by_size[at[order]], pos[order]
    sizes = size[r_idx]
    bounds = np.searchsorted(pos, np.arange(len(lay.ids) + 1)).tolist()
    bits, every, twice = _rack_masks(lay, m)
    fails = np.where(twice[r_idx] & bits[pos] != 0, 0, every[r_idx])
    out: list[_Candidates | None] = [None] * len(lay.ids)
    for i in sources:
        a, b = bounds[i], bounds[i + 1]
        out[i] = _Candidates.of(r_idx[a:b], sizes[a:b], fails[a:b])
    return out


def _ints(a: np.ndarray) -> MutableSequence[int]:
    """A 1-d array as a compact sequence of ints (a Python list when beyond int64)."""
    if a.dtype == object:
        return list(a.tolist())
    return array("q", (a if a.dtype == np.int64 else a.astype(np.int64)).tobytes())


def _rack_masks(lay: Layout, m: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each position's rack as one bit (no rack, -1, is bit 0), and per row of the position matrix
    ``m`` the bits of the racks its replicas are on and of the racks two of its brokers share.
    int64 up to 61 racks, Python ints (object arrays) beyond."""
    wide = len(lay.rack_names) >= 62
    bits = np.array([1 << (k + 1) for k in lay.rack], object if wide else np.int64)
    real = m != PAD
    table = np.append(bits, np.zeros(1, bits.dtype))
    cell = table[np.where(real, m, len(bits))]  # 0 for padding
    every = np.zeros(m.shape[0], bits.dtype)
    twice = np.zeros(m.shape[0], bits.dtype)
    for j in range(m.shape[1]):
        every |= cell[:, j]
        for k in range(j + 1, m.shape[1]):
            same = real[:, j] & real[:, k] & (m[:, j] != m[:, k]) & (cell[:, j] == cell[:, k])
            twice |= np.where(same, cell[:, j], 0)
    return bits, every, twice


def _pick(
    c: _Candidates, reps: list[list[int]], sb: int, db: int, rack: int, ideal: float, limit: int, room: int
) -> int:
    """A replica on broker ``sb`` (of its candidates ``c``) that may move to broker ``db``: its size
    nearest ``ideal`` (strictly between 0 and ``limit`` when ``limit`` is not -1, at most ``room``
    bytes when ``room`` is not -1); it leaves the candidates; -1 when none of the window may.
    ``rack`` is ``db``'s rack bit when the two brokers' racks differ and racks count, else 0: the
    move must not lower the racks the partition spans (:func:`_candidates`).

    The window walks out from ``ideal`` both ways, the nearer size first: ``hb, hi`` is the next
    candidate above (block, index; size ``hs``, infinite past the end), ``lb, li`` the next below
    (size ``ls``, minus infinite before the start)."""
    bounded = limit >= 0 or room >= 0
    if rack and not bounded and c.narrow and (allows := _ALLOWS.get(rack)) is not None:
        return _pick_passing_over(c, reps, sb, db, allows, ideal)
    last, blocks, rows, fails = c.last, c.sizes, c.rows, c.fails
    nb = len(last)
    inf = math.inf
    hb = bisect_left(last, ideal)
    if hb < nb:
        high = blocks[hb]
        hi = bisect_left(high, ideal)
        hs: float = high[hi]
        high_fails = fails[hb]
    else:
        high, hi, hs, high_fails = [], 0, inf, []
    if hb < nb and hi > 0:
        lb, li, low, low_fails = hb, hi - 1, high, high_fails
    else:
        lb = hb - 1
        low, low_fails = (blocks[lb], fails[lb]) if lb >= 0 else ([], [])
        li = len(low) - 1
    ls: float = low[li] if lb >= 0 else -inf
    checked = steps = 0
    while checked < _WINDOW and steps < 8 * _WINDOW:
        if hs - ideal <= ideal - ls:
            if hs == inf:
                break  # both ways are spent
            b, i, size, f = hb, hi, hs, high_fails[hi]
            hi += 1
            if hi < len(high):
                hs = high[hi]
            else:
                hb += 1
                if hb < nb:
                    high, high_fails, hi = blocks[hb], fails[hb], 0
                    hs = high[0]
                else:
                    hs = inf
        else:
            b, i, size, f = lb, li, ls, low_fails[li]
            li -= 1
            if li >= 0:
                ls = low[li]
            else:
                lb -= 1
                if lb >= 0:
                    low, low_fails = blocks[lb], fails[lb]
                    li = len(low) - 1
                    ls = low[li]
                else:
                    ls = -inf
        steps += 1
        if bounded and ((limit >= 0 and not 0 < size < limit) or (room >= 0 and size > room)):
            continue
        checked += 1
        if f & rack:
            continue
        row = rows[b][i]
        r = reps[row]
        if db in r or sb not in r:
            continue
        c.remove(b, i)
        return row
    return -1


_ALLOWS = {1 << k: bytes(0 if v & 1 << k else 1 for v in range(256)) for k in range(8)}
"""Per rack bit: which fails (a byte) let a candidate go to that rack (1) or not (0)."""


def _pick_passing_over(c: _Candidates, reps: list[list[int]], sb: int, db: int, allows: bytes, ideal: float) -> int:
    """:func:`_pick` when every candidate counts toward the window (no size limit, no byte budget)
    and the fails are bytes: the same pick, but the candidates the destination's rack rules out
    (most of those looked at, once the balance is under way) are passed over in bulk.

    The window visits the candidates in the order of their distance to ``ideal`` (the one above
    first on a tie): the first one the rack allows on each side (found with ``bytes.find``), the
    nearer of the two comes first, and the candidates visited before it are those of its side in
    between and those of the other side strictly nearer (nearer or as near, when it is below)."""
    last, blocks, rows, fails = c.last, c.sizes, c.rows, cast(list[bytearray], c.fails)
    nb = len(last)
    hb = bisect_left(last, ideal)
    hi = bisect_left(blocks[hb], ideal) if hb < nb else 0
    if hi > 0:
        lb, li = hb, hi - 1
    else:
        lb = hb - 1
        li = len(blocks[lb]) - 1 if lb >= 0 else -1
    left = _WINDOW  # candidates the window may still visit
    while left > 0:
        # the first candidate the rack allows above (ub, ui; un visited before it on that side) ...
        ub, ui, un = hb, hi, 0
        while ub < nb:
            j = fails[ub].translate(allows).find(1, ui)
            if j >= 0:
                un += j - ui
                ui = j
                break
            un += len(fails[ub]) - ui
            if un >= left:
                break
            ub, ui = ub + 1, 0
        up = ub < nb and un < left
        # ... and below (bb, bi; bn visited before it on that side)
        bb, bi, bn = lb, li, 0
        while bb >= 0:
            j = fails[bb].translate(allows).rfind(1, 0, bi + 1)
            if j >= 0:
                bn += bi - j
                bi = j
                break
            bn += bi + 1
            if bn >= left or bb == 0:
                bb = -1
                break
            bb -= 1
            bi = len(blocks[bb]) - 1
        down = bb >= 0 and bn < left
        if not up and not down:
            return -1
        if up and (not down or blocks[ub][ui] - ideal <= ideal - blocks[bb][bi]):
            # above comes first: below, those strictly nearer are visited before it
            near = blocks[ub][ui] - ideal
            seen = un
            while lb >= 0 and seen < left and ideal - blocks[lb][li] < near:
                seen += 1
                li -= 1
                if li < 0:
                    lb -= 1
                    li = len(blocks[lb]) - 1 if lb >= 0 else -1
            if seen >= left:
                return -1
            b, i = ub, ui
            hb, hi = (ub, ui + 1) if ui + 1 < len(blocks[ub]) else (ub + 1, 0)
        else:
            # below comes first: above, those as near or nearer are visited before it
            near = ideal - blocks[bb][bi]
            seen = bn
            while hb < nb and seen < left and blocks[hb][hi] - ideal <= near:
                seen += 1
                hi += 1
                if hi == len(blocks[hb]):
                    hb, hi = hb + 1, 0
            if seen >= left:
                return -1
            b, i = bb, bi
            lb, li = (bb, bi - 1) if bi > 0 else (bb - 1, len(blocks[bb - 1]) - 1 if bb > 0 else -1)
        left -= seen + 1
        row = rows[b][i]
        r = reps[row]
        if db in r or sb not in r:
            continue
        c.remove(b, i)
        return row
    return -1


def _even_leaders(ctx: _Context, rows: Iterable[int], budget: int | None = None) -> bool:
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
        # heaps of (leaders, tie-break, position), stale entries skipped (see _balance)
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
