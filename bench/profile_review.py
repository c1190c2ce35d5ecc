"""Where the Spark review's time goes: each of its transforms run alone on the bench's input (that of
bench/bench_review.py), its wall time and the JVM's CPU time (on a machine shared with other work
the wall time follows the load, the CPU time far less). Writes go to Spark's ``noop`` sink, so each
step is the computation alone; the diff is cached first (as the job caches it) and the later steps
read it.

    PYTHONPATH=. .venv/bin/python bench/profile_review.py --partitions 1000000
    PYTHONPATH=. .venv/bin/python bench/profile_review.py --partitions 1000000 --against /tmp/base-now

``--against DIR`` profiles another checkout of the console (the code before a change) on the same
input, the two sides alternating; ``--input DIR`` keeps the input there to reuse it.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def profile(scratch: Path) -> None:
    """Run the review's transforms one by one on the input in ``scratch`` (this process's console)."""
    from pyspark.sql import DataFrame
    from pyspark.sql import functions as F

    from console.pipeline import review as R
    from console.pipeline import spark_rules
    from console.pipeline.datasets import Output, read_snapshots
    from console.pipeline.jobs import _rows_of, _snapshots_for
    from console.pipeline.review_outputs import rollback_lines
    from console.pipeline.spark import SparkSettings, session
    from console.plans.plan import parse_plan
    from console.plans.rules.batch import broker_table
    from console.state.document import state_from_doc

    s = session(SparkSettings(master="local[2]"))
    java = subprocess.run(["pgrep", "-P", str(os.getpid()), "java"], capture_output=True, text=True).stdout.split()

    def cpu() -> float:
        if not java:
            return float("nan")
        fields = Path(f"/proc/{java[0]}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def step(name: str, body: Callable[[], Any]) -> None:
        wall, used = time.monotonic(), cpu()
        body()
        print(f"  {name}: {time.monotonic() - wall:.1f} s wall, {cpu() - used:.1f} s JVM CPU", flush=True)

    def noop(df: DataFrame) -> None:
        df.write.format("noop").mode("overwrite").save()

    data = read_snapshots(s, str(scratch / "snapshots"))
    chosen = _snapshots_for(data.headers, [None], None)
    out = Output(str(scratch / "out"))
    plan = out.stage("staged-plan.parquet", R.plan_table("bench", parse_plan((scratch / "plan.json").read_bytes())))
    state = state_from_doc(json.loads(chosen.snapshots["bench"].header), ())
    inputs = R.Inputs(
        replicas=_rows_of(s, data.replicas, chosen.snapshots),
        brokers=s.createDataFrame(R.broker_rows("bench", state), R.BROKER_SCHEMA),
        min_isr=s.createDataFrame([], "cluster string, topic string, min_isr long"),
        plan=s.read.parquet(str(plan)),
    )
    step("reading the replica rows (every column)", lambda: noop(inputs.replicas))
    step("grouping them per partition", lambda: noop(R.partitions_now(inputs.replicas)))
    changes = R.changes(inputs).persist()
    step("the diff (grouping, joining the plan), cached", lambda: changes.count())
    step(
        "collecting the moving entries",
        lambda: (
            changes.filter(~F.col("kind").isin("no change", "unknown partition"))
            .select("cluster", "idx", "adding", "bytes_to_copy", "size", "leader_before")
            .toArrow()
        ),
    )
    brokers, flows = R.brokers(inputs, changes)
    step("brokers", lambda: noop(brokers))
    step("flows", lambda: noop(flows))
    tables = {"bench": broker_table(state)}
    step("the rules' input rows (per entry)", lambda: noop(spark_rules.entries(inputs, changes)))
    step("findings (the rules over Arrow batches)", lambda: noop(spark_rules.findings(inputs, changes, tables)))
    step("rollback lines", lambda: noop(rollback_lines(changes, [])))
    out.abort()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--partitions", type=int, default=1_000_000)
    ap.add_argument("--against", type=Path, help="another checkout of the console (the code before a change)")
    ap.add_argument("--runs", type=int, default=1, help="runs of each side (alternating with --against)")
    ap.add_argument("--input", type=Path, help="where the input is written (and reused when there)")
    ap.add_argument("--side", type=Path, help=argparse.SUPPRESS)  # a run of one side, on this input
    args = ap.parse_args()
    if args.side:
        profile(args.side)
        return
    from bench.bench_review import write_snapshot

    scratch = args.input or Path(tempfile.mkdtemp(prefix="profile-review-"))
    try:
        if not (scratch / "plan.json").exists():
            scratch.mkdir(parents=True, exist_ok=True)
            write_snapshot(args.partitions, scratch / "snapshots")
        sides = [("this checkout", ROOT)] + (
            [(f"against {args.against}", args.against.resolve())] if args.against else []
        )
        print(f"## Spark review, step by step: {args.partitions:,} partitions (RF 3, 500 brokers), local[2]\n")
        for run in range(args.runs):
            for name, root in sides if run % 2 == 0 else sides[::-1]:
                print(f"- {name}, run {run + 1}:", flush=True)
                subprocess.run(
                    [sys.executable, str(Path(__file__).resolve()), "--side", str(scratch)],
                    cwd=root,
                    env={**os.environ, "PYTHONPATH": str(root)},
                    check=False,
                    stderr=subprocess.DEVNULL,
                )
    finally:
        if not args.input:
            shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
