"""Test-only cluster helpers (real cluster, no mocks): topics, data, throttles, direct reassignment."""

from __future__ import annotations

from confluent_kafka.admin import AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource, NewTopic, ResourceType

from console.core.limits import BROKER_THROTTLE_KEYS, TOPIC_THROTTLE_KEYS
from console.core.model import ClusterState
from console.sandbox.demo import create_assigned_topic, fill, set_broker_rates  # noqa: F401 - set_broker_rates re-exported


def admin(bs: str) -> AdminClient:
    return AdminClient({"bootstrap.servers": bs, "log_level": "0"})


def make_topic(bs: str, name: str, partitions: int, rf: int, kbytes_per_partition: int,
               assignment: list[list[int]] | None = None) -> None:
    if assignment:
        create_assigned_topic(bs, name, assignment)
    else:
        client = admin(bs)  # keep the handle alive until the futures resolve
        for f in client.create_topics([NewTopic(name, partitions, rf)], operation_timeout=30).values():
            f.result()
    fill(bs, name, len(assignment) if assignment else partitions, kbytes_per_partition, timeout_s=60)


def throttle_topic_all(bs: str, topic: str) -> None:
    a = admin(bs)
    res = ConfigResource(ResourceType.TOPIC, topic, incremental_configs=[
        ConfigEntry(k, "*", incremental_operation=AlterConfigOpType.SET) for k in TOPIC_THROTTLE_KEYS])
    for f in a.incremental_alter_configs([res]).values():
        f.result()


def clear_throttles(bs: str, brokers: list[int], topics: list[str]) -> None:
    a = admin(bs)
    for b in brokers:
        res = ConfigResource(ResourceType.BROKER, str(b), incremental_configs=[
            ConfigEntry(k, None, incremental_operation=AlterConfigOpType.DELETE) for k in BROKER_THROTTLE_KEYS])
        for f in a.incremental_alter_configs([res]).values():
            f.result()
    for t in topics:
        res = ConfigResource(ResourceType.TOPIC, t, incremental_configs=[
            ConfigEntry(k, None, incremental_operation=AlterConfigOpType.DELETE) for k in TOPIC_THROTTLE_KEYS])
        for f in a.incremental_alter_configs([res]).values():
            f.result()


def assignment(state: ClusterState, only_in_flight: bool = False) -> dict[tuple[str, int], tuple[tuple[int, ...], ...]]:
    parts = state.in_flight if only_in_flight else state.partitions
    return {p.key: (p.replicas, tuple(sorted(p.adding)), tuple(sorted(p.removing))) for p in parts}


def no_throttles_left(state: ClusterState) -> bool:
    return not state.throttles
