"""Demo data for the sandbox: topics of different shapes with a few MB each, and optionally a
throttled reassignment in flight so the Live page has something to show.

:func:`start_demo_reassignment` writes to the cluster directly (kafka-python and confluent-kafka): a
move by another mover, as the tests and benchmarks need one; the demo's own move is a run of the
console (:mod:`console.cli.demo`).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from console.core.errors import SandboxError

B = TypeVar("B", bound=int)
"""A broker id."""


@dataclass(frozen=True)
class DemoTopic:
    name: str
    partitions: int
    replication: int
    megabytes: float


DEMO_TOPICS = (
    DemoTopic("orders", 12, 3, 4.0),
    DemoTopic("payments", 6, 2, 6.0),
    DemoTopic("clickstream", 24, 1, 4.0),
    DemoTopic("inventory", 8, 2, 2.0),
    DemoTopic("audit-log", 3, 3, 1.0),
)
DEMO_REASSIGN_TOPIC = "payments"
DEMO_THROTTLE_BYTES = 10_000


def create_topics(
    bootstrap: str, topics: tuple[DemoTopic, ...] = DEMO_TOPICS, log: Callable[[str], None] = print
) -> tuple[str, ...]:
    """Create the topics that do not exist yet; returns the names created."""
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap, "log_level": "0"})
    existing = set(admin.list_topics(timeout=10).topics)
    new = [NewTopic(t.name, t.partitions, t.replication) for t in topics if t.name not in existing]
    if new:
        log(f"Creating topics {', '.join(t.topic for t in new)} ...")
        for name, fut in admin.create_topics(new, operation_timeout=30).items():
            try:
                fut.result()
            except Exception as e:
                raise SandboxError(f"Could not create demo topic {name}: {e}.") from None
    return tuple(t.topic for t in new)


def produce(
    bootstrap: str,
    topics: tuple[DemoTopic, ...] = DEMO_TOPICS,
    log: Callable[[str], None] = print,
    record_bytes: int = 1024,
) -> int:
    """Fill each topic with ``megabytes`` of incompressible records, spread over its partitions."""
    from confluent_kafka import Producer

    producer = Producer(
        {
            "bootstrap.servers": bootstrap,
            "linger.ms": 20,
            "compression.type": "none",
            "acks": "all",
            "log_level": "0",
            "queue.buffering.max.kbytes": 65536,
            "batch.size": 16384,
        }
    )
    total = 0
    payload = os.urandom(record_bytes * 64)
    for t in topics:
        n = int(t.megabytes * 1024 * 1024 / record_bytes)
        log(f"Producing {t.megabytes:g} MB to {t.name} ...")
        for i in range(n):
            off = (i * 997) % (len(payload) - record_bytes)
            while True:
                try:
                    producer.produce(
                        t.name, payload[off : off + record_bytes], key=str(i).encode(), partition=i % t.partitions
                    )
                    break
                except BufferError:
                    producer.poll(0.1)
            total += record_bytes
        producer.poll(0)
    left = producer.flush(60)
    if left:
        raise SandboxError(f"{left} demo records were not acknowledged within 60 s.")
    return total


def create_assigned_topic(
    bootstrap: str,
    name: str,
    assignment: list[list[int]],
    timeout_ms: int = 120_000,
    configs: dict[str, str] | None = None,
) -> None:
    """A topic whose partition ``i`` lives on ``assignment[i]`` (confluent-kafka 2.16 refuses
    explicit assignments; kafka-python takes them), with topic ``configs``."""
    from kafka.admin import KafkaAdminClient, NewTopic
    from kafka.errors import NodeNotReadyError, UnknownBrokerIdError

    deadline = time.monotonic() + 30
    while True:  # a cluster that has just started may not know its controller's address yet
        kp = KafkaAdminClient(bootstrap_servers=bootstrap.split(","))
        try:
            kp.create_topics(
                [NewTopic(name, -1, -1, replica_assignments=dict(enumerate(assignment)), topic_configs=configs or {})],
                timeout_ms=timeout_ms,
            )
            return
        except (UnknownBrokerIdError, NodeNotReadyError):
            if time.monotonic() > deadline:
                raise
            time.sleep(1.0)
        finally:
            kp.close()


def fill(bootstrap: str, topic: str, partitions: int, kbytes_per_partition: int, timeout_s: float = 120.0) -> None:
    """``kbytes_per_partition`` records of 1 KB (incompressible) into each of ``partitions``, acks=all."""
    from confluent_kafka import Producer

    p = Producer({"bootstrap.servers": bootstrap, "acks": "all", "batch.size": 16384, "linger.ms": 5, "log_level": "0"})
    payload = os.urandom(1024)
    for part in range(partitions):
        for _ in range(kbytes_per_partition):
            while True:
                try:
                    p.produce(topic, payload, partition=part)
                    break
                except BufferError:
                    p.poll(0.1)
    left = p.flush(timeout_s)
    if left:
        raise SandboxError(f"{left} records to {topic} were not acknowledged within {timeout_s:.0f} s.")


def set_broker_rates(bootstrap: str, brokers: list[int], rate: int) -> None:
    """Set the leader and follower replication throttle rates on each broker (one call per broker:
    librdkafka takes one BROKER resource per request)."""
    from confluent_kafka.admin import AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource, ResourceType

    admin = AdminClient({"bootstrap.servers": bootstrap, "log_level": "0"})
    for b in brokers:
        res = ConfigResource(
            ResourceType.BROKER,
            str(b),
            incremental_configs=[
                ConfigEntry(k, str(rate), incremental_operation=AlterConfigOpType.SET)
                for k in ("leader.replication.throttled.rate", "follower.replication.throttled.rate")
            ],
        )
        for fut in admin.incremental_alter_configs([res]).values():
            fut.result()
    # brokers apply a dynamic config a moment after the change: wait until each reports the rate,
    # so that a move started next is throttled from its first byte
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        futures = {}
        for b in brokers:
            futures.update(admin.describe_configs([ConfigResource(ResourceType.BROKER, str(b))]))
        try:
            seen = [fut.result().get("leader.replication.throttled.rate") for fut in futures.values()]
        except Exception:
            seen = []
        if len(seen) == len(brokers) and all(e is not None and e.value == str(rate) for e in seen):
            return
        time.sleep(0.2)


def one_broker_along(replicas: Iterable[B], ring: Sequence[B]) -> tuple[B, ...]:
    """Each replica moved to the next broker of ``ring`` (sorted broker ids), as the demo moves them."""
    return tuple(ring[(ring.index(b) + 1) % len(ring)] for b in replicas)


def start_demo_reassignment(
    bootstrap: str,
    broker_ids: list[int],
    throttle: int = DEMO_THROTTLE_BYTES,
    topic: str = DEMO_REASSIGN_TOPIC,
    log: Callable[[str], None] = print,
) -> dict[int, list[int]]:
    """Move every partition of ``topic`` one broker along, throttled, and return the targets."""
    from confluent_kafka.admin import AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource, ResourceType
    from kafka.admin import KafkaAdminClient
    from kafka.structs import TopicPartition

    admin = AdminClient({"bootstrap.servers": bootstrap, "log_level": "0"})
    md = admin.list_topics(topic, timeout=10).topics[topic]
    ring = sorted(broker_ids)
    targets: dict[int, list[int]] = {}
    leader_thr, follower_thr = [], []
    for pid, pm in sorted(md.partitions.items()):
        current = list(pm.replicas)
        target = list(one_broker_along(current, ring))
        targets[pid] = target
        leader_thr += [f"{pid}:{b}" for b in current]
        follower_thr += [f"{pid}:{b}" for b in target if b not in current]
    log(f"Throttling {topic} to {throttle} B/s and reassigning its {len(targets)} partitions ...")
    resources = [
        ConfigResource(
            ResourceType.TOPIC,
            topic,
            incremental_configs=[
                ConfigEntry(
                    "leader.replication.throttled.replicas",
                    ",".join(leader_thr),
                    incremental_operation=AlterConfigOpType.SET,
                ),
                ConfigEntry(
                    "follower.replication.throttled.replicas",
                    ",".join(follower_thr),
                    incremental_operation=AlterConfigOpType.SET,
                ),
            ],
        )
    ]
    for fut in admin.incremental_alter_configs(resources).values():
        fut.result()
    set_broker_rates(bootstrap, ring, throttle)
    kp = KafkaAdminClient(bootstrap_servers=bootstrap.split(","), client_id="sandbox-demo")
    try:
        result = kp.alter_partition_reassignments({TopicPartition(topic, p): t for p, t in targets.items()})
    finally:
        kp.close()
    failed = {tp: err for tp, err in result.items() if err is not None and getattr(err, "errno", 0) != 0}
    if failed:
        raise SandboxError(f"The demo reassignment was refused: {failed}.")
    time.sleep(0.5)
    return targets


def load_demo(bootstrap: str, log: Callable[[str], None] = print) -> None:
    """Demo data in a sandbox, idempotent: the demo topics that are missing are created and filled."""
    created = create_topics(bootstrap, log=log)
    fresh = tuple(t for t in DEMO_TOPICS if t.name in created)
    if fresh:
        produce(bootstrap, fresh, log=log)
