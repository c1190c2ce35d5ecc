"""The write path on a real cluster: cancel of 1,000 in-flight partitions, and how close a
throttled run gets to its throttle.

    PYTHONPATH=. .venv/bin/python bench/bench_write.py [--runs 3] [--partitions 1000]

Starts its own sandbox (Kafka 3.9: ZooKeeper + 3 brokers) in a temporary directory and stops it at the end.

* **cancel**: 1,000 single-replica partitions (40 KB each; one topic, or ``--topics N``) are moved to another broker at a
  throttle of 1 B/s (so they stay in flight), then cancelled with the console's own cancel
  (audit log, one request, the controller's answer); timed until the controller accepted it and
  until every partition had left ListPartitionReassignments. Median of ``--runs``.
* **throttle**: a run moving 2 partitions off one leader at ``--rate``; the bytes the new
  replicas hold (DescribeLogDirs) are sampled every 0.5 s. Kafka's quota averages over 11
  one-second windows, so a move starts with a burst: the steady rate is the slope over the later
  half of the copy. (The sandbox's replica fetches are 16 KB, which caps copying near 150 KB/s
  whatever the throttle: measure below that.)
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from console.access.auth import Identity
from console.access.settings import ConnectionSettings
from console.core.model import cluster_key
from console.moves.cancel import plan_cancel
from console.moves.waves import WaveLimits
from console.plans.plan import Plan, PlanEntry
from console.runs.executor import Executor
from console.sandbox import cluster
from console.sandbox.demo import create_assigned_topic, fill, set_broker_rates
from console.services import cancel as cancel_service
from console.services import runs as run_service
from console.state.reader import ClusterReader
from console.storage.store import Store


def bench_cancel(reader: ClusterReader, store: Store, bs: str, n: int, runs: int, topics: int = 1) -> None:
    from confluent_kafka.admin import AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource, ResourceType

    accepted, left = [], []
    per_topic = n // topics
    for run in range(runs):
        names = [f"cancel-{run}-{t}" for t in range(topics)]
        for topic in names:
            create_assigned_topic(bs, topic, [[i % 3] for i in range(per_topic)])
            fill(bs, topic, per_topic, 40)  # more than one replica fetch (16 KB in the sandbox): they stay in flight
        set_broker_rates(bs, [0, 1, 2], 1)
        admin = AdminClient({"bootstrap.servers": bs, "log_level": "0"})
        res = [
            ConfigResource(
                ResourceType.TOPIC,
                topic,
                incremental_configs=[
                    ConfigEntry(k, "*", incremental_operation=AlterConfigOpType.SET)
                    for k in ("leader.replication.throttled.replicas", "follower.replication.throttled.replicas")
                ],
            )
            for topic in names
        ]
        for f in admin.incremental_alter_configs(res).values():
            f.result()
        out = reader.kafka.alter_reassignments({(t, i): ((i + 1) % 3,) for t in names for i in range(per_topic)})
        assert all(o.accepted for o in out.values()), "the moves were not all accepted"
        # a few partitions may finish in their first replica fetch; cancel what is in flight
        deadline, seen = time.monotonic() + 120, -1
        while time.monotonic() < deadline:
            now = len(reader.snapshot().in_flight)
            if now == seen:
                break
            seen = now
            time.sleep(2)
        state = reader.snapshot()
        plan = plan_cancel(state, None)
        n_flight = len(plan.cancel)
        t0 = time.perf_counter()
        result = cancel_service.cancel(
            store, reader.gateway(), Identity.cli("bench"), cluster_key(state, "bench"), plan, {}, wait_s=120
        )
        total = time.perf_counter() - t0
        assert len(result.accepted) == n_flight and not result.still_in_flight, result
        accepted.append(result.seconds_to_accept)
        left.append(total)
        print(
            f"  run {run + 1}: {n_flight} partitions cancelled: accepted in {result.seconds_to_accept:.3f} s, "
            f"all left the list in {total:.3f} s"
        )
        set_broker_rates(bs, [0, 1, 2], 100_000_000)
    print(
        f"cancel of ~{n} in-flight partitions in {topics} topic(s), median of {runs}: accepted "
        f"{statistics.median(accepted):.3f} s; all left ListPartitionReassignments {statistics.median(left):.3f} s"
    )


def bench_throttle(reader: ClusterReader, store: Store, bs: str, rate: int, mbytes: int) -> None:
    create_assigned_topic(bs, "throttled", [[0, 1], [0, 1]])
    fill(bs, "throttled", 2, mbytes * 1024)
    plan = Plan.of([PlanEntry("throttled", 0, (0, 2)), PlanEntry("throttled", 1, (0, 2))])
    executor = Executor(store, reader.gateway(), "bench")
    run_id = run_service.start_run(
        executor.store,
        executor.cluster,
        reader.snapshot(),
        run_service.RunRequest(
            Identity.cli(executor.user), plan, "throttle", run_service.RunSettings(rate=rate, limits=WaveLimits(5))
        ),
        users=None,
    )
    executor.tick(run_id)  # throttles, then submits the wave
    samples: list[tuple[float, int]] = []
    while True:
        state = reader.snapshot()
        copied = sum(state.partition("throttled", p).size_on(2) or 0 for p in (0, 1))
        samples.append((time.monotonic(), copied))
        if not state.in_flight:
            break
        time.sleep(0.5)
    done_at = time.monotonic()
    executor.drive(run_id, every=0.5, timeout=60)
    total = 2 * mbytes * 2**20
    start = samples[0][0]
    # Kafka's quota is an average over 11 one-second windows, so a move starts with a burst; the
    # steady rate is the slope over the later half of the copy
    late = [(t, b) for t, b in samples if t - start >= (done_at - start) / 2 and b < total]
    (t0, b0), (t1, b1) = late[0], late[-1]
    steady = (b1 - b0) / (t1 - t0) if t1 > t0 else float("nan")
    overall = total / (done_at - start)
    print(
        f"throttled run at {rate:,} B/s ({total / 2**20:.0f} MiB to copy in {done_at - start:.1f} s): "
        f"steady {steady:,.0f} B/s = {steady / rate:.2f} of the throttle; overall {overall:,.0f} B/s = "
        f"{overall / rate:.2f} (with the burst the quota window allows at the start)"
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--partitions", type=int, default=1000)
    ap.add_argument("--rate", type=int, default=1_000_000)
    ap.add_argument("--mbytes", type=int, default=6, help="MB per partition in the throttled run")
    ap.add_argument("--topics", type=int, default=1, help="spread the cancelled partitions over this many topics")
    ap.add_argument("--skip-throttle", action="store_true")
    ap.add_argument("--skip-cancel", action="store_true")
    ap.add_argument("--kraft", action="store_true", help="a Kafka 4.x KRaft sandbox instead of 3.9 in ZooKeeper mode")
    a = ap.parse_args()
    with (
        tempfile.TemporaryDirectory() as d,
        cluster.running(Path(d), kraft=a.kraft, zookeeper=not a.kraft, log=lambda m: None) as sb,
    ):
        settings = ConnectionSettings(
            {"bootstrap.servers": sb.bootstrap_servers}, zookeeper=sb.zookeeper or None, name="bench", timeout_s=30.0
        )
        store = Store(Path(d) / "console.db")
        with ClusterReader(settings) as reader:
            if not a.skip_cancel:
                bench_cancel(reader, store, sb.bootstrap_servers, a.partitions, a.runs, a.topics)
            if not a.skip_throttle:
                bench_throttle(reader, store, sb.bootstrap_servers, a.rate, a.mbytes)


if __name__ == "__main__":
    main()
