"""Column-wise views of a snapshot and of a plan, for checks over 100k–1M partitions (pure).

Replica lists are short (1–6 brokers), so a list of them becomes one padded ``n × width`` int64
matrix (:data:`PAD` fills the unused cells) and per-partition questions ("is this target replica
in the current set?") become a few whole-array operations instead of a Python loop per
partition. The snapshot's columns are built once per snapshot (:func:`columns_of`) and
shared by every plan checked against it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import chain, repeat
from operator import attrgetter, eq, itemgetter

import numpy as np
import numpy.typing as npt

from console.core.limits import INT32_MAX
from console.core.model import ClusterState, Keyed, Partition, TopicPartition

Ints = npt.NDArray[np.int64]
Bools = npt.NDArray[np.bool_]

PAD = np.iinfo(np.int64).min
"""Fills the unused cells of a padded matrix; also stands for "none" (no leader, size unknown)."""
_INT64_MIN, _INT64_MAX = int(np.iinfo(np.int64).min), int(np.iinfo(np.int64).max)
_SPAN = np.int64(2**31)
_INT32_MIN = -(2**31)
_DENSE = 1 << 20
"""Ids below this are looked up in a direct table rather than by binary search."""


def padded(lists: Sequence[Sequence[int]], width: int = 0) -> tuple[Ints, Ints]:
    """``lists`` as an ``n × max(width, longest)`` matrix padded with :data:`PAD`, and their lengths.

    Ids beyond int64 (possible only in plans built in code; invalid anyway) are stored as
    distinct stand-ins just below the int64 maximum.
    """
    n = len(lists)
    lens_list = list(map(len, lists))
    lens = np.array(lens_list, np.int64)
    total = int(lens.sum())
    try:
        values = np.fromiter(chain.from_iterable(lists), np.int64, total)
    except OverflowError:  # ids beyond int64: each gets its own stand-in just below INT64_MAX
        flat = list(chain.from_iterable(lists))
        huge = sorted({b for b in flat if not _INT64_MIN < b <= _INT64_MAX})
        stand_in = {b: _INT64_MAX - k for k, b in enumerate(huge)}
        values = np.fromiter((stand_in.get(b, b) for b in flat), np.int64, total)
    longest = max(lens_list, default=0)
    if longest and longest >= width and min(lens_list) == longest:  # one length for all: a reshape
        return values.reshape(n, longest), lens
    out = np.full((n, max(width, longest, 1)), PAD, np.int64)
    if len(values):
        starts = np.cumsum(lens) - lens
        row = np.repeat(np.arange(n), lens)
        out[row, np.arange(len(values)) - starts[row]] = values
    return out, lens


def widen(m: Ints, width: int) -> Ints:
    if m.shape[1] >= width:
        return m
    return np.hstack([m, np.full((m.shape[0], width - m.shape[1]), PAD, np.int64)])


_BROADCAST = 64
"""Up to this many cells of ``values`` × ``sets`` per row, :func:`member` compares every pair."""


def member(values: Ints, sets: Ints) -> Bools:
    """Per cell of ``values``: whether it is in the same row of ``sets`` (padding is never a member).
    Rows of usual replica lists compare every pair at once; wide rows (a long replica list
    widens every row of its matrix) are looked up in sorted keys instead, in memory linear in the
    cells rather than rows × width²."""
    if values.shape[1] * sets.shape[1] > _BROADCAST and len(values):
        return _member_sorted(values, sets)
    out: Bools = (values[:, :, None] == sets[:, None, :]).any(axis=2) & (values != PAD)
    return out


def _member_sorted(values: Ints, sets: Ints) -> Bools:
    """:func:`member` by one key per cell (its row, then its value) looked up in the keys of
    ``sets``, which sorting each row of ``sets`` puts in order: n·w·log w."""
    if not (_int32s_or_pad(values) and _int32s_or_pad(sets)):
        return _member_ranked(values, sets)
    n = len(values)
    row = (np.arange(n, dtype=np.int64) << 32)[:, None]
    ordered = np.sort(sets, axis=1)
    key_s = (row + (ordered - _INT32_MIN))[ordered != PAD]  # row by row, each row sorted: all sorted
    if not len(key_s):
        return np.zeros(values.shape, np.bool_)
    key_v = (row + (values - _INT32_MIN)).ravel()  # padding cells: below every key, and masked below
    found = key_s[np.minimum(np.searchsorted(key_s, key_v), len(key_s) - 1)] == key_v
    out: Bools = found.reshape(values.shape) & (values != PAD)
    return out


def _int32s_or_pad(a: Ints) -> bool:
    return bool((((a >= _INT32_MIN) & (a <= INT32_MAX)) | (a == PAD)).all())


def _member_ranked(values: Ints, sets: Ints) -> Bools:
    """:func:`member` for ids beyond int32 (plans built in code): each value ranked among all first."""
    n = len(values)
    distinct_values, code = np.unique(np.concatenate([values.ravel(), sets.ravel()]), return_inverse=True)
    code = code.reshape(-1)
    k = np.int64(len(distinct_values))
    key_v = np.repeat(np.arange(n, dtype=np.int64), values.shape[1]) * k + code[: values.size]
    key_s = np.sort(
        (np.repeat(np.arange(n, dtype=np.int64), sets.shape[1]) * k + code[values.size :])[sets.ravel() != PAD]
    )
    if not len(key_s):
        return np.zeros(values.shape, np.bool_)
    found = key_s[np.minimum(np.searchsorted(key_s, key_v), len(key_s) - 1)] == key_v
    out: Bools = found.reshape(values.shape) & (values != PAD)
    return out


def distinct(codes: Ints) -> Ints:
    """Per row: how many different values other than ``-1``."""
    s = np.sort(codes, axis=1)
    new = s != -1
    new[:, 1:] &= s[:, 1:] != s[:, :-1]
    out: Ints = new.sum(axis=1)
    return out


def lookup(keys: Ints, values: Ints, query: Ints, missing: int = PAD) -> Ints:
    """``values`` of ``query`` cells in the sorted ``keys`` (same shape as ``query``); ``missing``
    where a cell is not among the keys."""
    if not len(keys):
        return np.full(query.shape, missing, np.int64)
    top = int(keys[-1])
    if keys[0] >= 0 and top < _DENSE:  # small keys (broker ids): a direct table
        table = np.full(top + 1, missing, np.int64)
        table[keys] = values
        inside = (query >= 0) & (query <= top)
        out: Ints = np.where(inside, table[np.where(inside, query, 0)], missing)
        return out
    pos = np.minimum(np.searchsorted(keys, query), len(keys) - 1)
    return np.where(keys[pos] == query, values[pos], missing)


def digits(a: Ints) -> Ints:
    """How many characters each integer takes in JSON (exact: no floating point)."""
    m = np.abs(a)
    return 1 + (a < 0) + sum((m >= 10**k for k in range(1, 19)), np.zeros(a.shape, np.int64))


def pair_keys(rows: Ints, brokers: Ints) -> Ints:
    """One int64 per (row, broker) for lookups; ``-1`` when the broker id is not a valid id."""
    ok = (brokers >= 0) & (brokers <= INT32_MAX)
    return np.where(ok, rows * _SPAN + np.where(ok, brokers, 0), -1)


@dataclass(frozen=True)
class BrokerTable:
    """Dense numbering of broker ids for per-broker sums."""

    ids: Ints
    """Sorted."""
    position: Ints | None
    """``position[id]`` is the id's index when ids are small (the usual case), else None."""

    @staticmethod
    def of(*id_arrays: Ints) -> BrokerTable:
        values = [a[a != PAD] for a in id_arrays]
        values = [v for v in values if len(v)]
        if not values:
            return BrokerTable(np.zeros(0, np.int64), None)
        low, top = min(int(v.min()) for v in values), max(int(v.max()) for v in values)
        if low < 0 or top >= _DENSE:
            return BrokerTable(np.unique(np.concatenate(values)), None)
        present = np.zeros(top + 1, np.bool_)
        for v in values:
            present[v] = True
        ids = np.flatnonzero(present).astype(np.int64)
        position = np.full(top + 1, -1, np.int64)
        position[ids] = np.arange(len(ids))
        return BrokerTable(ids, position)

    def index(self, ids: Ints) -> Ints:
        """Index of each id (all must be in the table)."""
        if self.position is not None:
            out: Ints = self.position[ids]
            return out
        return np.searchsorted(self.ids, ids)

    def sums(self, ids: Ints, weights: Ints | int = 1) -> Ints:
        """Per broker of the table: the sum of ``weights`` over the cells of ``ids`` naming it
        (padding cells count for nothing)."""
        real = ids != PAD
        index = self.index(ids[real])
        if isinstance(weights, int):
            return np.bincount(index, minlength=len(self.ids)).astype(np.int64) * weights
        out = np.zeros(len(self.ids), np.int64)
        np.add.at(out, index, np.broadcast_to(weights, ids.shape)[real])
        return out


@dataclass(frozen=True)
class SnapshotColumns:
    """A snapshot's partitions as arrays, in ``state.partitions`` order (:func:`rows_of` finds a
    plan entry's row). Arrays that would repeat another (the ISR when every replica is in sync, R
    − AR when nothing is being added) are that very array, read-only like every one here."""

    replicas: Ints
    """R, padded."""
    original: Ints
    """R − AR (what the controller keeps for a partition in flight), padded."""
    original_len: Ints
    adding: Ints
    """AR of partitions in flight, padded."""
    isr: Ints
    leader: Ints
    """PAD when there is no leader."""
    size: Ints
    """The partition's size (leader's log, else the largest replica reported); PAD when unknown."""
    reassigning: Bools
    min_isr: Ints
    """The topic's ``min.insync.replicas``; PAD when unknown."""
    log_keys: Ints
    """Sorted :func:`pair_keys` of every (partition, broker) with a (non-future) log, and ..."""
    log_sizes: Ints
    """... its size."""

    def size_on(self, rows: Ints, brokers: Ints) -> Ints:
        """Bytes of each (row, broker)'s log; PAD when not reported."""
        return lookup(self.log_keys, self.log_sizes, pair_keys(rows, brokers))


def columns_of(state: ClusterState) -> SnapshotColumns:
    """The snapshot's columns, built on first use and kept with the snapshot."""
    return state.memo("plans.columns", snapshot_columns)


def snapshot_columns(state: ClusterState) -> SnapshotColumns:
    parts = state.partitions
    n = len(parts)
    replicas, _ = padded([p.replicas for p in parts])
    adding, adding_len = padded([p.adding for p in parts])
    if adding_len.any():
        # R − AR keeping R's order: compact the kept cells of each row to the left
        keep = ~member(replicas, adding) & (replicas != PAD)
        original = np.full(replicas.shape, PAD, np.int64)
        pos = np.cumsum(keep, axis=1) - 1
        r, c = np.nonzero(keep)
        original[r, pos[r, c]] = replicas[r, c]
        original_len = keep.sum(axis=1)
        del keep, pos, r, c
    else:  # nothing is being added: R − AR is R
        original, original_len = replicas, (replicas != PAD).sum(axis=1)
    isrs = list(map(attrgetter("isr"), parts))
    if all(map(eq, isrs, map(attrgetter("replicas"), parts))):  # every replica in sync: the ISR is R
        isr = replicas
    else:
        isr = padded(isrs)[0]
    del isrs
    leader = np.fromiter((PAD if p.leader is None else p.leader for p in parts), np.int64, n)
    min_isr_of = state.min_insync_index
    min_isr = np.fromiter((min_isr_of.get(p.topic, PAD) for p in parts), np.int64, n)
    # every (non-future) log: the first one per (partition, broker) counts, as Partition.size_on
    logs_of = [p.logs for p in parts]
    logs = list(chain.from_iterable(logs_of))
    row = np.repeat(np.arange(n), np.fromiter(map(len, logs_of), np.int64, n))
    del logs_of
    broker = np.fromiter(map(itemgetter(0), logs), np.int64, len(logs))
    sized = np.fromiter(map(itemgetter(2), logs), np.int64, len(logs))
    current = ~np.fromiter(map(itemgetter(3), logs), np.bool_, len(logs))
    del logs
    row, broker, sized = row[current], broker[current], sized[current]
    keys, first = np.unique(pair_keys(row, broker), return_index=True)
    size = np.full(n, PAD, np.int64)
    np.maximum.at(size, row, sized)  # the largest replica ...
    on_leader = broker == leader[row]
    size[row[on_leader][::-1]] = sized[on_leader][::-1]  # ... unless the leader reports one (its first log)
    out = SnapshotColumns(
        replicas=replicas,
        original=original,
        original_len=original_len,
        adding=adding,
        isr=isr,
        leader=leader,
        size=size,
        reassigning=(adding_len > 0) | np.fromiter((bool(p.removing) for p in parts), np.bool_, n),
        min_isr=min_isr,
        log_keys=keys,
        log_sizes=sized[first],
    )
    for a in vars(out).values():
        a.flags.writeable = False  # shared by every plan checked against the snapshot
    return out


_KEY_SPAN = 2**32


def partition_keys_of(code: Ints, number: Ints) -> Ints:
    """One int64 per (topic, partition), in (topic code, number) order: the topic's code × 2³² +
    the partition number (an int32) less INT32_MIN."""
    out: Ints = code * _KEY_SPAN + (number - _INT32_MIN)
    return out


@dataclass(frozen=True)
class PartitionKeys:
    """A snapshot's partitions by (topic, partition), for joins (:func:`rows_of`): one sorted int64
    per partition rather than a dict of a million key tuples."""

    codes: dict[str, int]
    """Each topic's code."""
    keys: Ints
    """Sorted: each partition's key (:func:`partition_keys_of`)."""
    rows: Ints | None
    """The row in ``state.partitions`` of each key; None when the partitions are in key order
    (the usual case: a snapshot keeps them sorted) and the rows are the positions."""
    others: dict[TopicPartition, int] | None = None
    """Rows by key instead, when a partition number is not an int32 (never in a real cluster)."""


def partition_keys(state: ClusterState) -> PartitionKeys:
    """The snapshot's keys, built on first use and kept with the snapshot."""
    return state.memo("plans.keys", _partition_keys)


def _partition_keys(state: ClusterState) -> PartitionKeys:
    parts = state.partitions
    n = len(parts)
    topics = list(map(attrgetter("topic"), parts))
    codes = {t: i for i, t in enumerate(dict.fromkeys(topics))}
    code = np.fromiter(map(codes.__getitem__, topics), np.int64, n)
    del topics
    number = _int32s(list(map(attrgetter("partition"), parts)))
    if number is None:
        return PartitionKeys(codes, np.zeros(0, np.int64), None, {p.key: i for i, p in enumerate(parts)})
    keys = partition_keys_of(code, number)
    if (keys[1:] > keys[:-1]).all():
        return PartitionKeys(codes, keys, None)
    rows = np.argsort(keys, kind="stable")  # the same key twice: the later row stays last
    return PartitionKeys(codes, keys[rows], rows)


def _int32s(numbers: list[int]) -> Ints | None:
    """``numbers`` as int64, or None when one of them is not an int32."""
    try:
        out = np.fromiter(numbers, np.int64, len(numbers))
    except OverflowError:
        return None
    if len(out) and (out.min() < _INT32_MIN or out.max() > INT32_MAX):
        return None
    return out


def rows_of(state: ClusterState, entries: Sequence[Keyed]) -> Ints:
    """Per entry (a plan's, any record of a topic and a partition): the row of its partition in
    ``state.partitions``, -1 when ``state`` has no such partition; the last row when a key is
    there twice (as :attr:`ClusterState.partition_index` keeps it)."""
    k = partition_keys(state)
    n = len(entries)
    if k.others is not None:
        keys = zip(map(attrgetter("topic"), entries), map(attrgetter("partition"), entries), strict=True)
        return np.fromiter(map(k.others.get, keys, repeat(-1)), np.int64, n)
    code = np.fromiter(map(k.codes.get, map(attrgetter("topic"), entries), repeat(-1)), np.int64, n)
    numbers = list(map(attrgetter("partition"), entries))
    number = _int32s(numbers)
    if number is None:  # a number no partition has: that entry is unknown
        ok = [type(x) is int and _INT32_MIN <= x <= INT32_MAX for x in numbers]
        number = np.fromiter((x if good else 0 for x, good in zip(numbers, ok, strict=True)), np.int64, n)
        code[~np.array(ok, np.bool_)] = -1
    del numbers
    query = partition_keys_of(code, number)  # negative for an unknown topic: below every key
    pos = np.searchsorted(k.keys, query, side="right") - 1  # the last key not above the query
    hit = pos >= 0
    hit[hit] = k.keys[pos[hit]] == query[hit]
    out: Ints = np.where(hit, pos if k.rows is None else k.rows[np.where(hit, pos, 0)], -1)
    return out


def partitions_for(state: ClusterState, entries: Sequence[Keyed]) -> list[Partition | None]:
    """Per entry, its partition in ``state`` (None when there is none): :func:`partitions_at` of
    :func:`rows_of`."""
    return partitions_at(state, rows_of(state, entries))


def partitions_at(state: ClusterState, rows: Ints) -> list[Partition | None]:
    """The partitions of ``state`` at ``rows`` (:func:`rows_of`), None for -1; picked from an
    object array rather than through a list of a million row numbers as Python ints."""
    parts = state.partitions
    if len(rows) < 4096:
        return [parts[r] if r >= 0 else None for r in rows.tolist()]
    table = np.empty(len(parts) + 1, object)  # None in the last cell, for the rows of -1
    table[: len(parts)] = parts
    out: list[Partition | None] = table[rows].tolist()
    return out


def broker_ids(state: ClusterState) -> Ints:
    return np.fromiter((b.id for b in state.brokers), np.int64, len(state.brokers))
