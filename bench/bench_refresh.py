"""A full refresh (Admin API + ZooKeeper + log dirs) of the sandbox with 2,000 partitions, and a
batched read of 10,000 partition-state znodes from ZooKeeper.

    PYTHONPATH=. .venv/bin/python bench/bench_refresh.py [--runs 7]

Starts its own sandbox (Kafka 3.9 in ZooKeeper mode) in a temporary directory and stops it at the end.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from console.access.settings import ConnectionSettings
from console.adapters.zookeeper import ZkReader
from console.sandbox import cluster
from console.state.reader import ClusterReader


def median_time(fn, runs: int) -> tuple[float, float, float]:
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), min(times), max(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--znodes", type=int, default=10_000)
    a = ap.parse_args()
    from confluent_kafka.admin import AdminClient, NewTopic
    from kazoo.client import KazooClient

    with tempfile.TemporaryDirectory() as d, cluster.running(Path(d), zookeeper=True, log=lambda m: None) as sb:
        admin = AdminClient({"bootstrap.servers": sb.bootstrap_servers, "log_level": "0"})
        t = time.perf_counter()
        new = [NewTopic(f"bench-{i:02d}", 100, 2) for i in range(20)]
        for f in admin.create_topics(new, operation_timeout=120).values():
            f.result()
        settings = ConnectionSettings({"bootstrap.servers": sb.bootstrap_servers}, zookeeper=sb.zookeeper, name="bench")
        with ClusterReader(settings) as reader:
            deadline = time.monotonic() + 120
            while len(reader.snapshot().partitions) < 2000 + 3 and time.monotonic() < deadline:
                time.sleep(1)
            print(f"created 20 topics x 100 partitions (RF 2) in {time.perf_counter() - t:.1f} s")
            state = reader.snapshot()
            print(f"snapshot: {len(state.partitions)} partitions, status {json.dumps(state.status.to_dict())}")
            m, lo, hi = median_time(reader.snapshot, a.runs)
            print(
                f"full refresh (Admin API + ZooKeeper + log dirs + configs): median {m:.3f} s (min {lo:.3f}, max {hi:.3f}, runs {a.runs})"
            )
            m, lo, hi = median_time(reader.kafka.read, a.runs)
            print(f"  Admin API part alone: median {m:.3f} s")
            m, lo, hi = median_time(reader.zookeeper.read, a.runs)
            print(f"  ZooKeeper part alone: median {m:.3f} s")

        # 10k partition znodes under a separate chroot, written the way the controller writes them
        zk_root = sb.zookeeper.split("/")[0]
        zk = KazooClient(hosts=zk_root + "/bench")
        zk.start(timeout=10)
        per_topic = 100
        topics = a.znodes // per_topic
        t = time.perf_counter()
        ops = []
        for i in range(topics):
            name = f"t{i:04d}"
            zk.ensure_path(f"/brokers/topics/{name}/partitions")
            ops.append(
                zk.set_async(
                    f"/brokers/topics/{name}",
                    json.dumps(
                        {
                            "version": 3,
                            "topic_id": "x",
                            "partitions": {str(p): [p % 3, (p + 1) % 3] for p in range(per_topic)},
                            "adding_replicas": {},
                            "removing_replicas": {},
                        }
                    ).encode(),
                )
            )
            for p in range(per_topic):
                ops.append(
                    zk.create_async(
                        f"/brokers/topics/{name}/partitions/{p}/state",
                        json.dumps(
                            {
                                "controller_epoch": 1,
                                "leader": p % 3,
                                "version": 1,
                                "leader_epoch": 0,
                                "isr": [p % 3, (p + 1) % 3],
                            }
                        ).encode(),
                        makepath=True,
                    )
                )
        for o in ops:
            o.get(timeout=60)
        zk.stop()
        print(f"wrote {a.znodes} partition znodes in {time.perf_counter() - t:.1f} s")
        reader_zk = ZkReader(zk_root + "/bench", timeout_s=30)
        view = reader_zk.read()
        assert len(view.states) == a.znodes, (len(view.states), view.problems)
        m, lo, hi = median_time(reader_zk.read, a.runs)
        print(
            f"ZooKeeper read of {a.znodes} partition znodes (+{topics} topic znodes): median {m:.3f} s "
            f"(min {lo:.3f}, max {hi:.3f}, runs {a.runs})"
        )
        reader_zk.close()


if __name__ == "__main__":
    main()
