"""The pipeline's jobs, end to end: check the input, run the transforms on Spark, write every
table to a temporary place and move them into place together (``python -m console pipeline JOB``)."""

from __future__ import annotations

import shutil
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator
from urllib.parse import unquote

from console.core.errors import ConfigError
from console.pipeline.datasets import (SORT_ORDER, Output, check_snapshots, compactable, local_path, read_snapshots,
                                       rows_in, swap_dir, partition_dirs)
from console.pipeline.snapshots import cluster_dir
from console.pipeline.spark import SparkSettings, progress, run_job, session

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


def history_job(snapshots: str, out: str, spark: SparkSettings = SparkSettings(),
                stuck_after_s: float | None = None, report: Report = lambda _: None,
                tasks: TaskProgress = lambda done, total: None) -> JobResult:
    """The history tables (:mod:`console.pipeline.history`) of every cluster in ``snapshots``."""
    from pyspark.sql import functions as F

    from console.pipeline import history as H

    started = time.monotonic()
    report(f"Checking the snapshots in {snapshots}")
    check_snapshots(snapshots)
    stuck = H.DEFAULT_STUCK_AFTER_S if stuck_after_s is None else stuck_after_s
    output = Output(out)
    try:
        report(f"Starting Spark ({spark.where})")
        s = session(spark)
        data = read_snapshots(s, snapshots)
        with progress(s, tasks):
            report("Finding moves")
            output.write("moves", H.moves(data.replicas, data.headers, stuck))
            moves = s.read.parquet(output.path("moves"))
            report("Copy rates")
            output.write("copy_rates", H.copy_rates(moves))
            report("Broker load")
            output.write("broker_load", H.broker_load(data.replicas))
            report("Partition counts and incidents")
            output.write("partition_counts", H.partition_counts(data.headers))
            output.write("incidents", H.incidents(data.headers))
            outcomes = run_job("Counting outcomes", lambda: {
                r["outcome"]: r["n"] for r in moves.groupBy("outcome").agg(F.count(F.lit(1)).alias("n")).collect()})
            clusters = run_job("Counting clusters", lambda: data.headers.select("cluster").distinct().count())
    except BaseException:
        output.abort()
        raise
    output.commit("history", {"snapshots": snapshots, "stuck_after_s": stuck, "spark": spark.where})
    summary = [f"{clusters} cluster(s); {output.tables['moves']} move(s): "
               + (", ".join(f"{n} {o}" for o, n in sorted(outcomes.items())) or "none"),
               f"{output.tables['copy_rates']} copy-rate row(s), {output.tables['incidents']} incident(s)"]
    return JobResult("history", output.root, dict(output.tables), time.monotonic() - started, summary)


def compact_job(snapshots: str, spark: SparkSettings = SparkSettings(), before: str | None = None,
                report: Report = lambda _: None, tasks: TaskProgress = lambda done, total: None) -> JobResult:
    """Merge each past day's small files into one file per cluster and day, sorted by replica and
    time (so Parquet's run-length and delta encodings do the rest). Days before ``before``
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
                run_job(f"Compacting {dataset}", lambda: (
                    df.repartition("cluster", "date").sortWithinPartitions("cluster", "date", *order)
                    .write.option("parquet.writer.version", "v2").partitionBy("cluster", "date").parquet(str(out))))
                for new in partition_dirs(out):
                    old = root / dataset / f"cluster={cluster_dir(unquote(new.parent.name.split('=', 1)[1]))}" / new.name
                    if rows_in(new) != rows_in(old):
                        raise ConfigError(f"Compacting {old} gave {rows_in(new)} rows instead of {rows_in(old)}; "
                                          "nothing was replaced.", "Run the job again; if it repeats, report it.")
                    swap_dir(new, old)
                    moved[dataset] = moved.get(dataset, 0) + 1
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return JobResult("compact", root, moved, time.monotonic() - started,
                     [f"{n} day(s) of {d} compacted" for d, n in moved.items()])


def history_in_subprocess(snapshots: str, out: str, master: str = "local[2]") -> Iterator[str]:
    """Run the history job in a child process (``python -m console pipeline history``), yielding
    its stage lines as they come: how the console's server updates the History page without a
    Spark session of its own. Raises :class:`ConfigError` with the job's message when it fails."""
    import os
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)}
    proc = subprocess.Popen([sys.executable, "-m", "console", "pipeline", "history", "--snapshots", snapshots,
                             "--out", out, "--master", master], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True, env=env, cwd=root)
    assert proc.stderr is not None
    said: list[str] = []
    for raw in proc.stderr:
        line = raw.rstrip()
        if line.startswith(("[", "Error:", "history:", "  ")) or (said and said[-1].startswith("Error:")):
            said.append(line)
            yield line
    if proc.wait() != 0:
        at = next((i for i, x in enumerate(said) if x.startswith("Error:")), None)
        if at is None:
            raise ConfigError(f"The history job failed (exit {proc.returncode}).",
                              "Run it in a terminal to see why: python -m console pipeline history")
        raise ConfigError(said[at].removeprefix("Error: "), said[at + 1] if at + 1 < len(said) else "")
