"""Test-only cluster helpers (real cluster, no mocks): topics, data, throttles, direct reassignment, a
follower kept out of the ISR while its broker is online."""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import pytest
from confluent_kafka.admin import AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource, NewTopic, ResourceType

from console import cli
from console.access.auth import Identity
from console.core.limits import BROKER_THROTTLE_KEYS, TOPIC_THROTTLE_KEYS
from console.core.model import ClusterState
from console.plans.plan import Plan
from console.runs.executor import Executor
from console.runs.gateway import ClusterGateway
from console.sandbox.cluster import Sandbox
from console.sandbox.demo import create_assigned_topic, fill, set_broker_rates
from console.services import runs as run_service
from console.state.reader import ClusterReader
from console.storage.store import Store
from tests.support import wait_for

BROKERS = [0, 1, 2]
"""The sandbox's brokers."""


def admin(bs: str) -> AdminClient:
    return AdminClient({"bootstrap.servers": bs, "log_level": "0"})


def make_topic(
    bs: str, name: str, partitions: int, rf: int, kbytes_per_partition: int, assignment: list[list[int]] | None = None
) -> None:
    if assignment:
        create_assigned_topic(bs, name, assignment)
    else:
        client = admin(bs)  # keep the handle alive until the futures resolve
        for f in client.create_topics([NewTopic(name, partitions, rf)], operation_timeout=30).values():
            f.result()
    fill(bs, name, len(assignment) if assignment else partitions, kbytes_per_partition, timeout_s=60)


def throttle_topic_all(bs: str, topic: str) -> None:
    a = admin(bs)
    res = ConfigResource(
        ResourceType.TOPIC,
        topic,
        incremental_configs=[
            ConfigEntry(k, "*", incremental_operation=AlterConfigOpType.SET) for k in TOPIC_THROTTLE_KEYS
        ],
    )
    for f in a.incremental_alter_configs([res]).values():
        f.result()


def clear_throttles(bs: str, brokers: list[int], topics: list[str]) -> None:
    a = admin(bs)
    for b in brokers:
        res = ConfigResource(
            ResourceType.BROKER,
            str(b),
            incremental_configs=[
                ConfigEntry(k, None, incremental_operation=AlterConfigOpType.DELETE) for k in BROKER_THROTTLE_KEYS
            ],
        )
        for f in a.incremental_alter_configs([res]).values():
            f.result()
    for t in topics:
        res = ConfigResource(
            ResourceType.TOPIC,
            t,
            incremental_configs=[
                ConfigEntry(k, None, incremental_operation=AlterConfigOpType.DELETE) for k in TOPIC_THROTTLE_KEYS
            ],
        )
        for f in a.incremental_alter_configs([res]).values():
            f.result()


def assignment(state: ClusterState, only_in_flight: bool = False) -> dict[tuple[str, int], tuple[tuple[int, ...], ...]]:
    parts = state.in_flight if only_in_flight else state.partitions
    return {p.key: (p.replicas, tuple(sorted(p.adding)), tuple(sorted(p.removing))) for p in parts}


def no_throttles_left(state: ClusterState) -> bool:
    return not state.throttles


def reassign(bs: str, targets: dict[tuple[str, int], list[int] | None]) -> None:
    """AlterPartitionReassignments straight through the Admin API, as another tool would (None
    cancels that partition's reassignment); every partition must be accepted."""
    from kafka.admin import KafkaAdminClient
    from kafka.structs import TopicPartition

    kp = KafkaAdminClient(bootstrap_servers=bs.split(","))
    try:
        res = kp.alter_partition_reassignments({TopicPartition(t, p): r for (t, p), r in targets.items()})
    finally:
        kp.close()
    assert all(e is None or getattr(e, "errno", 0) == 0 for e in res.values()), res


def submit(bs: str, plan: Plan) -> dict[tuple[str, int], object]:
    """AlterPartitionReassignments straight to the controller; per partition: None or the error class."""
    from kafka.admin import KafkaAdminClient
    from kafka.structs import TopicPartition

    kp = KafkaAdminClient(bootstrap_servers=bs.split(","))
    try:
        res = kp.alter_partition_reassignments(
            {TopicPartition(e.topic, e.partition): list(e.replicas) for e in plan.entries}
        )
        return {(tp.topic, tp.partition): err for tp, err in res.items()}
    finally:
        kp.close()


def settle(reader: ClusterReader) -> None:
    """Wait until no reassignment is in flight."""
    wait_for(lambda: not reader.snapshot().in_flight, timeout=120, what="reassignments to complete")


def in_flight(bs: str, topic: str | None = None) -> set[tuple[str, int]]:
    """The partitions ListPartitionReassignments lists (of ``topic``, or all)."""
    from kafka.admin import KafkaAdminClient

    kp = KafkaAdminClient(bootstrap_servers=bs.split(","))
    try:
        return {(tp.topic, tp.partition) for tp in kp.list_partition_reassignments() if topic in (None, tp.topic)}
    finally:
        kp.close()


def unthrottle_and_wait(bs: str, brokers: list[int], timeout: float = 120) -> None:
    """Lift the broker rates a test lowered and wait until nothing is moving any more."""
    set_broker_rates(bs, brokers, 50_000_000)
    wait_for(lambda: not in_flight(bs), timeout=timeout, what="every reassignment completed")


def first_wave_sent(
    store: Store, gateway: ClusterGateway, state: ClusterState, plan: Plan, name: str, rate: int | None
) -> int:
    """A run started and its first wave throttled and sent by a worker that then lets go, so the
    console's server (or any worker) drives it from there; returns the run's id."""
    run_id = run_service.start_run(
        store,
        gateway,
        state,
        run_service.RunRequest(Identity.cli("ann"), plan, name, run_service.RunSettings(rate=rate)),
        users=None,
    )
    first = Executor(store, gateway, "ann")
    assert first.tick(run_id).did.startswith("wave 1 submitted")
    store.runs.release(run_id, first.owner)
    return run_id


def set_min_isr(bs: str, topic: str, n: int) -> None:
    """The topic's ``min.insync.replicas``, set as another tool would."""
    res = ConfigResource(
        ResourceType.TOPIC,
        topic,
        incremental_configs=[ConfigEntry("min.insync.replicas", str(n), incremental_operation=AlterConfigOpType.SET)],
    )
    client = admin(bs)  # keep the handle alive until the futures resolve
    for f in client.incremental_alter_configs([res]).values():
        f.result()


def decommission_cli(capsys: pytest.CaptureFixture[str], bs: str, *args: str) -> tuple[int, dict[str, Any]]:
    """``decommission --json`` on the command line: its exit code and the flow it printed last."""
    code = cli.main(["decommission", "--bootstrap-server", bs, *args, "--json"])
    return code, json.loads(capsys.readouterr().out.strip().splitlines()[-1])


# -- a follower out of the ISR, online (guardrails) ---------------------------------------------------
LAG_SESSION_S = 150
"""The brokers' session timeout (``broker.session.timeout.ms``) a sandbox needs for :func:`lagging`:
longer than a follower stays paused there (a paused broker is fenced after it, and every read of
the cluster waits on the paused one for seconds: 10 to 15 s a snapshot)."""


def live(reader: ClusterReader, broker: int) -> bool:
    b = reader.snapshot().broker(broker)  # type: ignore[arg-type]
    return b is not None and b.live


def servers(sb: Sandbox, without: int | None = None) -> str:
    """The sandbox's bootstrap servers, but broker ``without``."""
    return ",".join(f"127.0.0.1:{b['port']}" for b in sb.brokers if b["id"] != without)


def isr(reader: ClusterReader, topic: str, partition: int) -> set[int]:
    p = reader.snapshot().partition(topic, partition)
    return set() if p is None else set(p.isr)


@dataclass(frozen=True)
class Seen:
    """A partition as Metadata shows it, and the brokers it lists (registered and unfenced)."""

    isr: frozenset[int]
    replicas: frozenset[int]
    brokers: frozenset[int]


def seen_without(sb: Sandbox, topic: str, partition: int, without: int) -> Seen | None:
    """The partition in Metadata asked of the brokers but ``without`` (a paused one would hold a full
    read of the cluster for seconds); None: no answer."""
    try:
        md = admin(servers(sb, without)).list_topics(topic, timeout=5)
        p = md.topics[topic].partitions[partition]
    except Exception:
        return None
    return Seen(frozenset(p.isrs), frozenset(p.replicas), frozenset(md.brokers))


@contextmanager
def lagging(sb: Sandbox, topic: str, partition: int, broker: int = 3) -> Iterator[None]:
    """``broker``'s replica of ``topic``-``partition`` out of the ISR while ``broker`` stays registered
    and unfenced (online), as a follower that cannot keep up: the broker paused (SIGSTOP) and a few
    records written to the partition (Kafka takes a follower out of the ISR once it has been behind
    its leader for the lag time, 5 s in the sandbox; with nothing written it stays in sync). The
    broker resumes on leaving, and its replica is back in the ISR (or, moved away, no more). The
    sandbox needs a session timeout of :data:`LAG_SESSION_S` (``own_sandbox(broker_config=...)``)."""
    from confluent_kafka import Producer

    pid = sb.proc(f"broker-{broker}").pid
    os.kill(pid, signal.SIGSTOP)
    try:
        producer = Producer({"bootstrap.servers": servers(sb, broker), "acks": "1", "log_level": "0"})
        for _ in range(10):
            producer.produce(topic, b"x" * 100, partition=partition)
        assert producer.flush(30) == 0

        def out() -> bool:
            seen = seen_without(sb, topic, partition, broker)
            return seen is not None and broker not in seen.isr and broker in seen.brokers  # out, and online

        wait_for(out, timeout=60, every=0.5, what=f"broker {broker} out of {topic}-{partition}'s ISR, online")
        yield
    finally:
        os.kill(pid, signal.SIGCONT)

    def back() -> bool:
        seen = seen_without(sb, topic, partition, broker)
        return seen is not None and (broker in seen.isr or broker not in seen.replicas)  # or moved away

    wait_for(back, timeout=120, every=1, what=f"broker {broker} back in {topic}-{partition}'s ISR")
