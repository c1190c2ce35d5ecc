"""What the executor and the services need from a cluster, and nothing more.

:class:`ClusterGateway` is the seam between the write path and Kafka: the executor, the cancel
and the sweeper only ever talk to one. :class:`console.adapters.gateway.LiveGateway` is the real
one, made of the adapters (``ClusterReader.gateway()`` builds it over the reader's connections);
unit tests drive the executor through an in-memory fake that simulates a controller.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from typing import TYPE_CHECKING, Protocol

from console.adapters.records import Configs
from console.core.model import BrokerId, ClusterInfo, ClusterState, DirOutcome, Outcome, TopicPartition
from console.core.shown import BrokerTopicConfigs, BrokerView

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

    @property
    def max_throttle(self) -> int:
        """The cluster's throttle ceiling in bytes/s (its ``max_throttle`` setting): the highest rate
        its broker links carry; a throttle above it is effectively unthrottled."""

    def snapshot(self, max_age_s: float = 0.0, *, lean: bool = False, full: bool = False) -> ClusterState:
        """A fresh snapshot (or one at most ``max_age_s`` old); never raises for cluster trouble.
        ``lean``: fresh, with only what a cancel needs (no log dirs, no configs). Every partition's
        sizes and every topic's configs may be carried over from a read up to the cluster's
        ``sizes_every_s`` ago (those of the partitions in flight are read each time; ``read_at``
        says when each part was read); ``full``: fresh, none carried over (a wave's throttle and
        submit: the topics' throttle lists are merged into, every size checked)."""

    def cluster_info(self) -> ClusterInfo:
        """What the cluster is (version, features: whether it enforces cordons), read at most a
        minute ago; never raises (each part carries its status)."""

    def list_reassignments(self) -> Collection[TopicPartition]:
        """The partitions the controller lists as reassigning (cheap: for waiting on a cancel)."""

    def replicas_seen(self, keys: Collection[TopicPartition]) -> tuple[BrokerView, ...]:
        """Each live broker's own view of ``keys``' replica sets (Metadata asked of each broker),
        which trails the controller's: what ``kafka-topics --describe`` shows from that broker."""

    def alter_reassignments(self, targets: Targets, *, allow_rf_change: bool = True) -> dict[TopicPartition, Outcome]:
        """AlterPartitionReassignments; per partition the controller's answer. ``allow_rf_change``
        False: sent with ``AllowReplicationFactorChange=false`` (KIP-860), the controller refusing,
        per partition (``INVALID_REPLICATION_FACTOR``), any entry whose replica count differs from
        the partition's replication factor; on a cluster without AlterPartitionReassignments v1
        (Kafka 3.9 and older) the request goes as before, unguarded. The write path sends through
        :func:`console.runs.reassign.send_reassignments`, which splits a request by RF."""

    def elect_leaders(self, keys: Iterable[TopicPartition]) -> dict[TopicPartition, Outcome]:
        """Preferred leader election of ``keys``; per partition the answer."""

    def alter_configs(self, brokers: Mapping[BrokerId, Changes], topics: Mapping[str, Changes]) -> None:
        """IncrementalAlterConfigs on brokers and topics; raises naming every resource not changed."""

    def alter_cluster_default(self, changes: Changes) -> None:
        """IncrementalAlterConfigs on the cluster-wide default broker configs (``--entity-default``)."""

    def describe_configs(self, brokers: tuple[BrokerId, ...], topics: tuple[str, ...]) -> Configs:
        """The throttles (and min ISR, and each broker's ``cordoned.log.dirs``) the brokers report
        now; the cluster default under ``DEFAULT_BROKER`` when a broker asked reports it."""

    def topic_configs_seen(self, topics: tuple[str, ...]) -> tuple[BrokerTopicConfigs, ...]:
        """Each broker's own answer for ``topics``' throttle lists (DescribeConfigs asked of each
        broker), which trails the controller's: what ``kafka-configs --describe`` shows from it."""

    def create_legacy_reassignment(self, targets: Mapping[TopicPartition, tuple[BrokerId, ...]]) -> None:
        """Create ``/admin/reassign_partitions`` (Kafka before 2.4)."""

    def alter_replica_log_dirs(self, moves: Mapping[tuple[str, int, BrokerId], str]) -> list[DirOutcome]:
        """AlterReplicaLogDirs: each replica (topic, partition, broker) into the dir given; per replica the answer."""

    def unregister_broker(self, broker: BrokerId) -> bool:
        """UnregisterBroker (KRaft): the controller forgets a broker that is shut down for good;
        False when it had no such registration (BROKER_ID_NOT_REGISTERED)."""


if TYPE_CHECKING:
    from console.adapters.gateway import LiveGateway

    def _live_is_a_gateway(live: LiveGateway) -> ClusterGateway:
        return live  # mypy checks the real gateway against the protocol
