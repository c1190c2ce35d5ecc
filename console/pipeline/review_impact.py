"""The Spark review's impact: what each plan costs and whom it touches, with the in-process review's
code (:mod:`console.moves.impact`, :mod:`console.moves.impact_columns`), one engine as the rules.

The diff's broker sums carry the impact's per-broker totals (:data:`console.pipeline.review.IMPACT_COLUMNS`)
and its flows are the impact's; the per-topic counts (entries changed, bytes copied, followers in
another zone than their leader before and after, leaders that change) are
:func:`console.moves.impact_columns.topic_counts` run over the changed entries' Arrow batches inside
Spark (``mapInArrow``) and summed per topic; a touched topic's partitions are counted in the snapshot;
what leaving replicas free per log dir is summed where a broker has several dirs, and what the plan
names a dir for where it names one. The driver assembles each cluster's :class:`~console.moves.impact.Impact`
from those small tables and the snapshot's header (:func:`console.moves.impact.assemble`)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np
import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from console.core.model import BrokerId, ClusterState
from console.moves.impact import (
    BrokerTotals,
    Impact,
    ImpactParts,
    ImpactTerms,
    Pricing,
    TopicCounts,
    assemble,
)
from console.moves.impact_columns import capacity_of, dir_peaks, sized_brokers, topic_counts, zone_codes
from console.pipeline.spark_rules import by_cluster, long_column, padded_column
from console.plans.columns import Ints
from console.plans.diff import ChangeKind
from console.plans.plan import ANY

TOPIC_SCHEMA = (
    "cluster string, topic string, changed long, bytes long, cross_before long, cross_after long, leaders long"
)
_COUNTS = ["changed", "bytes", "cross_before", "cross_after", "leaders"]


def topic_totals(changes: DataFrame, zones: Mapping[str, tuple[Ints, Ints]]) -> DataFrame:
    """Per cluster and topic, over the entries that change something: entries, bytes copied,
    followers across zones before and after, leaders that change (``zones``: each cluster's
    :func:`~console.moves.impact_columns.zone_codes`)."""
    changed = (F.col("kind") != ChangeKind.UNKNOWN.value) & (F.col("kind") != ChangeKind.NONE.value)
    rows = changes.filter(changed).select(
        "cluster",
        "topic",
        "size",
        "current",
        "leader_before",
        "target",
        "leader_after",
        F.size("adding").cast("long").alias("adds"),
    )
    counted = rows.mapInArrow(partial(_count_batches, dict(zones)), TOPIC_SCHEMA)
    return counted.groupBy("cluster", "topic").agg(*[F.sum(c).alias(c) for c in _COUNTS])


def _count_batches(zones: dict[str, tuple[Ints, Ints]], batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    empty = (np.zeros(0, np.int64), np.zeros(0, np.int64))
    for cluster, part in by_cluster(batches):
        yield _counted(cluster, part, zones.get(cluster, empty))


def _counted(cluster: str, rb: pa.RecordBatch, zones: tuple[Ints, Ints]) -> pa.RecordBatch:
    topics = rb.column("topic").dictionary_encode()
    code = np.asarray(topics.indices.to_numpy(zero_copy_only=False), np.int64)
    n = len(topics.dictionary)
    before, after = long_column(rb.column("leader_before")), long_column(rb.column("leader_after"))
    cells = (
        padded_column(rb.column("current"))[0],
        before,
        padded_column(rb.column("target"))[0],
        after,
        long_column(rb.column("adds")),
    )
    counts = topic_counts(code, long_column(rb.column("size")), cells, zones, n)
    leaders = np.bincount(code, (before != after).astype(np.int64), minlength=n).astype(np.int64)
    columns: dict[str, Any] = {"cluster": pa.array([cluster] * n, pa.string()), "topic": topics.dictionary}
    for name, values in zip(_COUNTS, (*counts, leaders), strict=True):
        columns[name] = pa.array(values, pa.int64())
    return pa.RecordBatch.from_pydict(columns)


def topic_partitions(replicas: DataFrame, touched: DataFrame) -> DataFrame:
    """Per cluster and topic of ``touched`` (cluster, topic): its partitions in the snapshot."""
    return (
        replicas.select("cluster", "topic", "partition")
        .join(F.broadcast(touched), ["cluster", "topic"], "left_semi")
        .distinct()
        .groupBy("cluster", "topic")
        .agg(F.count(F.lit(1)).alias("partitions"))
    )


def freed_rows(changes: DataFrame, several: Mapping[str, list[int]]) -> DataFrame:
    """Per cluster, broker of ``several`` (each cluster's brokers with several log dirs) and the dir
    its leaving replica's log is in: the bytes the leaving replicas free (their own, else the
    partition's)."""
    wanted = F.lit(False)
    for cluster, ids in several.items():
        wanted = wanted | ((F.col("cluster") == cluster) & F.col("broker").isin(ids))
    own = F.element_at(F.col("own"), F.col("broker"))
    here = F.filter("dirs", lambda d: d["broker"] == F.col("broker"))  # its log's dir (a future log's is apart)
    gone = changes.filter(F.col("kind") != ChangeKind.UNKNOWN.value).select(
        "cluster",
        "own",
        "dirs",
        F.coalesce(F.col("size"), F.lit(0)).alias("psize"),
        F.explode("removing").alias("broker"),
    )
    return (
        gone.filter(wanted)
        .select(
            "cluster",
            "broker",
            F.try_element_at(here, F.lit(1))["log_dir"].alias("dir"),
            F.coalesce(F.when(own > 0, own), F.col("psize")).alias("bytes"),
        )
        .filter(F.col("dir").isNotNull())
        .groupBy("cluster", "broker", "dir")
        .agg(F.sum("bytes").alias("bytes"))
    )


def named_rows(changes: DataFrame) -> DataFrame:
    """Per cluster, broker and dir: the bytes of the adding replicas the plan names that dir for."""
    own = F.element_at(F.col("own"), F.col("p.target"))
    named = changes.filter(
        (F.col("kind") != ChangeKind.UNKNOWN.value) & F.col("log_dirs").isNotNull() & (F.size("adding") > 0)
    ).select("cluster", "own", "adding", "size", F.explode(F.arrays_zip("target", "log_dirs")).alias("p"))
    return (
        named.filter(F.array_contains("adding", F.col("p.target")) & (F.col("p.log_dirs") != ANY))
        .select(
            "cluster",
            F.col("p.target").alias("broker"),
            F.col("p.log_dirs").alias("dir"),
            (F.coalesce(F.col("size"), F.lit(0)) - F.coalesce(F.when(own > 0, own), F.lit(0))).alias("bytes"),
        )
        .groupBy("cluster", "broker", "dir")
        .agg(F.sum("bytes").alias("bytes"))
    )


@dataclass(frozen=True)
class ClusterTables:
    """One cluster's impact tables as collected (rows of dicts)."""

    brokers: list[Any]
    flows: list[Any]
    topics: list[Any]
    partitions: dict[str, int]
    freed: list[Any]
    named: list[Any]


def cluster_impact(header: ClusterState, t: ClusterTables, terms: ImpactTerms) -> Impact:
    """One cluster's impact from its tables and its snapshot's ``header`` (brokers, log dirs)."""
    brokers = tuple(_totals(header, r) for r in t.brokers)
    flows = tuple(
        (BrokerId(int(r["source"])), BrokerId(int(r["destination"])), int(r["replicas"]), int(r["bytes"]))
        for r in t.flows
    )
    topics = tuple(
        TopicCounts(r["topic"], t.partitions.get(r["topic"], 0), *(int(r[c]) for c in _COUNTS[:4]))
        for r in sorted(t.topics, key=lambda r: str(r["topic"]))
    )
    sized = sized_brokers(header)
    freed: dict[tuple[BrokerId, str], int] = {}
    removed = {b.broker: b.removed for b in brokers}
    for b in sized:
        if len(b.log_dirs) == 1 and b.id in removed:
            freed[(b.id, b.log_dirs[0].path)] = removed[b.id]
    for r in t.freed:
        freed[(BrokerId(int(r["broker"])), str(r["dir"]))] = int(r["bytes"])
    named = {(int(r["broker"]), str(r["dir"])): int(r["bytes"]) for r in t.named}
    dirs = dir_peaks(sized, {int(b.broker): b.added for b in brokers}, named, freed) if sized else ()
    parts = ImpactParts(
        brokers,
        flows,
        topics,
        sum(int(r["bytes"]) for r in t.topics),
        dirs,
        sum(int(r["leaders"]) for r in t.topics),
    )
    return assemble(parts, terms)


def _totals(header: ClusterState, r: Any) -> BrokerTotals:
    b = BrokerId(int(r["broker"]))
    capacity, used = capacity_of(header.broker(b))
    return BrokerTotals(
        b,
        r["rack"],
        int(r["leaders_before"]),
        int(r["leaders_after"]),
        int(r["gained"]),
        int(r["lost"]),
        int(r["bytes_before"]),
        int(r["bytes_after"]),
        int(r["bytes_in"]),
        int(r["bytes_out"]),
        int(r["removed"]),
        int(r["added"]),
        capacity,
        used,
    )


def several_dirs(header: ClusterState) -> list[int]:
    """The sized brokers with several log dirs (their freed bytes are looked up per dir)."""
    return [int(b.id) for b in sized_brokers(header) if len(b.log_dirs) > 1]


def zones_of(headers: Mapping[str, ClusterState], pricing: Pricing | None) -> dict[str, tuple[Ints, Ints]]:
    return {c: zone_codes(h, pricing or Pricing()) for c, h in headers.items()}
