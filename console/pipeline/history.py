"""The history job's transforms: what every past move teaches (PySpark DataFrames, built-in
functions and windows only; no Python UDF).

Each transform starts with a ``select`` of the columns it reads and ends with a ``select`` of the
columns it gives: its schema contract. Inputs are the two stored datasets
(:mod:`console.pipeline.snapshots`) with ``cluster`` from the path:

* ``moves``: one row per replica move. A move is a run of consecutive snapshots of a cluster in
  which a replica is adding (AR). It ended **completed** when the next snapshot has the replica
  in R and no longer adding, **cancelled** when the next snapshot holds the partition without
  it; with no next snapshot (or one that does not hold the partition) it is **in_flight**, or **stuck** when its bytes have not grown for ``stuck_after_s``.
* ``copy_rates``: per destination broker (``source_broker`` null) and per leader → destination
  pair: completed moves, p10 / median / p90 copy rate of a move, the median throughput of the
  broker while it copied (a move's rate times the moves it had in flight: the throttle is per
  broker) and the median of that throughput over the throttle in force while the bytes were copied. This is the calibration the
  console's ETAs read.
* ``broker_load``: per broker per snapshot: replicas, leaders, bytes, adding, removing.
* ``partition_counts``: per snapshot: partitions, reassigning, truly under-replicated, offline.
* ``incidents``: periods with truly under-replicated partitions (KIP-352: reassigning never
  counts) and periods with reassignments, per cluster.
* ``topic_rates``: per cluster and topic, the produce rate (bytes/s) its leaders' logs grew at
  between snapshots (an interval in which a log shrank, retention having deleted a segment, is left
  out), summed over its partitions: what the impact of a plan prices steady replication with.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F
from pyspark.sql.window import WindowSpec

KEY = ["cluster", "topic", "partition", "broker"]
DEFAULT_STUCK_AFTER_S = 600.0


class Outcome:
    """How a move ended (values of ``moves.outcome``)."""

    COMPLETED = "completed"
    CANCELLED = "cancelled"
    IN_FLIGHT = "in_flight"
    STUCK = "stuck"


MOVES_COLUMNS = [
    "cluster",
    "topic",
    "partition",
    "broker",
    "rack",
    "source_broker",
    "started_at",
    "ended_at",
    "last_seen_at",
    "outcome",
    "bytes",
    "copied_bytes",
    "seconds",
    "rate_bps",
    "throttle_bps",
    "samples",
    "concurrent",
    "broker_rate_bps",
    "throttle_ratio",
]
_MOVES_CASTS = {
    "bytes": "long",
    "copied_bytes": "long",
    "throttle_bps": "long",
    "samples": "int",
    "concurrent": "double",
}
"""The moves table's columns whose type the select fixes (the others come out typed)."""
COPY_RATE_COLUMNS = [
    "cluster",
    "broker",
    "source_broker",
    "moves",
    "bytes",
    "rate_p10_bps",
    "rate_median_bps",
    "rate_p90_bps",
    "throughput_median_bps",
    "throttle_ratio_median",
    "throttled_moves",
    "last_move_at",
]
BROKER_LOAD_COLUMNS = ["cluster", "taken_at", "broker", "rack", "replicas", "leaders", "bytes", "adding", "removing"]
PARTITION_COUNT_COLUMNS = ["cluster", "taken_at", "partitions", "reassigning", "under_replicated", "offline"]
INCIDENT_COLUMNS = [
    "cluster",
    "kind",
    "started_at",
    "ended_at",
    "last_seen_at",
    "seconds",
    "peak_partitions",
    "snapshots",
]


def _seconds(later: Column, earlier: Column) -> Column:
    return (F.unix_millis(later) - F.unix_millis(earlier)) / 1000.0


def sequence(headers: DataFrame) -> DataFrame:
    """Each snapshot of each cluster numbered in time (``seq``), with the next one's time."""
    w = Window.partitionBy("cluster").orderBy("taken_at")
    return (
        headers.select("cluster", "taken_at")
        .dropDuplicates(["cluster", "taken_at"])
        .withColumn("seq", F.row_number().over(w))
        .withColumn("next_taken_at", F.lead("taken_at").over(w))
        .select("cluster", "taken_at", "seq", "next_taken_at")
    )


_REPLICA_AT = ("cluster", "taken_at", "topic", "partition", "broker", "rack", "leader")
"""A replica row's snapshot, partition and place, as the moving rows carry them."""
MOVING_COLUMNS = [
    *_REPLICA_AT,
    "in_isr",
    "bytes",
    "seq",
    "next_taken_at",
    "throttle",
    "concurrent",
]


def moving(replicas: DataFrame, headers: DataFrame) -> DataFrame:
    """The rows moves are made of: one per replica adding at a snapshot, with the snapshot's number
    (``seq``) and the next one's time, the throttle it copied under (the least of its follower
    throttle and its leader's leader throttle) and how many replicas its broker was adding then
    (``concurrent``). A small share of the replica rows: the history job keeps it in memory, as
    :func:`moves` reads it twice."""
    r = replicas.select(
        *_REPLICA_AT,
        "is_leader",
        "in_isr",
        "adding",
        "bytes",
        "follower_rate",
        "follower_throttled",
        "leader_rate",
        "leader_throttled",
    )
    seq = F.broadcast(sequence(headers))
    # One pass over the replicas keeps the replicas adding and the leaders whose leader throttle is
    # in force (the source's side of a move's throttle); what a leader has in force reaches its
    # partition's adding replicas through a window over those rows only, so no other row is
    # shuffled (a join with every leader row would shuffle them all).
    kept = r.filter(F.col("adding") | (F.col("is_leader") & F.col("leader_throttled")))
    source_rate = F.max(F.when(F.col("is_leader") & F.col("leader_throttled"), F.col("leader_rate"))).over(
        Window.partitionBy("cluster", "taken_at", "topic", "partition")
    )
    adding = (
        kept.withColumn("source_rate", source_rate)
        .filter("adding")
        .join(seq, ["cluster", "taken_at"], "inner")
        .withColumn(
            "throttle", F.least(F.when(F.col("follower_throttled"), F.col("follower_rate")), F.col("source_rate"))
        )
    )
    return adding.withColumn(
        "concurrent", F.count(F.lit(1)).over(Window.partitionBy("cluster", "taken_at", "broker"))
    ).select(*MOVING_COLUMNS)


def _with_broker_growth(adding: DataFrame, by_key: WindowSpec) -> DataFrame:
    """What the broker took in between this snapshot and the next, against the throttle in force
    then: each replica's growth to the next snapshot (``growth``, when it is seen there still
    adding and was not in the ISR), over ``dt`` seconds, summed over the broker's replicas copying
    at this snapshot (``broker_grew``), and the broker's throttle then (``broker_throttle``)."""
    growth = F.when(
        (F.lead("seq").over(by_key) == F.col("seq") + 1) & ~F.coalesce(F.col("in_isr"), F.lit(False)),
        F.greatest(F.lead("bytes").over(by_key) - F.col("bytes"), F.lit(0)),
    )
    at_broker = Window.partitionBy("cluster", "taken_at", "broker")
    return (
        adding.withColumn("growth", growth)
        .withColumn("dt", _seconds(F.col("next_taken_at"), F.col("taken_at")))
        .withColumn("broker_grew", F.sum("growth").over(at_broker))
        .withColumn("broker_throttle", F.max("throttle").over(at_broker))
    )


def _with_what_followed(runs: DataFrame, r: DataFrame) -> DataFrame:
    """Each run of a move with the replica at the snapshot after it (``end_bytes``, ``still_adding``;
    null when that snapshot does not have it) and whether that snapshot holds its partition at all
    (``partition_seen``)."""
    # The replica at the snapshot after each run: only the rows matching a run's end are kept, by a
    # lookup in the runs' ends broadcast to the scan (one row per move: small, however long the
    # history), so the replica rows are scanned, never shuffled. The snapshots runs end before go
    # first: one timestamp to look up lets most rows go before their names are read.
    ends = runs.select(*KEY, "next_taken_at").filter(F.col("next_taken_at").isNotNull())
    after = (
        r.select(
            "cluster",
            "topic",
            "partition",
            "broker",
            F.col("taken_at").alias("next_taken_at"),
            F.col("bytes").alias("end_bytes"),
            F.col("adding").alias("still_adding"),
        )
        .join(F.broadcast(ends.select("next_taken_at").distinct()), "next_taken_at", "left_semi")
        .join(F.broadcast(ends), [*KEY, "next_taken_at"], "left_semi")
    )
    # the partitions the next snapshot holds at all: a move whose partition it lacks (not read
    # there) did not end there, cancelled or not
    seen = (
        r.select("cluster", "topic", "partition", F.col("taken_at").alias("next_taken_at"))
        .join(F.broadcast(ends.select("next_taken_at").distinct()), "next_taken_at", "left_semi")
        .join(
            F.broadcast(ends.select("cluster", "topic", "partition", "next_taken_at").distinct()),
            ["cluster", "topic", "partition", "next_taken_at"],
            "left_semi",
        )
        .distinct()
        .withColumn("partition_seen", F.lit(True))
    )
    return runs.join(after, [*KEY, "next_taken_at"], "left").join(
        seen, ["cluster", "topic", "partition", "next_taken_at"], "left"
    )


def _move_columns(m: DataFrame, completed: Column) -> DataFrame:
    """The moves table's columns: the copy rate, the broker's own rate and the throttle ratio added."""
    # The copy rate while copying: growth between the first and last sample seen adding; for a move
    # seen once, what it copied over the time it was seen (a lower bound).
    rate = F.when(
        (F.col("samples") >= 2) & (F.col("grown") > 0) & (F.col("sampled_s") > 0), F.col("grown") / F.col("sampled_s")
    ).when(completed & (F.col("seconds") > 0), F.col("bytes") / F.col("seconds"))
    return (
        m.withColumn("rate_bps", rate)
        # a broker seen taking in nothing while sampled copying has no rate of its own: the move's stands
        .withColumn("broker_rate_bps", F.when(F.col("broker_bytes") > 0, F.try_divide("broker_bytes", "copy_s")))
        .withColumn(
            "throttle_ratio", F.when(F.col("allowed_bytes") > 0, F.col("throttled_bytes") / F.col("allowed_bytes"))
        )
        .select(*(F.col(c).cast(_MOVES_CASTS[c]).alias(c) if c in _MOVES_CASTS else c for c in MOVES_COLUMNS))
        .orderBy("cluster", "started_at", "topic", "partition", "broker")
    )


def _outcome(stuck_after_s: float) -> Column:
    """What became of a move: in flight (or stuck, not in sync and not growing for ``stuck_after_s``)
    while the last snapshot shows it adding, else cancelled or completed by what followed."""
    return (
        F.when(
            F.col("next_taken_at").isNull(),
            F.when(
                ~F.coalesce(F.col("last_in_isr"), F.lit(False))
                & (
                    _seconds(F.col("last_seen_at"), F.coalesce(F.col("grew_at"), F.col("started_at")))
                    >= F.lit(stuck_after_s)
                ),
                F.lit(Outcome.STUCK),
            ).otherwise(F.lit(Outcome.IN_FLIGHT)),
        )
        .when(F.col("still_adding").isNull() & F.col("partition_seen").isNull(), F.lit(Outcome.IN_FLIGHT))
        .when(F.col("still_adding").isNull(), F.lit(Outcome.CANCELLED))
        .otherwise(F.lit(Outcome.COMPLETED))
    )


def moves(
    replicas: DataFrame,
    headers: DataFrame,
    stuck_after_s: float = DEFAULT_STUCK_AFTER_S,
    adding: DataFrame | None = None,
) -> DataFrame:
    """One row per replica move (``adding``: :func:`moving` of the same input, when the caller keeps it)."""
    if adding is None:
        adding = moving(replicas, headers)
    r = replicas.select("cluster", "taken_at", "topic", "partition", "broker", "bytes", "adding")
    by_key = Window.partitionBy(*KEY).orderBy("seq")
    adding = adding.withColumn("run", F.col("seq") - F.row_number().over(by_key))
    in_run = Window.partitionBy(*KEY, "run").orderBy("seq")
    adding = adding.withColumn("grew", F.col("bytes") > F.coalesce(F.lag("bytes").over(in_run), F.lit(-1)))
    adding = _with_broker_growth(adding, by_key)
    copying = F.col("growth").isNotNull() & (F.col("dt") > 0)
    throttled = copying & (F.col("broker_throttle") > 0)
    runs = adding.groupBy(*KEY, "run").agg(
        F.first("rack").alias("rack"),
        F.mode("leader").alias("source_broker"),
        F.min("taken_at").alias("started_at"),
        F.max("taken_at").alias("last_seen_at"),
        F.max("seq").alias("last_seq"),
        F.max_by("next_taken_at", "seq").alias("next_taken_at"),
        F.min_by("bytes", "seq").alias("first_bytes"),
        F.max_by("bytes", "seq").alias("last_bytes"),
        F.max_by("in_isr", "seq").alias("last_in_isr"),
        F.max(F.when(F.col("grew"), F.col("taken_at"))).alias("grew_at"),
        F.mode("throttle").alias("throttle_bps"),
        F.avg("concurrent").alias("concurrent"),
        F.count(F.lit(1)).alias("samples"),
        F.sum(F.when(copying, F.col("broker_grew"))).alias("broker_bytes"),
        F.sum(F.when(copying, F.col("dt"))).alias("copy_s"),
        F.sum(F.when(throttled, F.col("broker_grew"))).alias("throttled_bytes"),
        F.sum(F.when(throttled, F.col("broker_throttle") * F.col("dt"))).alias("allowed_bytes"),
    )
    m = _with_what_followed(runs, r).withColumn("outcome", _outcome(stuck_after_s))
    completed = F.col("outcome") == Outcome.COMPLETED
    m = (
        m.withColumn(
            "ended_at", F.when(F.col("outcome").isin(Outcome.COMPLETED, Outcome.CANCELLED), F.col("next_taken_at"))
        )
        .withColumn("bytes", F.when(completed, F.coalesce("end_bytes", "last_bytes")).otherwise(F.col("last_bytes")))
        .withColumn("copied_bytes", F.col("bytes") - F.coalesce(F.col("first_bytes"), F.lit(0)))
        .withColumn("seconds", _seconds(F.coalesce(F.col("ended_at"), F.col("last_seen_at")), F.col("started_at")))
        .withColumn("sampled_s", _seconds(F.col("last_seen_at"), F.col("started_at")))
        .withColumn("grown", F.col("last_bytes") - F.col("first_bytes"))
    )
    return _move_columns(m, completed)


def _rates(done: DataFrame, by: list[str]) -> DataFrame:
    # The throttle is per broker, shared by the moves it copies at once: what the broker took in
    # per second while the move copied, and that over the throttle in force in each interval
    # (a throttle changed during the move counts for the bytes copied under it).
    throughput = F.coalesce(F.col("broker_rate_bps"), F.col("rate_bps"))
    ratio = F.col("throttle_ratio")
    return done.groupBy(*by).agg(
        F.count(F.lit(1)).cast("int").alias("moves"),
        F.sum("bytes").cast("long").alias("bytes"),
        F.percentile("rate_bps", 0.1).alias("rate_p10_bps"),
        F.percentile("rate_bps", 0.5).alias("rate_median_bps"),
        F.percentile("rate_bps", 0.9).alias("rate_p90_bps"),
        F.percentile(throughput, 0.5).alias("throughput_median_bps"),
        F.percentile(ratio, 0.5).alias("throttle_ratio_median"),
        F.count(ratio).cast("int").alias("throttled_moves"),
        F.max("ended_at").alias("last_move_at"),
    )


def copy_rates(moves_df: DataFrame) -> DataFrame:
    done = moves_df.select(
        "cluster",
        "broker",
        "source_broker",
        "outcome",
        "bytes",
        "rate_bps",
        "throttle_bps",
        "broker_rate_bps",
        "throttle_ratio",
        "ended_at",
    ).filter((F.col("outcome") == Outcome.COMPLETED) & F.col("rate_bps").isNotNull())
    per_broker = _rates(done, ["cluster", "broker"]).withColumn("source_broker", F.lit(None).cast("int"))
    per_pair = _rates(done.filter(F.col("source_broker").isNotNull()), ["cluster", "broker", "source_broker"])
    return (
        per_broker.unionByName(per_pair)
        .select(*COPY_RATE_COLUMNS)
        .orderBy("cluster", "broker", F.col("source_broker").asc_nulls_first())
    )


def broker_load(replicas: DataFrame) -> DataFrame:
    r = replicas.select("cluster", "taken_at", "broker", "rack", "is_leader", "bytes", "adding", "removing")
    # Summed per broker and rack first: a hash aggregation, partial in each task, so each task sends
    # a row per broker and snapshot (a string aggregated, the rack, would sort every row instead);
    # then per broker over those rows (one rack per broker and snapshot).
    by_rack = r.groupBy("cluster", "taken_at", "broker", "rack").agg(
        F.count(F.lit(1)).alias("replicas"),
        F.count_if("is_leader").alias("leaders"),
        F.sum("bytes").alias("bytes"),
        F.count_if("adding").alias("adding"),
        F.count_if("removing").alias("removing"),
    )
    return (
        by_rack.groupBy("cluster", "taken_at", "broker")
        .agg(
            F.first("rack", ignorenulls=True).alias("rack"),
            F.sum("replicas").cast("int").alias("replicas"),
            F.sum("leaders").cast("int").alias("leaders"),
            F.sum("bytes").cast("long").alias("bytes"),
            F.sum("adding").cast("int").alias("adding"),
            F.sum("removing").cast("int").alias("removing"),
        )
        .select(*BROKER_LOAD_COLUMNS)
        .orderBy("cluster", "taken_at", "broker")
    )


def partition_counts(headers: DataFrame) -> DataFrame:
    return (
        headers.select(*PARTITION_COUNT_COLUMNS)
        .dropDuplicates(["cluster", "taken_at"])
        .select(*PARTITION_COUNT_COLUMNS)
        .orderBy("cluster", "taken_at")
    )


def incidents(headers: DataFrame) -> DataFrame:
    h = headers.select("cluster", "taken_at", "under_replicated", "reassigning").dropDuplicates(["cluster", "taken_at"])
    long = h.unpivot(["cluster", "taken_at"], ["under_replicated", "reassigning"], "kind", "count")
    w = Window.partitionBy("cluster", "kind").orderBy("taken_at")
    flagged = (
        long.withColumn("on", F.col("count") > 0)
        .withColumn("next_taken_at", F.lead("taken_at").over(w))
        .withColumn("change", F.when(F.col("on") != F.coalesce(F.lag("on").over(w), ~F.col("on")), 1).otherwise(0))
        .withColumn("period", F.sum("change").over(w.rowsBetween(Window.unboundedPreceding, 0)))
    )
    periods = (
        flagged.filter("on")
        .groupBy("cluster", "kind", "period")
        .agg(
            F.min("taken_at").alias("started_at"),
            F.max("taken_at").alias("last_seen_at"),
            F.max_by("next_taken_at", "taken_at").alias("ended_at"),
            F.max("count").cast("int").alias("peak_partitions"),
            F.count(F.lit(1)).cast("int").alias("snapshots"),
        )
    )
    return (
        periods.withColumn(
            "seconds", _seconds(F.coalesce(F.col("ended_at"), F.col("last_seen_at")), F.col("started_at"))
        )
        .select(*INCIDENT_COLUMNS)
        .orderBy("cluster", "started_at", "kind")
    )


TOPIC_RATE_COLUMNS = ["cluster", "topic", "partitions", "produce_bps", "seconds"]


def topic_rates(replicas: DataFrame) -> DataFrame:
    """Per cluster and topic: the partitions seen growing, their summed produce rate and the
    shortest time a partition was watched over (``seconds``)."""
    r = replicas.select("cluster", "taken_at", "topic", "partition", "is_leader", "bytes").filter("is_leader")
    w = Window.partitionBy("cluster", "topic", "partition").orderBy("taken_at")
    steps = r.withColumn("grew", F.col("bytes") - F.lag("bytes").over(w)).withColumn(
        "dt", _seconds(F.col("taken_at"), F.lag("taken_at").over(w))
    )
    per_partition = (
        steps.filter((F.col("grew") >= 0) & (F.col("dt") > 0))
        .groupBy("cluster", "topic", "partition")
        .agg(F.sum("grew").alias("grew"), F.sum("dt").alias("seconds"))
    )
    return (
        per_partition.groupBy("cluster", "topic")
        .agg(
            F.count(F.lit(1)).cast("int").alias("partitions"),
            F.sum(F.col("grew") / F.col("seconds")).alias("produce_bps"),
            F.min("seconds").alias("seconds"),
        )
        .select(*TOPIC_RATE_COLUMNS)
        .orderBy("cluster", "topic")
    )
