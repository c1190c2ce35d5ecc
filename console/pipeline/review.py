"""The review job's transforms: a plan against a stored snapshot at fleet scale, on Spark.

The same answers as the in-process core (:func:`console.plans.diff.diff`,
:func:`console.moves.waves.plan_waves`, :func:`console.plans.plan.rollback`), row for row: a
property test holds them to it. Every transform takes and gives DataFrames with a ``cluster``
column, so one job reviews a plan per cluster for a whole fleet. Built-in functions and
higher-order array functions here; the findings are not written here but by the review rules
themselves, run over the diff's Arrow batches (:mod:`console.pipeline.spark_rules`). Waves are cut
first-fit in plan order, which is sequential: the job collects each moving entry's adding brokers
and bytes (small columns) and cuts them with the same function a run uses
(:mod:`console.pipeline.review_waves`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from console.core.model import ClusterState
from console.plans.diff import CHANGE_COLUMNS, ChangeKind
from console.plans.plan import ANY, Plan

PARTITION_COLUMNS = ["cluster", "idx", *CHANGE_COLUMNS]
BROKER_COLUMNS = [
    "cluster",
    "broker",
    "rack",
    "known",
    "replicas_before",
    "replicas_after",
    "arriving",
    "leaving",
    "leaders_before",
    "leaders_after",
    "bytes_before",
    "bytes_after",
    "bytes_in",
    "bytes_out",
]
FLOW_COLUMNS = ["cluster", "source", "destination", "replicas", "bytes"]


@dataclass(frozen=True)
class Inputs:
    """One snapshot per cluster and the plan for it, as DataFrames."""

    replicas: DataFrame
    """The stored replica rows of the chosen snapshot of each cluster."""
    brokers: DataFrame
    """cluster, broker, rack, registered: the brokers the snapshot knows (the rules read the rest of a
    broker from the broker table built in the driver, :func:`console.plans.rules.batch.broker_table`)."""
    min_isr: DataFrame
    """cluster, topic, min_isr."""
    plan: DataFrame
    """cluster, idx (plan order), topic, partition, target (array<long>), log_dirs (array<string>, nullable)."""


def broker_rows(cluster: str, state: ClusterState) -> list[dict[str, Any]]:
    """The brokers of a snapshot header (``state`` has no partitions), as rows of ``Inputs.brokers``."""
    return [
        {"cluster": cluster, "broker": int(b.id), "rack": b.rack, "registered": b.registered} for b in state.brokers
    ]


BROKER_SCHEMA = "cluster string, broker long, rack string, registered boolean"
"""The schema of :func:`broker_rows` as a Spark DDL string."""


PLAN_SCHEMA = pa.schema(
    [
        ("cluster", pa.string()),
        ("idx", pa.int64()),
        ("topic", pa.string()),
        ("partition", pa.int64()),
        ("target", pa.list_(pa.int64())),
        ("log_dirs", pa.list_(pa.string())),
    ]
)


def plan_table(cluster: str, plan: Plan) -> pa.Table:
    """The plan as ``Inputs.plan`` rows, built column-wise (a plan may have millions of entries)."""
    n = len(plan.entries)
    target, lengths = plan.target_columns
    flat = target[np.arange(target.shape[1])[None, :] < lengths[:, None]] if n else np.zeros(0, np.int64)
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32) if n else np.zeros(1, np.int32)
    return pa.table(
        {
            "cluster": pa.array([cluster] * n, pa.string()),
            "idx": pa.array(np.arange(n, dtype=np.int64)),
            "topic": pa.array([e.topic for e in plan.entries], pa.string()),
            "partition": pa.array(np.fromiter((e.partition for e in plan.entries), np.int64, n)),
            "target": pa.ListArray.from_arrays(pa.array(offsets), pa.array(flat, pa.int64())),
            "log_dirs": pa.array(
                [None if e.log_dirs is None else list(e.log_dirs) for e in plan.entries], pa.list_(pa.string())
            ),
        },
        schema=PLAN_SCHEMA,
    )


def _without(a: str | Column, b: str | Column) -> Column:
    """The elements of array ``a`` not in array ``b``, in ``a``'s order."""
    other = F.col(b) if isinstance(b, str) else b
    return F.filter(F.col(a) if isinstance(a, str) else a, lambda x: ~F.array_contains(other, x))


def partitions_now(replicas: DataFrame) -> DataFrame:
    """Per partition of the snapshot: R (in order), I, AR, leader, reassigning, its size (the
    leader's log, else the largest), each replica's own bytes, and the original replicas (R − AR).

    One list per partition (its replica rows in position order) and everything else read from that
    list: a single collected buffer per group, not one per column (the grouping is the job's most
    expensive step, and each collected list is a buffer of its own per partition)."""
    rows = F.struct(
        "position",
        F.col("broker").cast("long").alias("broker"),
        F.col("in_isr").alias("in_isr"),
        F.col("adding").alias("adding"),
        F.coalesce(F.col("broker") == F.col("leader"), F.lit(False)).alias("leads"),
        "bytes",
        "log_dir",
        "future_log_dir",
    )
    # grouped by the partition as the plan numbers it (long): the groups come out partitioned as the
    # join with the plan wants them, not shuffled a second time for a cast
    p = replicas.groupBy("cluster", "topic", F.col("partition").cast("long").alias("partition")).agg(
        F.sort_array(F.collect_list(rows)).alias("rs"),
        F.first("leader").cast("long").alias("leader"),
        F.max(F.col("reassigning").cast("int")).cast("boolean").alias("reassigning"),
    )

    def brokers_where(keep: Callable[[Column], Column]) -> Column:
        return F.transform(F.filter("rs", keep), lambda x: x["broker"])

    replicas_col = F.transform("rs", lambda x: x["broker"])
    adding_now = brokers_where(lambda x: x["adding"])
    leader_bytes = F.array_max(F.transform(F.filter("rs", lambda x: x["leads"]), lambda x: x["bytes"]))
    leader_listed = F.exists("rs", lambda x: x["leads"])
    return p.select(
        "cluster",
        "topic",
        "partition",
        replicas_col.alias("replicas"),
        brokers_where(lambda x: x["in_isr"]).alias("isr"),
        adding_now.alias("adding_now"),
        "leader",
        "reassigning",
        F.when(leader_listed & leader_bytes.isNotNull(), leader_bytes)
        .otherwise(F.array_max(F.transform("rs", lambda x: x["bytes"])))
        .alias("size"),
        F.map_from_entries(
            F.transform(
                F.filter("rs", lambda x: x["bytes"].isNotNull()),
                lambda x: F.struct(x["broker"].alias("broker"), x["bytes"].alias("bytes")),
            )
        ).alias("own"),
        _without(replicas_col, adding_now).alias("original"),
        F.transform(
            "rs",
            lambda x: F.struct(
                x["broker"].alias("broker"), x["log_dir"].alias("log_dir"), x["future_log_dir"].alias("future_log_dir")
            ),
        ).alias("dirs"),
    )


def changes(inputs: Inputs) -> DataFrame:
    """Per plan entry: what it does to its partition (:func:`console.plans.diff.change_of`)."""
    now = partitions_now(inputs.replicas)
    j = inputs.plan.select("cluster", "idx", "topic", "partition", "target", "log_dirs").join(
        now, ["cluster", "topic", "partition"], "left"
    )
    known = F.col("replicas").isNotNull()
    adding = F.when(known, _without("target", "original")).otherwise(F.array().cast("array<long>"))
    removing = F.when(known, _without("original", "target")).otherwise(F.array().cast("array<long>"))
    j = j.withColumn("adding", adding).withColumn("removing", removing)
    unchanged = (F.col("target") == F.col("original")) & ~F.col("reassigning")
    moved = (F.size("adding") > 0) | (F.size("removing") > 0)
    # a named dir its replica is not in (or is being copied out of): a log dir move (plans.logdirs.to_move)
    to_move = F.col("log_dirs").isNotNull() & F.exists(
        F.arrays_zip("target", "log_dirs"),
        lambda pr: (
            (pr["log_dirs"] != ANY)
            & ~F.exists(
                "dirs",
                lambda d: (
                    (d["broker"] == pr["target"])
                    & F.coalesce(d["log_dir"] == pr["log_dirs"], F.lit(False))  # no log read: not there
                    & d["future_log_dir"].isNull()
                ),
            )
        ),
    )
    kind = (
        F.when(~known, F.lit(ChangeKind.UNKNOWN.value))
        .when(unchanged & to_move, F.lit(ChangeKind.LOG_DIR.value))
        .when(unchanged, F.lit(ChangeKind.NONE.value))
        .when(
            moved,
            F.when(F.size("target") == F.size("original"), F.lit(ChangeKind.MOVE.value))
            .when(F.size("target") > F.size("original"), F.lit(ChangeKind.GROW.value))
            .otherwise(F.lit(ChangeKind.SHRINK.value)),
        )
        .when(F.col("reassigning"), F.lit(ChangeKind.REVERT.value))
        .otherwise(F.lit(ChangeKind.REORDER.value))
    )
    first = F.try_element_at("target", F.lit(1))
    stays = F.col("leader").isNotNull() & F.array_contains("target", F.col("leader"))
    dir_copies = F.when(known & F.col("log_dirs").isNotNull(), _dir_copies()).otherwise(
        F.array().cast("array<struct<broker:bigint,bytes:bigint>>")
    )
    leader_after = F.when(~known, F.lit(None).cast("long")).when(stays | unchanged, F.col("leader")).otherwise(first)
    return j.select(
        "cluster",
        "idx",
        "topic",
        "partition",
        kind.alias("kind"),
        F.coalesce("original", F.array().cast("array<long>")).alias("current"),
        "target",
        "adding",
        "removing",
        F.col("leader").alias("leader_before"),
        leader_after.alias("leader_after"),
        F.coalesce(F.col("reassigning"), F.lit(False)).alias("in_flight"),
        "size",
        (F.coalesce(F.col("size"), F.lit(0)) * F.size("adding")).cast("long").alias("bytes_to_copy"),
        dir_copies.alias("dir_copies"),
        # kept for the broker sums and the checks
        F.col("replicas").alias("now"),
        "isr",
        "adding_now",
        "own",
        "dirs",
        "log_dirs",
    )


def _dir_copies() -> Column:
    """Each replica the entry asks into another dir of its broker whose log is elsewhere now, with
    the bytes its broker copies between its dirs: its own log's size, else the partition's, else
    null (:func:`console.plans.logdirs.dir_copies`)."""
    named = F.filter(
        F.arrays_zip("target", "log_dirs"),
        lambda pr: pr["log_dirs"].isNotNull() & (pr["log_dirs"] != "") & (pr["log_dirs"] != ANY),
    )

    def now(broker: Column) -> Column:
        here = F.filter("dirs", lambda d: d["broker"] == broker)
        return F.try_element_at(here, F.lit(1))["log_dir"]

    moved = F.filter(named, lambda pr: now(pr["target"]).isNotNull() & (now(pr["target"]) != pr["log_dirs"]))
    return F.transform(
        moved,
        lambda pr: F.struct(
            pr["target"].cast("long").alias("broker"),
            F.coalesce(F.element_at(F.col("own"), pr["target"]), F.col("size")).cast("long").alias("bytes"),
        ),
    )


def _own(broker: Column) -> Column:
    """Bytes of this partition's log on ``broker`` when reported and positive, else null."""
    v = F.element_at(F.col("own"), broker)
    return F.when(v > 0, v)


def _broker_sums(k: DataFrame) -> DataFrame:
    """Per cluster and broker, what the known entries ``k`` change: replicas, leaders, size,
    leaving, arriving, bytes in and out (every entry's changes to each broker in one pass: one array
    of deltas per entry, exploded and summed)."""
    psize = F.coalesce(F.col("size"), F.lit(0))
    source = F.coalesce(F.col("leader_before"), F.try_element_at("current", F.lit(1)))
    zero = F.lit(0).cast("long")
    one = F.lit(1).cast("long")
    names = _SUMS

    def delta(broker: Column, **values: Column) -> Column:
        return F.struct(
            broker.cast("long").alias("broker"), *[values.get(n, zero).cast("long").alias(n) for n in names]
        )

    none = F.array().cast("array<struct<broker:bigint," + ",".join(f"{n}:bigint" for n in names) + ">>")

    def each(array: str, make: Callable[[Column], Column]) -> Column:
        return F.coalesce(F.transform(array, make), none)

    moved = F.col("leader_before").eqNullSafe(F.col("leader_after")) == F.lit(False)

    def only(condition: Column, d: Column) -> Column:
        return F.when(condition, F.array(d)).otherwise(none)

    deltas = F.concat(
        each("target", lambda b: delta(b, replicas=one)),
        each("now", lambda b: delta(b, replicas=-one)),
        only(moved & F.col("leader_after").isNotNull(), delta(F.col("leader_after"), leaders=one, gained=one)),
        only(moved & F.col("leader_before").isNotNull(), delta(F.col("leader_before"), leaders=-one, lost=one)),
        each(
            "removing",
            lambda b: delta(b, size=-F.coalesce(_own(b), psize), leaving=one, removed=F.coalesce(_own(b), psize)),
        ),
        each(
            "adding_now",
            lambda b: F.when(~F.array_contains("target", b), delta(b, size=-F.coalesce(_own(b), zero))),
        ),
        each(
            "adding",
            lambda b: delta(
                b,
                size=psize - F.coalesce(_own(b), zero),
                arriving=one,
                bytes_in=psize,
                added=psize - F.coalesce(_own(b), zero),
            ),
        ),
        only((F.size("adding") > 0) & source.isNotNull(), delta(source, bytes_out=psize * F.size("adding"))),
    )
    union = k.select("cluster", F.explode(F.array_compact(deltas)).alias("d")).select(
        "cluster", "d.broker", *[f"d.{n}" for n in names]
    )
    return union.groupBy("cluster", "broker").agg(*[F.sum(n).alias(n) for n in names])


IMPACT_COLUMNS = ["gained", "lost", "removed", "added"]
"""What the impact adds to each broker's row (:class:`console.moves.impact.BrokerTotals`): leaders
gained and lost, bytes its leaving replicas free, what its disk grows by before anything is removed."""
_SUMS = ["replicas", "leaders", "size", "leaving", "arriving", "bytes_in", "bytes_out", *IMPACT_COLUMNS]


def brokers(inputs: Inputs, ch: DataFrame) -> tuple[DataFrame, DataFrame]:
    """Per broker before and after (:class:`console.plans.diff.BrokerChange`, then the impact's
    :data:`IMPACT_COLUMNS`: the table written selects :data:`BROKER_COLUMNS`), and the flows."""
    r = inputs.replicas.select("cluster", F.col("broker").cast("long").alias("broker"), "is_leader", "bytes")
    before = r.groupBy("cluster", "broker").agg(
        F.count(F.lit(1)).alias("replicas_before"),
        F.count_if("is_leader").alias("leaders_before"),
        F.coalesce(F.sum("bytes"), F.lit(0)).alias("bytes_before"),
    )
    k = ch.filter(F.col("kind") != ChangeKind.UNKNOWN.value)
    psize = F.coalesce(F.col("size"), F.lit(0))
    source = F.coalesce(F.col("leader_before"), F.try_element_at("current", F.lit(1)))
    zero = F.lit(0).cast("long")
    sums = _broker_sums(k)
    known = inputs.brokers.select(
        "cluster", F.col("broker").cast("long").alias("broker"), "rack", F.col("registered").alias("known")
    )
    ids = (
        before.select("cluster", "broker")
        .unionByName(known.select("cluster", "broker"))
        .unionByName(k.select("cluster", F.explode("target").alias("broker")))
        .distinct()
    )
    out = (
        ids.join(before, ["cluster", "broker"], "left")
        .join(sums, ["cluster", "broker"], "left")
        .join(known, ["cluster", "broker"], "left")
    )

    def z(c: str) -> Column:
        return F.coalesce(F.col(c), zero)

    table = (
        out.select(
            "cluster",
            F.col("broker"),
            "rack",
            F.coalesce("known", F.lit(False)).alias("known"),
            z("replicas_before").alias("replicas_before"),
            (z("replicas_before") + z("replicas")).alias("replicas_after"),
            z("arriving").alias("arriving"),
            z("leaving").alias("leaving"),
            z("leaders_before").alias("leaders_before"),
            (z("leaders_before") + z("leaders")).alias("leaders_after"),
            z("bytes_before").alias("bytes_before"),
            F.greatest(zero, z("bytes_before") + z("size")).alias("bytes_after"),
            z("bytes_in").alias("bytes_in"),
            z("bytes_out").alias("bytes_out"),
            *[z(c).alias(c) for c in IMPACT_COLUMNS],
        )
        .select(*BROKER_COLUMNS, *IMPACT_COLUMNS)
        .orderBy("cluster", "broker")
    )
    flows = (
        k.filter(source.isNotNull())
        .select("cluster", source.alias("source"), psize.alias("bytes"), F.explode("adding").alias("destination"))
        .groupBy("cluster", "source", "destination")
        .agg(F.count(F.lit(1)).alias("replicas"), F.sum("bytes").alias("bytes"))
        .select(*FLOW_COLUMNS)
        .orderBy("cluster", "source", "destination")
    )
    return table, flows
