"""Hostile plans at up to 10 MB, on the page's path and through the CLI: each must be refused or
reviewed in under 2 s with under 200 MB of extra memory (issue 28, finding 5).

    PYTHONPATH=. .venv/bin/python bench/bench_hostile_plans.py [--sizes 0.1,1,10] [--runs 3]
        [--against /tmp/old] [--old-timeout 30]

Each plan is written to a file once, then every measurement runs in a fresh process:

* **page**: what Review does with an upload (``components.plan_input.read_plan``: the parse with
  the cluster's brokers and partitions as limits; then diff, validate and the rollback's JSON), against a snapshot of
  10,000 partitions / 50 brokers already loaded with its indexes; wall time of that work and its
  extra peak RSS (the peak is reset through ``/proc/self/clear_refs`` just before);
* **cli**: ``python -m console validate --state-file S --reassignment-json-file F`` offline; wall
  time of the whole process and its peak RSS (``wait4``), each less that of the same command on a
  trivial file with the same outcome: ``{}`` for a refused plan (the interpreter and the imports),
  a one-entry plan for a reviewed one (reading the snapshot file too).

``--against DIR`` runs the same on the code checked out in DIR (e.g. ``git worktree add /tmp/old
main``), one run each, stopped after ``--old-timeout`` seconds or at 6 GiB of address space; a
case that did not finish at one size is not tried at the next.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

MB = 2**20
PARTITIONS, BROKERS = 10_000, 50
ADDRESS_SPACE = 6 * 2**30


# -- the hostile plans: each ``size`` bytes or about -------------------------------------------
def _entry(topic: str, partition: int, replicas: list[int]) -> str:
    return json.dumps({"topic": topic, "partition": partition, "replicas": replicas}, separators=(",", ":"))


def _plan(entries: list[str]) -> str:
    return '{"version":1,"partitions":[' + ",".join(entries) + "]}"


def _filled(size: int, first: list[str] | None = None) -> str:
    """``first`` then ordinary entries (RF 3 over the snapshot's topics) up to ``size``."""
    out, used, n = list(first or []), sum(map(len, first or [])), len(first or [])  # partition 0 is first's
    while used < size:
        e = _entry(f"topic-{n // 100:05d}", n % 100, [n % BROKERS, (n + 1) % BROKERS, (n + 2) % BROKERS])
        out.append(e)
        used += len(e) + 1
        n += 1
    return _plan(out)


def _repeat(size: int, entry: str) -> str:
    return _plan([entry] * max(1, size // (len(entry) + 1)))


HOSTILE: dict[str, Callable[[int], str]] = {
    "good plan (RF 3, the snapshot's partitions)": lambda s: _filled(s),
    "deep nesting [[[[...": lambda s: "[" * s,
    "deep nesting in an unknown field": lambda s: '{"x":' + "[" * (s // 2) + "]" * (s // 2) + ',"partitions":[]}',
    "one entry of 1,000 brokers + ordinary ones": lambda s: _filled(s, [_entry("topic-00000", 0, list(range(1000)))]),
    "one entry at the cap (32 brokers) + ordinary": lambda s: _filled(s, [_entry("topic-00000", 0, list(range(32)))]),
    "one entry repeating a broker": lambda s: _plan([_entry("t", 0, [1] * (s // 2))]),
    "every entry repeating a broker (RF 20)": lambda s: _repeat(s, _entry("topic-00000", 0, [1, 2] * 10)),
    "the same partition again and again": lambda s: _repeat(s, _entry("topic-00000", 0, [1, 2, 3])),
    "a huge partition number": lambda s: '{"partitions":[{"topic":"t","partition":' + "9" * s + ',"replicas":[1]}]}',
    "partition numbers out of range": lambda s: _repeat(s, _entry("topic-00000", 2**31, [1, 2, 3])),
    "a giant log dir string": lambda s: (
        '{"partitions":[{"topic":"t","partition":0,"replicas":[1],"log_dirs":["/' + "d" * s + '"]}]}'
    ),
    "whitespace": lambda s: " " * s,
    "a giant topic name": lambda s: _plan([_entry("x" * s, 0, [1])]),
    "unicode topic names (249 × é)": lambda s: _plan(
        [_entry("é" * 249, n, [1, 2, 3]) for n in range(max(1, s // 1_300))]
    ),
    "distinct unknown topics, names of 249": lambda s: _plan(
        [_entry(f"{n:0249d}", 0, [1, 2, 3]) for n in range(max(1, s // 290))]
    ),
}


# -- measuring ---------------------------------------------------------------------------------
PAGE = r"""
import json, sys, time
root, state_path, plan_path = sys.argv[1:4]
sys.path.insert(0, root)
from console.core.errors import ConsoleError
from console.plans.columns import columns_of
from console.plans.diff import diff
from console.plans.plan import parse_plan, rollback
from console.plans.validate import validate
from console.state.document import read_state

try:
    from components.plan_input import read_plan  # what Review and Drafts call
except ImportError:  # the code before the limits: the pages called parse_plan
    read_plan = lambda data, state: parse_plan(data)
state = read_state(state_path)
state.partition_index, state.broker_totals, columns_of(state)  # as the page has them: built once per snapshot
data = open(plan_path, "rb").read()

def status(key):
    return next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith(key + ":")) * 1024

open("/proc/self/clear_refs", "w").write("5")  # the peak RSS from here on
before = status("VmRSS")
started = time.perf_counter()
try:
    plan = read_plan(data, state)
    d = diff(state, plan, elect=None)
    findings = validate(state, plan, d)
    rollback(state, plan).to_json()
    outcome = f"reviewed ({len(findings):,} findings)"
except ConsoleError as e:
    outcome = "refused"
except RecursionError:
    outcome = "RecursionError: internal error"
except MemoryError:
    outcome = "MemoryError"
took = time.perf_counter() - started
print(json.dumps({"seconds": took, "extra": status("VmHWM") - before, "outcome": outcome}))
"""


def _limited() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))


def _spawn(argv: list[str], code: Path, timeout: float) -> tuple[float, int, int, str, str]:
    """Wall seconds, peak RSS (bytes), exit code, stdout and stderr of ``argv`` run with ``code`` first
    on the path; a run past ``timeout`` is killed (exit code -9)."""
    env = {**os.environ, "PYTHONPATH": str(code), "OPENBLAS_NUM_THREADS": "1"}
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=out, stderr=err, env=env, cwd=code, preexec_fn=_limited)
        deadline = started + timeout
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() > deadline:
                proc.kill()
                pid, status, usage = os.wait4(proc.pid, 0)
                break
            time.sleep(0.01)
        took = time.perf_counter() - started
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return took, usage.ru_maxrss * 1024, proc.returncode, out.read().decode(), err.read().decode(errors="replace")


def page_run(code: Path, state: Path, plan: Path, timeout: float) -> tuple[float, int, str]:
    took, _, rc, out, err = _spawn([sys.executable, "-c", PAGE, str(code), str(state), str(plan)], code, timeout)
    if rc == -9:
        return took, 0, f"did not finish in {timeout:.0f} s"
    if rc != 0 or not out.strip():
        return took, 0, f"crashed ({(err.strip().splitlines() or ['?'])[-1][:60]})"
    doc = json.loads(out.strip().splitlines()[-1])
    return float(doc["seconds"]), int(doc["extra"]), str(doc["outcome"])


def cli_run(code: Path, state: Path, plan: Path, timeout: float) -> tuple[float, int, str]:
    argv = [
        sys.executable,
        "-m",
        "console",
        "validate",
        "--state-file",
        str(state),
        "--reassignment-json-file",
        str(plan),
    ]
    took, rss, rc, _out, err = _spawn(argv, code, timeout)
    if rc == -9:
        return took, rss, f"did not finish in {timeout:.0f} s"
    last = (err.strip().splitlines() or ["?"])[-1]
    outcome = {0: "reviewed", 1: "reviewed (errors)", 2: "refused"}.get(rc, f"crashed: {last[:60]}")
    if "Traceback" in err:
        outcome = f"traceback: {last[:60]}"
    return took, rss, outcome


def snapshot_file(where: Path) -> Path:
    from bench.synthetic import views
    from console.state.document import state_json
    from console.state.merge import merge

    api, _ = views(PARTITIONS, BROKERS, reassigning=0.0)
    path = where / "state.json"
    path.write_text(json.dumps(state_json(merge(api, None))))
    return path


def measure(
    code: Path, state: Path, plans: dict[tuple[str, float], Path], runs: int, timeout: float
) -> list[dict[str, object]]:
    # the CLI's own cost: the interpreter and the imports, on a file refused at once; and with
    # reading the snapshot, on a one-entry plan
    bases = {}
    for outcome, text in (("refused", "{}"), ("reviewed", _plan([_entry("topic-00000", 0, [1, 2, 3])]))):
        path = state.parent / f"baseline-{outcome}.json"
        path.write_text(text)
        runs_ = [cli_run(code, state, path, 120) for _ in range(3)]
        bases[outcome] = (statistics.median(r[0] for r in runs_), statistics.median(r[1] for r in runs_))
        print(f"  cli, {outcome} at once: {bases[outcome][0]:.2f} s, {bases[outcome][1] / MB:.0f} MB peak RSS")
    rows: list[dict[str, object]] = []
    gave_up: set[tuple[str, str]] = set()
    for (name, size), path in plans.items():
        for where, run in (("page", page_run), ("cli", cli_run)):
            if (name, where) in gave_up:
                rows.append({"case": name, "mb": size, "where": where, "outcome": "not tried (did not finish smaller)"})
                continue
            results = [run(code, state, path, timeout) for _ in range(runs)]
            took = statistics.median(r[0] for r in results)
            extra = statistics.median(r[1] for r in results)
            outcome = results[-1][2]
            if where == "cli":  # less the same command's cost on a trivial file with the same outcome
                base_time, base = bases["refused" if outcome == "refused" else "reviewed"]
                took, extra = took - base_time, extra - base
            if "did not finish" in outcome or "Memory" in outcome or "crashed" in outcome:
                gave_up.add((name, where))
            rows.append(
                {"case": name, "mb": size, "where": where, "seconds": took, "extra_mb": extra / MB, "outcome": outcome}
            )
            print(f"  {where:4s} {size:>5} MB  {took:7.2f} s  {extra / MB:8.0f} MB  {outcome:40s} {name}", flush=True)
    return rows


def table(rows: list[dict[str, object]], old: list[dict[str, object]] | None) -> str:
    before = {(r["case"], r["mb"], r["where"]): r for r in old or []}
    head = "| plan | MB | path | time | extra memory | outcome |" + (" before: time, memory, outcome |" if old else "")
    lines = [head, "|" + " --- |" * (head.count("|") - 1)]
    for r in rows:
        cells = [str(r["case"]), str(r["mb"]), str(r["where"])]
        cells += (
            [f"{r['seconds']:.2f} s", f"{r['extra_mb']:.0f} MB", str(r["outcome"])]
            if "seconds" in r
            else ["", "", str(r["outcome"])]
        )
        if old:
            b = before.get((r["case"], r["mb"], r["where"]))
            cells.append(
                ""
                if b is None
                else f"{b['seconds']:.2f} s, {b['extra_mb']:.0f} MB, {b['outcome']}"
                if "seconds" in b
                else str(b["outcome"])
            )
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="0.1,1,10", help="plan sizes in MB, comma-separated")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--timeout", type=float, default=120)
    ap.add_argument("--against", type=Path, help="also run the code checked out in this directory, once each")
    ap.add_argument("--old-timeout", type=float, default=30)
    ap.add_argument("--only", help="run only the cases whose name contains this")
    args = ap.parse_args()
    sizes = [float(s) for s in args.sizes.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        scratch = Path(tmp)
        state = snapshot_file(scratch)
        plans: dict[tuple[str, float], Path] = {}
        for i, (name, make) in enumerate(HOSTILE.items()):
            if args.only and args.only not in name:
                continue
            for size in sizes:
                path = scratch / f"plan-{i}-{size}.json"
                path.write_text(make(int(size * MB)))
                plans[(name, size)] = path
        print(f"{PARTITIONS:,} partitions / {BROKERS} brokers; {len(plans)} plans; {args.runs} runs each (median)")
        old = None
        if args.against:
            print(f"before: {args.against}")
            old = measure(args.against.resolve(), state, plans, 1, args.old_timeout)
        print(f"after: {ROOT}")
        rows = measure(ROOT, state, plans, args.runs, args.timeout)
    print()
    print(table(rows, old))
    worst = [r for r in rows if "seconds" in r and (float(r["seconds"]) >= 2 or float(r["extra_mb"]) >= 200)]
    print(f"\n{len(worst)} over 2 s or 200 MB" + "".join(f"\n  {r}" for r in worst))


if __name__ == "__main__":
    main()
