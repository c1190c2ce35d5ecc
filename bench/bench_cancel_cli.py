"""The CLI cancel an on-call engineer types, against the official tool's ``--cancel`` of the same
Kafka release, side by side on one sandbox, on Kafka 4.x KRaft and on 3.9 in ZooKeeper mode.

    PYTHONPATH=. .venv/bin/python bench/bench_cancel_cli.py [--partitions 300] [--runs 3] [--only kraft|zookeeper]

For each cluster: ``--partitions`` single-replica partitions (40 KB each) are moved to another broker
at a throttle of 1 B/s, so they stay in flight; then cancelled, in turns, by

* the console: ``python -m console cancel --bootstrap-server B [--zookeeper Z] --all --yes``;
* the official tool: ``kafka-reassign-partitions.sh --bootstrap-server B --cancel
  --reassignment-json-file plan.json`` (the same partitions; it also takes the throttles off).

Each is timed as a process, from its start to its exit (what the engineer waits for), and until
ListPartitionReassignments lists none of the partitions. Medians of ``--runs`` per tool, and the
ratio console / official from the same run.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from console.access.settings import ConnectionSettings
from console.adapters.kafka import KafkaGateway
from console.core.model import BrokerId
from console.sandbox import cluster
from console.sandbox.cluster import Sandbox
from console.sandbox.demo import create_assigned_topic, fill, set_broker_rates
from console.sandbox.versions import DEFAULT_KAFKA, ZOOKEEPER_KAFKA

TOPIC = "oncall"
THROTTLED = ("leader.replication.throttled.replicas", "follower.replication.throttled.replicas")


def admin(bs: str):  # type: ignore[no-untyped-def]
    from confluent_kafka.admin import AdminClient

    return AdminClient({"bootstrap.servers": bs, "log_level": "0"})


def gateway(bs: str) -> KafkaGateway:
    return KafkaGateway(ConnectionSettings({"bootstrap.servers": bs}))


def in_flight(kafka: KafkaGateway) -> int:
    return len(kafka.list_reassignments())


def put_in_flight(sb: Sandbox, n: int) -> int:
    """Throttle at 1 B/s and move every partition to the next broker; how many stay in flight."""
    from confluent_kafka.admin import AlterConfigOpType, ConfigEntry, ConfigResource, ResourceType

    bs = sb.bootstrap_servers
    set_broker_rates(bs, [0, 1, 2], 1)
    a = admin(bs)
    res = ConfigResource(
        ResourceType.TOPIC,
        TOPIC,
        incremental_configs=[ConfigEntry(k, "*", incremental_operation=AlterConfigOpType.SET) for k in THROTTLED],
    )
    for f in a.incremental_alter_configs([res]).values():
        f.result()
    time.sleep(1)  # brokers apply dynamic configs a moment later
    kafka = gateway(bs)
    out = kafka.alter_reassignments({(TOPIC, i): (BrokerId((i + 1) % 3),) for i in range(n)})
    assert all(o.accepted for o in out.values()), "the moves were not all accepted"
    seen, deadline = -1, time.monotonic() + 120
    while time.monotonic() < deadline:  # a few finish in their first fetch; count the rest
        now = in_flight(kafka)
        if now == seen:
            return now
        seen = now
        time.sleep(2)
    kafka.close()
    return seen


def timed(argv: list[str], bs: str, env: dict[str, str]) -> tuple[float, float]:
    """(seconds to the process's exit, seconds until nothing is listed in flight)."""
    kafka = gateway(bs)
    in_flight(kafka)  # connected before the clock starts
    t0 = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=300)
    exited = time.perf_counter() - t0
    assert done.returncode == 0, done.stdout + done.stderr
    while in_flight(kafka):
        time.sleep(0.05)
    cleared = time.perf_counter() - t0
    kafka.close()
    return exited, cleared


def bench(sb: Sandbox, n: int, runs: int, work: Path) -> None:
    bs = sb.bootstrap_servers
    create_assigned_topic(bs, TOPIC, [[i % 3] for i in range(n)])
    fill(bs, TOPIC, n, 40)  # more than one replica fetch (16 KB here): they stay in flight
    plan = work / "plan.json"
    plan.write_text(
        json.dumps(
            {
                "version": 1,
                "partitions": [{"topic": TOPIC, "partition": i, "replicas": [(i + 1) % 3]} for i in range(n)],
            }
        )
    )
    env = {**os.environ, "CONSOLE_DATA_DIR": str(work / "console"), "PYTHONPATH": str(Path(__file__).parents[1])}
    console = [sys.executable, "-m", "console", "cancel", "--bootstrap-server", bs, "--all", "--yes"]
    if sb.zookeeper:
        console += ["--zookeeper", sb.zookeeper]
    official = sb.tool_argv(
        "org.apache.kafka.tools.reassign.ReassignPartitionsCommand",
        "--bootstrap-server",
        bs,
        "--cancel",
        "--reassignment-json-file",
        str(plan),
    )
    got: dict[str, list[tuple[float, float, int]]] = {"console": [], "official": []}
    for run in range(runs):
        for tool, argv in (
            (("console", console), ("official", official))
            if run % 2 == 0
            else (
                ("official", official),
                ("console", console),
            )
        ):
            flying = put_in_flight(sb, n)
            exited, cleared = timed(argv, bs, env)
            got[tool].append((exited, cleared, flying))
            print(
                f"  run {run + 1} {tool:8}: {flying} in flight; exited after {exited:.2f} s, none listed after {cleared:.2f} s"
            )
    set_broker_rates(bs, [0, 1, 2], 100_000_000)
    med = {t: (statistics.median(e for e, _, _ in v), statistics.median(c for _, c, _ in v)) for t, v in got.items()}
    print(
        f"Kafka {sb.kafka_version} {sb.mode}: cancel of ~{n} in-flight partitions, median of {runs}: "
        f"console exits after {med['console'][0]:.2f} s (none listed {med['console'][1]:.2f} s), "
        f"official after {med['official'][0]:.2f} s (none listed {med['official'][1]:.2f} s): "
        f"console / official = {med['console'][0] / med['official'][0]:.2f}×"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--partitions", type=int, default=300)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--only", choices=["kraft", "zookeeper"])
    args = ap.parse_args()
    flavours = [("kraft", DEFAULT_KAFKA, False), ("zookeeper", ZOOKEEPER_KAFKA, True)]
    for name, release, zookeeper in flavours:
        if args.only and args.only != name:
            continue
        with tempfile.TemporaryDirectory(prefix="bench-cancel-") as tmp:
            work = Path(tmp)
            with cluster.running(work / "sandbox", kafka_version=release, zookeeper=zookeeper) as sb:
                bench(sb, args.partitions, args.runs, work)


if __name__ == "__main__":
    main()
