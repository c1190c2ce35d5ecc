"""Test-only cluster helpers (real cluster, no mocks): topics, data, throttles, direct reassignment."""

from __future__ import annotations

import json
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
    run_id = run_service.start_run(store, gateway, Identity.cli("ann"), state, plan, name, rate=rate, users=None)
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
