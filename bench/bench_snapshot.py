"""Big snapshots in process: one rebuilt from its stored rows, a notebook's display of it, and the
in-process review of a bigger one, for this tree's code and (``--compare``) another tree's, measured
in the same session on the same data, the two alternating.

    PYTHONPATH=. .venv/bin/python bench/bench_snapshot.py --compare /tmp/base-rows
    PYTHONPATH=. .venv/bin/python bench/bench_snapshot.py --compare /tmp/base-rows --review 1000000
    PYTHONPATH=. .venv/bin/python bench/bench_snapshot.py                       # this tree alone

What it measures (``--partitions``, 100,000 by default):

* **rows → state**: :func:`console.pipeline.snapshots.state_from_tables` on the stored rows of two
  snapshots, already read into Arrow tables (the read itself is not counted): "in flight", a
  merged cluster of 50 brokers, RF 3, a log size for every replica and 1,000 partitions in flight
  (bench/synthetic.py's views, as bench/bench_live_page.py builds them); "at rest", 500 brokers on
  three racks, Pareto sizes, nothing moving (bench/bench_review.py's ``write_snapshot``).
* **notebook display** of the "in flight" snapshot as rebuilt, each time as a new snapshot
  (nothing derived from it computed yet): the HTML (``notebook.state_parts`` and its ``html()``,
  what ``text/html`` shows) and the charts drawn to SVG with vl-convert, as ``show`` draws them.
  The first display of the process (which also imports Altair and starts vl-convert's engine)
  is reported apart, not in the medians.
* with ``--review N``: the in-process review of N partitions (bench/bench_review.py's snapshot,
  plan and script: reading the stored snapshot, then parse, diff, validate, waves, ETA and
  rollback), one process per run under ``/usr/bin/time -v`` for its peak RSS.

Medians of ``--runs`` (5) runs per side, wall time and (on a busy machine, the steadier figure)
the process's CPU time. Each side runs in a process of its own with its tree first
on ``sys.path`` (``--code DIR``); with ``--compare`` the sides alternate for ``--rounds`` rounds and
their outputs are checked to be the same (a digest of every partition rebuilt, of the HTML and of
the SVGs; the review's findings and waves).
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
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
IN_FLIGHT = 1_000


def _code_first(code: Path) -> None:
    """Import the console from ``code`` (a tree of this repository), not from this one."""
    here = {str(ROOT), ""}
    sys.path[:] = [str(code)] + [p for p in sys.path if p not in here]


# -- the data (written once by the parent, read by every side) ---------------------------------
def write_data(root: Path, partitions: int) -> None:
    sys.path.insert(0, str(ROOT))
    from bench.bench_review import write_snapshot
    from bench.synthetic import views
    from console.pipeline.collect import SnapshotWriter
    from console.state.merge import merge

    api, _ = views(partitions, 50, in_flight=IN_FLIGHT)
    state = merge(api, None, taken_at=1_790_035_200.0, name="synthetic")
    assert len(state.in_flight) == IN_FLIGHT
    SnapshotWriter(root / "in-flight").write(state)
    write_snapshot(partitions, root / "at-rest")


# -- one side ---------------------------------------------------------------------------------
def _digest(text: str | bytes) -> str:
    import hashlib

    return hashlib.sha256(text.encode() if isinstance(text, str) else text).hexdigest()[:16]


def measure(data: Path, runs: int) -> dict[str, Any]:
    """This process's code on the data under ``data``: seconds of each run, and digests of what it gave."""
    import dataclasses
    from time import perf_counter, process_time

    import pyarrow.dataset as ds

    from console.pipeline.snapshots import state_from_tables
    from console.present import notebook

    out: dict[str, Any] = {}
    states = {}
    for name in ("in-flight", "at-rest"):
        header = ds.dataset(data / name / "headers", partitioning="hive").to_table()
        rows = ds.dataset(data / name / "replicas", partitioning="hive").to_table()
        took, cpu = [], []
        for _ in range(runs):
            states.pop(name, None)
            t, c = perf_counter(), process_time()
            states[name] = state_from_tables(header, rows)
            took.append(perf_counter() - t)
            cpu.append(process_time() - c)
        out[f"rows → state ({name})"] = took
        out[f"rows → state ({name}), CPU"] = cpu
        out[f"digest {name}"] = _digest(repr(states[name]) + repr(states[name].partitions))
    state = states["in-flight"]
    # as show() draws them: together where this tree can, else one after the other
    draw = getattr(notebook, "static_charts", lambda charts: [notebook.static_chart(c) for c in charts])
    html_t, charts_t, cpu = [], [], []
    for _ in range(runs + 1):  # the first display also imports Altair and starts vl-convert: apart
        fresh = dataclasses.replace(state)  # a new snapshot: nothing derived from it yet
        t, c = perf_counter(), process_time()
        parts = notebook.state_parts(fresh)
        text = parts.html()
        t1 = perf_counter()
        svgs = draw(parts.charts)
        t2 = perf_counter()
        html_t.append(t1 - t)
        charts_t.append(t2 - t1)
        cpu.append(process_time() - c)  # every thread's, vl-convert's too
    out["notebook, first display: in all"] = [html_t[0] + charts_t[0]]
    html_t, charts_t = html_t[1:], charts_t[1:]
    out["notebook: HTML"] = html_t
    out["notebook: charts (SVG)"] = charts_t
    out["notebook: in all"] = [a + b for a, b in zip(html_t, charts_t, strict=True)]
    out["notebook: in all, CPU"] = cpu[1:]
    out["digest notebook"] = _digest(text + json.dumps([s and s.get("image/svg+xml") for s in svgs]))
    out["partitions"] = len(state.partitions)
    return out


def side(code: Path, data: Path, runs: int) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(code)}
    ran = subprocess.run(
        [
            sys.executable,
            str(Path(__file__).resolve()),
            "--worker",
            str(data),
            "--code",
            str(code),
            "--runs",
            str(runs),
        ],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if ran.returncode:
        raise SystemExit(f"{code} failed:\n{ran.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(ran.stdout.strip().splitlines()[-1])
    return result


def review(code: Path, snaps: Path, plan: Path) -> dict[str, Any]:
    """The in-process review with ``code``'s console: wall seconds, peak RSS (GiB), its own figures."""
    from bench.bench_review import IN_PROCESS, timed

    took, rss, out, err = timed([sys.executable, "-c", IN_PROCESS, str(snaps), str(plan)], code)
    if not rss:
        raise SystemExit(f"the review with {code} failed:\n{err}")
    doc: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    return {**doc, "wall": took, "rss": rss}


# -- the report ---------------------------------------------------------------------------------
def _s(x: float) -> str:
    return f"{x:.3f} s" if x < 10 else f"{x:.1f} s"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--partitions", type=int, default=100_000)
    ap.add_argument("--runs", type=int, default=5, help="runs per side and round")
    ap.add_argument("--rounds", type=int, default=1, help="with --compare: rounds of both sides, alternating")
    ap.add_argument("--compare", type=Path, help="another tree of this repository (the previous code)")
    ap.add_argument("--review", type=int, default=0, help="also the in-process review of this many partitions")
    ap.add_argument("--code", type=Path, default=ROOT, help=argparse.SUPPRESS)
    ap.add_argument("--worker", type=Path, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.worker:
        _code_first(a.code.resolve())
        print(json.dumps(measure(a.worker, a.runs)))
        return
    sys.path.insert(0, str(ROOT))
    sides = {"new": ROOT} | ({"old": a.compare.resolve()} if a.compare else {})
    scratch = Path(tempfile.mkdtemp(prefix="bench-snapshot-"))
    try:
        t = time.monotonic()
        write_data(scratch, a.partitions)
        print(
            f"## Big snapshots in process: {a.partitions:,} partitions ({time.monotonic() - t:.0f} s to write the data)"
        )
        print(
            f"sides: {', '.join(f'{k} = {v}' for k, v in sides.items())}; medians of {a.runs} runs x {a.rounds} round(s)\n"
        )
        results: dict[str, list[dict[str, Any]]] = {k: [] for k in sides}
        for r in range(a.rounds):
            for k in list(sides)[:: 1 if r % 2 == 0 else -1]:
                results[k].append(side(sides[k], scratch, a.runs))
        first = next(iter(results.values()))[0]
        keys = [k for k in first if isinstance(first[k], list)]
        print("| step | " + " | ".join(sides) + (" | old / new |" if a.compare else " |"))
        print("|---|" + "---|" * (len(sides) + (1 if a.compare else 0)))
        for key in keys:
            med = {k: statistics.median(x for res in results[k] for x in res[key]) for k in sides}
            cells = " | ".join(_s(med[k]) for k in sides)
            print(f"| {key} | {cells} |" + (f" {med['old'] / med['new']:.1f}x |" if a.compare else ""))
        if a.compare:
            for key in (k for k in first if k.startswith("digest")):
                same = {res[key] for k in sides for res in results[k]}
                print(f"- {key.removeprefix('digest ')}: {'the same on both sides' if len(same) == 1 else 'DIFFERENT'}")
        if a.review:
            from bench.bench_review import write_snapshot

            shutil.rmtree(scratch)
            snaps, plan = write_snapshot(a.review, scratch / "review" / "snapshots")
            print(f"\n### In-process review of {a.review:,} partitions (one run per side and round)\n")
            print("| side | in all | reading the snapshot | the review | peak RSS | findings | waves |")
            print("|---|---|---|---|---|---|---|")
            for r in range(a.rounds):
                for k in list(sides)[:: 1 if r % 2 == 0 else -1]:
                    doc = review(sides[k], snaps, plan)
                    print(
                        f"| {k} | {_s(doc['wall'])} | {_s(doc['load'])} | {_s(doc['review'])} | "
                        f"{doc['rss']:.2f} GiB | {doc['findings']:,} | {doc['waves']:,} |",
                        flush=True,
                    )
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
