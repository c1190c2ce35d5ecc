"""The write path's gateway to a real cluster, made of the adapters themselves.

:class:`LiveGateway` implements :class:`console.runs.gateway.ClusterGateway` (structurally: the
adapters do not import the write path): requests through the Kafka admin adapter
(:class:`console.adapters.kafka.KafkaGateway`), the legacy znode through the ZooKeeper adapter
(:class:`console.adapters.zookeeper.ZkReader`), and snapshots (and what the cluster is) from a
source it is given (the cluster's :class:`console.state.reader.ClusterReader`, whose ``gateway()``
builds one over the same connections).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping
from typing import Protocol

from console.adapters.kafka import KafkaGateway
from console.adapters.records import Configs
from console.adapters.zookeeper import ZkReader
from console.core.errors import ConfigError
from console.core.limits import MAX_THROTTLE
from console.core.model import BrokerId, ClusterInfo, ClusterState, DirOutcome, Outcome, TopicPartition
from console.core.shown import BrokerTopicConfigs, BrokerView


class SnapshotSource(Protocol):
    def __call__(self, max_age_s: float = 0.0, *, lean: bool = False, full: bool = False) -> ClusterState: ...


class LiveGateway:
    """A real cluster: its Kafka admin adapter, its ZooKeeper adapter (None without ZooKeeper), and
    where its snapshots come from (``snapshot(max_age_s)``)."""

    def __init__(
        self,
        name: str,
        kafka: KafkaGateway,
        zookeeper: ZkReader | None,
        snapshot: SnapshotSource,
        info: Callable[[], ClusterInfo] | None = None,
        max_throttle: int = MAX_THROTTLE,
    ) -> None:
        self._name = name
        self._max_throttle = max_throttle
        self.kafka = kafka
        self.zookeeper = zookeeper
        self._snapshot = snapshot
        self._info = info

    @property
    def name(self) -> str:
        return self._name

    @property
    def has_zookeeper(self) -> bool:
        return self.zookeeper is not None

    @property
    def max_throttle(self) -> int:
        return self._max_throttle

    def snapshot(self, max_age_s: float = 0.0, *, lean: bool = False, full: bool = False) -> ClusterState:
        return self._snapshot(max_age_s, lean=lean, full=full)

    def cluster_info(self) -> ClusterInfo:
        """From the snapshot source's reader (kept a minute); read here when there is none."""
        if self._info is not None:
            return self._info()
        return self.kafka.read_cluster_info(zookeeper_configured=self.zookeeper is not None)

    def list_reassignments(self) -> Collection[TopicPartition]:
        return self.kafka.list_reassignments().keys()

    def replicas_seen(self, keys: Collection[TopicPartition]) -> tuple[BrokerView, ...]:
        return self.kafka.replicas_by_broker(keys)

    def alter_reassignments(
        self, targets: Mapping[TopicPartition, tuple[BrokerId, ...] | None], *, allow_rf_change: bool = True
    ) -> dict[TopicPartition, Outcome]:
        return self.kafka.alter_reassignments(targets, allow_rf_change=allow_rf_change)

    def elect_leaders(self, keys: Iterable[TopicPartition]) -> dict[TopicPartition, Outcome]:
        return self.kafka.elect_leaders(keys)

    def alter_configs(
        self, brokers: Mapping[BrokerId, Mapping[str, str | None]], topics: Mapping[str, Mapping[str, str | None]]
    ) -> None:
        self.kafka.alter_configs(brokers, topics)

    def alter_cluster_default(self, changes: Mapping[str, str | None]) -> None:
        self.kafka.alter_cluster_default(changes)

    def describe_configs(self, brokers: tuple[BrokerId, ...], topics: tuple[str, ...]) -> Configs:
        return self.kafka.describe_configs(brokers, topics)

    def topic_configs_seen(self, topics: tuple[str, ...]) -> tuple[BrokerTopicConfigs, ...]:
        return self.kafka.topic_configs_by_broker(topics)

    def alter_replica_log_dirs(self, moves: Mapping[tuple[str, int, BrokerId], str]) -> list[DirOutcome]:
        return self.kafka.alter_replica_log_dirs(moves)

    def unregister_broker(self, broker: BrokerId) -> bool:
        return self.kafka.unregister_broker(broker)

    def create_legacy_reassignment(self, targets: Mapping[TopicPartition, tuple[BrokerId, ...]]) -> None:
        if self.zookeeper is None:
            raise ConfigError(
                "The ZooKeeper path needs the cluster's ZooKeeper connect string.",
                "Give --zookeeper (or configure it for the cluster).",
            )
        self.zookeeper.create_reassignment(dict(targets))
