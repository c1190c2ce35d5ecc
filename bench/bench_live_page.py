"""What a refresh of the Live page costs the server, per viewer, with N partitions in flight.

A synthetic cluster (100,000 partitions, 50 brokers, RF 3, log sizes for every replica) with
exactly N partitions in flight (N = 30, 1,000, 10,000 by default). For each N:

* the view-model steps of one refresh, timed one by one on a fresh snapshot (what the first viewer
  of a snapshot pays: filter, counts, totals, the page of rows, the broker x partition picture and
  its chart spec);
* one run of the Live page through Streamlit's AppTest (the whole script, the page's elements
  serialized as the server sends them): the first session on a new snapshot, then other sessions
  on the same snapshot (what each further viewer costs). The cluster reader is replaced by one
  that hands out the synthetic snapshot, so no cluster and no network are involved.

    PYTHONPATH=. .venv/bin/python bench/bench_live_page.py [--in-flight 30,1000,10000] [--partitions 100000]
        [--runs 5] [--viewers 5] [--gc off|collect|freeze]

AppTest never runs Streamlit's collection after a script run (``runner.postScriptGC``), so
``--gc collect`` adds it to each run here as the server does with it on (the old default:
``gc.collect(2)``), ``--gc freeze`` the same after ``gc.freeze()`` of everything loaded by the
first runs; ``--gc off`` (the default) is the console's setting.
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.synthetic import views
from console.core.model import ClusterState
from console.state.merge import merge

ROOT = Path(__file__).resolve().parents[1]


def timed(fn: Callable[[], object], runs: int) -> tuple[float, float]:
    """Median wall and CPU seconds of ``fn`` over ``runs``."""
    wall, cpu = [], []
    for _ in range(runs):
        w, c = time.perf_counter(), time.process_time()
        fn()
        wall.append(time.perf_counter() - w)
        cpu.append(time.process_time() - c)
    return statistics.median(wall), statistics.median(cpu)


def fresh(base: ClusterState) -> ClusterState:
    """The same cluster as a new snapshot (nothing derived from it computed yet)."""
    return dataclasses.replace(base, taken_at=time.time())


def view_model_steps(base: ClusterState, runs: int) -> dict[str, float]:
    from console.core.format import page
    from console.moves.progress import CopyTracker
    from console.present import charts, live

    tracker = CopyTracker()
    tracker.observe(dataclasses.replace(base, taken_at=time.time() - 5))
    tracker.observe(fresh(base))
    rates = tracker.rates()
    flt = live.LiveFilter()
    out: dict[str, float] = {}

    def step(name: str, fn: Callable[[ClusterState], object]) -> None:
        states = [fresh(base) for _ in range(runs)]
        for s in states:  # what the steps before it computed already
            if out:
                _ = s.in_flight
        it = iter(states)
        out[name] = timed(lambda: fn(next(it)), runs)[1]

    step("in flight (once per snapshot)", lambda s: s.in_flight)
    step("select", lambda s: live.select(s, flt))
    step("counts", live.counts)
    step("total estimate", lambda s: live.total_estimate(s, rates))
    step("tracker.observe + rates", lambda s: (tracker.observe(s), tracker.rates()))
    shown = page(live.select(base, flt), 1, 50)[0]
    step("rows of one page (50)", lambda s: live.partition_rows(s, shown, {}, rates))
    step("replica cells of one page", lambda s: live.replica_cells(s, shown))
    cells = live.replica_cells(base, shown)
    step("chart spec of one page", lambda s: charts.replica_grid(cells, [p.name for p in shown]).to_dict())
    return out


class SyntheticReader:
    """Stands in for ClusterReader.snapshot: hands out the current synthetic snapshot."""

    current: ClusterState | None = None

    @classmethod
    def snapshot(
        cls, self: object, max_age_s: float = 0.0, info: bool = False, lean: bool = False, full: bool = False
    ) -> ClusterState:
        assert cls.current is not None
        return cls.current


def app_runs(base: ClusterState, runs: int, viewers: int, collect: str) -> tuple[float, float, float]:
    """Median CPU seconds of one Live-page run: the first session on a new snapshot, each further
    session on the same snapshot; and the median wall time of the first."""
    from streamlit.testing.v1 import AppTest

    from console.state import reader

    reader.ClusterReader.snapshot = (  # type: ignore[method-assign]
        lambda self, max_age_s=0.0, info=False, lean=False, full=False: SyntheticReader.snapshot(self, max_age_s)
    )
    sessions = [AppTest.from_file(str(ROOT / "app.py"), default_timeout=300) for _ in range(viewers)]
    SyntheticReader.current = fresh(base)
    for at in sessions:  # warm: imports, caches, first page load of each session
        at.run()
        assert not at.exception, at.exception
    if collect == "freeze":
        gc.collect()
        gc.freeze()

    def run(at: AppTest) -> None:
        at.run()
        if collect != "off":
            gc.collect(2)

    first_cpu, first_wall, others = [], [], []
    for _ in range(runs):
        SyntheticReader.current = fresh(base)
        w, c = time.perf_counter(), time.process_time()
        run(sessions[0])
        first_cpu.append(time.process_time() - c)
        first_wall.append(time.perf_counter() - w)
        for at in sessions[1:]:
            c = time.process_time()
            run(at)
            others.append(time.process_time() - c)
        assert not any(at.exception for at in sessions)
    return statistics.median(first_cpu), statistics.median(others) if others else 0.0, statistics.median(first_wall)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--in-flight", default="30,1000,10000")
    ap.add_argument("--partitions", type=int, default=100_000)
    ap.add_argument("--brokers", type=int, default=50)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--viewers", type=int, default=5, help="AppTest sessions on each snapshot")
    ap.add_argument(
        "--gc", choices=["off", "collect", "freeze"], default="off", help="a full collection after each run"
    )
    a = ap.parse_args()
    data = tempfile.mkdtemp(prefix="bench-live-")
    os.environ.update(
        CONSOLE_DATA_DIR=data, CONSOLE_BOOTSTRAP_SERVERS="synthetic:9092", CONSOLE_CLUSTER_NAME="synthetic"
    )
    os.environ.pop("CONSOLE_ZOOKEEPER", None)
    print(
        f"Live page, synthetic {a.partitions:,} partitions / {a.brokers} brokers; collection after each run: "
        f"{a.gc}; CPU seconds, medians of {a.runs}"
    )
    for n in (int(x) for x in a.in_flight.split(",")):
        api, _ = views(a.partitions, a.brokers, in_flight=n)
        base = merge(api, None, taken_at=time.time(), name="synthetic")
        del api
        assert len(base.in_flight) == n, len(base.in_flight)
        steps = view_model_steps(base, a.runs)
        first, other, wall = app_runs(base, a.runs, a.viewers, a.gc)
        print(f"\n{n:,} in flight")
        for name, s in steps.items():
            print(f"  {name:32s} {s * 1000:8.1f} ms")
        print(f"  {'view-model steps, in all':32s} {sum(steps.values()) * 1000:8.1f} ms")
        print(f"  Live page run, first viewer of a snapshot: {first * 1000:.0f} ms CPU ({wall * 1000:.0f} ms wall)")
        print(f"  Live page run, each further viewer:        {other * 1000:.0f} ms CPU")


if __name__ == "__main__":
    main()
