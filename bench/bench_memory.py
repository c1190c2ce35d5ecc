"""Memory of a console process holding the 100k-partition snapshot, measured in a process of its own.

Each run is a fresh child process that imports the console, notes its resident memory (VmRSS),
builds the synthetic Admin API and ZooKeeper views (standing in for the answers a real read
holds while merging), merges them, lets the views go, and reports its resident memory holding
only the snapshot, and its peak (VmHWM), from /proc.

    PYTHONPATH=. .venv/bin/python bench/bench_memory.py [--partitions 100000] [--brokers 50] [--runs 3]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _proc_mib(field: str) -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return 0.0


def child(partitions: int, brokers: int) -> None:
    import gc

    from bench.synthetic import views
    from console.present import live
    from console.state.merge import merge

    gc.collect()
    base = _proc_mib("VmRSS")
    api, zk = views(partitions, brokers)
    with_inputs = _proc_mib("VmRSS")
    state = merge(api, zk)
    del api, zk
    gc.collect()
    live.counts(state)  # touch it as the Live page does
    print(
        json.dumps(
            {
                "partitions": len(state.partitions),
                "baseline": base,
                "inputs": with_inputs - base,
                "holding": _proc_mib("VmRSS"),
                "peak": _proc_mib("VmHWM"),
            }
        )
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--partitions", type=int, default=100_000)
    ap.add_argument("--brokers", type=int, default=50)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        child(a.partitions, a.brokers)
        return
    me = [sys.executable, __file__, "--child", "--partitions", str(a.partitions), "--brokers", str(a.brokers)]
    runs = [json.loads(subprocess.run(me, check=True, capture_output=True, text=True).stdout) for _ in range(a.runs)]

    def med(key: str) -> float:
        return statistics.median(r[key] for r in runs)

    print(
        f"console process, {runs[0]['partitions']} partitions / {a.brokers} brokers, median of {a.runs} processes: "
        f"{med('baseline'):.0f} MiB resident with the console imported; {med('holding'):.0f} MiB holding the snapshot "
        f"after the input views are released (+{med('holding') - med('baseline'):.0f} MiB); "
        f"peak {med('peak'):.0f} MiB while merging (the input views alone take {med('inputs'):.0f} MiB)"
    )


if __name__ == "__main__":
    main()
