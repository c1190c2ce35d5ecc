"""A plan generator over a fleet: ``pipeline generate`` on Spark (local[2] and local[1]) next to the
in-process generator run cluster after cluster (the peer), on the same stored snapshots.

    PYTHONPATH=. .venv/bin/python bench/bench_fleet.py                      # 12 clusters of 100k partitions
    PYTHONPATH=. .venv/bin/python bench/bench_fleet.py --clusters 4 --partitions 20000 --runs 1

The fleet: ``--clusters`` clusters of ``--partitions`` partitions (RF 3, 48 brokers on three racks,
Pareto sizes, 15 % of the partitions crowded on a quarter of the brokers: bench/synthetic.py),
one stored snapshot each. The goal: rebalance by count (the slowest goal at scale), then a rack
drained in every cluster. Each side runs in its own process (Spark: JVM start included); the
median of ``--runs`` runs is quoted, with the peak RSS of the largest process.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from bench.bench_review import timed
from bench.synthetic import cluster_state
from console.core.format import human_duration
from console.pipeline.collect import SnapshotWriter

BROKERS = 48
T = 1_790_035_200.0

IN_PROCESS = r"""
import json, sys, time
import pyarrow.dataset as ds
from console.pipeline.snapshots import state_from_tables
from console.plans.generate import generate
from console.plans.generators.options import GenerateOptions, Goal, Metric
root, out, goal = sys.argv[1], sys.argv[2], sys.argv[3]
options = (GenerateOptions(Goal.REBALANCE, metric=Metric.COUNT) if goal == "rebalance"
           else GenerateOptions(Goal.DECOMMISSION, racks=("rack-2",)))
headers = ds.dataset(root + "/headers", partitioning="hive")
replicas = ds.dataset(root + "/replicas", partitioning="hive")
load = plan = 0.0
moves = 0
for cluster in sorted(set(headers.to_table(columns=["cluster"]).column("cluster").to_pylist())):
    t0 = time.perf_counter()
    state = state_from_tables(headers.to_table(filter=ds.field("cluster") == cluster),
                              replicas.to_table(filter=ds.field("cluster") == cluster))
    t1 = time.perf_counter()
    made = generate(state, options)
    open(f"{out}/{cluster}.json", "w").write(made.plan.to_json())
    plan += time.perf_counter() - t1
    load += t1 - t0
    moves += made.report.moved_replicas
print(json.dumps({"load": load, "plan": plan, "moves": moves}))
"""


def write_fleet(root: Path, clusters: int, partitions: int) -> None:
    writer = SnapshotWriter(root)
    for k in range(clusters):
        state = cluster_state(partitions=partitions, brokers=BROKERS, racks=3, skew=0.15, seed=k + 1)
        writer.write(replace(state, cluster_id=f"cluster-{k:02d}", name=f"cluster-{k:02d}", taken_at=T))


def median_run(cmd: list[str], runs: int) -> tuple[float, float, str]:
    took, rss, out = [], [], ""
    for _ in range(runs):
        t, r, out, err = timed(cmd)
        if not r:
            raise SystemExit(f"{' '.join(cmd[:6])} ... failed:\n{err}")
        took.append(t)
        rss.append(r)
    return statistics.median(took), max(rss), out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--clusters", type=int, default=12)
    ap.add_argument("--partitions", type=int, default=100_000)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="bench-fleet-"))
    try:
        t = time.monotonic()
        snaps = scratch / "snapshots"
        write_fleet(snaps, args.clusters, args.partitions)
        print(
            f"## Generate over a fleet: {args.clusters} clusters of {args.partitions:,} partitions "
            f"(RF 3, {BROKERS} brokers); median of {args.runs} run(s)\n"
        )
        print(f"- fleet written in {human_duration(time.monotonic() - t)}\n")
        print("| goal | in process, cluster after cluster | Spark local[1] | Spark local[2] | local[2] vs in process |")
        print("|---|---|---|---|---|")
        for goal, flags in (
            ("rebalance", ["--rebalance", "count"]),
            ("drain rack-2", ["--decommission-rack", "rack-2"]),
        ):
            out = scratch / "plans"
            shutil.rmtree(out, ignore_errors=True)
            out.mkdir()
            took_in, rss_in, said = median_run(
                [sys.executable, "-c", IN_PROCESS, str(snaps), str(out), goal.split()[0]], args.runs
            )
            doc = json.loads(said.strip().splitlines()[-1])
            cells = [
                f"{human_duration(took_in)} (reading {human_duration(doc['load'])}, planning "
                f"{human_duration(doc['plan'])}; {rss_in:.2f} GiB; {doc['moves']:,} moves)"
            ]
            took = {}
            for master in ("local[1]", "local[2]"):
                took[master], rss, _ = median_run(
                    [
                        sys.executable,
                        "-m",
                        "console",
                        "pipeline",
                        "generate",
                        "--snapshots",
                        str(snaps),
                        "--out",
                        str(scratch / "out"),
                        "--master",
                        master,
                        *flags,
                    ],
                    args.runs,
                )
                summary = json.loads((scratch / "out" / "_generate.json").read_text())
                planned = sum(1 for c in summary["inputs"]["clusters"].values() if c["status"] == "planned")
                cells.append(f"{human_duration(took[master])} ({rss:.2f} GiB; {planned} planned)")
            print(f"| {goal} | " + " | ".join(cells) + f" | {took_in / took['local[2]']:.2f}× |", flush=True)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
