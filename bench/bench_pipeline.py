"""The data pipeline's figures: storage per day, the history job over a synthetic day on
``local[2]`` and ``local[1]``, and what collecting costs per snapshot on the sandbox.

    PYTHONPATH=. .venv/bin/python bench/bench_pipeline.py                    # everything (about 25 min)
    PYTHONPATH=. .venv/bin/python bench/bench_pipeline.py --hours 2          # a shorter "day"
    PYTHONPATH=. .venv/bin/python bench/bench_pipeline.py --skip-collect     # no sandbox
    # only the history job on local[2], against a day kept in a directory (written and compacted the
    # first time), alternating with the code of another checkout, with Spark's stage breakdown:
    PYTHONPATH=. .venv/bin/python bench/bench_pipeline.py --skip-collect --history-only \
        --day /tmp/histjob-day/24h --runs 3 --against /tmp/base-histjob --stages

The synthetic day (bench/synthetic_history.py): 10k partitions of RF 3 on 12 brokers (three racks)
sampled every 30 s for 24 h (2,880 snapshots, about 86M replica rows), four throttled
reassignments of 150 partitions each and one broker restart. Each Spark job runs in its own
process (``python -m console pipeline ...``), so ``local[1]`` and ``local[2]`` each get a fresh JVM.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict
from pathlib import Path

import pyarrow.compute as pc
import pyarrow.parquet as pq

from bench.synthetic_history import Day, write_day
from console.core.format import human_bytes, human_duration
from console.pipeline.collect import REPLICAS
from console.pipeline.datasets import parquet_files

ROOT = Path(__file__).resolve().parents[1]


def size_of(path: Path) -> int:
    return sum(f.stat().st_size for f in parquet_files(path))


def job(*args: str, tree: Path = ROOT) -> float:
    """Wall time of ``python -m console pipeline ARGS`` run from the checkout ``tree`` (JVM start included)."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    started = time.monotonic()
    ran = subprocess.run(
        [sys.executable, "-m", "console", "pipeline", *args], cwd=tree, env=env, capture_output=True, text=True
    )
    took = time.monotonic() - started
    if ran.returncode:
        sys.exit(f"pipeline {' '.join(args)} failed:\n{ran.stderr[-3000:]}")
    return took


def changed_only_size(root: Path, scratch: Path) -> int:
    """The same information stored as "only what changed": per replica, a row only when a column
    other than the time differs from its previous snapshot. Streams the compacted files (sorted by
    replica, then time) batch by batch."""
    import pyarrow as pa

    out = scratch / "changed-only.parquet"
    kept_rows = total = 0
    writer = None
    for f in parquet_files(root / REPLICAS):
        last = None
        for batch in pq.ParquetFile(f).iter_batches(batch_size=1_000_000):
            t = pa.Table.from_batches([batch])
            both = t if last is None else pa.concat_tables([last, t])
            keep = None
            for c in both.column_names:
                if c == "taken_at":
                    continue
                col = both.column(c).combine_chunks()
                a, b = col.slice(1), col.slice(0, len(col) - 1)
                differs = pc.or_kleene(pc.not_equal(a, b), pc.xor(pc.is_null(a), pc.is_null(b))).fill_null(False)
                keep = differs if keep is None else pc.or_(keep, differs)
            assert keep is not None
            mask = keep if last is not None else pa.concat_arrays([pa.array([True]), keep])
            chosen = t.filter(mask)
            if writer is None:
                writer = pq.ParquetWriter(out, chosen.schema, compression="zstd")
            writer.write_table(chosen)
            kept_rows += chosen.num_rows
            total += t.num_rows
            last = t.slice(t.num_rows - 1)
    if writer is not None:
        writer.close()
    print(f"  (changed-only keeps {kept_rows:,} of {total:,} rows)")
    return out.stat().st_size if out.exists() else 0


def storage_and_history(day: Day, runs: int, storage_only: bool = False) -> None:
    scratch = Path(tempfile.mkdtemp(prefix="bench-pipeline-"))
    try:
        snaps = scratch / "snapshots"
        started = time.monotonic()
        counts = write_day(day, snaps)
        print(
            f"## Storage and the history job: {day.partitions:,} partitions, RF 3, {day.brokers} brokers, every "
            f"{day.every_s} s for {day.hours:g} h\n"
        )
        print(
            f"- synthetic day: {counts['snapshots']:,} snapshots, {counts['rows']:,} replica rows, "
            f"{counts['moves']} moves (written in {human_duration(time.monotonic() - started)})"
        )
        per_day = 24 / day.hours
        small = size_of(snaps)
        print(
            f"- as collected (one file per snapshot and dataset): {human_bytes(small)} "
            f"({human_bytes(small * per_day)} per day)"
        )
        took = job("compact", "--snapshots", str(snaps), "--before", "2100-01-01", "--master", "local[2]")
        compacted = size_of(snaps)
        print(
            f"- compacted (a few files per day sorted by replica and time, Parquet encodings): {human_bytes(compacted)} "
            f"({human_bytes(compacted * per_day)} per day; {small / compacted:.1f}× smaller); compact job "
            f"{human_duration(took)} on local[2]"
        )
        changed = changed_only_size(snaps, scratch)
        print(
            f"- only what changed between snapshots, same columns: {human_bytes(changed)} "
            f"({human_bytes(changed * per_day)} per day)"
        )
        if storage_only:
            return
        for master in ("local[2]", "local[1]"):
            times = [
                job("history", "--snapshots", str(snaps), "--out", str(scratch / "tables"), "--master", master)
                for _ in range(runs)
            ]
            print(
                f"- history job on {master}: median {human_duration(statistics.median(times))} "
                f"(runs: {', '.join(f'{t:.0f} s' for t in times)})"
            )
        print_moves_found(scratch / "tables")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def conf_args(conf: list[str] | None) -> list[str]:
    return [a for kv in conf or () for a in ("--conf", kv)]


def print_moves_found(tables: Path) -> None:
    """How many moves the history job wrote to ``tables``, by outcome."""
    moves = pq.read_table(tables / "moves")
    outcomes = pc.value_counts(moves.column("outcome")).to_pylist()
    found = ", ".join(f"{o['counts']} {o['values']}" for o in outcomes)
    print(f"- moves found: {moves.num_rows} ({found})")


def prepared_day(day: Day, where: Path, conf: list[str] | None = None) -> Path:
    """The synthetic ``day`` written and compacted under ``where/snapshots``: done once, reused while
    ``where/_day.json`` names the same day (writing and compacting a full day takes minutes)."""
    marker, snaps = where / "_day.json", where / "snapshots"
    want = asdict(day)
    try:
        if json.loads(marker.read_text()) == want:
            return snaps
    except (OSError, ValueError):
        pass
    shutil.rmtree(where, ignore_errors=True)
    started = time.monotonic()
    counts = write_day(day, snaps)
    took = job("compact", "--snapshots", str(snaps), "--before", "2100-01-01", "--master", "local[2]", *conf_args(conf))
    marker.write_text(json.dumps(want))
    print(
        f"- synthetic day written in {where}: {counts['snapshots']:,} snapshots, {counts['rows']:,} replica rows, "
        f"{counts['moves']} moves (in {human_duration(time.monotonic() - started)}, compact job {human_duration(took)})"
    )
    return snaps


def event_log_conf(log_dir: Path) -> list[str]:
    """``--conf`` arguments that make the job's Spark write its event log (plain JSON lines) to ``log_dir``."""
    log_dir.mkdir(parents=True, exist_ok=True)
    return [
        "--conf",
        "spark.eventLog.enabled=true",
        "--conf",
        f"spark.eventLog.dir=file://{log_dir}",
        "--conf",
        "spark.eventLog.compress=false",
        "--conf",
        "spark.eventLog.rolling.enabled=false",
    ]


def stage_breakdown(log_dir: Path) -> list[str]:
    """Per Spark job of the event log in ``log_dir`` (one application): its description (what the
    console was doing), wall time, and per stage the tasks, the executors' run time, the rows
    scanned, and the rows and bytes shuffled out."""
    logs = sorted(f for f in log_dir.rglob("*") if f.is_file() and not f.name.startswith((".", "appstatus")))
    jobs: dict[int, dict[str, object]] = {}
    stage_job: dict[int, int] = {}
    stages: dict[int, dict[str, float]] = {}
    app_start = app_end = 0.0
    for line in (line for f in logs for line in f.read_text().splitlines()):
        e = json.loads(line)
        kind = e["Event"]
        if kind == "SparkListenerApplicationStart":
            app_start = e["Timestamp"]
        elif kind == "SparkListenerApplicationEnd":
            app_end = e["Timestamp"]
        elif kind == "SparkListenerJobStart":
            props = e.get("Properties") or {}
            what = props.get("spark.job.description") or e["Stage Infos"][-1]["Stage Name"]
            jobs[e["Job ID"]] = {"what": what, "start": e["Submission Time"], "end": e["Submission Time"]}
            for sid in e["Stage IDs"]:
                stage_job[sid] = e["Job ID"]
        elif kind == "SparkListenerJobEnd":
            jobs[e["Job ID"]]["end"] = e["Completion Time"]
        elif kind == "SparkListenerStageCompleted":
            info = e["Stage Info"]
            acc = {a["Name"]: a.get("Value", 0) for a in info.get("Accumulables", [])}

            def num(name: str, acc: dict[str, object] = acc) -> float:
                v = acc.get(name, 0)
                return float(v) if isinstance(v, int | float | str) and str(v).lstrip("-").isdigit() else 0.0

            stages[info["Stage ID"]] = {
                "tasks": info["Number of Tasks"],
                "wall": (info.get("Completion Time", 0) - info.get("Submission Time", 0)) / 1000,
                "run": num("internal.metrics.executorRunTime") / 1000,
                "scanned": num("internal.metrics.input.recordsRead"),
                "shuffle_rows": num("internal.metrics.shuffle.write.recordsWritten"),
                "shuffle_bytes": num("internal.metrics.shuffle.write.bytesWritten"),
            }
    lines = [
        f"  Spark application {(app_end - app_start) / 1000:.1f} s; per Spark job: when it started (from the "
        "application's start), its wall time, then its stages (tasks, executors' run time, rows scanned, rows and "
        "bytes shuffled out)"
    ]
    for jid, j in sorted(jobs.items()):
        done = [stages[sid] | {"id": sid} for sid, owner in sorted(stage_job.items()) if owner == jid and sid in stages]
        if not done:
            continue
        wall = (float(str(j["end"])) - float(str(j["start"]))) / 1000
        parts = [
            f"#{int(st['id'])}: {int(st['tasks'])} tasks, {st['run']:.1f} s"
            + (f", scanned {int(st['scanned']):,}" if st["scanned"] else "")
            + (
                f", shuffled {int(st['shuffle_rows']):,} rows / {human_bytes(st['shuffle_bytes'])}"
                if st["shuffle_rows"]
                else ""
            )
            for st in done
        ]
        at = (float(str(j["start"])) - app_start) / 1000
        lines.append(f"  +{at:5.1f} s {wall:6.1f} s  {j['what']}: " + "; ".join(parts))
    return lines


def same_tables(new: Path, old: Path) -> list[str]:
    """Where the history tables in ``new`` differ from those in ``old`` (rows compared in a sorted order)."""
    import pandas as pd

    problems = []
    for table in ("moves", "copy_rates", "broker_load", "partition_counts", "incidents"):
        a, b = pd.read_parquet(new / table), pd.read_parquet(old / table)
        if list(a.columns) != list(b.columns):
            problems.append(f"{table}: columns {list(a.columns)} vs {list(b.columns)}")
            continue
        a, b = (x.sort_values(list(x.columns)).reset_index(drop=True) for x in (a, b))
        try:
            pd.testing.assert_frame_equal(a, b, check_dtype=False, rtol=1e-9)
        except AssertionError as e:
            problems.append(f"{table}: {str(e).splitlines()[0]}")
    return problems


def history_only(
    day: Day,
    where: Path,
    runs: int,
    against: Path | None,
    stages: bool,
    conf: list[str] | None = None,
    old_first: bool = False,
) -> None:
    """The history job on ``local[2]`` over the day kept in ``where``, ``runs`` times; with ``against``
    (another checkout of the console), that code's job too, the two alternating (which goes first
    swaps every round), and a check that both wrote the same tables."""
    snaps = prepared_day(day, where, conf)
    trees = {"new": ROOT} | ({"old": against.resolve()} if against else {})
    print(
        f"## The history job on local[2]: {day.partitions:,} partitions every {day.every_s} s for {day.hours:g} h "
        f"({snaps}); this checkout = new" + (f", {against} = old" if against else "") + "\n"
    )
    scratch = Path(tempfile.mkdtemp(prefix="bench-history-"))
    times: dict[str, list[float]] = {name: [] for name in trees}
    try:
        for i in range(runs):
            order = list(trees.items()) if (i + old_first) % 2 == 0 else list(reversed(trees.items()))
            for name, tree in order:
                logs = scratch / f"events-{name}-{i}"
                extra = (event_log_conf(logs) if stages else []) + conf_args(conf)
                out = scratch / f"tables-{name}"
                took = job(
                    "history", "--snapshots", str(snaps), "--out", str(out), "--master", "local[2]", *extra, tree=tree
                )
                times[name].append(took)
                print(f"- round {i + 1}, {name}: {took:.1f} s")
                if stages:
                    print("\n".join(stage_breakdown(logs)))
        for name, ts in times.items():
            print(
                f"- {name}: median {human_duration(statistics.median(ts))} (runs: {', '.join(f'{t:.0f} s' for t in ts)})"
            )
        if against:
            ratio = statistics.median(times["new"]) / statistics.median(times["old"])
            print(f"- new / old (medians): {ratio:.2f} ({1 / ratio:.2f}× faster)")
            problems = same_tables(scratch / "tables-new", scratch / "tables-old")
            print("- tables: " + ("the same, row for row" if not problems else "DIFFER: " + "; ".join(problems)))
        print_moves_found(scratch / "tables-new")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def collect_cost(snapshots: int) -> None:
    """Per snapshot of the 2k-partition sandbox: the refresh itself, and turning it into rows and files."""
    from console.access.settings import ConnectionSettings
    from console.pipeline.collect import SnapshotWriter
    from console.sandbox import cluster
    from console.sandbox.demo import DEMO_TOPICS, create_topics
    from console.state.reader import ClusterReader

    data = Path(tempfile.mkdtemp(prefix="bench-collect-"))
    sb = cluster.up(data / "sandbox")
    try:
        topics = tuple(t.__class__(f"bench-{i}", 100, 3, 0.01) for i, t in enumerate(DEMO_TOPICS * 7))[:20]
        create_topics(sb.bootstrap_servers, topics, log=lambda m: None)
        settings = ConnectionSettings({"bootstrap.servers": sb.bootstrap_servers}, zookeeper=sb.zookeeper, name="bench")
        writer = SnapshotWriter(data / "history")
        reads, writes, sizes = [], [], []
        with ClusterReader(settings) as reader:
            for _ in range(snapshots):
                t = time.monotonic()
                state = reader.snapshot()
                reads.append(time.monotonic() - t)
                w = writer.write(state)
                writes.append(w.seconds)
                sizes.append(w.bytes)
        print(
            f"\n## Collect on the sandbox ({len(state.partitions):,} partitions, "
            f"{sum(len(p.replicas) for p in state.partitions):,} replicas; median of {snapshots})\n"
        )
        print(f"- refresh (reading the cluster): {statistics.median(reads) * 1000:.0f} ms")
        print(
            f"- beyond it (rows + two Parquet files): {statistics.median(writes) * 1000:.0f} ms "
            f"({statistics.median(writes) / statistics.median(reads):.0%} of the refresh); "
            f"{human_bytes(statistics.median(sizes))} per snapshot as collected"
        )
    finally:
        cluster.down(data / "sandbox")
        shutil.rmtree(data, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--partitions", type=int, default=10_000)
    ap.add_argument("--hours", type=float, default=24.0)
    ap.add_argument("--runs", type=int, default=1, help="history job runs per master (median)")
    ap.add_argument("--skip-collect", action="store_true")
    ap.add_argument("--skip-history", action="store_true", help="no synthetic day at all")
    ap.add_argument("--storage-only", action="store_true", help="the synthetic day's storage figures, no history job")
    ap.add_argument(
        "--day",
        type=Path,
        help="keep the synthetic day (written and compacted) in this directory and reuse it (with --history-only)",
    )
    ap.add_argument(
        "--history-only", action="store_true", help="only the history job on local[2] (--runs times), over --day's day"
    )
    ap.add_argument(
        "--against",
        type=Path,
        help="another checkout of the console: run its history job too, alternating, and compare the tables",
    )
    ap.add_argument("--stages", action="store_true", help="print each run's Spark jobs and stages (event log)")
    ap.add_argument("--old-first", action="store_true", help="with --against: the old code runs first in round 1")
    ap.add_argument(
        "--conf", action="append", default=[], metavar="KEY=VALUE", help="Spark setting for the history job runs"
    )
    args = ap.parse_args()
    day = Day(partitions=args.partitions, hours=args.hours)
    if args.history_only:
        if args.day is None:
            ap.error("--history-only needs --day DIR (where the day is kept)")
        history_only(day, args.day, args.runs, args.against, args.stages, args.conf, args.old_first)
    elif not args.skip_history:
        storage_and_history(day, args.runs, args.storage_only)
    if not args.skip_collect:
        collect_cost(20)


if __name__ == "__main__":
    main()
