"""The impact model on a big plan in process: the review without it (diff, validate) and with it
(diff, validate, the impact priced, with produce rates for every topic, its findings merged).

    PYTHONPATH=. .venv/bin/python bench/bench_impact.py                      # 1M partitions, 3 runs
    PYTHONPATH=. .venv/bin/python bench/bench_impact.py --partitions 100000 --runs 5

The snapshot: ``--partitions`` partitions of RF 3 on 50 brokers over 5 racks (bench/synthetic.py,
Pareto sizes), each broker with one sized log dir; the plan moves every partition's last replica to
another broker (every entry a real move). The figure asked of it: the impact adds under 2 s to the
review of 1M partitions.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from dataclasses import replace

from bench.synthetic import cluster_state
from console.core.model import BrokerId, LogDir
from console.moves.impact import Pricing
from console.moves.impact_columns import impact
from console.plans.diff import diff
from console.plans.plan import Plan, PlanEntry
from console.plans.validate import validate, with_overall


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--partitions", type=int, default=1_000_000)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    t0 = time.perf_counter()
    state = cluster_state(args.partitions, brokers=50, racks=5)
    state = replace(
        state, brokers=tuple(replace(b, log_dirs=(LogDir("/data", None, 10**14, 6 * 10**13),)) for b in state.brokers)
    )
    rnd = random.Random(7)
    entries = []
    for p in state.partitions:
        others = [b for b in range(50) if b not in p.replicas]
        entries.append(PlanEntry(p.topic, p.partition, (*p.replicas[:-1], BrokerId(rnd.choice(others)))))
    plan = Plan.of(entries)
    rates: dict[str, float | None] = dict.fromkeys(state.topics, 1000000.0)
    pricing = Pricing("USD", 0.02, (("rack-0", "az1"), ("rack-1", "az1")))
    print(f"{args.partitions:,} partitions, {len(plan):,} entries built in {time.perf_counter() - t0:.1f} s")
    without, with_, alone = [], [], []
    for _ in range(args.runs):
        t = time.perf_counter()
        d = diff(state, plan, elect=None)
        found = validate(state, plan, d)
        t_review = time.perf_counter() - t
        t = time.perf_counter()
        im = impact(d, pricing, rates, 10_000_000)
        merged = with_overall(found, im.findings)
        t_impact = time.perf_counter() - t
        without.append(t_review)
        alone.append(t_impact)
        with_.append(t_review + t_impact)
    print(
        f"review without the impact: median {statistics.median(without):.2f} s ({', '.join(f'{x:.2f}' for x in without)})"
    )
    print(
        f"review with the impact:    median {statistics.median(with_):.2f} s ({', '.join(f'{x:.2f}' for x in with_)})"
    )
    print(f"the impact alone:          median {statistics.median(alone):.2f} s (target: under 2 s more)")
    print(f"ratio with / without:      {statistics.median(with_) / statistics.median(without):.2f}")
    print(f"findings {len(found):,} → {len(merged):,}; {im!r}")


if __name__ == "__main__":
    main()
