"""Parse + validate + diff of a big plan against a big snapshot, in process.

    PYTHONPATH=. .venv/bin/python bench/bench_plans.py [--partitions 100000] [--runs 5] [--million]

The plan moves every partition's last replica to a random other broker (a worst case: every entry
is a real move, and half of them narrow the partition's rack spread, so about half the entries
carry a finding). ``--million`` also measures a 1M-partition plan against a 1M-partition snapshot.

The snapshot's indexes (partition lookup, per-broker totals, the arrays of console/columns.py) are
built once per snapshot and shared by every plan checked against it; they are timed on their own.
"""

from __future__ import annotations

import argparse
import gc
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.synthetic import views
from console.core.model import ClusterState
from console.plans.columns import columns_of
from console.plans.diff import diff
from console.plans.plan import Plan, PlanEntry, parse_plan, rollback
from console.plans.validate import validate
from console.state.merge import merge


def plan_text(state: ClusterState, brokers: int, seed: int = 2) -> str:
    rnd = random.Random(seed)
    entries = []
    for p in state.partitions:
        cur = list(p.original)
        choices = [b for b in range(brokers) if b not in cur]
        entries.append(PlanEntry(p.topic, p.partition, (*cur[:-1], rnd.choice(choices))))  # type: ignore[misc]
    return Plan.of(entries).to_json()


def measure(n: int, brokers: int, runs: int) -> None:
    api, _ = views(n, brokers)
    state = merge(api, None)
    text = plan_text(state, brokers)
    del api
    gc.collect()
    t = time.perf_counter()
    state.partition_index, state.broker_totals, columns_of(state)  # built once per snapshot, shared by every plan
    indexes = time.perf_counter() - t
    stages: dict[str, list[float]] = {"parse": [], "diff": [], "validate": [], "rollback": [], "total": []}
    for _ in range(runs):
        gc.collect()
        t0 = time.perf_counter()
        plan = parse_plan(text)
        t1 = time.perf_counter()
        d = diff(state, plan)
        t2 = time.perf_counter()
        findings = validate(state, plan, d)
        t3 = time.perf_counter()
        rollback(state, plan).to_json()
        t4 = time.perf_counter()
        for k, v in zip(stages, (t1 - t0, t2 - t1, t3 - t2, t4 - t3, t3 - t0), strict=False):
            stages[k].append(v)
        if _ < runs - 1:
            del plan, d, findings  # freeing the last run's results is not this run's work
    print(f"{n:,} partitions / {brokers} brokers, plan of {len(text) / 2**20:.1f} MiB JSON, {runs} runs (median):")
    for k, v in stages.items():
        print(f"  {k:9s} {statistics.median(v):.3f} s" + ("   <- parse + diff + validate" if k == "total" else ""))
    print(f"  snapshot indexes (once per snapshot, before the first plan): {indexes:.3f} s")
    print(f"  findings: {len(findings):,}; bytes to copy: {d.bytes_to_copy / 2**40:.1f} TiB")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--partitions", type=int, default=100_000)
    ap.add_argument("--brokers", type=int, default=50)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--million", action="store_true")
    a = ap.parse_args()
    measure(a.partitions, a.brokers, a.runs)
    if a.million:
        measure(1_000_000, 500, 1)


if __name__ == "__main__":
    main()
