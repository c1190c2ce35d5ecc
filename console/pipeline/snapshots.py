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
from typing import Any

import pyarrow as pa

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
    replica_listed,
)
from console.state.document import state_from_doc, state_header

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


def state_from_rows(taken_at: Any, header: str, replicas: pa.Table) -> ClusterState:
    """The snapshot taken at ``taken_at`` (a time, or epoch milliseconds) from its header's JSON
    and its replica rows (any order; other columns are ignored), canonical."""
    rows = replicas.select(list(STATE_COLUMNS)).sort_by(
        [("topic", "ascending"), ("partition", "ascending"), ("position", "ascending")]
    )
    # column by column into Python lists (far cheaper than a dict per row), then one pass over
    # each partition's run of rows
    (topic, number, broker, _, leader, in_isr, adding, removing, source, size, log_dir, future_size, future_dir) = (
        rows.column(c).to_pylist() for c in STATE_COLUMNS
    )
    partitions = []
    n, start = rows.num_rows, 0
    while start < n:
        end = start + 1
        while end < n and number[end] == number[start] and topic[end] == topic[start]:
            end += 1
        span = range(start, end)
        logs = []
        for i in span:
            if size[i] is not None:
                logs.append(ReplicaLog(BrokerId(broker[i]), log_dir[i] or "", size[i]))
            if future_size[i] is not None:
                logs.append(ReplicaLog(BrokerId(broker[i]), future_dir[i] or "", future_size[i], True))
        partitions.append(
            Partition(
                topic=topic[start],
                partition=number[start],
                replicas=tuple(BrokerId(broker[i]) for i in span),
                isr=tuple(BrokerId(broker[i]) for i in span if in_isr[i]),
                leader=None if leader[start] is None else BrokerId(leader[start]),
                adding=tuple(BrokerId(broker[i]) for i in span if adding[i]),
                removing=tuple(BrokerId(broker[i]) for i in span if removing[i]),
                source=Source(source[start]) if source[start] else None,
                logs=tuple(logs),
            )
        )
        start = end
    state = state_from_doc(json.loads(header), tuple(partitions))
    return replace(state, taken_at=_time(taken_at))


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
