"""Domain values: brokers, partitions, findings and the immutable cluster snapshot.

Vocabulary (docs/ARCHITECTURE.md; KIP-455, KIP-352, KIP-841):

* **R** ``replicas``: the full replica set the controller holds now (target first while reassigning).
* **I** ``isr``: in-sync replicas.
* **AR** ``adding`` and **RR** ``removing``: what ListPartitionReassignments (or the topic znode) reports.
* **original** = R − AR (what a cancel reverts to); **target** = R − RR (what the reassignment ends as).
* **true URP**: |original| − |I ∩ original| > 0 while reassigning, |R| − |I| > 0 otherwise.

Everything here is a frozen dataclass of tuples, so a snapshot can be shared between threads,
cached, and compared.

This module is the project's one re-exporting shortcut: its ``__all__`` also lists the domain
values defined in :mod:`console.core.findings`, :mod:`~console.core.ids`, :mod:`~console.core.sources`
and :mod:`~console.core.throttle_configs`, so callers import the domain values from here in one line.
Every other module's names are imported from the module that defines them
(``tests/unit/test_reexports.py``).
"""

from __future__ import annotations

import hashlib
import math
from collections import Counter, deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, fields
from functools import cached_property
from itertools import chain, compress, repeat
from operator import attrgetter, ne, or_
from typing import TYPE_CHECKING, NamedTuple, TypeVar

from console.core.findings import Finding, Findings, PartitionHealth, ReplicaRole, Severity, Source
from console.core.ids import BrokerId, TopicPartition
from console.core.limits import CORDON_ALL
from console.core.sources import (
    ApiRange,
    ClusterInfo,
    ClusterMode,
    Feature,
    Quorum,
    QuorumMember,
    ReadStatus,
    ReadTimes,
    SourceStatus,
)
from console.core.throttle_configs import DEFAULT_BROKER, Throttles, broker_rate, broker_rate_bps, replica_listed

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "DEFAULT_BROKER",
    "DIR_OFFLINE",
    "PARTITION_CANCELLED",
    "PARTITION_GONE",
    "REPLICA_NOT_AVAILABLE",
    "ApiRange",
    "Broker",
    "BrokerId",
    "ClusterInfo",
    "ClusterMode",
    "ClusterState",
    "DirOutcome",
    "Feature",
    "Finding",
    "Findings",
    "Keyed",
    "LogDir",
    "Outcome",
    "Partition",
    "PartitionHealth",
    "Quorum",
    "QuorumMember",
    "ReadStatus",
    "ReadTimes",
    "ReplicaLog",
    "ReplicaProgress",
    "ReplicaRole",
    "Severity",
    "Source",
    "SourceStatus",
    "Throttles",
    "TopicPartition",
    "broker_rate",
    "broker_rate_bps",
    "cluster_key",
    "cordon_list",
    "cordon_value",
    "outcome_word",
    "partition_name",
    "partitions_of",
    "replica_listed",
    "replicas_in_dir",
    "split_outcomes",
]
"""The domain values, with those defined in :mod:`console.core.findings`, :mod:`~console.core.ids`,
:mod:`~console.core.sources` and :mod:`~console.core.throttle_configs` (the shortcut: one import for
callers)."""

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class LogDir:
    """One log directory of a broker, from DescribeLogDirs (sizes need v4, Kafka ≥ 3.3; whether it
    is cordoned needs v5, Kafka ≥ 4.3)."""

    path: str
    error: str | None = None
    total_bytes: int | None = None
    usable_bytes: int | None = None
    cordoned: bool | None = None
    """KIP-1066: the broker puts no new replica in this dir; None when DescribeLogDirs did not say
    (before v5)."""

    @property
    def offline(self) -> bool:
        """DescribeLogDirs answered with an error for this dir (KAFKA_STORAGE_ERROR: the dir is
        offline): its replicas are offline on the broker, and nothing can be put in it."""
        return self.error is not None


def cordon_list(value: str | None) -> tuple[str, ...]:
    """``cordoned.log.dirs`` as the cluster stores it (``/a,/b``, ``*``, empty) as a tuple of entries."""
    return tuple(x.strip() for x in (value or "").split(",") if x.strip())


def cordon_value(entries: Iterable[str]) -> str:
    """The entries of ``cordoned.log.dirs`` as the config's value (``*`` alone when it is there)."""
    listed = list(dict.fromkeys(entries))
    return CORDON_ALL if CORDON_ALL in listed else ",".join(listed)


@dataclass(frozen=True, slots=True)
class Broker:
    """A broker as the snapshot sees it.

    ``registered`` means present in Metadata or ``/brokers/ids``; a broker that only appears in
    some partition's replica list is not registered (it is down or was removed).
    """

    id: BrokerId
    host: str | None = None
    port: int | None = None
    rack: str | None = None
    registered: bool = False
    in_api: bool = False
    in_zookeeper: bool = False
    is_controller: bool = False
    fenced: bool | None = None
    """Registered but fenced by the controller (DescribeCluster with fenced brokers, KIP-1073,
    Kafka ≥ 4.0): shut down or not heartbeating. None means the cluster does not say."""
    log_dirs: tuple[LogDir, ...] = ()
    cordoned_log_dirs: tuple[str, ...] | None = None
    """The ``cordoned.log.dirs`` config in force on the broker (KIP-1066): ``()`` none, ``("*",)``
    every dir, else the dirs named; None when not read or not available (Kafka before 4.3)."""

    @property
    def live(self) -> bool:
        """Registered, not fenced: it can serve and fetch."""
        return self.registered and self.fenced is not True

    @property
    def eligible(self) -> bool:
        """KIP-841: may receive new replicas and join the ISR (registered, live, not fenced).

        Kafka 3.9 exposes no controlled-shutdown or fenced flag; a broker shutting down leaves
        ``/brokers/ids`` and Metadata when it exits, and is ineligible from then on.
        """
        return self.registered and self.fenced is not True

    @property
    def usable_bytes(self) -> int | None:
        sizes = [d.usable_bytes for d in self.log_dirs if d.usable_bytes is not None]
        return sum(sizes) if sizes else None

    def dir_cordoned(self, path: str) -> bool | None:
        """Whether log dir ``path`` is cordoned: as DescribeLogDirs says, else as the config says;
        None when neither is known."""
        for d in self.log_dirs:
            if d.path == path and d.cordoned is not None:
                return d.cordoned
        cfg = self.cordoned_log_dirs
        return None if cfg is None else (CORDON_ALL in cfg or path in cfg)

    @property
    def cordoned_dirs(self) -> tuple[str, ...] | None:
        """The paths of its log dirs that are cordoned; None when that is not known for each."""
        flags = [(d.path, self.dir_cordoned(d.path)) for d in self.log_dirs]
        if any(f is None for _, f in flags):
            return None
        return tuple(p for p, f in flags if f)

    @property
    def cordoned(self) -> bool | None:
        """KIP-1066: the whole broker is cordoned (``cordoned.log.dirs`` is ``*``, or every log dir
        is cordoned): the controller places no new partition on it, and the console's generators
        never pick it. None: not known (not read, or Kafka before 4.3)."""
        cfg = self.cordoned_log_dirs
        if cfg is not None and CORDON_ALL in cfg:
            return True
        if not self.log_dirs:
            return False if cfg == () else None
        dirs = self.cordoned_dirs
        return None if dirs is None else len(dirs) == len(self.log_dirs)


class ReplicaLog(NamedTuple):
    """Where one replica lives on disk and how big it is (DescribeLogDirs). A named tuple:
    a snapshot holds one per replica, and tuples are the cheapest immutable records to build."""

    broker: BrokerId
    log_dir: str
    size: int
    is_future: bool = False


@dataclass(frozen=True, slots=True)
class ReplicaProgress:
    """How far an adding replica has come: bytes on the new broker against the leader's."""

    broker: BrokerId
    copied_bytes: int | None
    leader_bytes: int | None
    in_isr: bool

    def _sizes(self) -> tuple[int, int] | None:
        """(copied, leader's) bytes when both are known."""
        return (
            None if self.leader_bytes is None or self.copied_bytes is None else (self.copied_bytes, self.leader_bytes)
        )

    @property
    def fraction(self) -> float | None:
        """0..1, 1 once in the ISR; None when neither size is known."""
        sizes = None if self.in_isr else self._sizes()
        if self.in_isr or (sizes is not None and sizes[1] <= 0):
            return 1.0
        return None if sizes is None else max(0.0, min(1.0, sizes[0] / sizes[1]))

    @property
    def percent(self) -> float | None:
        """The one progress figure every page and the CLI show for this replica: 0..100 with one
        decimal, rounded down (so it reads 100.0 only once fully copied); None when unknown."""
        f = self.fraction
        return None if f is None else math.floor(f * 1000 + 1e-9) / 10

    @property
    def bytes_left(self) -> int | None:
        """What is still to copy (0 once in the ISR); None when a size is unknown."""
        sizes = self._sizes()
        return 0 if self.in_isr else (None if sizes is None else max(0, sizes[1] - sizes[0]))


def partition_name(topic: str, partition: int) -> str:
    """``orders-3``: how Kafka's tools name a partition."""
    return f"{topic}-{partition}"


def _without(replicas: tuple[BrokerId, ...], drop: tuple[BrokerId, ...]) -> tuple[BrokerId, ...]:
    return tuple(b for b in replicas if b not in drop) if drop else replicas


class Keyed:
    """``key`` and ``name`` of every record that stands for one partition (``topic``, ``partition``)."""

    __slots__ = ()
    if TYPE_CHECKING:

        @property
        def topic(self) -> str: ...

        @property
        def partition(self) -> int: ...

    @property
    def key(self) -> TopicPartition:
        return (self.topic, self.partition)

    @property
    def name(self) -> str:
        return partition_name(self.topic, self.partition)


@dataclass(frozen=True, slots=True)
class Partition(Keyed):
    """One partition: R, I, AR, RR, leader and replica sizes."""

    topic: str
    partition: int
    replicas: tuple[BrokerId, ...]
    isr: tuple[BrokerId, ...]
    leader: BrokerId | None
    adding: tuple[BrokerId, ...] = ()
    removing: tuple[BrokerId, ...] = ()
    source: Source | None = None
    logs: tuple[ReplicaLog, ...] = ()
    elr: tuple[BrokerId, ...] = ()
    """Eligible leader replicas (KIP-966, Kafka 4.x; DescribeTopicPartitions): replicas that left the
    ISR while it was below ``min.insync.replicas`` and may still be elected leader. Empty on a
    cluster without ELR."""
    last_known_elr: tuple[BrokerId, ...] = ()
    """ELR members that shut down uncleanly (KIP-966): the last resort, elected only if unfenced."""

    @property
    def original(self) -> tuple[BrokerId, ...]:
        """R − AR: what a cancel reverts to (order as in R)."""
        return _without(self.replicas, self.adding)

    @property
    def target(self) -> tuple[BrokerId, ...]:
        """R − RR: what the reassignment ends as."""
        return _without(self.replicas, self.removing)

    @property
    def reassigning(self) -> bool:
        return bool(self.adding or self.removing)

    @property
    def complete(self) -> bool:
        """Not reassigning, or every target replica is already in the ISR (phase B)."""
        return not self.reassigning or set(self.target) <= set(self.isr)

    @property
    def offline(self) -> bool:
        return self.leader is None

    @property
    def under_replicated(self) -> bool:
        """True URP in the KIP-352 sense: replicas still being added never count."""
        expected = self.original if self.reassigning else self.replicas
        isr = set(self.isr)
        return any(b not in isr for b in expected)

    @property
    def health(self) -> PartitionHealth:
        if self.offline:
            return PartitionHealth.OFFLINE
        if self.under_replicated:
            return PartitionHealth.UNDER_REPLICATED
        if self.reassigning:
            return PartitionHealth.REASSIGNING
        return PartitionHealth.HEALTHY

    @property
    def size(self) -> int | None:
        """The leader's log size, else the largest replica reported (None: no log reported)."""
        largest = None
        for log in self.logs:
            if not log.is_future:
                if log.broker == self.leader:
                    return log.size
                if largest is None or log.size > largest:
                    largest = log.size
        return largest

    def size_on(self, broker: BrokerId) -> int | None:
        """Bytes of this partition's (non-future) log on ``broker``; None when not reported."""
        for log in self.logs:
            if log.broker == broker and not log.is_future:
                return log.size
        return None

    def log_dir_on(self, broker: BrokerId) -> str | None:
        for log in self.logs:
            if log.broker == broker and not log.is_future:
                return log.log_dir
        return None

    def role(self, broker: BrokerId) -> ReplicaRole | None:
        """The replica's role on ``broker``, or None when the broker holds no replica."""
        if broker in self.adding:
            return ReplicaRole.ADDING
        if broker in self.removing:
            return ReplicaRole.LEADER_REMOVING if broker == self.leader else ReplicaRole.REMOVING
        if broker == self.leader:
            return ReplicaRole.LEADER
        if broker not in self.replicas:
            return None
        if broker in self.isr:
            return ReplicaRole.IN_SYNC
        if broker in self.elr:
            return ReplicaRole.ELIGIBLE
        return ReplicaRole.LAST_KNOWN_ELR if broker in self.last_known_elr else ReplicaRole.OUT_OF_SYNC

    def progress(self, logs_known: bool = True) -> tuple[ReplicaProgress, ...]:
        """Progress of each adding replica. ``logs_known`` says whether log sizes were read at
        all: when they were, an adding replica missing from its broker's answer has copied 0
        bytes (its log is not created yet)."""
        if not self.adding:
            return ()
        leader_bytes = self.size_on(self.leader) if self.leader is not None else None
        isr = set(self.isr)
        out = []
        for b in self.adding:
            copied = self.size_on(b)
            if copied is None and logs_known and leader_bytes is not None:
                copied = 0
            out.append(ReplicaProgress(b, copied, leader_bytes, b in isr))
        return tuple(out)


def partitions_of(
    topic: Sequence[str],
    partition: Sequence[int],
    replicas: Sequence[tuple[BrokerId, ...]],
    isr: Sequence[tuple[BrokerId, ...]],
    leader: Sequence[BrokerId | None],
    adding: Sequence[tuple[BrokerId, ...]],
    removing: Sequence[tuple[BrokerId, ...]],
    source: Sequence[Source | None],
    logs: Sequence[tuple[ReplicaLog, ...]],
) -> list[Partition]:
    """Partitions given field by field (the ``i``-th partition of the ``i``-th value of each; ELR
    and last known ELR empty): what ``list(map(Partition, topic, partition, ...))`` gives, in half
    the time. Each field is set on every partition at once through its slot (a C call per value)
    rather than by running the constructor's Python code once per partition: the cost of a
    snapshot of 100k–1M partitions rebuilt from columns (:func:`console.pipeline.snapshots.state_from_rows`)."""
    n = len(topic)
    given: dict[str, Iterable[object]] = {
        "topic": topic,
        "partition": partition,
        "replicas": replicas,
        "isr": isr,
        "leader": leader,
        "adding": adding,
        "removing": removing,
        "source": source,
        "logs": logs,
        "elr": repeat((), n),
        "last_known_elr": repeat((), n),
    }
    if any(len(v) != n for v in (partition, replicas, isr, leader, adding, removing, source, logs)):
        raise ValueError("every field needs one value per partition")
    made: list[Partition] = list(map(object.__new__, repeat(Partition, n)))
    for f in fields(Partition):  # every field, so none is left unset
        deque(map(getattr(Partition, f.name).__set__, made, given[f.name]), 0)
    return made


def replicas_in_dir(partitions: Iterable[Partition], broker: Broker, path: str) -> list[Partition]:
    """The partitions with a replica in log dir ``path`` of ``broker`` (DescribeLogDirs). An online
    dir lists its replicas; an offline one (``LogDir.error``) lists none, so its replicas are those
    of the broker (in R, not being added) that no online dir of the broker lists: with several
    dirs offline, they may be in any of them. Empty when the broker's dirs were not read."""
    found = next((d for d in broker.log_dirs if d.path == path), None)
    if found is None:
        return []
    b = broker.id
    if not found.offline:
        return [p for p in partitions if any(g.broker == b and g.log_dir == path and not g.is_future for g in p.logs)]
    return [
        p
        for p in partitions
        if b in p.replicas and b not in p.adding and not any(g.broker == b and not g.is_future for g in p.logs)
    ]


class _Outcome(NamedTuple):
    topic: str
    partition: int
    accepted: bool
    code: str | None = None
    """The broker's error name (e.g. ``NO_REASSIGNMENT_IN_PROGRESS``), when not accepted."""
    message: str | None = None


class Outcome(_Outcome, Keyed):
    """One partition's answer to AlterPartitionReassignments (a named tuple: a wave has hundreds)."""

    __slots__ = ()

    def to_dict(self) -> dict[str, object]:
        return dict(self._asdict())


def split_outcomes(outcomes: Iterable[Outcome]) -> tuple[list[Outcome], list[Outcome]]:
    """(accepted, rejected)."""
    ok: list[Outcome] = []
    bad: list[Outcome] = []
    for o in outcomes:
        (ok if o.accepted else bad).append(o)
    return ok, bad


def outcome_word(accepted: int, rejected: int) -> str:
    """How the audit log and the pages name a request's overall answer."""
    return "accepted" if not rejected else ("partly accepted" if accepted else "rejected")


@dataclass(frozen=True, slots=True)
class DirOutcome:
    """The broker's answer to AlterReplicaLogDirs for one replica: accepted (``code`` None), or
    Kafka's error name (REPLICA_NOT_AVAILABLE: the replica is not on the broker yet; the broker
    remembers the dir for when it creates it)."""

    topic: str
    partition: int
    broker: BrokerId
    log_dir: str
    code: str | None = None

    @property
    def accepted(self) -> bool:
        return self.code is None

    @property
    def remembered(self) -> bool:
        """Not created yet: the broker places the replica there when the reassignment creates it."""
        return self.code == REPLICA_NOT_AVAILABLE

    def to_dict(self) -> dict[str, object]:
        return {
            "topic": self.topic,
            "partition": self.partition,
            "broker": int(self.broker),
            "log_dir": self.log_dir,
            "code": self.code,
        }


REPLICA_NOT_AVAILABLE = "REPLICA_NOT_AVAILABLE"
PARTITION_GONE = "PARTITION_GONE"
"""Recorded for a partition a run's wave was accepted for that no longer exists (its topic was
deleted, or the partitions changed): the run no longer waits for it. The console's finding, not an
answer of the cluster's."""
PARTITION_CANCELLED = "PARTITION_CANCELLED"
"""Recorded for a partition of a run's wave that left the in-flight list away from its target (an
operator cancelled it: back to its original replicas): the run no longer waits for it and goes on
with the rest. The console's finding, not an answer of the cluster's."""
DIR_CANCELLED = "CANCELLED"
"""Recorded for a run's log dir move an operator cancelled: the run no longer waits for it."""
DIR_OFFLINE = "LOG_DIR_OFFLINE"
"""Recorded for a run's log dir move whose source or target dir went offline (DescribeLogDirs
answers it with an error): the replica is not where the plan asked, and the run no longer waits
for it. Not an answer of the cluster's: the console's finding, kept with the run's outcomes."""


@dataclass(frozen=True)
class ClusterState:
    """An immutable snapshot of the cluster at ``taken_at`` (epoch seconds)."""

    taken_at: float
    brokers: tuple[Broker, ...]
    partitions: tuple[Partition, ...]
    cluster_id: str | None = None
    controller: BrokerId | None = None
    throttles: Throttles = field(default_factory=Throttles)
    min_insync: tuple[tuple[str, int], ...] = ()
    """Topic → ``min.insync.replicas`` where known (the Admin API gives the effective value)."""
    findings: tuple[Finding, ...] = ()
    status: ReadStatus = field(default_factory=ReadStatus)
    name: str = ""
    info: ClusterInfo = field(default_factory=ClusterInfo)
    """Version, mode, features and quorum (read less often than the rest; unknown when not read)."""
    tiered_topics: tuple[str, ...] = ()
    """Topics with tiered storage (``remote.storage.enable=true``, KIP-405), sorted: their older
    segments live in remote storage, and a move copies only the local log (what DescribeLogDirs
    reports). Read with the topic configs (``status.configs``; ZooKeeper's topic overrides too)."""
    read_times: ReadTimes | None = None
    """When each part was read (sizes and topic configs may be carried over from an earlier read);
    None: every part at ``taken_at`` (:attr:`read_at`)."""

    def __repr__(self) -> str:
        return (
            f"<ClusterState {self.name or self.cluster_id or '?'}: {len(self.brokers)} brokers, "
            f"{len(self.partitions):,} partitions, {len(self.in_flight):,} reassigning, "
            f"{len(self.under_replicated):,} under-replicated, at {self.taken_at:.0f}>"
        )

    def to_pandas(self) -> pd.DataFrame:
        """One row per partition: R, I, AR, RR, leader, size, where the reassignment was read, state."""
        import pandas as pd

        return pd.DataFrame(
            [
                (
                    p.topic,
                    p.partition,
                    list(p.replicas),
                    list(p.isr),
                    list(p.adding),
                    list(p.removing),
                    p.leader,
                    p.size,
                    p.source.value if p.source else None,
                    p.reassigning,
                    p.under_replicated,
                    p.offline,
                    p.health.value,
                )
                for p in self.partitions
            ],
            columns=[
                "topic",
                "partition",
                "replicas",
                "isr",
                "adding",
                "removing",
                "leader",
                "size_bytes",
                "source",
                "reassigning",
                "under_replicated",
                "offline",
                "state",
            ],
        )

    def brokers_to_pandas(self) -> pd.DataFrame:
        """One row per broker: rack, host, live, eligible, cordoned (None: not known), replicas,
        partitions led, bytes on disk."""
        import pandas as pd

        totals = self.broker_totals
        return pd.DataFrame(
            [
                (int(b.id), b.rack, b.host, b.live, b.eligible, b.cordoned, *totals.get(b.id, (0, 0, 0)))
                for b in self.brokers
            ],
            columns=["broker", "rack", "host", "live", "eligible", "cordoned", "replicas", "leaders", "bytes"],
        )

    @property
    def read_at(self) -> ReadTimes:
        """When each part of this snapshot was read (every part at ``taken_at`` unless said otherwise)."""
        return self.read_times if self.read_times is not None else ReadTimes.at(self.taken_at)

    # -- lookups -----------------------------------------------------------------------------
    @cached_property
    def broker_index(self) -> dict[BrokerId, Broker]:
        return {b.id: b for b in self.brokers}

    @cached_property
    def partition_index(self) -> dict[TopicPartition, Partition]:
        return {p.key: p for p in self.partitions}

    @cached_property
    def broker_totals(self) -> dict[BrokerId, tuple[int, int, int]]:
        """Per broker: (replicas in R, partitions led, bytes on disk), over the whole snapshot."""
        # the counts at C speed (Counter over chained attributes), the bytes in one loop over the logs
        replicas = Counter(chain.from_iterable(map(attrgetter("replicas"), self.partitions)))
        leaders = Counter(map(attrgetter("leader"), self.partitions))
        leaders.pop(None, None)
        size: dict[BrokerId, int] = {}
        for log in chain.from_iterable(map(attrgetter("logs"), self.partitions)):
            if not log.is_future:
                size[log.broker] = size.get(log.broker, 0) + log.size
        ids = set(replicas) | set(leaders) | set(size) | {b.id for b in self.brokers}
        return {b: (replicas.get(b, 0), leaders.get(b, 0), size.get(b, 0)) for b in ids}

    def memo(self, key: str, build: Callable[[ClusterState], T]) -> T:
        """A value derived from this snapshot by ``build``, built once and kept with it (snapshots are
        immutable): e.g. the column-wise arrays plan checks share (:func:`console.plans.columns.columns_of`)."""
        cache: dict[str, object] = self.__dict__.setdefault("_memo", {})
        if key not in cache:
            cache[key] = build(self)
        return cache[key]  # type: ignore[return-value]  # stored under its own key by this method only

    @cached_property
    def min_insync_index(self) -> dict[str, int]:
        return dict(self.min_insync)

    @cached_property
    def tiered(self) -> frozenset[str]:
        """:attr:`tiered_topics` as a set."""
        return frozenset(self.tiered_topics)

    def broker(self, broker_id: BrokerId) -> Broker | None:
        return self.broker_index.get(broker_id)

    def partition(self, topic: str, partition: int) -> Partition | None:
        return self.partition_index.get((topic, partition))

    @cached_property
    def topics(self) -> tuple[str, ...]:
        return tuple(sorted({p.topic for p in self.partitions}))

    @property
    def logs_known(self) -> bool:
        return self.status.log_dirs is SourceStatus.OK

    # -- views -------------------------------------------------------------------------------
    @cached_property
    def in_flight(self) -> tuple[Partition, ...]:
        """Partitions with a reassignment in progress, sorted by topic and partition."""
        parts = self.partitions
        # Partition.reassigning (AR or RR not empty), asked at C speed of every partition
        moving = map(or_, map(bool, map(attrgetter("adding"), parts)), map(bool, map(attrgetter("removing"), parts)))
        return tuple(compress(parts, moving))

    @cached_property
    def under_replicated(self) -> tuple[Partition, ...]:
        """Truly under-replicated partitions (:attr:`Partition.under_replicated`)."""
        parts = self.partitions
        # an ISR equal to R holds every replica expected (R, or R − AR while reassigning): only
        # the others are asked, the ISR compared with R at C speed
        short = compress(parts, map(ne, map(attrgetter("isr"), parts), map(attrgetter("replicas"), parts)))
        return tuple(filter(attrgetter("under_replicated"), short))

    @property
    def live_brokers(self) -> tuple[BrokerId, ...]:
        return tuple(b.id for b in self.brokers if b.live)

    def fingerprint(self) -> str:
        """A digest of every partition's R, AR and RR: a plan reviewed against this snapshot
        carries it, so that submission can tell whether anything moved since."""
        return self._fingerprint

    @cached_property
    def check_basis(self) -> tuple[object, ...]:
        """What checking a plan depends on, other than replica sizes: the assignment, each
        broker's registration, eligibility, rack, cordons and free space, min ISR and tiered topics. Two snapshots with
        the same basis give a plan the same findings (bar free-space figures and bytes)."""
        return (
            self.fingerprint(),
            tuple((b.id, b.registered, b.eligible, b.rack, b.cordoned, b.cordoned_dirs) for b in self.brokers),
            self.min_insync,
            self.tiered_topics,
        )

    @cached_property
    def _fingerprint(self) -> str:
        h = hashlib.sha256()
        for p in self.partitions:
            h.update(f"{p.topic}\0{p.partition}\0{p.replicas}\0{p.adding}\0{p.removing}\n".encode())
        return h.hexdigest()[:16]


def cluster_key(state: ClusterState, name: str) -> str:
    """How runs, plans and the audit log name a cluster: by its id (two names for one cluster are
    one cluster), or by its configured name when the id is not known."""
    return state.cluster_id or name
