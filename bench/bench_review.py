"""Review of a big plan against a big snapshot: on Spark (``pipeline review``, local[2]) next to the
in-process core (parse, diff, validate, waves, ETA, rollback), to find where one overtakes the other.

    PYTHONPATH=. .venv/bin/python bench/bench_review.py                       # 1M partitions
    PYTHONPATH=. .venv/bin/python bench/bench_review.py --partitions 10000000 # 10M (Spark; in process if it fits)
    PYTHONPATH=. .venv/bin/python bench/bench_review.py --skip-in-process
    PYTHONPATH=. .venv/bin/python bench/bench_review.py --skip-in-process --impact-cost --runs 2
                                                      # Spark with the impact and without (--no-impact), alternating
    PYTHONPATH=. .venv/bin/python bench/bench_review.py --skip-spark [--code /tmp/base-rows]  # in process only
    PYTHONPATH=. .venv/bin/python bench/bench_review.py --skip-spark --against /tmp/base-now --runs 3
                                                                              # in process, old and new alternating
    PYTHONPATH=. .venv/bin/python bench/bench_review.py --skip-spark --steps  # and the peak RSS of each step
    PYTHONPATH=. .venv/bin/python bench/bench_review.py --partitions 2000000 --skip-in-process \
        --against /tmp/base-review --runs 3                                   # old and new code, alternating

The snapshot: ``--partitions`` partitions of RF 3 on 500 brokers (three racks), Pareto sizes,
written straight as stored rows (numpy, pyarrow). The plan moves every partition's last replica
to a random other broker (every entry a real move, as bench/bench_plans.py). Each side runs in its
own process under ``/usr/bin/time`` for its peak RSS (Spark: the JVM's). ``--against DIR`` runs
another checkout of the console (the code before a change) on the same input, its runs
alternating with this checkout's; every Spark run prints its stage times (from the job's stage
lines), every in-process run its peak RSS per step, and both sides' answers (diff, findings,
waves, ETA, rollback JSON) are compared by digest.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa

from bench.synthetic_history import rack_spread
from console.core.format import human_duration
from console.pipeline.collect import HEADERS, REPLICAS, write_parquet
from console.pipeline.snapshots import HEADER_SCHEMA, REPLICA_SCHEMA, ROWS_FORMAT

ROOT = Path(__file__).resolve().parents[1]
BROKERS = 500
T = 1_790_035_200


def write_snapshot(n: int, root: Path, seed: int = 1) -> tuple[Path, Path]:
    """One snapshot of ``n`` partitions (as stored rows) and a plan moving every last replica."""
    rng = np.random.default_rng(seed)
    rf = 3
    per_rack, assign = rack_spread(rng, n, BROKERS, rf)
    size = (rng.pareto(1.2, n) * 10 * 2**20).astype(np.int64)
    topic_of = np.arange(n) // 100
    topics = np.array([f"topic-{t:06d}" for t in range(int(topic_of.max()) + 1)])
    part = (np.arange(n) % 100).astype(np.int32)
    chunk = 2_000_000
    for start in range(0, n, chunk):
        stop = min(n, start + chunk)
        p = np.repeat(np.arange(start, stop), rf)
        b = assign[start:stop].reshape(-1)
        leader = assign[p, 0]
        rows = len(p)
        table = pa.table(
            {
                "taken_at": pa.array(np.full(rows, T * 1000, np.int64), pa.timestamp("ms", "UTC")),
                "topic": pa.DictionaryArray.from_arrays(pa.array(topic_of[p].astype(np.int32)), pa.array(topics)).cast(
                    pa.string()
                ),
                "partition": pa.array(part[p]),
                "broker": pa.array(b.astype(np.int32)),
                "position": pa.array(np.tile(np.arange(rf), stop - start).astype(np.int16)),
                "rack": pa.array(np.array(["rack-a", "rack-b", "rack-c"])[b % 3]),
                "leader": pa.array(leader.astype(np.int32)),
                "is_leader": pa.array(b == leader),
                "in_isr": pa.array(np.ones(rows, bool)),
                "adding": pa.array(np.zeros(rows, bool)),
                "removing": pa.array(np.zeros(rows, bool)),
                "reassigning": pa.array(np.zeros(rows, bool)),
                "under_replicated": pa.array(np.zeros(rows, bool)),
                "source": pa.nulls(rows, pa.string()),
                "bytes": pa.array(size[p]),
                "log_dir": pa.array(np.full(rows, "/data/kafka")),
                "future_bytes": pa.nulls(rows, pa.int64()),
                "future_log_dir": pa.nulls(rows, pa.string()),
                "leader_rate": pa.nulls(rows, pa.int64()),
                "follower_rate": pa.nulls(rows, pa.int64()),
                "leader_throttled": pa.array(np.zeros(rows, bool)),
                "follower_throttled": pa.array(np.zeros(rows, bool)),
            },
            schema=REPLICA_SCHEMA,
        )
        write_parquet(table, root / REPLICAS / "cluster=bench" / "date=2026-09-22" / f"part-{start:09d}.parquet")
    header = {
        "format": 1,
        "name": "bench",
        "cluster_id": "bench",
        "controller": 0,
        "status": dict.fromkeys(("metadata", "reassignments", "log_dirs", "configs", "zookeeper"), "ok"),
        "brokers": [
            {"id": b, "host": "h", "port": 9092, "rack": f"rack-{'abc'[b % 3]}", "registered": True, "in_api": True}
            for b in range(BROKERS)
        ],
        "throttles": {"brokers": {}, "topics": {}},
        "min_insync": {},
        "findings": [],
    }
    write_parquet(
        pa.Table.from_pylist(
            [
                {
                    "taken_at": T * 1000,
                    "format": ROWS_FORMAT,
                    "cluster_id": "bench",
                    "name": "bench",
                    "fingerprint": "",
                    "partitions": n,
                    "replicas": n * rf,
                    "reassigning": 0,
                    "under_replicated": 0,
                    "offline": 0,
                    "logs_known": True,
                    "header": json.dumps(header),
                }
            ],
            schema=HEADER_SCHEMA,
        ),
        root / HEADERS / "cluster=bench" / "date=2026-09-22" / "part-0.parquet",
    )
    # the plan: every partition's last replica to another broker of the same rack
    shift = rng.integers(1, len(per_rack[0]), n)
    last = assign[:, 2]
    rack = last % 3
    pos = (last // 3 + shift) % np.array([len(per_rack[r]) for r in range(3)])[rack]
    new_last = pos * 3 + rack
    order = np.lexsort((part, topic_of))
    plan = root.parent / "plan.json"
    with plan.open("w") as f:
        f.write('{"version":1,"partitions":[')
        f.write(
            ",".join(
                f'{{"topic":"{topics[topic_of[i]]}","partition":{part[i]},"replicas":'
                f"[{assign[i, 0]},{assign[i, 1]},{new_last[i]}]}}"
                for i in order
            )
        )
        f.write("]}")
    return root, plan


REAPER = r"""
import ctypes, os, subprocess, sys
ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
code = subprocess.call(sys.argv[1:])
while True:
    try:
        os.wait()
    except ChildProcessError:
        sys.exit(code)
"""
"""Runs a command and waits for its orphans too: PySpark's JVM outlives the Python process that
started it (nobody waits for it; it stops on its own when its stdin closes) and would come back to
init, its CPU time and memory left out of /usr/bin/time's report; made this process's children
again (a subreaper's), they are waited for and counted."""


def timed(cmd: list[str], root: Path = ROOT) -> tuple[float, float, str, str]:
    """Wall seconds, peak RSS (GiB) of the process tree's largest process, stdout and stderr
    (``root``: the checkout of the console to run; :func:`cpu_seconds` reads the CPU time from the
    stderr)."""
    env = {**os.environ, "PYTHONPATH": str(root)}
    started = time.monotonic()
    ran = subprocess.run(
        ["/usr/bin/time", "-v", sys.executable, "-c", REAPER, *cmd], cwd=root, env=env, capture_output=True, text=True
    )
    took = time.monotonic() - started
    if ran.returncode:
        return took, 0.0, ran.stdout, ran.stderr[-2000:]
    rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", ran.stderr).group(1))  # type: ignore[union-attr]
    return took, rss / 2**20, ran.stdout, ran.stderr


IN_PROCESS = r"""
import sys, time, json, hashlib
import pyarrow.dataset as ds
import pyarrow as pa
from console.pipeline.snapshots import STATE_COLUMNS, state_from_tables
from console.plans.plan import parse_plan, rollback
from console.plans.diff import diff
from console.plans.validate import validate
from console.moves.waves import plan_waves
from console.moves.progress import estimate_run
root, plan_path, by_step = sys.argv[1], sys.argv[2], sys.argv[3:] == ["steps"]
steps = {}
def step(name):
    # with "steps": the peak RSS since the step before (the kernel's high-water mark, then reset),
    # in GiB; the reset hides the earlier steps' peaks from /usr/bin/time
    if not by_step:
        return
    with open("/proc/self/status") as f:
        steps[name] = int(next(l for l in f if l.startswith("VmHWM:")).split()[1]) / 2**20
    if name != "rollback":
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
def digest(text):
    return hashlib.sha256(text.encode()).hexdigest()[:12]
t0 = time.perf_counter()
# the columns a snapshot is rebuilt from, and the Arrow memory given back once it is
state = state_from_tables(ds.dataset(root + "/headers", partitioning="hive").to_table(),
                          ds.dataset(root + "/replicas", partitioning="hive").to_table(columns=list(STATE_COLUMNS)))
pa.default_memory_pool().release_unused()
step("load")
t1 = time.perf_counter()
plan = parse_plan(open(plan_path, "rb").read()); step("parse")
d = diff(state, plan); step("diff")
f = validate(state, plan, d); step("validate")
w = plan_waves(state, plan); step("waves")
eta = estimate_run(state, w, 10_000_000); step("eta")
back = rollback(state, plan).to_json(); step("rollback")
t2 = time.perf_counter()
answers = {
    "diff": digest(repr((d.summary(), d.brokers, d.flows))),
    "findings": digest(repr(list(f))),
    "waves": digest(repr([[e.key for e in wave] for wave in w])),
    "eta": eta.seconds if eta else None,
    "rollback": digest(back),
}
print(json.dumps({"load": t1 - t0, "review": t2 - t1, "findings": len(f), "waves": len(w), "steps": steps,
                  "answers": answers}))
"""


def cpu_seconds(err: str) -> float:
    """User and system CPU seconds of the process tree (``/usr/bin/time -v``'s report in ``err``): on a
    machine shared with other work the wall time follows the load, the CPU time far less."""
    return sum(float(x) for x in re.findall(r"(?:User|System) time \(seconds\): ([\d.]+)", err))


STAGE = re.compile(r"^\[\s*(\d+) s\] (.+)$", re.M)


def stages(err: str, total: float) -> list[tuple[str, float]]:
    """The job's stage lines (``[   12 s] Writing the diff``) as (stage, seconds until the next one)."""
    lines = [(float(t), text) for t, text in STAGE.findall(err)]
    ends = [t for t, _ in lines[1:]] + [total]
    return [(text, end - t) for (t, text), end in zip(lines, ends, strict=True)]


def spark_review(
    snaps: Path, plan: Path, out: Path, root: Path, conf: list[str], extra: tuple[str, ...] = ()
) -> tuple[float, float, float, list[tuple[str, float]], str]:
    """One run of ``pipeline review`` on local[2] from the checkout ``root`` (``conf``: Spark settings,
    KEY=VALUE): seconds, peak RSS, CPU seconds, stages, error."""
    shutil.rmtree(out, ignore_errors=True)
    took, rss, _, err = timed(
        [
            sys.executable,
            "-m",
            "console",
            "pipeline",
            "review",
            "--snapshots",
            str(snaps),
            "--reassignment-json-file",
            str(plan),
            "--out",
            str(out),
            "--master",
            "local[2]",
            "--throttle",
            "10000000",
            *(x for kv in conf for x in ("--conf", kv)),
            *extra,
        ],
        root,
    )
    answers = spark_answers(out) if rss else {}
    shutil.rmtree(out, ignore_errors=True)
    return took, rss, cpu_seconds(err), stages(err, took) if rss else [], "" if rss else err, answers


def spark_answers(out: Path) -> dict[str, object]:
    """Digests of a review job's answers: the findings in order, the waves and ETA, the rollback."""
    import hashlib

    import pyarrow.parquet as pq

    def digest(data: bytes) -> str:
        return hashlib.sha256(data).hexdigest()[:12]

    findings = pq.read_table(
        out / "findings", columns=["rank", "code", "severity", "topic", "partition", "broker", "message", "hint"]
    ).sort_by("rank")
    h = hashlib.sha256()
    for name in findings.column_names[1:]:
        for value in findings.column(name).combine_chunks().to_pylist():
            h.update(repr(value).encode())
    said = json.loads((out / "_review.json").read_text())["inputs"]["clusters"]
    rollback = b"".join(p.read_bytes() for p in sorted(out.glob("rollback-*.json")))
    return {
        "findings": f"{findings.num_rows:,} rows, {h.hexdigest()[:12]}",
        "waves": {c: (v["waves"], v["eta_seconds"]) for c, v in said.items()},
        "rollback": digest(rollback),
    }


def in_process(snaps: Path, plan: Path, code: Path, against: Path | None, runs: int, by_step: bool = False) -> None:
    """The review in one process (``code``'s console), under ``/usr/bin/time``; with ``against``,
    that checkout's too, their runs alternating (``runs`` of each), and the medians side by side.
    ``by_step``: the peak RSS of each step too (the process's peak is then the largest of them)."""
    sides = [("this checkout" if code == ROOT else str(code), code)] + ([(str(against), against)] if against else [])
    figures: dict[str, list[tuple[float, float, float]]] = {name: [] for name, _ in sides}
    answers: dict[str, object] = {}
    for run in range(runs):
        for name, root in sides if run % 2 == 0 else sides[::-1]:
            took, rss, out, err = timed(
                [sys.executable, "-c", IN_PROCESS, str(snaps), str(plan), *(["steps"] if by_step else [])], root
            )
            if not rss:
                print(f"- in process ({name}) failed after {human_duration(took)}:\n{err}")
                continue
            user = float(re.search(r"User time \(seconds\): ([\d.]+)", err).group(1))  # type: ignore[union-attr]
            doc = json.loads(out.strip().splitlines()[-1])
            rss = max([rss, *doc["steps"].values()])
            figures[name].append((rss, user, took))
            answers.setdefault(name, doc["answers"])
            print(
                f"- in process ({name}, run {run + 1}): {human_duration(took)} in all, peak RSS {rss:.2f} GiB, "
                f"{user:.1f} s of CPU (user); of which reading the stored snapshot {human_duration(doc['load'])} and "
                f"the review (parse, diff, validate, waves, ETA, rollback) {human_duration(doc['review'])}; "
                f"{doc['findings']:,} findings, {doc['waves']:,} waves"
                + ("; peak RSS per step (GiB): " if by_step else "")
                + ", ".join(f"{k} {v:.2f}" for k, v in doc["steps"].items()),
                flush=True,
            )
    if len(sides) > 1 and all(figures.values()):
        (mine, _), (theirs, _) = sides
        med = {name: [statistics.median(x[k] for x in figures[name]) for k in range(3)] for name, _ in sides}
        print(
            f"- medians of {runs} run(s): peak RSS {med[mine][0]:.2f} GiB against {med[theirs][0]:.2f} "
            f"({med[theirs][0] / med[mine][0]:.2f}x less), CPU (user) {med[mine][1]:.1f} s against "
            f"{med[theirs][1]:.1f} s, wall {human_duration(med[mine][2])} against {human_duration(med[theirs][2])}; "
            + ("the same answers on both sides" if answers[mine] == answers[theirs] else f"ANSWERS DIFFER: {answers}")
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--partitions", type=int, default=1_000_000)
    ap.add_argument("--skip-in-process", action="store_true")
    ap.add_argument("--skip-spark", action="store_true")
    ap.add_argument(
        "--code", type=Path, default=ROOT, help="the tree whose console runs in process (default: this one)"
    )
    ap.add_argument("--against", type=Path, help="another checkout of the console (the code before a change)")
    ap.add_argument("--runs", type=int, default=1, help="runs of each side (alternating with --against)")
    ap.add_argument("--steps", action="store_true", help="in process: the peak RSS of each step too")
    ap.add_argument("--conf", action="append", default=[], help="a Spark setting KEY=VALUE for both sides")
    ap.add_argument(
        "--impact-cost", action="store_true", help="Spark: this checkout with the impact against it without"
    )
    args = ap.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="bench-review-"))
    try:
        t = time.monotonic()
        snaps, plan = write_snapshot(args.partitions, scratch / "snapshots")
        print(f"## Review of {args.partitions:,} partitions (RF 3, {BROKERS} brokers), every partition moving\n")
        print(
            f"- input written in {human_duration(time.monotonic() - t)}; plan {plan.stat().st_size / 2**20:.0f} MB of JSON"
        )
        if not args.skip_spark:
            sides: list[tuple[str, Path, tuple[str, ...]]] = [("this checkout", ROOT, ())] + (
                [(f"against {args.against}", args.against.resolve(), ())] if args.against else []
            )
            if args.impact_cost:
                sides = [("with the impact", ROOT, ()), ("without the impact (--no-impact)", ROOT, ("--no-impact",))]
            times: dict[str, list[float]] = {name: [] for name, _, _ in sides}
            cpus: dict[str, list[float]] = {name: [] for name, _, _ in sides}
            said: dict[str, object] = {}
            for run in range(args.runs):
                for name, root, extra in sides if run % 2 == 0 else sides[::-1]:
                    took, rss, cpu, parts, err, answers = spark_review(
                        snaps, plan, scratch / "out", root, args.conf, extra
                    )
                    if not rss:
                        print(f"- Spark (local[2], {name}) failed after {human_duration(took)}:\n{err}")
                        continue
                    times[name].append(took)
                    said.setdefault(name, answers)
                    cpus[name].append(cpu)
                    print(
                        f"- Spark (local[2], {name}, run {run + 1}; whole job incl. JVM start): {human_duration(took)}, "
                        f"CPU {cpu:.0f} s, peak RSS {rss:.2f} GiB; "
                        + ", ".join(f"{stage} {seconds:.0f} s" for stage, seconds in parts),
                        flush=True,
                    )
            if len(sides) > 1 and all(times.values()):
                mine, theirs = (statistics.median(times[name]) for name, _, _ in sides)
                print(
                    f"- median of {args.runs} run(s): this checkout {human_duration(mine)}, "
                    f"{sides[1][0]} {human_duration(theirs)}: {theirs / mine:.2f}x"
                )
                mine, theirs = (statistics.median(cpus[name]) for name, _, _ in sides)
                print(
                    f"- median CPU time: {sides[0][0]} {mine:.0f} s, {sides[1][0]} {theirs:.0f} s: {theirs / mine:.2f}x"
                    + (f" (the impact adds {(mine / theirs - 1) * 100:+.1f} %)" if args.impact_cost else "")
                )
                first, second = (said.get(name) for name, _, _ in sides)
                print(
                    f"- answers (findings, waves and ETA, rollback): {first}; "
                    + ("the same on both sides" if first == second else f"DIFFER from {second}")
                )
        if not args.skip_in_process:
            against = args.against.resolve() if args.against else None
            in_process(snaps, plan, args.code.resolve(), against, args.runs, args.steps)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
