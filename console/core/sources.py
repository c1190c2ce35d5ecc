"""Where the picture comes from: whether each part could be read, and what the cluster is
(its mode, features, quorum and request versions)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    pass


class SourceStatus(str, Enum):
    """Whether a part of the picture could be read."""

    OK = "ok"
    UNAVAILABLE = "unavailable"
    """Did not answer (down, unreachable, timed out)."""
    UNAUTHORIZED = "unauthorized"
    UNSUPPORTED = "unsupported"
    """The cluster is too old for the API."""
    NOT_CONFIGURED = "not configured"
    """Not asked for (e.g. no ZooKeeper connect string, or a KRaft cluster)."""


@dataclass(frozen=True, slots=True)
class ReadStatus:
    """What each part of a refresh returned: lets the UI say which part of the picture is known."""

    metadata: SourceStatus = SourceStatus.NOT_CONFIGURED
    reassignments: SourceStatus = SourceStatus.NOT_CONFIGURED
    log_dirs: SourceStatus = SourceStatus.NOT_CONFIGURED
    configs: SourceStatus = SourceStatus.NOT_CONFIGURED
    zookeeper: SourceStatus = SourceStatus.NOT_CONFIGURED
    elr: SourceStatus = SourceStatus.NOT_CONFIGURED
    """Eligible leader replicas (DescribeTopicPartitions, asked only for topics with a replica out of the ISR)."""
    fenced: SourceStatus = SourceStatus.NOT_CONFIGURED
    """Fenced brokers (DescribeCluster v2, Kafka ≥ 4.0)."""

    def to_dict(self) -> dict[str, str]:
        return {k: getattr(self, k).value for k in self.__slots__}

    @property
    def in_flight_known(self) -> bool:
        """What is in flight was read: ListPartitionReassignments answered, or ZooKeeper did (3.x)."""
        return SourceStatus.OK in (self.reassignments, self.zookeeper)


@dataclass(frozen=True, slots=True)
class ReadTimes:
    """When each part of a snapshot was read (epoch seconds). Metadata and what is in flight are
    read at every snapshot; every partition's sizes (DescribeLogDirs) and every topic's configs
    (DescribeConfigs) at most every ``sizes_every_s`` seconds, and carried over in between: the
    partitions in flight (and those a run moves) have their sizes, and their topics their configs,
    read at every snapshot all the same (:mod:`console.state.cadence`)."""

    replicas: float
    """Metadata (R, I, leaders, brokers), the reassignments in flight, and the sizes and topic
    configs of the partitions in flight."""
    sizes: float
    """Every other partition's sizes (log dirs: their free space is read with every snapshot)."""
    configs: float
    """Every other topic's configs (throttles, ``min.insync.replicas``, tiered storage; the
    brokers' own configs are read with every snapshot)."""

    @staticmethod
    def at(taken_at: float) -> ReadTimes:
        """Every part read at ``taken_at`` (a full read)."""
        return ReadTimes(taken_at, taken_at, taken_at)


class ClusterMode(str, Enum):
    """How the cluster keeps its metadata."""

    KRAFT = "kraft"
    ZOOKEEPER = "zookeeper"
    UNKNOWN = "unknown"


@dataclass(frozen=True, slots=True)
class Feature:
    """One feature flag (KIP-584): the level finalized cluster-wide and the range the brokers support.
    ``finalized`` None: not finalized (Kafka reads that as level 0)."""

    name: str
    finalized: int | None
    min_supported: int | None = None
    max_supported: int | None = None

    @property
    def level(self) -> int:
        return self.finalized if self.finalized is not None else 0


@dataclass(frozen=True, slots=True)
class QuorumMember:
    """A voter or observer of the metadata log (DescribeQuorum). Times are epoch milliseconds,
    None when the leader has not heard from it; ``lag``: the leader's log end offset minus its own."""

    id: int
    log_end_offset: int
    lag: int | None
    last_fetch_ms: int | None = None
    last_caught_up_ms: int | None = None


@dataclass(frozen=True, slots=True)
class Quorum:
    """The KRaft controller quorum as its leader describes it."""

    leader: int | None
    epoch: int
    high_watermark: int
    voters: tuple[QuorumMember, ...] = ()
    observers: tuple[QuorumMember, ...] = ()


@dataclass(frozen=True, slots=True)
class ApiRange:
    """One request every broker answers (ApiVersions), with the versions all of them support."""

    key: int
    min_version: int
    max_version: int


@dataclass(frozen=True, slots=True)
class ClusterInfo:
    """What the cluster says it is (``console.core.cluster_info`` names and judges it), read at
    ``read_at`` (epoch seconds; 0: never read, everything unknown). Each part keeps its status."""

    read_at: float = 0.0
    api_version: str | None = None
    """The release the brokers' API ranges match (kafka-python's inference; it knows up to 4.3)."""
    mode: ClusterMode = ClusterMode.UNKNOWN
    features: tuple[Feature, ...] = ()
    quorum: Quorum | None = None
    apis: tuple[ApiRange, ...] = ()
    zookeeper_configured: bool = False
    versions_status: SourceStatus = SourceStatus.NOT_CONFIGURED
    features_status: SourceStatus = SourceStatus.NOT_CONFIGURED
    quorum_status: SourceStatus = SourceStatus.NOT_CONFIGURED

    def feature(self, name: str) -> Feature | None:
        return next((f for f in self.features if f.name == name), None)

    def api(self, key: int) -> ApiRange | None:
        return next((a for a in self.apis if a.key == key), None)

    @property
    def known(self) -> bool:
        return self.read_at > 0
