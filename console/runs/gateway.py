"""What the executor and the services need from a cluster, and nothing more.

:class:`ClusterGateway` is the seam between the write path and Kafka: the executor, the cancel
and the sweeper only ever talk to one. :class:`LiveGateway` is the real one (the Admin API
through :mod:`console.adapters.kafka`, ZooKeeper through :mod:`console.adapters.zookeeper`, the
snapshot through :class:`console.state.reader.ClusterReader`); unit tests drive the executor
through an in-memory fake that simulates a controller.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from typing import Protocol

from console.adapters.records import Configs
from console.core.model import BrokerId, ClusterState, Outcome, TopicPartition
from console.state.reader import ClusterReader

Targets = Mapping[TopicPartition, tuple[BrokerId, ...] | None]
"""Per partition: its target replicas, or None to cancel its reassignment."""
Changes = Mapping[str, str | None]
"""Config keys SET to their value, or DELETEd for None."""


class ClusterGateway(Protocol):
    @property
    def name(self) -> str:
        """The cluster's configured name (runs and the audit log use its id when known)."""

    @property
    def has_zookeeper(self) -> bool:
        """Whether the legacy ``/admin/reassign_partitions`` path can be used."""

    def snapshot(self, max_age_s: float = 0.0) -> ClusterState:
        """A fresh snapshot (or one at most ``max_age_s`` old); never raises for cluster trouble."""

    def list_reassignments(self) -> Collection[TopicPartition]:
        """The partitions the controller lists as reassigning (cheap: for waiting on a cancel)."""

    def alter_reassignments(self, targets: Targets) -> dict[TopicPartition, Outcome]:
        """AlterPartitionReassignments; per partition the controller's answer."""

    def elect_leaders(self, keys: Iterable[TopicPartition]) -> dict[TopicPartition, Outcome]:
        """Preferred leader election of ``keys``; per partition the answer."""

    def alter_configs(self, brokers: Mapping[BrokerId, Changes], topics: Mapping[str, Changes]) -> None:
        """IncrementalAlterConfigs on brokers and topics; raises naming every resource not changed."""

    def describe_configs(self, brokers: tuple[BrokerId, ...], topics: tuple[str, ...]) -> Configs:
        """The throttles (and min ISR) the brokers report now."""

    def create_legacy_reassignment(self, targets: Mapping[TopicPartition, tuple[BrokerId, ...]]) -> None:
        """Create ``/admin/reassign_partitions`` (Kafka before 2.4)."""


class LiveGateway:
    """A real cluster, through a long-lived :class:`ClusterReader` (shared, thread-safe)."""

    def __init__(self, reader: ClusterReader) -> None:
        self.reader = reader

    @property
    def name(self) -> str:
        return self.reader.settings.name

    @property
    def has_zookeeper(self) -> bool:
        return self.reader.zookeeper is not None

    def snapshot(self, max_age_s: float = 0.0) -> ClusterState:
        return self.reader.snapshot(max_age_s)

    def list_reassignments(self) -> Collection[TopicPartition]:
        return self.reader.kafka.list_reassignments().keys()

    def alter_reassignments(self, targets: Targets) -> dict[TopicPartition, Outcome]:
        return self.reader.kafka.alter_reassignments(targets)

    def elect_leaders(self, keys: Iterable[TopicPartition]) -> dict[TopicPartition, Outcome]:
        return self.reader.kafka.elect_leaders(keys)

    def alter_configs(self, brokers: Mapping[BrokerId, Changes], topics: Mapping[str, Changes]) -> None:
        self.reader.kafka.alter_configs(brokers, topics)

    def describe_configs(self, brokers: tuple[BrokerId, ...], topics: tuple[str, ...]) -> Configs:
        return self.reader.kafka.describe_configs(brokers, topics)

    def create_legacy_reassignment(self, targets: Mapping[TopicPartition, tuple[BrokerId, ...]]) -> None:
        if self.reader.zookeeper is None:
            from console.core.errors import ConfigError

            raise ConfigError(
                "The ZooKeeper path needs the cluster's ZooKeeper connect string.",
                "Give --zookeeper (or configure it for the cluster).",
            )
        self.reader.zookeeper.create_reassignment(dict(targets))
