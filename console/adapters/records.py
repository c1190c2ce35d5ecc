"""What each adapter reads, before the merge: plain typed records, no library objects.

``ApiView`` is what the Admin API said (confluent-kafka Metadata and configs; kafka-python
ListPartitionReassignments and DescribeLogDirs). ``ZkView`` is what ZooKeeper said. Either may be
missing or partial; its ``status`` says which parts answered, ``problems`` says why not.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from console.core.model import BrokerId, Finding, LogDir, SourceStatus, TopicPartition


@dataclass(frozen=True, slots=True)
class BrokerInfo:
    """A broker as Metadata or its ``/brokers/ids`` znode describes it."""

    id: BrokerId
    host: str | None = None
    port: int | None = None
    rack: str | None = None
    """``broker.rack``; None when the broker has none."""
    fenced: bool | None = None
    """DescribeCluster's ``IsFenced`` (KIP-1073, v2, Kafka ≥ 4.0); None where the cluster does not say."""


@dataclass(frozen=True, slots=True)
class PartitionMeta:
    """R, I and leader of one partition as Metadata (or the state znode) reports them."""

    replicas: tuple[BrokerId, ...]
    isr: tuple[BrokerId, ...]
    leader: BrokerId | None


@dataclass(frozen=True, slots=True)
class Reassignment:
    """One entry of ListPartitionReassignments (or the topic znode's adding/removing maps)."""

    replicas: tuple[BrokerId, ...]
    adding: tuple[BrokerId, ...]
    removing: tuple[BrokerId, ...]


@dataclass(frozen=True, slots=True)
class BrokerLogDirs:
    """One broker's DescribeLogDirs answer: its directories and the replicas in each."""

    broker: BrokerId
    dirs: tuple[LogDir, ...]
    # (topic, partition, log_dir, size, is_future)
    replicas: tuple[tuple[str, int, str, int, bool], ...]


@dataclass(frozen=True, slots=True)
class Elr:
    """One partition's eligible leader replicas and last-known ones (DescribeTopicPartitions)."""

    elr: tuple[BrokerId, ...]
    last_known: tuple[BrokerId, ...]


@dataclass(frozen=True, slots=True)
class Asked:
    """What a narrow read asked for besides Metadata and the reassignments: the sizes of these
    partitions (DescribeLogDirs, on every broker) and the configs of these topics (DescribeConfigs,
    with every broker's own); the rest is carried over from an earlier read
    (:mod:`console.state.carry`)."""

    partitions: frozenset[TopicPartition] = frozenset()
    topics: frozenset[str] = frozenset()


@dataclass(frozen=True)
class ApiView:
    cluster_id: str | None = None
    controller: BrokerId | None = None
    brokers: tuple[BrokerInfo, ...] = ()
    partitions: dict[TopicPartition, PartitionMeta] = field(default_factory=dict)
    reassignments: dict[TopicPartition, Reassignment] | None = None
    """None when ListPartitionReassignments could not be read."""
    log_dirs: tuple[BrokerLogDirs, ...] = ()
    broker_throttles: dict[str, dict[str, str]] = field(default_factory=dict)
    topic_throttles: dict[str, dict[str, str]] = field(default_factory=dict)
    min_insync: dict[str, int] = field(default_factory=dict)
    """Each topic's effective ``min.insync.replicas`` (DescribeConfigs)."""
    tiered_topics: frozenset[str] = frozenset()
    """Topics with ``remote.storage.enable=true`` (DescribeConfigs)."""
    registered: tuple[BrokerInfo, ...] | None = None
    """Every registered broker, fenced ones included, with ``fenced`` said (DescribeCluster v2);
    None where the cluster does not include fenced brokers (before Kafka 4.0) or did not answer."""
    elr: dict[TopicPartition, Elr] = field(default_factory=dict)
    """Partitions with eligible leader replicas (only those: most have none)."""
    cordons: dict[BrokerId, tuple[str, ...]] = field(default_factory=dict)
    """Each broker's ``cordoned.log.dirs`` in force (DescribeConfigs), for brokers that know the
    config (Kafka 4.3 and later)."""
    metadata_status: SourceStatus = SourceStatus.OK
    reassignments_status: SourceStatus = SourceStatus.OK
    log_dirs_status: SourceStatus = SourceStatus.OK
    configs_status: SourceStatus = SourceStatus.OK
    fenced_status: SourceStatus = SourceStatus.NOT_CONFIGURED
    elr_status: SourceStatus = SourceStatus.NOT_CONFIGURED
    """DescribeTopicPartitions: ``OK`` when asked and answered or nothing needed asking (ELR is
    only ever set on a partition with a replica out of the ISR); ``UNSUPPORTED`` before Kafka 3.7
    and in ZooKeeper mode."""
    problems: tuple[Finding, ...] = ()
    asked: Asked | None = None
    """None: every partition's log dirs and every topic's configs were asked for (a full read, or
    a lean one that asks for neither: see the statuses); else only those named."""


@dataclass(frozen=True, slots=True)
class TopicZnode:
    """``/brokers/topics/<t>`` (versions 1, 2 and 3)."""

    version: int
    topic_id: str | None
    partitions: dict[int, tuple[BrokerId, ...]]
    adding: dict[int, tuple[BrokerId, ...]]
    removing: dict[int, tuple[BrokerId, ...]]


@dataclass(frozen=True)
class ZkView:
    controller: BrokerId | None = None
    brokers: tuple[BrokerInfo, ...] = ()
    topics: dict[str, TopicZnode] = field(default_factory=dict)
    states: dict[TopicPartition, PartitionMeta] = field(default_factory=dict)
    """From the partition ``state`` znodes; ``replicas`` there is taken from the topic znode."""
    legacy: dict[TopicPartition, tuple[BrokerId, ...]] = field(default_factory=dict)
    """Entries of ``/admin/reassign_partitions`` (deprecated path)."""
    broker_throttles: dict[str, dict[str, str]] = field(default_factory=dict)
    topic_throttles: dict[str, dict[str, str]] = field(default_factory=dict)
    min_insync: dict[str, int] = field(default_factory=dict)
    """Topic overrides of ``min.insync.replicas`` (``/config/topics``); broker defaults are not in ZooKeeper."""
    tiered_topics: frozenset[str] = frozenset()
    """Topics whose ``/config/topics`` override sets ``remote.storage.enable=true``."""
    status: SourceStatus = SourceStatus.OK
    problems: tuple[Finding, ...] = ()


@dataclass(frozen=True)
class Configs:
    """What DescribeConfigs said: replication throttles set on brokers and topics (dynamic configs
    only, values as the cluster stores them), each topic's effective ``min.insync.replicas`` and
    each broker's ``cordoned.log.dirs`` in force."""

    brokers: dict[str, dict[str, str]] = field(default_factory=dict)
    topics: dict[str, dict[str, str]] = field(default_factory=dict)
    min_insync: dict[str, int] = field(default_factory=dict)
    missing_brokers: tuple[str, ...] = ()
    """Brokers that did not answer (their throttles are unknown, not absent)."""
    missing_topics: tuple[str, ...] = ()
    cordons: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """Broker id → its ``cordoned.log.dirs`` entries (``()``: none; ``("*",)``: every dir); only
    brokers that know the config (Kafka 4.3 and later) are here."""
    tiered_topics: frozenset[str] = frozenset()
    """Topics with ``remote.storage.enable=true`` (tiered storage, KIP-405)."""
