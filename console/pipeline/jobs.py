"""The pipeline's jobs, end to end: check the input, run the transforms on Spark, write every
table to a temporary place and move them into place together (``python -m console pipeline JOB``)."""

from __future__ import annotations

import contextlib
import shutil
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

from console.core.errors import ConfigError
from console.core.format import human_duration
from console.pipeline.collect import REPLICAS
from console.pipeline.datasets import (
    SORT_ORDER,
    Output,
    Snapshots,
    check_snapshots,
    compactable,
    local_path,
    mark_compacted,
    partition_dirs,
    read_snapshots,
    rows_in,
    swap_dir,
)
from console.pipeline.snapshots import STATE_COLUMNS, StoredSnapshot, cluster_dir
from console.pipeline.spark import (
    SparkSettings,
    job_failed,
    progress,
    run_job,
    session,
    ship_console,
    spark_errors,
)

if TYPE_CHECKING:
    import pandas as pd
    from pyspark.sql import DataFrame, SparkSession

    from console.moves.waves import WaveLimits
    from console.pipeline.review_steps import ImpactSettings, Reviewed
    from console.plans.generators.options import GenerateOptions

Report = Callable[[str], None]
"""Receives one line per stage ("Reading the snapshots", "Writing moves")."""
TaskProgress = Callable[[int, int], None]
"""Receives (tasks done, tasks) of the running Spark stages."""


@dataclass(frozen=True)
class JobResult:
    """What a job wrote: rows per table, where, and how long it took."""

    job: str
    out: Path
    tables: dict[str, int]
    seconds: float
    summary: list[str] = field(default_factory=list)
    failed: int = 0
    """Clusters the job could not fully do (the generate job: goals impossible or not fitting)."""
    files: frozenset[str] = frozenset()
    """Outputs that are files, not tables (``tables`` counts their files)."""

    def to_pandas(self, table: str) -> pd.DataFrame:
        """One of the tables the job wrote (``tables``), read with pandas."""
        import pandas as pd

        if table not in self.tables or table in self.files:
            raise ConfigError(
                f"The {self.job} job wrote no table {table!r}.",
                f"Its tables: {', '.join(t for t in self.tables if t not in self.files)}.",
            )
        return pd.read_parquet(self.out / table)


def history_job(
    snapshots: str,
    out: str,
    spark: SparkSettings = SparkSettings(),
    stuck_after_s: float | None = None,
    report: Report = lambda _: None,
    tasks: TaskProgress = lambda done, total: None,
) -> JobResult:
    """The history tables (:mod:`console.pipeline.history`) of every cluster in ``snapshots``."""
    from pyspark.sql import functions as F

    from console.pipeline import history as H

    started = time.monotonic()
    report(f"Checking the snapshots in {snapshots}")
    check_snapshots(snapshots)
    stuck = H.DEFAULT_STUCK_AFTER_S if stuck_after_s is None else stuck_after_s
    output = Output(out)
    try:
        s, data = _start(spark, snapshots, report)
        with progress(s, tasks):
            report("Finding moves")
            # the adding replicas, kept (a small share of the rows): the moves read them twice
            adding = H.moving(data.replicas, data.headers).persist()
            try:
                run_job("Finding the replicas adding", adding.count)
                output.write("moves", H.moves(data.replicas, data.headers, stuck, adding))
            finally:
                with contextlib.suppress(*spark_errors()):  # a Spark gone must not hide why the job failed
                    adding.unpersist()
            moves = s.read.parquet(output.path("moves"))
            report("Copy rates")
            output.write("copy_rates", H.copy_rates(moves))
            report("Broker load")
            output.write("broker_load", H.broker_load(data.replicas))
            report("Partition counts and incidents")
            output.write("partition_counts", H.partition_counts(data.headers))
            output.write("incidents", H.incidents(data.headers))
            report("Produce rates")
            output.write("topic_rates", H.topic_rates(data.replicas))
            outcomes = run_job(
                "Counting outcomes",
                lambda: {
                    r["outcome"]: r["n"] for r in moves.groupBy("outcome").agg(F.count(F.lit(1)).alias("n")).collect()
                },
            )
            clusters = run_job("Counting clusters", lambda: data.headers.select("cluster").distinct().count())
    except BaseException as e:
        output.abort()
        raise job_failed("The history job", e) from None
    output.commit("history", {"snapshots": snapshots, "stuck_after_s": stuck, "spark": spark.where})
    summary = [
        f"{clusters} cluster(s); {output.tables['moves']} move(s): "
        + (", ".join(f"{n} {o}" for o, n in sorted(outcomes.items())) or "none"),
        f"{output.tables['copy_rates']} copy-rate row(s), {output.tables['incidents']} incident(s)",
    ]
    return JobResult("history", output.root, dict(output.tables), time.monotonic() - started, summary)


def _write_compacted(df: Any, parts: int, spread: tuple[str, ...], order: tuple[str, ...], out: Path) -> None:
    (
        df.repartition(parts, "cluster", "date", *spread)
        .sortWithinPartitions("cluster", "date", *order)
        .write.option("parquet.writer.version", "v2")
        .partitionBy("cluster", "date")
        .parquet(str(out))
    )


def compact_job(
    snapshots: str,
    spark: SparkSettings = SparkSettings(),
    before: str | None = None,
    report: Report = lambda _: None,
    tasks: TaskProgress = lambda done, total: None,
) -> JobResult:
    """Merge each past day's small files into a few files per cluster and day (split by topic),
    sorted by replica and time (so Parquet's run-length and delta encodings do the rest). Days before ``before``
    (``YYYY-MM-DD``, default today in UTC, which the collector may still be writing) are
    compacted; a day already in one file is left alone. Every directory is rewritten beside the
    old one, its row count checked, then swapped in."""
    started = time.monotonic()
    report(f"Checking the snapshots in {snapshots}")
    check_snapshots(snapshots)
    root = local_path(snapshots)
    todo = compactable(root, before)
    if not todo:
        return JobResult("compact", root, {}, time.monotonic() - started, ["Nothing to compact."])
    report(f"Starting Spark ({spark.where})")
    s = session(spark)
    tmp = root / f".compact-{uuid.uuid4().hex[:8]}"
    moved: dict[str, int] = {}
    try:
        with progress(s, tasks):
            for dataset, dirs in todo.items():
                report(f"Compacting {dataset}: {len(dirs)} day(s)")
                order = SORT_ORDER[dataset]
                df = s.read.option("basePath", str(root / dataset)).parquet(*(str(d) for d in dirs))
                out = tmp / dataset
                # replica rows: a few files per day, split by topic, so every core sorts and writes
                # its share; headers: one file per day
                spread = ("topic",) if dataset == REPLICAS else ()
                parts = len(dirs) * (int(s.conf.get("spark.sql.shuffle.partitions") or 1) if spread else 1)
                run_job(f"Compacting {dataset}", partial(_write_compacted, df, parts, spread, order, out))
                for new in partition_dirs(out):
                    old = (
                        root / dataset / f"cluster={cluster_dir(unquote(new.parent.name.split('=', 1)[1]))}" / new.name
                    )
                    wrote, had = rows_in(new), rows_in(old)
                    if wrote != had:
                        raise ConfigError(
                            f"Compacting {old} gave {wrote} rows instead of {had}; nothing was replaced.",
                            "Run the job again; if it repeats, report it.",
                        )
                    swap_dir(new, old)
                    mark_compacted(old)
                    moved[dataset] = moved.get(dataset, 0) + 1
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return JobResult(
        "compact", root, moved, time.monotonic() - started, [f"{n} day(s) of {d} compacted" for d, n in moved.items()]
    )


def review_job(
    snapshots: str,
    plans: dict[str | None, str],
    out: str,
    spark: SparkSettings = SparkSettings(),
    at: float | None = None,
    throttle: int | None = None,
    limits: WaveLimits | None = None,
    report: Report = lambda _: None,
    tasks: TaskProgress = lambda done, total: None,
    priced: ImpactSettings | None = None,
) -> JobResult:
    """Each plan (``cluster`` → plan file; None: the history's only cluster) against that cluster's
    last snapshot at or before ``at`` (default: the last one): the tables ``partitions`` (the diff,
    with each moving entry's wave), ``brokers``, ``flows`` and ``findings``, ``rollback-<cluster>.json``,
    ``impact/<cluster>.json`` (what the plan costs, priced by ``priced``), and in the manifest per
    cluster the counts, the waves, the ETA at ``throttle`` and the impact's headline."""
    from console.moves.waves import WaveLimits
    from console.pipeline import review_steps as steps

    started = time.monotonic()
    report(f"Checking the snapshots in {snapshots} and the plans")
    check_snapshots(snapshots)
    parsed = steps.read_plans(plans)
    output = Output(out)
    try:
        s, data = _start(spark, snapshots, report)
        ship_console(s, spark)  # the rules run in Python workers (console.pipeline.spark_rules)
        report("Finding the snapshots")
        chosen = _snapshots_for(data.headers, list(parsed), at)
        staged = steps.stage_plans(output, {key: parsed[asked] for asked, key in chosen.keys_map.items()})
        del parsed
        facts = steps.cluster_facts(chosen.snapshots)
        inputs = steps.inputs(s, _rows_of(s, data.replicas, chosen.snapshots), facts, staged)
        with progress(s, tasks):
            done = steps.write_review(
                s, output, inputs, facts, staged, limits or WaveLimits(), throttle, report, priced
            )
    except BaseException as e:
        output.abort()
        raise job_failed("The review job", e) from None
    taken = {c: facts.taken[c] for c in staged.clusters}
    per_cluster, summary = _review_summary(taken, done, throttle)
    output.commit(
        "review",
        {
            "snapshots": snapshots,
            "plans": {c or "": p for c, p in plans.items()},
            "at": at,
            "throttle": throttle,
            "spark": spark.where,
            "clusters": per_cluster,
        },
    )
    return JobResult(
        "review", output.root, dict(output.tables), time.monotonic() - started, summary, files=frozenset(output.files)
    )


def _review_summary(
    taken: dict[str, float], done: Reviewed, throttle: int | None
) -> tuple[dict[str, dict[str, object]], list[str]]:
    """Per cluster reviewed (``taken``: its snapshot's time), the manifest's figures and the summary line."""
    per_cluster: dict[str, dict[str, object]] = {}
    summary = []
    for cluster, at in taken.items():
        waves, eta = done.waves.get(cluster, (0, 0.0 if throttle else None))  # nothing moves: nothing to copy
        kinds = {k: n for (c, k), n in done.counts.items() if c == cluster}
        said = {k: n for (c, k), n in done.severities.items() if c == cluster}
        # tiered topics the plan adds replicas of: their bytes, waves and ETA count the local log only
        local_only = sorted({str(r["topic"]) for r in done.tiered_moving if r["cluster"] == cluster})
        per_cluster[cluster] = {
            "snapshot_at": at,
            "kinds": kinds,
            "findings": said,
            "waves": waves,
            "eta_seconds": eta,
            "tiered_topics": local_only,
            "impact": im.headline() if (im := done.impacts.get(cluster)) is not None else None,
        }
        summary.append(
            f"{cluster}: {sum(kinds.values())} entries ({', '.join(f'{n} {k}' for k, n in sorted(kinds.items()))}); "
            f"{said.get('error', 0)} error(s), {said.get('warning', 0)} warning(s); {waves} wave(s)"
            + (f"; about {human_duration(eta)} at {throttle} B/s" if eta is not None else "")
            + (f" (local logs only for tiered topic(s) {', '.join(local_only)})" if local_only else "")
            + (f"; impact: {im.headline()}" if im is not None else "")
        )
    return per_cluster, summary


def generate_job(
    snapshots: str,
    options: GenerateOptions,
    out: str,
    spark: SparkSettings = SparkSettings(),
    clusters: Sequence[str] = (),
    at: float | None = None,
    per_topic: bool = False,
    throttle: int | None = None,
    limits: WaveLimits | None = None,
    report: Report = lambda _: None,
    tasks: TaskProgress = lambda done, total: None,
) -> JobResult:
    """The plan generator for ``options`` on each cluster of the history (``clusters``: only these),
    on its last snapshot at or before ``at``, every cluster (``per_topic``: every topic of every
    cluster) a task of its own: ``plans/<cluster>.json`` and ``reports/<cluster>.json`` per cluster
    that could be planned, and the tables ``summary`` (one row per cluster), ``units`` (one per
    cluster or topic), ``brokers`` (before and after) and ``findings``."""
    from pyspark.sql import functions as F

    from console.moves.waves import WaveLimits
    from console.pipeline import fleet
    from console.pipeline.generated import commit_generate, write_plans
    from console.plans.generators.options import Goal, check_options

    started = time.monotonic()
    check_options(options)
    if per_topic and options.goal is Goal.DRAIN_LOG_DIR:
        raise ConfigError(
            "--per-topic cannot drain a log dir: the room in the broker's other dirs is shared by every topic.",
            "Drop --per-topic: the dir is drained in one unit per cluster.",
        )
    report(f"Checking the snapshots in {snapshots}")
    check_snapshots(snapshots)
    goal = options.describe() + (" per topic" if per_topic else "")
    output = Output(out)
    try:
        s, data = _start(spark, snapshots, report)
        report("Finding the snapshots")
        chosen = _snapshots_for(data.headers, list(dict.fromkeys(clusters)) or None, at).snapshots
        ship_console(s, spark)
        planner = fleet.Planner(options, chosen, per_topic, throttle, limits or WaveLimits())
        rows = _rows_of(s, data.replicas, chosen).select(
            "cluster", (F.col("topic") if per_topic else F.lit("")).alias("scope"), *STATE_COLUMNS
        )
        # a task per unit as far as the cores allow: an explicit number of partitions (adaptive
        # execution leaves it alone) of the rows hashed by unit, so each group is planned where it lands
        parts = min(
            2000, max(4 * len(chosen), int(s.conf.get("spark.sql.shuffle.partitions") or 4) * (4 if per_topic else 1))
        )
        units = (
            rows.repartition(parts, "cluster", "scope")
            .groupBy("cluster", "scope")
            .applyInArrow(planner.function(), fleet.spark_schema(fleet.UNIT_SCHEMA))
        )
        with progress(s, tasks):
            report(f"Planning {goal} on {len(chosen)} cluster(s)" + (", topic by topic" if per_topic else ""))
            raw = output.path(".units")
            run_job("Planning", lambda: units.write.parquet(raw))
        summary = write_plans(output, raw, chosen, goal, options, per_topic, report)
    except BaseException as e:
        output.abort()
        raise job_failed("The generate job", e) from None
    lines = commit_generate(output, summary, snapshots, goal, options, at, per_topic, throttle, spark)
    failed = sum(1 for r in summary if fleet.UnitStatus(r["status"]).failed)
    if failed:
        lines.append(
            f"{failed} of {len(summary)} cluster(s) not fully planned: see the summary table's message and hint."
        )
    return JobResult(
        "generate",
        output.root,
        dict(output.tables),
        time.monotonic() - started,
        lines,
        failed=failed,
        files=frozenset(output.files),
    )


def _start(spark: SparkSettings, snapshots: str, report: Report) -> tuple[SparkSession, Snapshots]:
    """The session and the snapshot datasets a job reads."""
    report(f"Starting Spark ({spark.where})")
    s = session(spark)
    return s, read_snapshots(s, snapshots)


@dataclass(frozen=True)
class _Chosen:
    keys_map: dict[str | None, str]
    """The cluster asked for (None: the only one) → the cluster key in the history."""
    snapshots: dict[str, StoredSnapshot]
    """Cluster key → the snapshot chosen."""


def _snapshots_for(headers: DataFrame, asked: list[str | None] | None, at: float | None) -> _Chosen:
    """Per cluster asked for (``asked`` None: every cluster in the history), the last snapshot at or
    before ``at``; a cluster not in the history, or several clusters when one was asked for without
    a name, is a :class:`ConfigError`."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    h = headers.select("cluster", F.unix_millis("taken_at").alias("ms"), "header")
    known = sorted(
        r["cluster"] for r in run_job("Listing the clusters", lambda: h.select("cluster").distinct().collect())
    )
    mapping: dict[str | None, str] = {}
    for a in known if asked is None else asked:
        if a is None:
            if len(known) != 1:
                raise ConfigError(
                    f"The history holds {len(known)} clusters ({', '.join(known)}): say which one the plan is for.",
                    "Add --cluster CLUSTER_ID.",
                )
            mapping[a] = known[0]
        elif a not in known:
            raise ConfigError(
                f"Cluster {a} is not in the history (it has: {', '.join(known) or 'none'}).",
                "Collect that cluster's snapshots, or fix --cluster.",
            )
        else:
            mapping[a] = a
    wanted = sorted(set(mapping.values()))
    if at is not None:
        h = h.filter(F.col("ms") <= int(at * 1000))
    last = (
        h.filter(F.col("cluster").isin(wanted))
        .withColumn("n", F.row_number().over(Window.partitionBy("cluster").orderBy(F.desc("ms"))))
        .filter("n = 1")
    )
    rows = run_job("Finding the snapshots", lambda: last.collect())
    found = {r["cluster"]: StoredSnapshot(int(r["ms"]), str(r["header"])) for r in rows}
    missing = [c for c in wanted if c not in found]
    if missing:
        raise ConfigError(
            f"No snapshot of {', '.join(missing)} at or before the time given.",
            "Give a later --at, or leave it out for the last snapshot.",
        )
    return _Chosen(mapping, found)


def _rows_of(s: SparkSession, replicas: DataFrame, chosen: dict[str, StoredSnapshot]) -> DataFrame:
    """The replica rows of the chosen snapshots (only their day's files are read)."""
    from pyspark.sql import functions as F

    picks = s.createDataFrame(
        [(c, snap.taken_ms, snap.date) for c, snap in chosen.items()], "cluster string, ms long, date string"
    )
    return (
        replicas.join(F.broadcast(picks), ["cluster", "date"], "inner")
        .filter(F.unix_millis("taken_at") == F.col("ms"))
        .drop("ms")
    )
