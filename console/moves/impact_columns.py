"""The impact's totals from the diff's columns (the in-process review), and the per-entry count of
followers across zones that the Spark review runs over its Arrow batches (:func:`topic_counts`):
one computation, two callers, as the review's rules."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from console.core.model import Broker, BrokerId, ClusterState
from console.core.perf import without_gc
from console.moves.impact import (
    BrokerTotals,
    DirPeak,
    Impact,
    ImpactLimits,
    ImpactParts,
    ImpactTerms,
    Pricing,
    TopicCounts,
    assemble,
)
from console.plans.columns import PAD, BrokerTable, Ints, columns_of, lookup, partition_keys
from console.plans.diff import ChangeKind, PlanDiff
from console.plans.plan import ANY


@without_gc
def impact(
    d: PlanDiff,
    pricing: Pricing | None = None,
    rates: Mapping[str, float | None] | None = None,
    throttle: int | None = None,
    limits: ImpactLimits | None = None,
) -> Impact:
    """What the plan of ``d`` costs and whom it touches, against the snapshot it was diffed on (a
    generator's report carries its summary: ``impact(diff(state, made.plan), …).summary()``)."""
    return assemble(impact_parts(d, pricing or Pricing()), ImpactTerms(pricing, rates, throttle, limits))


def impact_parts(d: PlanDiff, pricing: Pricing) -> ImpactParts:
    state, c = d.state, d.columns
    sc = columns_of(state)
    ids = np.fromiter((int(b.broker) for b in d.brokers), np.int64, len(d.brokers))
    table = BrokerTable.of(ids)
    psize = np.where(c.size == PAD, 0, c.size)
    turn = (c.leader_before != c.leader_after) & c.known
    gained = _sums(table, c.leader_after[turn])
    lost = _sums(table, c.leader_before[turn])
    # leaving replicas free their own bytes (the partition's when theirs are not reported)
    ri, ci = np.nonzero(c.removing & c.known[:, None])
    gone = c.current[ri, ci]
    own = sc.size_on(c.rows[ri], gone) if len(ri) else np.zeros(0, np.int64)
    gone_bytes = np.where(own > 0, own, psize[ri])
    removed = _sums(table, gone, gone_bytes)
    ai, aj = np.nonzero(c.adding)
    dest = c.target[ai, aj]
    copied = sc.size_on(c.rows[ai], dest) if len(ai) else np.zeros(0, np.int64)
    add_bytes = psize[ai] - np.where(copied > 0, copied, 0)
    added = _sums(table, dest, add_bytes)
    dirs = _dir_peaks(d, table, added, (dest, add_bytes, ai, aj), (gone, gone_bytes, ri))
    brokers = tuple(
        BrokerTotals(
            b.broker,
            b.rack,
            b.leaders_before,
            b.leaders_after,
            int(gained[i]),
            int(lost[i]),
            b.bytes_before,
            b.bytes_after,
            b.bytes_in,
            b.bytes_out,
            int(removed[i]),
            int(added[i]),
            *capacity_of(state.broker(b.broker)),
        )
        for i, b in enumerate(d.brokers)
    )
    flows = tuple((f.source, f.destination, f.replicas, f.bytes) for f in d.flows)
    return ImpactParts(
        brokers, flows, _topics(d, pricing), d.bytes_to_copy, dirs, int((c.leader_before != c.leader_after).sum())
    )


def _sums(table: BrokerTable, brokers: Ints, weights: Ints | int = 1) -> Ints:
    real = brokers != PAD
    return table.sums(brokers[real], weights if isinstance(weights, int) else weights[real])


def capacity_of(b: Broker | None) -> tuple[int | None, int | None]:
    """The size of the broker's online dirs and what is used of them, when every one says both."""
    dirs = [x for x in (b.log_dirs if b else ()) if not x.offline]
    if not dirs or any(x.total_bytes is None or x.usable_bytes is None for x in dirs):
        return None, None
    total = sum(x.total_bytes or 0 for x in dirs)
    return total, total - sum(x.usable_bytes or 0 for x in dirs)


def _dir_peaks(
    d: PlanDiff,
    table: BrokerTable,
    added: Ints,
    adds: tuple[Ints, Ints, Ints, Ints],
    gones: tuple[Ints, Ints, Ints],
) -> tuple[DirPeak, ...]:
    """Each sized log dir's used bytes now, at the peak and after (:func:`dir_peaks`), from the
    diff's columns: the bytes a replica the plan names a dir for brings there, the rest per broker,
    and what the leaving replicas free per dir."""
    state, plan = d.state, d.plan
    sized = sized_brokers(state)
    if not sized:
        return ()
    dest, add_bytes, ai, aj = adds
    named: dict[tuple[int, str], int] = {}
    if plan.names_dirs:
        for k in range(len(ai)):
            e = plan.entries[int(ai[k])]
            path = e.log_dirs[int(aj[k])] if e.log_dirs is not None and int(aj[k]) < len(e.log_dirs) else ANY
            if path != ANY:
                key = (int(dest[k]), path)
                named[key] = named.get(key, 0) + int(add_bytes[k])
    by_broker = {int(b): int(n) for b, n in zip(table.ids.tolist(), added.tolist(), strict=True)}
    return dir_peaks(sized, by_broker, named, _freed(d, sized, gones))


def sized_brokers(state: ClusterState) -> list[Broker]:
    """The brokers with a log dir whose size and free space are known."""
    return [b for b in state.brokers if any(x.total_bytes and x.usable_bytes is not None for x in b.log_dirs)]


def dir_peaks(
    sized: Sequence[Broker],
    added: Mapping[int, int],
    named: Mapping[tuple[int, str], int],
    freed: Mapping[tuple[BrokerId, str], int],
) -> tuple[DirPeak, ...]:
    """Each log dir of the ``sized`` brokers: used now, at the peak and after. ``added``: what each
    broker's disk grows by before anything is removed; ``named``: the part of it the plan names a
    dir for (it lands there); the rest is spread evenly over the broker's dirs that take new
    replicas (online, not cordoned), as Kafka evens out the partitions of a broker's dirs;
    ``freed``: what the leaving replicas free per (broker, dir). The in-process review and the
    Spark review both end here."""
    unnamed = dict(added)
    for (broker, _), n in named.items():
        unnamed[broker] = unnamed.get(broker, 0) - n
    out = []
    for b in sized:
        takes = [x.path for x in b.log_dirs if not x.offline and not b.dir_cordoned(x.path)] or [
            x.path for x in b.log_dirs if not x.offline
        ]
        spread = unnamed.get(int(b.id), 0) // len(takes) if takes else 0
        for x in b.log_dirs:
            if x.offline or not x.total_bytes or x.usable_bytes is None:
                continue
            used = x.total_bytes - x.usable_bytes
            peak = used + named.get((int(b.id), x.path), 0) + (spread if x.path in takes else 0)
            out.append(DirPeak(b.id, x.path, x.total_bytes, used, peak, max(0, peak - freed.get((b.id, x.path), 0))))
    return tuple(out)


def _freed(d: PlanDiff, sized: Sequence[Broker], gones: tuple[Ints, Ints, Ints]) -> dict[tuple[BrokerId, str], int]:
    """Bytes the leaving replicas free per (broker, dir): summed per broker where it has one dir,
    looked up replica by replica only on brokers with several."""
    gone, gone_bytes, ri = gones
    out: dict[tuple[BrokerId, str], int] = {}
    if not len(gone):
        return out
    table = BrokerTable.of(gone)
    per_broker = table.sums(gone, gone_bytes)
    for b in sized:
        if len(b.log_dirs) == 1 and int(b.id) in table.ids:
            out[(b.id, b.log_dirs[0].path)] = int(per_broker[int(np.searchsorted(table.ids, int(b.id)))])
    several = np.array([int(b.id) for b in sized if len(b.log_dirs) > 1], np.int64)
    rows, parts = d.columns.rows, d.state.partitions
    for k in np.flatnonzero(np.isin(gone, several)).tolist():
        broker = BrokerId(int(gone[k]))
        path = parts[int(rows[int(ri[k])])].log_dir_on(broker)
        if path is not None:
            out[(broker, path)] = out.get((broker, path), 0) + int(gone_bytes[k])
    return out


def zone_codes(state: ClusterState, pricing: Pricing) -> tuple[Ints, Ints]:
    """Broker ids (sorted) and the code of each one's zone (-1: no rack, zone unknown)."""
    zones: dict[str, int] = {}
    pairs = sorted((int(b.id), pricing.zone_of(b.rack)) for b in state.brokers)
    codes = [-1 if z is None else zones.setdefault(z, len(zones)) for _, z in pairs]
    return np.array([b for b, _ in pairs], np.int64), np.array(codes, np.int64)


def cross_followers(replicas: Ints, leader: Ints, broker_ids: Ints, zones: Ints) -> Ints:
    """Per row: replicas in another known zone than the row's leader (whose zone is known)."""
    zr, zl = _zones_of(replicas, broker_ids, zones), _zones_of(leader, broker_ids, zones)
    out: Ints = ((zr != zl[:, None]) & (zr >= 0) & (zl >= 0)[:, None]).sum(axis=1)
    return out


def _zones_of(cells: Ints, broker_ids: Ints, zones: Ints) -> Ints:
    """The zone code of each cell's broker (-1: padding, a broker not known, or no rack)."""
    if not len(broker_ids):
        return np.full(cells.shape, -1, np.int64)
    top = int(broker_ids[-1])
    if int(broker_ids[0]) >= 0 and top < 1 << 20:  # small ids (as brokers have): a direct table
        table = np.full(top + 2, -1, np.int64)
        table[broker_ids] = zones
        out: Ints = table[np.where((cells >= 0) & (cells <= top), cells, top + 1)]
        return out
    return lookup(broker_ids, zones, cells, -1)


def topic_counts(
    code: Ints,
    size: Ints,
    cells: tuple[Ints, Ints, Ints, Ints, Ints],
    zones: tuple[Ints, Ints],
    n_topics: int,
) -> tuple[Ints, Ints, Ints, Ints]:
    """Per topic code (``n_topics`` of them), over changed entries with topic ``code`` and partition
    ``size`` (PAD unknown): entries, bytes copied, followers across zones before and after.
    ``cells``: current, leader before, target, leader after, adding replicas per entry."""
    current, leader_before, target, leader_after, adding = cells
    ids, zc = zones
    psize = np.where(size == PAD, 0, size)
    before = cross_followers(current, leader_before, ids, zc)
    after = cross_followers(target, leader_after, ids, zc)
    return (
        np.bincount(code, minlength=n_topics).astype(np.int64),
        np.bincount(code, psize * adding, minlength=n_topics).astype(np.int64),
        np.bincount(code, before, minlength=n_topics).astype(np.int64),
        np.bincount(code, after, minlength=n_topics).astype(np.int64),
    )


def _topic_codes(state: ClusterState) -> tuple[Ints, Ints, list[str]] | None:
    """Each partition's topic code (by its row in the snapshot), each topic's partitions, the names;
    None when a partition number is beyond int32 (never in a real cluster). Kept with the snapshot."""
    keys = partition_keys(state)
    if keys.others is not None or not len(state.partitions):
        return None
    by_row = np.empty(len(keys.keys), np.int64)
    if keys.rows is None:
        by_row = keys.keys >> 32
    else:
        by_row[keys.rows] = keys.keys >> 32
    return by_row, np.bincount(by_row, minlength=len(keys.codes)), list(keys.codes)


def _topics(d: PlanDiff, pricing: Pricing) -> tuple[TopicCounts, ...]:
    state, c = d.state, d.columns
    coded = state.memo("impact.topic_codes", _topic_codes)
    if coded is None:
        return ()
    by_row, partitions, names = coded
    changed = c.known & ~c.is_kind(ChangeKind.NONE)
    every = bool(changed.all())

    def pick(a: Ints) -> Ints:
        return a if every else a[changed]

    counts = topic_counts(
        by_row[pick(c.rows)],
        pick(c.size),
        (
            pick(c.current),
            pick(c.leader_before),
            pick(c.target),
            pick(c.leader_after),
            pick(c.adding.sum(axis=1)),
        ),
        zone_codes(state, pricing),
        len(names),
    )
    return tuple(
        TopicCounts(names[t], int(partitions[t]), *(int(a[t]) for a in counts))
        for t in np.flatnonzero(counts[0] | counts[2] | counts[3]).tolist()
    )
