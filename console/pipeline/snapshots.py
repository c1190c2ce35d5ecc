"""Snapshots as the pipeline stores them: one Parquet row per replica, and one header row per
snapshot with everything else the snapshot holds (pure pyarrow, no Spark).

Two datasets under a snapshot directory, partitioned by cluster and UTC date (Hive style, so
Spark and pyarrow both discover ``cluster`` and ``date`` from the path)::

    DIR/replicas/cluster=<key>/date=2026-11-23/part-<ms>-<id>.parquet   one row per replica
    DIR/headers/cluster=<key>/date=2026-11-23/part-<ms>-<id>.parquet    one row per snapshot

A replica row carries the replica (broker, rack, position in R, leader?, in ISR, adding, removing,
bytes and log dir, and a future log's), its partition's state (leader, reassigning, truly
under-replicated, where the reassignment was read) and the throttles in force on it (the broker's
rates and whether the topic lists this replica). :func:`state_from_tables` gives back the
:class:`ClusterState` the rows came from, in its canonical form (:func:`canonical`): ISR, AR and
RR in the order of R, only the logs of replicas in R, times to the millisecond.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from itertools import repeat
from operator import itemgetter
from typing import Any, NamedTuple, TypeVar

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from console.core.errors import ConfigError
from console.core.limits import FOLLOWER_LIST, FOLLOWER_RATE, LEADER_LIST, LEADER_RATE
from console.core.model import (
    BrokerId,
    ClusterState,
    Partition,
    ReplicaLog,
    Source,
    broker_rate_bps,
    cluster_key,
    partitions_of,
    replica_listed,
)
from console.core.perf import without_gc
from console.state.document import state_from_doc, state_header

T = TypeVar("T")
Ints = npt.NDArray[np.int64]
Bools = npt.NDArray[np.bool_]
Objects = npt.NDArray[np.object_]

ROWS_FORMAT = 1
"""Version of the stored rows: columns may be added, none removed or renamed. A header written by
a newer console (a higher ``format``) is refused rather than misread."""

TIME = pa.timestamp("ms", tz="UTC")

REPLICA_SCHEMA = pa.schema(
    [
        ("taken_at", TIME),
        ("topic", pa.string()),
        ("partition", pa.int32()),
        ("broker", pa.int32()),
        ("position", pa.int16()),
        ("rack", pa.string()),
        ("leader", pa.int32()),
        ("is_leader", pa.bool_()),
        ("in_isr", pa.bool_()),
        ("adding", pa.bool_()),
        ("removing", pa.bool_()),
        ("reassigning", pa.bool_()),
        ("under_replicated", pa.bool_()),
        ("source", pa.string()),
        ("bytes", pa.int64()),
        ("log_dir", pa.string()),
        ("future_bytes", pa.int64()),
        ("future_log_dir", pa.string()),
        ("leader_rate", pa.int64()),
        ("follower_rate", pa.int64()),
        ("leader_throttled", pa.bool_()),
        ("follower_throttled", pa.bool_()),
    ]
)
"""One row per replica (``cluster`` and ``date`` come from the directory)."""

HEADER_SCHEMA = pa.schema(
    [
        ("taken_at", TIME),
        ("format", pa.int16()),
        ("cluster_id", pa.string()),
        ("name", pa.string()),
        ("fingerprint", pa.string()),
        ("partitions", pa.int32()),
        ("replicas", pa.int32()),
        ("reassigning", pa.int32()),
        ("under_replicated", pa.int32()),
        ("offline", pa.int32()),
        ("logs_known", pa.bool_()),
        ("header", pa.string()),
    ]
)
"""One row per snapshot: counts to query, and the rest of the snapshot as JSON (``state --json``
without its partitions)."""


@dataclass(frozen=True)
class StoredSnapshot:
    """One stored snapshot of a cluster, as a job picks it: its time and its header's JSON."""

    taken_ms: int
    header: str

    @property
    def date(self) -> str:
        """The ``date=`` directory its rows are in."""
        return day_of(self.taken_ms / 1000)


_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")


def cluster_dir(key: str) -> str:
    """A cluster key as a directory value: ids are already safe; a name may need escaping."""
    return _UNSAFE.sub(lambda m: f"%{ord(m.group()):02X}", key) or "unknown"


def day_of(taken_at: float) -> str:
    return datetime.fromtimestamp(taken_at, UTC).strftime("%Y-%m-%d")


def _ms(t: float) -> int:
    return round(t * 1000)


def replica_rows(state: ClusterState) -> Iterator[dict[str, Any]]:
    """One row per replica, in the order of the snapshot's partitions and of R: the stored table."""
    brokers = state.broker_index
    rates = state.throttles.broker_map()
    lists = state.throttles.topic_map()
    taken = _ms(state.taken_at)
    for p in state.partitions:
        isr = set(p.isr)
        urp = p.under_replicated
        logs = {(log.broker, log.is_future): log for log in p.logs}
        topic_lists = lists.get(p.topic, {})
        source = p.source.value if p.source else None
        for i, b in enumerate(p.replicas):
            broker = brokers.get(b)
            log = logs.get((b, False))
            future = logs.get((b, True))
            yield {
                "taken_at": taken,
                "topic": p.topic,
                "partition": p.partition,
                "broker": int(b),
                "position": i,
                "rack": broker.rack if broker else None,
                "leader": p.leader,
                "is_leader": b == p.leader,
                "in_isr": b in isr,
                "adding": b in p.adding,
                "removing": b in p.removing,
                "reassigning": p.reassigning,
                "under_replicated": urp,
                "source": source,
                "bytes": log.size if log else None,
                "log_dir": log.log_dir if log else None,
                "future_bytes": future.size if future else None,
                "future_log_dir": future.log_dir if future else None,
                "leader_rate": broker_rate_bps(rates, b, LEADER_RATE),
                "follower_rate": broker_rate_bps(rates, b, FOLLOWER_RATE),
                "leader_throttled": replica_listed(topic_lists, LEADER_LIST, p.partition, b),
                "follower_throttled": replica_listed(topic_lists, FOLLOWER_LIST, p.partition, b),
            }


def replica_table(state: ClusterState) -> pa.Table:
    rows = list(replica_rows(state))
    return pa.Table.from_pylist(rows, schema=REPLICA_SCHEMA)


def header_table(state: ClusterState) -> pa.Table:
    row = {
        "taken_at": _ms(state.taken_at),
        "format": ROWS_FORMAT,
        "cluster_id": state.cluster_id,
        "name": state.name,
        "fingerprint": state.fingerprint(),
        "partitions": len(state.partitions),
        "replicas": sum(len(p.replicas) for p in state.partitions),
        "reassigning": len(state.in_flight),
        "under_replicated": len(state.under_replicated),
        "offline": sum(p.offline for p in state.partitions),
        "logs_known": state.logs_known,
        "header": json.dumps(state_header(state), separators=(",", ":")),
    }
    return pa.Table.from_pylist([row], schema=HEADER_SCHEMA)


def key_of(state: ClusterState) -> str:
    """The cluster's key in the history: its id, or its name when the id is not known."""
    return cluster_key(state, state.name) or "unknown"


def _time(v: Any) -> float:
    return v.timestamp() if isinstance(v, datetime) else float(v) / 1000


def state_from_tables(header: pa.Table, replicas: pa.Table) -> ClusterState:
    """The snapshot stored as one header row and its replica rows (in any order), canonical."""
    if header.num_rows != 1:
        raise ConfigError(f"A snapshot has one header row, not {header.num_rows}.")
    h = header.to_pylist()[0]
    if int(h["format"]) > ROWS_FORMAT:
        raise newer_format(int(h["format"]))
    return state_from_rows(h["taken_at"], h["header"], replicas)


STATE_COLUMNS = (
    "topic",
    "partition",
    "broker",
    "position",
    "leader",
    "in_isr",
    "adding",
    "removing",
    "source",
    "bytes",
    "log_dir",
    "future_bytes",
    "future_log_dir",
)
"""The replica columns a snapshot is rebuilt from (:func:`state_from_rows`)."""


def _interned(column: pa.ChunkedArray | pa.Array, null: object = None) -> tuple[Ints, Objects]:
    """``column`` as codes into a table of its distinct values, one Python object each (``null``
    stands for a missing value): a million rows of 500 broker ids make 500 ints, not a million."""
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    encoded = pc.dictionary_encode(column)
    values = encoded.dictionary.to_pylist()
    table = np.empty(len(values) + 1, object)
    table[: len(values)] = values
    table[len(values)] = null
    codes = encoded.indices.fill_null(len(values)).to_numpy().astype(np.int64)
    return codes, table


def _flags(column: pa.ChunkedArray) -> Bools:
    """A boolean column as numpy, a missing value false (as ``if row[i]`` reads it)."""
    out: Bools = column.fill_null(False).to_numpy()
    return out


def _in_order(rows: pa.Table) -> bool:
    """Whether the rows are sorted by topic, partition and position already (no key missing)."""
    if rows.num_rows < 2:
        return True
    keys = [rows.column(c) for c in ("topic", "partition", "position")]
    if any(k.null_count for k in keys):
        return False
    topic = keys[0].combine_chunks()
    before, after = topic.slice(0, len(topic) - 1), topic.slice(1)
    number, position = (np.asarray(k.to_numpy(), np.int64) for k in keys[1:])
    same_topic: Bools = pc.equal(before, after).to_numpy(zero_copy_only=False)
    ok = pc.less(before, after).to_numpy(zero_copy_only=False) | (
        same_topic & ((number[:-1] < number[1:]) | ((number[:-1] == number[1:]) & (position[:-1] <= position[1:])))
    )
    return bool(ok.all())


def _groups(flat: list[T], counts: Ints) -> list[tuple[T, ...]]:
    """``flat`` cut into consecutive tuples of ``counts[i]`` items each."""
    if not len(counts):
        return []
    k = int(counts[0])
    if (counts == k).all():  # one length for all (RF 3 throughout): cut at C speed
        return [()] * len(counts) if k == 0 else list(zip(*[iter(flat)] * k, strict=True))
    # a few lengths (RF 3, and 4 or 5 while reassigning): cut each length's partitions at C speed
    out = np.empty(len(counts), object)
    length_of_item = np.repeat(counts, counts)
    for c in np.unique(counts).tolist():
        where = np.flatnonzero(counts == c)
        if c == 0:
            cut: list[tuple[T, ...]] = [()] * len(where)
        else:
            items = np.flatnonzero(length_of_item == c).tolist()
            taken = itemgetter(*items)(flat) if len(items) > 1 else (flat[items[0]],)
            cut = list(zip(*[iter(taken)] * c, strict=True))
        out[where] = np.fromiter(cut, object, len(cut))
    grouped: list[tuple[T, ...]] = out.tolist()
    return grouped


def _subsets(
    flag: Bools, starts: Ints, counts: Ints, brokers: list[BrokerId], whole: list[tuple[BrokerId, ...]]
) -> list[tuple[BrokerId, ...]]:
    """Per partition: the brokers of its rows with ``flag``, in the rows' order; the partition's
    replica tuple itself when every row has it, the one empty tuple when none has."""
    hits = np.add.reduceat(flag.astype(np.int64), starts) if len(starts) else np.zeros(0, np.int64)
    full = hits == counts
    if 2 * int(full.sum()) > len(starts):  # mostly whole (the ISR): copy them, then mend the others
        out = list(whole)
        for i in np.flatnonzero((hits == 0) & ~full).tolist():
            out[i] = ()
    else:  # mostly none (AR, RR)
        out = [()] * len(starts)
        for i in np.flatnonzero(full).tolist():
            out[i] = whole[i]
    for i in np.flatnonzero((hits > 0) & ~full).tolist():
        a = int(starts[i])
        out[i] = tuple(brokers[j] for j in range(a, a + int(counts[i])) if flag[j])
    return out


@without_gc
def state_from_rows(taken_at: Any, header: str, replicas: pa.Table) -> ClusterState:
    """The snapshot taken at ``taken_at`` (a time, or epoch milliseconds) from its header's JSON
    and its replica rows (any order; other columns are ignored), canonical."""
    rows = replicas.select(list(STATE_COLUMNS))
    for i, f in enumerate(rows.schema):  # a reader may hand strings over dictionary encoded
        if pa.types.is_dictionary(f.type):
            rows = rows.set_column(i, f.name, rows.column(i).cast(f.type.value_type))
    if not _in_order(rows):  # stored rows are written in order; a Spark group's are not
        rows = rows.sort_by([("topic", "ascending"), ("partition", "ascending"), ("position", "ascending")])
    n = rows.num_rows
    col = rows.column
    # each partition is a run of rows: where the topic or the partition number changes
    topic_code, topic_names = _interned(col("topic"))
    number_code, numbers = _interned(col("partition"))
    change = np.ones(n, np.bool_)
    change[1:] = (topic_code[1:] != topic_code[:-1]) | (number_code[1:] != number_code[:-1])
    starts = np.flatnonzero(change)
    counts = np.diff(np.append(starts, n))
    # one Python object per distinct broker id, log dir and topic, shared by every row naming it
    ids = pa.chunked_array([*col("broker").cast(pa.int64()).chunks, *col("leader").cast(pa.int64()).chunks], pa.int64())
    id_code, broker_ids = _interned(ids)
    broker_code, leader_code = id_code[:n], id_code[n:]
    brokers: list[BrokerId] = broker_ids[broker_code].tolist()
    replicas_of = _groups(brokers, counts)
    source_code, source_names = _interned(col("source"))
    sources = np.array([Source(s) if s else None for s in source_names.tolist()], object)
    # logs: each row's current log (when it has a size) then its future log (idem), in row order
    logs = _logs(rows, np.cumsum(change) - 1, broker_code, broker_ids)
    partitions = partitions_of(
        topic_names[topic_code[starts]].tolist(),
        numbers[number_code[starts]].tolist(),
        replicas_of,
        _subsets(_flags(col("in_isr")), starts, counts, brokers, replicas_of),
        broker_ids[leader_code[starts]].tolist(),
        _subsets(_flags(col("adding")), starts, counts, brokers, replicas_of),
        _subsets(_flags(col("removing")), starts, counts, brokers, replicas_of),
        sources[source_code[starts]].tolist(),
        _groups(logs.flat, np.add.reduceat(logs.per_row, starts) if n else counts),
    )
    state = state_from_doc(json.loads(header), tuple(partitions))
    del rows, col, logs  # the Arrow memory of the work goes back to the system, not to a pool kept for later
    pa.default_memory_pool().release_unused()
    return replace(state, taken_at=_time(taken_at))


class _Logs(NamedTuple):
    flat: list[ReplicaLog]
    """Every log of the rows in order: a row's current log, then its future log."""
    per_row: Ints
    """How many of them each row has (0, 1 or 2)."""


def _shared(values: Ints, partition: Ints) -> list[int]:
    """``values`` as Python ints, one object for a value repeated by the next row of its
    partition (replicas in sync often have the same size)."""
    new = np.ones(len(values), np.bool_)
    new[1:] = (values[1:] != values[:-1]) | (partition[1:] != partition[:-1])
    distinct = np.empty(int(new.sum()), object)
    distinct[:] = values[new].tolist()
    out: list[int] = distinct[np.cumsum(new) - 1].tolist()
    return out


def _logs(rows: pa.Table, partition: Ints, broker_code: Ints, broker_ids: Objects) -> _Logs:
    """``partition``: each row's partition (0, 1, ...)."""

    def made(size: str, log_dir: str, future: bool) -> tuple[Ints, list[ReplicaLog]]:
        column = rows.column(size)
        which = np.flatnonzero(pc.is_valid(column).to_numpy(zero_copy_only=False))
        dir_code, dirs = _interned(rows.column(log_dir), "")
        # a ReplicaLog is a named tuple: tuple.__new__ makes one from its four values at C speed
        # (what ReplicaLog._make does, without a Python call per log)
        logs = list(
            map(
                tuple.__new__,
                repeat(ReplicaLog),
                zip(
                    broker_ids[broker_code[which]].tolist(),
                    dirs[dir_code[which]].tolist(),
                    _shared(column.fill_null(0).to_numpy()[which], partition[which]),
                    repeat(future),
                ),
            )
        )
        return which, logs

    current_rows, current = made("bytes", "log_dir", False)
    future_rows, future = made("future_bytes", "future_log_dir", True)
    per_row = np.zeros(rows.num_rows, np.int64)
    per_row[current_rows] += 1
    per_row[future_rows] += 1
    if not future:
        return _Logs(current, per_row)
    both = current + future
    order = np.argsort(np.concatenate([2 * current_rows, 2 * future_rows + 1]), kind="stable")
    return _Logs(list(map(both.__getitem__, order.tolist())), per_row)


def canonical(state: ClusterState) -> ClusterState:
    """``state`` as the rows keep it: partitions sorted, ISR, AR and RR in the order of R, only
    the logs of replicas in R (current first, then future), time to the millisecond."""

    def part(p: Partition) -> Partition:
        def of(ids: tuple[BrokerId, ...]) -> tuple[BrokerId, ...]:
            keep = set(ids)
            return tuple(b for b in p.replicas if b in keep)

        logs = {(log.broker, log.is_future): log for log in p.logs}
        kept = tuple(logs[(b, f)] for b in p.replicas for f in (False, True) if (b, f) in logs)
        return replace(p, isr=of(p.isr), adding=of(p.adding), removing=of(p.removing), logs=kept)

    return replace(
        state,
        taken_at=_ms(state.taken_at) / 1000,
        partitions=tuple(part(p) for p in sorted(state.partitions, key=lambda p: p.key)),
    )


def newer_format(found: int) -> ConfigError:
    return ConfigError(
        f"The snapshots were written by a newer console (rows format {found}; this one reads up to {ROWS_FORMAT}).",
        "Upgrade the console that runs the pipeline, or collect with this one.",
    )
