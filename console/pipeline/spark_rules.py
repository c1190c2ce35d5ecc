"""The Spark runner of the review's rules: the rules of :mod:`console.plans.rules` (the same code the
in-process review runs) evaluated over Arrow batches inside Spark (``mapInArrow``).

Spark joins each plan entry with its partition's state (:func:`console.pipeline.review.changes`),
the topic's min ISR and, for an entry the snapshot does not know, its topic's partition count; each
batch of those rows becomes an :class:`~console.plans.rules.batch.EntryBatch`, is evaluated with its
cluster's broker table (built in the driver from the snapshot's header, shipped with the task) and
gives its findings' rows, which the job orders as the in-process review does."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from functools import partial
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from console.plans.columns import PAD, Ints, member
from console.plans.diff import CHANGE_COLUMNS, ChangeKind
from console.plans.rules.batch import KINDS, BrokerTable, EntryBatch
from console.plans.rules.catalog import RULES
from console.plans.rules.engine import evaluate, say

FINDING_SCHEMA = (
    "cluster string, idx long, check int, cell long, sev int, code string, severity string, "
    "topic string, partition long, broker long, message string, hint string"
)
"""A finding's row, with what orders it (``sev``, ``idx``, ``check``, ``cell``)."""

_NOT_READ = frozenset({"removing", "size", "bytes_to_copy"})
"""The diff's columns no rule reads."""
ENTRY_COLUMNS = [
    "cluster",
    "idx",
    *(c for c in CHANGE_COLUMNS if c not in _NOT_READ),
    "isr",
    "min_isr",
    "topic_partitions",
    "named_dirs",
]


def entries(inputs: Any, ch: DataFrame) -> DataFrame:
    """The rules' input rows: each entry of ``ch`` (the diff) with its topic's min ISR and, for an
    entry the snapshot does not know, its topic's partition count (only those topics are counted)."""
    known = F.col("kind") != ChangeKind.UNKNOWN.value
    unknown = ch.filter(~known)
    asked = unknown.select("cluster", "topic").distinct()
    topics = (
        inputs.replicas.select("cluster", "topic", "partition")
        .join(F.broadcast(asked), ["cluster", "topic"], "left_semi")
        .distinct()
        .groupBy("cluster", "topic")
        .agg(F.count(F.lit(1)).alias("topic_partitions"))
    )
    return (
        ch.filter(known)
        .withColumn("topic_partitions", F.lit(None).cast("long"))
        .unionByName(unknown.join(topics, ["cluster", "topic"], "left"))
        .join(F.broadcast(inputs.min_isr), ["cluster", "topic"], "left")
        .withColumn("named_dirs", _named_dirs())
        .select(*ENTRY_COLUMNS)
    )


def _named_dirs() -> Column:
    """The dirs an entry names and where each of its replicas' logs is, as one JSON text (``l``: the
    named dirs, ``d``: the replicas' dirs), only for the entries naming dirs: null for the others
    (most plans: all of them). Spark's conversion of the nested columns themselves into Arrow costs
    about ten times the rest of the row, even where they are null; a null text costs nothing, and
    the rules' input is read once."""
    named = F.struct(F.col("log_dirs").alias("l"), F.col("dirs").alias("d"))
    return F.when(F.col("log_dirs").isNotNull(), F.to_json(named))


def findings(inputs: Any, ch: DataFrame, tables: Mapping[str, BrokerTable]) -> DataFrame:
    """Every finding of every entry of ``ch``, as rows of :data:`FINDING_SCHEMA` (not ordered)."""
    return entries(inputs, ch).mapInArrow(partial(_evaluate_batches, dict(tables)), FINDING_SCHEMA)


def by_cluster(batches: Iterator[pa.RecordBatch]) -> Iterator[tuple[str, pa.RecordBatch]]:
    """Each non-empty Arrow batch split by its ``cluster`` column: (cluster, its rows)."""
    for rb in batches:
        if rb.num_rows == 0:
            continue
        clusters = rb.column("cluster").dictionary_encode()
        codes = np.asarray(clusters.indices.to_numpy(zero_copy_only=False), np.int64)
        for k, cluster in enumerate(clusters.dictionary.to_pylist()):
            yield str(cluster), (rb if len(clusters.dictionary) == 1 else rb.filter(pa.array(codes == k)))


def _evaluate_batches(tables: dict[str, BrokerTable], batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    for cluster, part in by_cluster(batches):
        yield _found_rows(cluster, part, tables.get(cluster) or BrokerTable.empty())


def _found_rows(cluster: str, rb: pa.RecordBatch, table: BrokerTable) -> pa.RecordBatch:
    batch = entry_batch(rb)
    found = evaluate(batch, table, RULES)
    words = say(batch, table, RULES, found)
    rows = found.row
    n = len(rows)
    return pa.RecordBatch.from_pydict(
        {
            "cluster": pa.array([cluster] * n, pa.string()),
            "idx": pa.array(rb.column("idx").to_numpy()[rows] if n else np.zeros(0, np.int64), pa.int64()),
            "check": pa.array(found.rule, pa.int32()),
            "cell": pa.array(found.cell, pa.int64()),
            "sev": pa.array(found.rank, pa.int32()),
            "code": pa.array([w[0] for w in words], pa.string()),
            "severity": pa.array([RULES[k].severity.value for k in found.rule.tolist()], pa.string()),
            "topic": rb.column("topic").take(pa.array(rows)),
            "partition": pa.array(batch.partition[rows], pa.int64()),
            "broker": pa.nulls(n, pa.int64()),
            "message": pa.array([w[1] for w in words], pa.string()),
            "hint": pa.array([w[2] for w in words], pa.string()),
        }
    )


def padded_column(column: pa.Array) -> tuple[Ints, Ints]:
    """A list<long> column as a padded matrix (``PAD``) and each row's length (a null list: empty)."""
    lens = np.asarray(pc.fill_null(pc.list_value_length(column), 0).to_numpy(zero_copy_only=False), np.int64)
    flat = np.asarray(pc.list_flatten(column).to_numpy(zero_copy_only=False), np.int64)
    n = len(lens)
    out = np.full((n, max(1, int(lens.max()) if n else 1)), PAD, np.int64)
    if len(flat):
        starts = np.zeros(n, np.int64)
        np.cumsum(lens[:-1], out=starts[1:])
        row = np.repeat(np.arange(n), lens)
        out[row, np.arange(len(flat)) - np.repeat(starts, lens)] = flat
    return out, lens


def long_column(column: pa.Array) -> Ints:
    """A nullable long column, PAD for null."""
    return np.asarray(pc.fill_null(column, PAD).to_numpy(zero_copy_only=False), np.int64)


_KIND = {k.value: i for i, k in enumerate(KINDS)}


def entry_batch(rb: pa.RecordBatch) -> EntryBatch:
    """One Arrow batch of :func:`entries` as the rules' batch."""
    kinds = rb.column("kind").dictionary_encode()
    kind = np.array([_KIND[str(k)] for k in kinds.dictionary.to_pylist()], np.int64)[
        np.asarray(kinds.indices.to_numpy(zero_copy_only=False), np.int64)
    ]
    target, target_len = padded_column(rb.column("target"))
    current, current_len = padded_column(rb.column("current"))
    adding_ids, _ = padded_column(rb.column("adding"))
    n = rb.num_rows
    log_dirs: dict[int, tuple[str, ...]] = {}
    dir_now: dict[int, tuple[str | None, ...]] = {}
    texts = rb.column("named_dirs")
    if texts.null_count < n:
        named = np.flatnonzero(np.asarray(texts.is_valid().to_numpy(zero_copy_only=False), bool)).tolist()
        for i, text in zip(named, texts.take(pa.array(named, pa.int64())).to_pylist(), strict=True):
            said = json.loads(text)
            log_dirs[i] = tuple(said["l"])
            dir_now[i] = tuple(_dir_on(said.get("d") or [], b) for b in target[i, : target_len[i]].tolist())
    return EntryBatch(
        topic=rb.column("topic").to_pylist(),
        partition=long_column(rb.column("partition")),
        known=kind != _KIND[ChangeKind.UNKNOWN.value],
        kind=kind,
        target=target,
        target_len=target_len,
        current=current,
        current_len=current_len,
        adding=(target != PAD) & member(target, adding_ids),
        leader_before=long_column(rb.column("leader_before")),
        leader_after=long_column(rb.column("leader_after")),
        in_flight=np.asarray(pc.fill_null(rb.column("in_flight"), False).to_numpy(zero_copy_only=False), bool),
        isr=padded_column(rb.column("isr"))[0],
        min_isr=long_column(rb.column("min_isr")),
        topic_partitions=long_column(rb.column("topic_partitions")),
        log_dirs=log_dirs,
        dir_now=dir_now,
    )


def _dir_on(dirs: list[dict[str, Any]], broker: int) -> str | None:
    """The dir of the partition's (non-future) log on ``broker``, as the stored rows say."""
    for d in dirs:
        if d.get("broker") == broker:
            return str(d["log_dir"]) if d.get("log_dir") is not None else None
    return None
