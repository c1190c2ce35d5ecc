"""The generators' cost in instructions, which the machine's load does not change: each goal run
under valgrind (Debian's ``valgrind``; ``--tool=cachegrind --cache-sim=no``) in a process that runs
it three times and in one that runs it once, the difference halved (the start, the imports and the
synthetic cluster cancel out). With ``--against DIR`` the same in another checkout (the code before
a change), side by side.

    PYTHONPATH=. .venv/bin/python bench/icount_generate.py [--goals count,add,bytes] [--against DIR]

The cluster: 20,000 partitions on 40 brokers, 5 racks, skew 0.1, 2 empty brokers
(bench/synthetic.py), ``PYTHONHASHSEED=0``.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GOALS = ("count", "add", "bytes", "decommission")


def run_goal(goal: str, times: int) -> None:
    """In the measured process: the goal ``times`` times, after the snapshot's columns are built."""
    from bench.synthetic import cluster_state
    from console.core.ids import BrokerId
    from console.plans.generate import generate
    from console.plans.generators.options import GenerateOptions, Goal, Metric

    state = cluster_state(20_000, 40, racks=5, skew=0.1, empty=2)
    options = {
        "count": GenerateOptions(Goal.REBALANCE, metric=Metric.COUNT),
        "add": GenerateOptions(Goal.ADD_BROKERS, (BrokerId(38), BrokerId(39))),
        "bytes": GenerateOptions(Goal.REBALANCE, metric=Metric.BYTES),
        "decommission": GenerateOptions(Goal.DECOMMISSION, (BrokerId(3),)),
    }[goal]
    generate(state, GenerateOptions(Goal.FIX_RACKS))  # the columns built once, outside the difference
    for _ in range(times):
        generate(state, options)


def instructions(code: Path, goal: str, times: int) -> int:
    ran = subprocess.run(
        ["valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null", sys.executable,
         str(Path(__file__).resolve()), "--side", goal, str(times)],
        cwd=code, env={**os.environ, "PYTHONPATH": str(code), "PYTHONHASHSEED": "0"},
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    found = re.search(r"I\s+refs:\s+([\d,]+)", ran.stderr)
    if found is None:
        raise SystemExit("valgrind printed no instruction count:\n" + ran.stderr[-2000:])
    return int(found.group(1).replace(",", ""))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--goals", default="count,add,bytes")
    ap.add_argument("--against", type=Path, help="another checkout of the console (the code before a change)")
    ap.add_argument("--side", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.side:
        run_goal(args.side[0], int(args.side[1]))
        return
    sides = [("this checkout", ROOT)] + ([(str(args.against), args.against.resolve())] if args.against else [])
    print("| goal | " + " | ".join(name for name, _ in sides) + (" | ratio |" if args.against else " |"))
    print("|---" * (len(sides) + 1 + bool(args.against)) + "|")
    for goal in args.goals.split(","):
        if goal not in GOALS:
            raise SystemExit(f"unknown goal {goal}: one of {', '.join(GOALS)}")
        counts = [(instructions(code, goal, 3) - instructions(code, goal, 1)) / 2 for _, code in sides]
        cells = " | ".join(f"{n / 1e6:,.1f} M" for n in counts)
        print(f"| {goal} | {cells}" + (f" | {counts[0] / counts[1]:.3f} |" if args.against else " |"), flush=True)


if __name__ == "__main__":
    main()
