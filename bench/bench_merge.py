"""Merge a synthetic 100k-partition, 50-broker cluster into a snapshot; time and peak memory.

PYTHONPATH=. .venv/bin/python bench/bench_merge.py [--partitions 100000] [--runs 5]
"""

from __future__ import annotations

import argparse
import gc
import resource
import statistics
import sys
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.synthetic import views
from console.present import live
from console.state.merge import merge


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--partitions", type=int, default=100_000)
    ap.add_argument("--brokers", type=int, default=50)
    ap.add_argument("--runs", type=int, default=5)
    a = ap.parse_args()
    api, zk = views(a.partitions, a.brokers)
    for label, args in (("api only", (api, None)), ("api + zookeeper", (api, zk))):
        times = []
        for _ in range(a.runs):
            gc.collect()
            t = time.perf_counter()
            state = merge(*args)
            times.append(time.perf_counter() - t)
        print(
            f"merge {label:16s} {a.partitions} partitions / {a.brokers} brokers: median {statistics.median(times):.3f} s "
            f"(min {min(times):.3f}, max {max(times):.3f}, runs {a.runs}); findings {len(state.findings)}"
        )
    t = time.perf_counter()
    c = live.counts(state)
    rows = live.broker_rows(state)
    print(
        f"view models (counts + per-broker rows): {time.perf_counter() - t:.3f} s; reassigning {c.reassigning}, brokers {len(rows)}"
    )
    del state
    gc.collect()
    tracemalloc.start()
    merge(api, zk)
    _, peak = tracemalloc.get_traced_memory()
    current, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(
        f"memory: snapshot holds {current / 2**20:.0f} MiB (peak during merge {peak / 2**20:.0f} MiB); "
        f"process max RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB "
        f"(includes both synthetic input views)"
    )


if __name__ == "__main__":
    main()
