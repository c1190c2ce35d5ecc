"""What a sandbox costs when nothing happens on it: the CPU its brokers take at rest, with the
sandbox's settings and with the ones it had before (followers asking every 100 ms, the quorum's
no-op record every 500 ms). The test suite keeps several sandboxes running on two cores, so every
tenth of a core a sandbox takes at rest is taken from the tests.

Each round starts a three-node sandbox of ``--kafka`` (KRaft; ``--zookeeper``: 3.9 in ZooKeeper
mode) with the demo topics, waits ``--settle`` seconds, then reads its processes' CPU (utime +
stime, /proc) over ``--seconds``, and stops it; in the order before, after, after, before (medians
of the rounds of each). Prints one line per round and the ratio after / before.

``PYTHONPATH=. .venv/bin/python bench/bench_idle_sandbox.py [--seconds 60] [--settle 30]
[--rounds 2] [--kafka VERSION] [--zookeeper]`` (``--rounds``: rounds of each, in pairs)
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.bench_viewers import cpu_s
from console.sandbox import cluster
from console.sandbox.demo import DEMO_TOPICS, create_topics, produce

BEFORE = {"replica.fetch.wait.max.ms": 100, "metadata.max.idle.interval.ms": 500}
"""The settings the sandbox had until 2026-12-03."""


def quiet(msg: str) -> None:
    pass


def idle_cores(before: bool, args: argparse.Namespace) -> float:
    """The cores a fresh sandbox's processes take at rest over ``args.seconds``."""
    with tempfile.TemporaryDirectory(prefix="idle-sandbox-") as tmp:
        extra = {k: v for k, v in BEFORE.items() if not (args.zookeeper and k.startswith("metadata."))}
        sb = cluster.up(
            Path(tmp),
            kafka_version=args.kafka,
            zookeeper=args.zookeeper,
            log=quiet,
            broker_config=extra if before else None,
        )
        try:
            small = tuple(t.__class__(t.name, t.partitions, t.replication, 0.5) for t in DEMO_TOPICS)
            create_topics(sb.bootstrap_servers, small, log=quiet)
            produce(sb.bootstrap_servers, small, log=quiet)
            time.sleep(args.settle)  # fixed wait: the start's own work is over before the window
            pids = [p.pid for p in sb.procs]
            start = sum(cpu_s(p) for p in pids)
            time.sleep(args.seconds)  # fixed wait: the window the CPU is read over
            return float((sum(cpu_s(p) for p in pids) - start) / args.seconds)
        finally:
            cluster.down(Path(tmp), log=quiet)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--settle", type=float, default=30.0)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--kafka", default=None)
    parser.add_argument("--zookeeper", action="store_true")
    args = parser.parse_args()
    got: dict[bool, list[float]] = {True: [], False: []}
    for before in [True, False, False, True] * max(1, args.rounds // 2):
        cores = idle_cores(before, args)
        got[before].append(cores)
        print(f"{'before' if before else 'after '}: {cores:.3f} cores at rest", flush=True)
    b, a = statistics.median(got[True]), statistics.median(got[False])
    print(f"median before {b:.3f} cores, after {a:.3f} cores: after / before {a / b:.2f}")


if __name__ == "__main__":
    main()
