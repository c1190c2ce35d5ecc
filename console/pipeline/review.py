"""The review job's transforms: a plan against a stored snapshot at fleet scale, on Spark.

The same answers as the in-process core (:func:`console.plans.diff.diff`,
:func:`console.plans.validate.validate`, :func:`console.moves.waves.plan_waves`,
:func:`console.plans.plan.rollback`), row for row: a property test holds them to it. Every
transform takes and gives DataFrames with a ``cluster`` column, so one job reviews a plan per
cluster for a whole fleet. Built-in functions and higher-order array functions only (no Python
UDF). Waves are cut first-fit in plan order, which is sequential: the job collects each moving
entry's adding brokers and bytes (small columns) and cuts them with the same function a run uses.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["FINDING_COLUMNS", "order_findings", "overall_rows", "rollback_lines", "tiered_moving"]

import numpy as np
import pyarrow as pa
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from console.core.model import Broker, ClusterState, Severity
from console.pipeline.review_outputs import (
    _RANK,
    FINDING_COLUMNS,
    _current_dir,
    order_findings,
    overall_rows,
    rollback_lines,
    tiered_moving,
)
from console.plans import validate as V
from console.plans.diff import ChangeKind
from console.plans.plan import ANY, Plan

PARTITION_COLUMNS = [
    "cluster",
    "idx",
    "topic",
    "partition",
    "kind",
    "current",
    "target",
    "adding",
    "removing",
    "leader_before",
    "leader_after",
    "in_flight",
    "size",
    "bytes_to_copy",
]
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
    """cluster, broker, rack, registered, live, eligible, log_dirs (array of paths), usable_bytes,
    cordoned (the whole broker, KIP-1066), cordoned_dirs (array of its cordoned dirs' paths),
    dir_errors (map of each offline dir's path to DescribeLogDirs' error), fenced (DescribeCluster
    says it is fenced, KIP-1073; false when the cluster does not say, as in a snapshot stored before
    it did)."""
    min_isr: DataFrame
    """cluster, topic, min_isr."""
    plan: DataFrame
    """cluster, idx (plan order), topic, partition, target (array<long>), log_dirs (array<string>, nullable)."""


def broker_rows(cluster: str, state: ClusterState) -> list[dict[str, Any]]:
    """The brokers of a snapshot header (``state`` has no partitions), as rows of ``Inputs.brokers``."""
    return [
        {
            "cluster": cluster,
            "broker": int(b.id),
            "rack": b.rack,
            "registered": b.registered,
            "live": b.live,
            "eligible": b.eligible,
            "fenced": b.fenced is True,
            "log_dirs": [d.path for d in b.log_dirs],
            "usable_bytes": b.usable_bytes,
            "cordoned": b.cordoned is True,
            "cordoned_dirs": [d.path for d in b.log_dirs if b.dir_cordoned(d.path)],
            "dir_errors": _dir_errors(b),
        }
        for b in state.brokers
    ]


BROKER_SCHEMA = (
    "cluster string, broker long, rack string, registered boolean, live boolean, eligible boolean, "
    "log_dirs array<string>, usable_bytes long, cordoned boolean, cordoned_dirs array<string>, "
    "dir_errors map<string,string>, fenced boolean"
)
"""The schema of :func:`broker_rows` as a Spark DDL string."""


def _dir_errors(b: Broker) -> dict[str, str]:
    """Each offline log dir's path and DescribeLogDirs' error for it (the first, as validate reads it)."""
    out: dict[str, str] = {}
    for d in b.log_dirs:
        if d.error is not None:
            out.setdefault(d.path, d.error)
    return out


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
        # kept for the broker sums and the checks
        F.col("replicas").alias("now"),
        "isr",
        "adding_now",
        "own",
        "dirs",
        "log_dirs",
    )


def _own(broker: Column) -> Column:
    """Bytes of this partition's log on ``broker`` when reported and positive, else null."""
    v = F.element_at(F.col("own"), broker)
    return F.when(v > 0, v)


def brokers(inputs: Inputs, ch: DataFrame) -> tuple[DataFrame, DataFrame]:
    """Per broker before and after (:class:`console.plans.diff.BrokerChange`), and the flows."""
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
    one = F.lit(1).cast("long")
    names = ["replicas", "leaders", "size", "leaving", "arriving", "bytes_in", "bytes_out"]

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

    # every entry's changes to each broker in one pass: one array of deltas per entry, exploded
    deltas = F.concat(
        each("target", lambda b: delta(b, replicas=one)),
        each("now", lambda b: delta(b, replicas=-one)),
        only(moved & F.col("leader_after").isNotNull(), delta(F.col("leader_after"), leaders=one)),
        only(moved & F.col("leader_before").isNotNull(), delta(F.col("leader_before"), leaders=-one)),
        each("removing", lambda b: delta(b, size=-F.coalesce(_own(b), psize), leaving=one)),
        each(
            "adding_now",
            lambda b: F.when(~F.array_contains("target", b), delta(b, size=-F.coalesce(_own(b), zero))),
        ),
        each("adding", lambda b: delta(b, size=psize - F.coalesce(_own(b), zero), arriving=one, bytes_in=psize)),
        only((F.size("adding") > 0) & source.isNotNull(), delta(source, bytes_out=psize * F.size("adding"))),
    )
    union = k.select("cluster", F.explode(F.array_compact(deltas)).alias("d")).select(
        "cluster", "d.broker", *[f"d.{n}" for n in names]
    )
    sums = union.groupBy("cluster", "broker").agg(*[F.sum(n).alias(n) for n in names])
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
        )
        .select(*BROKER_COLUMNS)
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


def _ids(c: Column) -> Column:
    """``1,2,3``, or ``none`` for an empty list (as the findings write replica lists)."""
    joined = F.array_join(c, ",")
    return F.when(joined == "", F.lit("none")).otherwise(joined)


def _pylist(c: Column) -> Column:
    """``[1, 2, 3]``: a replica list as Python prints it."""
    return F.concat(F.lit("["), F.array_join(c, ", "), F.lit("]"))


def findings(inputs: Inputs, ch: DataFrame) -> DataFrame:
    """The per-entry checks of :func:`console.plans.validate.validate`, with the same codes,
    messages and hints, ordered as it orders them (errors first, then plan order, then check).

    The checks of one entry are read in one pass: each check is a condition and the finding it
    makes, every row gives the array of the findings whose condition holds, and the arrays are
    exploded; three passes in all (the entries, the brokers they add, the log dirs they name),
    not a scan of the entries per check."""
    name = F.concat(F.col("topic"), F.lit("-"), F.col("partition").cast("string"))
    b = inputs.brokers.select(
        "cluster",
        F.col("broker").cast("long").alias("b"),
        "rack",
        "registered",
        "live",
        "eligible",
        "fenced",
        F.col("log_dirs").alias("broker_dirs"),
        F.col("cordoned").alias("broker_cordoned"),
        "cordoned_dirs",
        "dir_errors",
    )
    known = F.col("kind") != ChangeKind.UNKNOWN.value
    # a topic's partition count is only said of the entries the snapshot does not know: only their
    # topics' rows are counted, and only those entries are joined to the counts (the others, all
    # but a few, are not shuffled for a column they never read)
    unknown = ch.filter(~known)
    asked = unknown.select("cluster", "topic").distinct()
    topics = (
        inputs.replicas.select("cluster", "topic", "partition")
        .join(F.broadcast(asked), ["cluster", "topic"], "left_semi")
        .distinct()
        .groupBy("cluster", "topic")
        .agg(F.count(F.lit(1)).alias("topic_partitions"))
    )
    c = (
        ch.filter(known)
        .withColumn("topic_partitions", F.lit(None).cast("long"))
        .unionByName(unknown.join(topics, ["cluster", "topic"], "left"))
        .join(F.broadcast(inputs.min_isr), ["cluster", "topic"], "left")
    )
    # the passes: each a DataFrame and its checks (a condition, the finding's columns)
    passes: dict[str, tuple[DataFrame, list[tuple[Column, Column]]]] = {}

    def add(
        number: int,
        source: str,
        condition: Column,
        code: Column | str,
        severity: Severity,
        message: Column,
        hint: Column | str,
        cell: Column | None = None,
    ) -> None:
        finding = F.struct(
            F.lit(number).alias("check"),
            (cell if cell is not None else F.lit(0)).alias("cell"),
            F.lit(_RANK[severity]).alias("sev"),
            (F.lit(code) if isinstance(code, str) else code).alias("code"),
            F.lit(severity.value).alias("severity"),
            message.alias("message"),
            (F.lit(hint) if isinstance(hint, str) else hint).alias("hint"),
        )
        passes[source][1].append((condition, finding))

    live = known & (F.col("kind") != ChangeKind.NONE.value)
    # each cluster's racks as a hash table: a broker's rack is in slot ``broker mod slots`` (a list of
    # one or two brokers), so finding it costs the same for 5 brokers or 5000 (a map's lookup reads
    # its keys one by one, and every entry looks up each of its brokers twice); and its fenced brokers
    # (KIP-1073), a few at most: one small table per cluster, joined to the entries once
    pairs = b.groupBy("cluster").agg(
        F.collect_list(F.when(F.col("rack").isNotNull(), F.struct("b", "rack"))).alias("pairs"),
        F.size(F.array_distinct(F.collect_list(F.when(F.col("eligible"), F.col("rack"))))).alias("available"),
        F.collect_list(F.when(F.col("fenced"), F.col("b"))).alias("fenced_ids"),
    )
    slots = 2 * F.size("pairs") + 1
    racks = pairs.select(
        "cluster",
        "available",
        "fenced_ids",
        slots.alias("slots"),
        F.transform(
            F.sequence(F.lit(0), slots - 1), lambda i: F.filter("pairs", lambda p: F.pmod(p["b"], slots) == i)
        ).alias("rack_of"),
    )

    def rack(x: Column) -> Column:
        slot = F.try_element_at("rack_of", (F.pmod(x, F.col("slots")) + 1).cast("int"))
        return F.try_element_at(F.filter(slot, lambda p: p["b"] == x), F.lit(1))["rack"]

    def spread(col: str) -> Column:
        return F.size(F.array_distinct(F.filter(F.transform(col, rack), lambda v: v.isNotNull())))

    # the entries, each with the racks its replicas span before and after
    entries = (
        c.join(F.broadcast(racks), ["cluster"], "left")
        .withColumn("before", spread("current"))
        .withColumn("after", spread("target"))
    )
    # each broker a known entry adds a replica on
    arriving = (
        c.filter(known)
        .select("*", F.posexplode("target").alias("cell", "b"))
        .filter(F.array_contains("adding", F.col("b")))
        .join(b, ["cluster", "b"], "left")
    )
    # each named dir of a broker that reports its dirs (an unnamed, "any", or unreported one is not checked)
    named = (
        c.filter(known & F.col("log_dirs").isNotNull())
        .select("*", F.posexplode(F.arrays_zip("target", "log_dirs")).alias("cell", "pair"))
        .filter(F.col("pair.target").isNotNull() & F.col("pair.log_dirs").isNotNull())
        .withColumn("b", F.col("pair.target"))
        .withColumn("path", F.col("pair.log_dirs"))
        .join(b, ["cluster", "b"], "left")
        .filter((F.col("path") != ANY) & F.col("broker_dirs").isNotNull() & (F.size("broker_dirs") > 0))
    )
    passes["entries"] = (entries, [])
    passes["arriving"] = (arriving, [])
    passes["dirs"] = (named, [])
    # checks 0-3 of validate (an empty list, invalid or duplicate ids, log dirs of another length) cannot
    # fail here: parse_plan refuses such a file before the job starts
    no_topic = F.col("topic_partitions").isNull()
    unknown_message = F.when(no_topic, F.concat(F.lit("Topic "), F.col("topic"), F.lit(" does not exist."))).otherwise(
        F.concat(
            F.lit("Partition "),
            name,
            F.lit(" does not exist ("),
            F.col("topic"),
            F.lit(" has "),
            F.col("topic_partitions").cast("string"),
            F.lit(" partitions)."),
        )
    )
    add(
        4,
        "entries",
        ~known,
        F.when(unknown_message.startswith("Topic "), F.lit(V.UNKNOWN_TOPIC)).otherwise(F.lit(V.UNKNOWN_PARTITION)),
        Severity.ERROR,
        unknown_message,
        F.when(no_topic, F.lit("Check the name (topic names are case-sensitive) or remove its entries.")).otherwise(
            F.lit("Remove the entry; add partitions with kafka-topics.sh --alter first if intended.")
        ),
    )
    # adding replicas on brokers that are unknown, not live or not eligible: one finding per cell
    why = (
        F.when(F.col("registered") & F.col("fenced"), F.lit(V.FENCED_WHY))
        .when(~F.col("live"), F.lit("is not live"))
        .otherwise(F.lit("is not eligible for new replicas (KIP-841)"))
    )
    not_eligible = F.when(
        F.col("registered").isNull(),
        F.concat(name, F.lit(": broker "), F.col("b").cast("string"), F.lit(" is unknown to the cluster.")),
    ).otherwise(
        F.concat(
            name,
            F.lit(": broker "),
            F.col("b").cast("string"),
            F.lit(" "),
            why,
            F.lit("; the controller refuses adding a replica there (or the reassignment would stall)."),
        )
    )
    add(
        5,
        "arriving",
        ~F.coalesce(F.col("eligible"), F.lit(False)),
        F.when(not_eligible.endswith("is unknown to the cluster."), F.lit(V.UNKNOWN_BROKER)).otherwise(
            F.lit(V.BROKER_NOT_ELIGIBLE)
        ),
        Severity.ERROR,
        not_eligible,
        F.when(F.col("registered").isNull(), F.lit("Use a broker id the cluster knows (see Overview).")).otherwise(
            F.lit("Wait until the broker is back, or pick another broker.")
        ),
        F.col("cell"),
    )
    # KIP-1066: the controller completes an explicit reassignment onto a cordoned broker; the console does not
    add(
        6,
        "arriving",
        F.coalesce(F.col("broker_cordoned"), F.lit(False)),
        V.CORDONED_DESTINATION,
        Severity.ERROR,
        F.concat(
            name,
            F.lit(": broker "),
            F.col("b").cast("string"),
            F.lit(" is cordoned (cordoned.log.dirs) and would receive a replica. " + V.CORDON_WHY),
        ),
        V.CORDON_HINT,
        F.col("cell"),
    )
    # a dir the replica is already in receives nothing
    existing = F.array_contains("broker_dirs", F.col("path")) & ~F.coalesce(
        _current_dir(F.col("b")) == F.col("path"), F.lit(False)
    )
    add(
        7,
        "dirs",
        ~F.array_contains("broker_dirs", F.col("path")),
        V.UNKNOWN_LOG_DIR,
        Severity.ERROR,
        F.concat(
            name,
            F.lit(": broker "),
            F.col("b").cast("string"),
            F.lit(" has no log dir "),
            F.col("pair.log_dirs"),
            F.lit("."),
        ),
        'Use one of the broker\'s log dirs (see Overview) or "any".',
        F.col("cell"),
    )
    named_dir = (name, F.lit(": log dir "), F.col("path"), F.lit(" of broker "), F.col("b").cast("string"))
    cordoned_broker_said = F.array_contains("adding", F.col("b")) & F.coalesce(F.col("broker_cordoned"), F.lit(False))
    add(
        8,
        "dirs",
        existing & F.array_contains("cordoned_dirs", F.col("path")) & ~cordoned_broker_said,
        V.CORDONED_DESTINATION,
        Severity.ERROR,
        F.concat(*named_dir, F.lit(" is cordoned and would receive the replica. " + V.CORDON_WHY)),
        V.CORDON_HINT,
        F.col("cell"),
    )
    error = F.element_at("dir_errors", F.col("path"))
    add(
        9,
        "dirs",
        existing & error.isNotNull(),
        V.OFFLINE_LOG_DIR,
        Severity.ERROR,
        F.concat(*named_dir, F.lit(" is offline and would receive the replica (DescribeLogDirs: "), error, F.lit(").")),
        V.OFFLINE_DIR_HINT,
        F.col("cell"),
    )
    add(
        10,
        "entries",
        F.col("kind") == ChangeKind.NONE.value,
        V.NO_CHANGE,
        Severity.INFO,
        F.concat(name, F.lit(" already has replicas "), _ids(F.col("target")), F.lit(": skipped.")),
        "Nothing to do; it is left out of the submission.",
    )
    reorder = F.col("kind") == ChangeKind.REORDER.value
    add(
        11,
        "entries",
        reorder,
        V.REORDER_ONLY,
        Severity.INFO,
        F.concat(
            name,
            F.lit(": only the order changes ("),
            _ids(F.col("current")),
            F.lit(" → "),
            _ids(F.col("target")),
            F.lit("); it completes at once."),
        ),
        "The leader does not move without a preferred leader election.",
    )
    first = F.try_element_at("target", F.lit(1))
    add(
        12,
        "entries",
        live & ~reorder & F.col("leader_after").isNotNull() & ~F.col("leader_after").eqNullSafe(first),
        V.LEADER_NEEDS_ELECTION,
        Severity.INFO,
        F.concat(
            name,
            F.lit(": broker "),
            F.col("leader_after").cast("string"),
            F.lit(" stays leader; the preferred leader becomes "),
            first.cast("string"),
            F.lit("."),
        ),
        "Run a preferred leader election after the move to make it lead.",
    )
    add(
        13,
        "entries",
        live & F.col("in_flight"),
        V.ALREADY_REASSIGNING,
        Severity.WARNING,
        F.concat(
            name,
            F.lit(" is already being reassigned: the controller keeps its original replicas "),
            _ids(F.col("current")),
            F.lit(" and drops adding replicas that are not in the new target."),
        ),
        "Acknowledge, or wait for the current reassignment to finish (or cancel it) first.",
    )
    # KIP-1073: a replica the entry moves off a fenced broker cannot be copied from there
    on_fenced = F.filter(
        "current", lambda x: F.array_contains(F.coalesce("fenced_ids", F.array().cast("array<long>")), x)
    )
    add(
        14,
        "entries",
        live & ~reorder & (F.size(on_fenced) > 0),
        V.SOURCE_ON_FENCED,
        Severity.WARNING,
        F.concat(
            name,
            F.lit(": its replica on broker "),
            _ids(on_fenced),
            F.lit(" sits on a fenced broker (KIP-1073): its data cannot be copied from there; "),
            F.lit("the new replicas copy from "),
            F.when(
                F.col("leader_before").isNotNull(),
                F.concat(F.lit("the leader, broker "), F.col("leader_before").cast("string")),
            ).otherwise(F.lit("a leader, and it has none")),
            F.lit("."),
        ),
        "Start the broker again if its copy is the one needed; otherwise acknowledge.",
    )
    add(
        15,
        "entries",
        live & F.col("leader_before").isNull(),
        V.OFFLINE_NOW,
        Severity.WARNING,
        F.concat(name, F.lit(" has no leader now: nothing can be copied.")),
        "Bring a replica back first; the new replicas cannot catch up without a leader.",
    )
    add(
        16,
        "entries",
        live & (F.size("target") != F.size("current")),
        V.RF_CHANGE,
        Severity.WARNING,
        F.concat(
            name,
            F.lit(": the replication factor changes from "),
            F.size("current").cast("string"),
            F.lit(" to "),
            F.size("target").cast("string"),
            F.lit("."),
        ),
        "Acknowledge if intended; the official tool changes it the same way.",
    )
    has_min = live & F.col("min_isr").isNotNull()
    _min_isr_findings(add, has_min, name)
    in_sync = F.size(F.filter("current", lambda x: F.array_contains("isr", x)))
    add(
        18,
        "entries",
        has_min & (in_sync < F.col("min_isr")),
        V.BELOW_MIN_ISR_NOW,
        Severity.WARNING,
        F.concat(
            name,
            F.lit(" is below min ISR now ("),
            in_sync.cast("string"),
            F.lit(" of "),
            F.col("min_isr").cast("string"),
            F.lit(" in sync)."),
        ),
        "Fix the partition's health before moving it, unless the move is the fix.",
    )
    reduced = (F.col("before") > 0) & (F.col("after") < F.least(F.col("before"), F.size("target")))
    add(
        19,
        "entries",
        live & reduced,
        V.RACK_SPREAD_REDUCED,
        Severity.WARNING,
        F.concat(
            name,
            F.lit(": replicas spread over "),
            F.col("after").cast("string"),
            F.lit(" racks instead of "),
            F.col("before").cast("string"),
            F.lit("."),
        ),
        "Pick brokers in different racks so a rack failure cannot take the partition down.",
    )
    add(
        20,
        "entries",
        live
        & (F.coalesce(F.col("available"), F.lit(0)) > 0)
        & ~reduced
        & (F.col("after") < F.least(F.size("target"), F.col("available"))),
        V.RACKS_UNDERUSED,
        Severity.WARNING,
        F.concat(
            name,
            F.lit(": "),
            F.size("target").cast("string"),
            F.lit(" replicas on "),
            F.col("after").cast("string"),
            F.lit(" racks while "),
            F.col("available").cast("string"),
            F.lit(" are available."),
        ),
        "Spread the replicas over more racks.",
    )
    found = []
    for df, checks in passes.values():
        hits = F.array_compact(F.array(*[F.when(condition, finding) for condition, finding in checks]))
        found.append(
            df.select("cluster", "idx", "topic", "partition", F.explode(hits).alias("f")).select(
                "cluster",
                "idx",
                "f.check",
                "f.cell",
                "f.sev",
                "f.code",
                "f.severity",
                "topic",
                "partition",
                F.lit(None).cast("long").alias("broker"),
                "f.message",
                "f.hint",
            )
        )
    union = found[0]
    for df in found[1:]:
        union = union.unionByName(df)
    return union


def _min_isr_findings(add: Callable[..., None], has_min: Column, name: Column) -> None:
    """Check 17 of :func:`findings`, as :func:`console.plans.validate._min_isr_rows` makes it: fewer
    replicas than min ISR after the plan, an error where the plan lowers the replication factor,
    a warning where it was below already."""
    below, lowered = F.size("target") < F.col("min_isr"), F.size("target") < F.size("current")
    add(
        17,
        "entries",
        has_min & below & lowered,
        V.RF_BELOW_MIN_ISR,
        Severity.ERROR,
        F.concat(
            name,
            F.lit(": "),
            F.size("target").cast("string"),
            F.lit(" replicas is fewer than min.insync.replicas="),
            F.col("min_isr").cast("string"),
            F.lit("; Kafka completes such a move, and the partition then refuses writes with acks=all."),
        ),
        "Keep at least min.insync.replicas replicas, or lower the topic's min.insync.replicas first.",
    )
    add(  # one of the two: the same check number
        17,
        "entries",
        has_min & below & ~lowered,
        V.RF_STILL_BELOW_MIN_ISR,
        Severity.WARNING,
        F.concat(
            name,
            F.lit(" has "),
            F.size("current").cast("string"),
            F.lit(" replicas now, fewer than min.insync.replicas="),
            F.col("min_isr").cast("string"),
            F.lit(", and "),
            F.size("target").cast("string"),
            F.lit(" after this plan: it refuses writes with acks=all before and after (the plan does not cause that)."),
        ),
        "Acknowledge; raise its replication factor (or lower min.insync.replicas) to let it take acks=all writes.",
    )
