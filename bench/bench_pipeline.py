"""The data pipeline's figures: storage per day, the history job over a synthetic day on
``local[2]`` and ``local[1]``, and what collecting costs per snapshot on the sandbox.

    PYTHONPATH=. .venv/bin/python bench/bench_pipeline.py                    # everything (about 25 min)
    PYTHONPATH=. .venv/bin/python bench/bench_pipeline.py --hours 2          # a shorter "day"
    PYTHONPATH=. .venv/bin/python bench/bench_pipeline.py --skip-collect     # no sandbox

The synthetic day (bench/synthetic_history.py): 10k partitions of RF 3 on 12 brokers (three racks)
sampled every 30 s for 24 h (2,880 snapshots, about 86M replica rows), four throttled
reassignments of 150 partitions each and one broker restart. Each Spark job runs in its own
process (``python -m console pipeline ...``), so ``local[1]`` and ``local[2]`` each get a fresh JVM.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
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


def job(*args: str) -> float:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    started = time.monotonic()
    ran = subprocess.run(
        [sys.executable, "-m", "console", "pipeline", *args], cwd=ROOT, env=env, capture_output=True, text=True
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
        moves = pq.read_table(scratch / "tables" / "moves")
        outcomes = pc.value_counts(moves.column("outcome")).to_pylist()
        found = ", ".join(f"{o['counts']} {o['values']}" for o in outcomes)
        print(f"- moves found: {moves.num_rows} ({found})")
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
    args = ap.parse_args()
    if not args.skip_history:
        storage_and_history(Day(partitions=args.partitions, hours=args.hours), args.runs, args.storage_only)
    if not args.skip_collect:
        collect_cost(20)


if __name__ == "__main__":
    main()
