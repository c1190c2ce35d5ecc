"""An in-memory Kafka cluster that implements :class:`console.runs.gateway.ClusterGateway`.

What it simulates:

* a controller's reassignment algebra (KIP-455): a target sets R = target ∪ original (target
  first), AR = target − original, RR = original − target; a reassignment completes once every
  target replica is in the ISR (R becomes the target, AR/RR empty, a leader outside the target
  moves to the first in-sync target replica); a cancel (target None) puts R back to R − AR, at
  once or, with ``cancel_lag_s``, that long after the controller accepted it;
* per-partition errors: ``UNKNOWN_TOPIC_OR_PARTITION``, ``NO_REASSIGNMENT_IN_PROGRESS``,
  ``INVALID_REPLICA_ASSIGNMENT`` (adding on a broker that is not live, empty or duplicate targets),
  and any code asked for with :meth:`FakeCluster.reject` (for elections,
  :meth:`FakeCluster.reject_election`);
* the replication-factor guard (KIP-860): a request sent with ``allow_rf_change=False`` has every
  entry whose replica count differs from the partition's RF (R − RR, as Kafka's controller counts
  it) refused, per partition, ``INVALID_REPLICATION_FACTOR`` with Kafka's message; with
  :attr:`FakeCluster.rf_guard` False the fake is a Kafka 3.9 (no v1: the flag is not sent);
* copying on a fake clock: :meth:`FakeCluster.advance` copies ``copy_rate`` bytes/s into each
  adding replica, held to the destination broker's ``follower.replication.throttled.rate``
  (shared by its throttled adding replicas) when the topic's follower list throttles it, and 0
  while the leader or the destination is down; a replica joins the ISR at the leader's size;
* dynamic broker and topic configs (IncrementalAlterConfigs SET/DELETE), brokers going down
  and up, topics deleted, the legacy ``/admin/reassign_partitions`` path;
* cordoned log dirs (KIP-1066) once :attr:`FakeCluster.info` says ``metadata.version`` 4.3-IV0
  or later (:meth:`FakeCluster.at_level`): each broker's ``cordoned.log.dirs`` (a broker config,
  checked against its log dirs as Kafka does: INVALID_REQUEST naming a dir it does not have) and
  each log dir's cordoned flag, as DescribeConfigs and DescribeLogDirs v5 report them; below that
  level a snapshot knows nothing of cordons (None), as on a real cluster;
* log dirs (``log_dirs``: every broker's, replicas in the first) and moves between them
  (AlterReplicaLogDirs: a future replica copied at ``copy_rate``, held to the broker's
  ``replica.alter.log.dirs.io.max.bytes.per.second``, then swapped in);
* a log dir going offline (:meth:`FakeCluster.fail_log_dir`, as after an I/O error, KAFKA-19571):
  DescribeLogDirs answers it with KAFKA_STORAGE_ERROR (the snapshot carries the same
  ``log-dir-offline`` warning as the live reader's), its replicas are offline on the broker, a
  copy into it is dropped and a copy out of it stops; it comes back when the broker restarts;
* each broker's own metadata trailing the controller's (:attr:`FakeCluster.broker_lag_s`): what
  :meth:`FakeCluster.replicas_seen` answers per broker is the replica set the controller had that
  long ago (fake clock), as a loaded broker applies the metadata log late;
* faults on demand (:meth:`FakeCluster.fail_next`, :meth:`FakeCluster.fail_call`) and a log of
  every call (:attr:`FakeCluster.calls`);
* a cluster that hangs (:meth:`FakeCluster.hang`, as with its quorum lost: a snapshot waits, in
  real time, until :meth:`FakeCluster.answer`) or answers slowly (:attr:`FakeCluster.read_takes_s`).

What it does not: leader throttles, ISR shrink from lag, controller failover, config
propagation delay, KRaft fencing, min ISR other than a fixed 1. A broker that comes back has its
(non-adding) replicas in sync at once.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import TracebackType
from typing import TypeVar

from console.access.settings import ConnectionSettings
from console.adapters.records import Configs
from console.core.cluster_info import METADATA_VERSION, cordons_supported
from console.core.errors import (
    ClusterUnavailable,
    ConsoleError,
    PartiallyApplied,
    RequestRefused,
    UnsupportedByCluster,
)
from console.core.limits import (
    ALL_REPLICAS,
    BROKER_THROTTLE_KEYS,
    CORDON_ALL,
    CORDONED_LOG_DIRS,
    FOLLOWER_LIST,
    FOLLOWER_RATE,
    LOG_DIR_RATE,
    MAX_THROTTLE,
    TOPIC_THROTTLE_KEYS,
)
from console.core.model import (
    DEFAULT_BROKER,
    REPLICA_NOT_AVAILABLE,
    Broker,
    BrokerId,
    ClusterInfo,
    ClusterMode,
    ClusterState,
    DirOutcome,
    Feature,
    LogDir,
    Outcome,
    Partition,
    ReadStatus,
    ReplicaLog,
    Source,
    SourceStatus,
    Throttles,
    TopicPartition,
    cordon_list,
)
from console.core.shown import BrokerTopicConfigs, BrokerView
from console.runs.gateway import Changes, ClusterGateway, Targets
from console.state.merge import offline_dir_findings

R = TypeVar("R")
OFFLINE_DIR_ERROR = "error 56 (KAFKA_STORAGE_ERROR: the dir is offline)"
"""What the live reader says of a dir DescribeLogDirs answers with KAFKA_STORAGE_ERROR."""
OK, DOWN = SourceStatus.OK, SourceStatus.UNAVAILABLE
HANG_LIMIT_S = 60.0
"""The longest a hung snapshot waits (a test that forgets :meth:`FakeCluster.answer` leaves no thread for good)."""


class Crash(Exception):
    """Not a cluster error: the worker process dies during this call (nothing catches it)."""


@dataclass
class Call:
    """One call to the fake: what was asked, and what it answered or raised."""

    method: str
    args: tuple[object, ...]
    result: object = None
    """The answer; for a call that applied and then raised, what it applied."""
    error: BaseException | None = None
    options: dict[str, object] = field(default_factory=dict)
    """Keyword options asked for (``allow_rf_change`` of ``alter_reassignments``)."""


@dataclass
class _Fault:
    error: Exception
    applied: bool
    """Apply the call, then raise (the answer is lost); else raise before changing anything."""
    method: str | None = None
    index: int | None = None
    times: int = 1


@dataclass
class _Part:
    replicas: list[BrokerId]
    isr: list[BrokerId]
    leader: BrokerId | None
    size: int
    """The leader's log size in bytes (every in-sync replica has it)."""
    adding: tuple[BrokerId, ...] = ()
    removing: tuple[BrokerId, ...] = ()
    copied: dict[BrokerId, int] = field(default_factory=dict)
    """Bytes on each adding replica."""
    history: list[tuple[float, tuple[BrokerId, ...]]] = field(default_factory=list)
    """Its replica sets since the first change (fake clock, replicas), the first at -inf: what a
    broker whose metadata trails the controller's shows."""

    def shown_at(self, when: float) -> tuple[BrokerId, ...]:
        """The replica set the controller had at ``when``."""
        shown = tuple(self.replicas)
        for at, replicas in reversed(self.history):
            shown = replicas
            if at <= when:
                break
        return shown

    elr: list[BrokerId] = field(default_factory=list)
    """Eligible leader replicas (with :attr:`FakeCluster.kafka4`)."""
    last_known_elr: list[BrokerId] = field(default_factory=list)
    """Last known eligible leader replicas (KIP-966): set by a test (the fake never shuts a broker down uncleanly)."""
    dirs: dict[BrokerId, str] = field(default_factory=dict)
    """Each replica's log dir when not the broker's first."""
    future: dict[BrokerId, tuple[str, int]] = field(default_factory=dict)
    """Replicas being copied to another dir of their broker: (that dir, bytes copied)."""

    @property
    def original(self) -> tuple[BrokerId, ...]:
        return tuple(b for b in self.replicas if b not in self.adding)

    @property
    def target(self) -> tuple[BrokerId, ...]:
        return tuple(b for b in self.replicas if b not in self.removing)


class FakeCluster:
    def __init__(
        self,
        brokers: Mapping[int, str | None],
        partitions: Mapping[TopicPartition, tuple[Sequence[int], int]],
        *,
        down: Collection[int] = (),
        copy_rate: int = 1_000,
        has_zookeeper: bool = False,
        name: str = "fake",
        cluster_id: str = "fake-cluster",
        now: float = 1_700_000_000.0,
        log_dirs: Sequence[str] = ("/data",),
    ) -> None:
        """``brokers``: id → rack; ``partitions``: key → (replicas, size in bytes); every replica
        is in sync and the first leads, as after :meth:`stop_broker` of each broker ``down``;
        ``log_dirs``: every broker's log dirs (replicas live in the first)."""
        self._name, self._zk, self.cluster_id, self.clock, self.copy_rate = (
            name,
            has_zookeeper,
            cluster_id,
            now,
            copy_rate,
        )
        self.racks = {BrokerId(b): r for b, r in brokers.items()}
        self.live = set(self.racks)
        self.log_dirs = tuple(log_dirs)
        self.parts = {
            k: _Part([BrokerId(b) for b in r], [BrokerId(b) for b in r], BrokerId(r[0]) if r else None, size)
            for k, (r, size) in sorted(partitions.items())
        }
        self.kafka4 = False
        """Kafka 4's model: a stopped broker stays registered but fenced (DescribeCluster says so),
        and a replica leaving an ISR that falls below ``min.insync.replicas`` becomes an eligible
        leader replica (KIP-966). Set before ``down`` brokers are stopped."""
        self.min_isr: dict[str, int] = {}
        """Each topic's ``min.insync.replicas`` (1 when not set)."""
        self.max_throttle = MAX_THROTTLE
        """The cluster's throttle ceiling (bytes/s), as its ``max_throttle`` setting would give it."""
        for b in down:
            self.stop_broker(b)
        self.broker_configs: dict[BrokerId, dict[str, str]] = {}
        self.cluster_default: dict[str, str] = {}
        """The cluster-wide default broker configs (``kafka-configs --entity-default``)."""
        self.topic_configs: dict[str, dict[str, str]] = {}
        self.legacy: dict[TopicPartition, tuple[BrokerId, ...]] = {}
        self.rejections: dict[TopicPartition, str] = {}
        self.election_rejections: dict[TopicPartition, str] = {}
        self.calls: list[Call] = []
        self._faults: list[_Fault] = []
        self.cancel_lag_s = 0.0
        """How long (fake clock) a cancelled partition stays in the in-flight list after the controller
        accepted the cancel (0: it leaves at once); meanwhile it is listed as it was and copies nothing."""
        self.cancelling: dict[TopicPartition, float] = {}
        """Partitions whose accepted cancel takes effect at the given time."""
        self.broker_lag_s: dict[BrokerId, float] = {}
        """How far (fake clock) each broker's own metadata trails the controller's: it shows each
        partition's replica set as the controller had it that long ago (absent: at once)."""
        self.topic_configs_behind: dict[BrokerId, dict[str, dict[str, str]]] = {}
        """Topic configs a broker still shows (it has not applied the latest change yet)."""
        self.paused: set[BrokerId] = set()
        """Brokers that are live but do not answer (as one SIGSTOPped): :meth:`replicas_seen` has
        their answer time out."""
        self.look_takes_s = 0.0
        """Fake time that passes with each :meth:`replicas_seen` (the clock advances that much
        first), so that brokers that trail the controller catch up while a caller keeps asking."""
        self.info = ClusterInfo()
        """What the cluster says it is (version, mode, features, quorum), carried by every snapshot."""
        self.preferred_dirs: dict[tuple[str, int, BrokerId], str] = {}
        """Dirs asked for replicas not created yet (AlterReplicaLogDirs before the reassignment)."""
        self.offline_dirs: set[tuple[BrokerId, str]] = set()
        """Log dirs offline (broker, dir): see :meth:`fail_log_dir`."""
        self.read_takes_s = 0.0
        """Real seconds each snapshot takes (a slow cluster), after any :meth:`hang`."""
        self._answering = threading.Event()
        self._answering.set()
        self.rf_guard = True
        """The controller takes ``AllowReplicationFactorChange`` (AlterPartitionReassignments v1,
        Kafka 4.1+); False: a Kafka 3.9, where requests go without it (never guarded)."""

    @classmethod
    def of(
        cls,
        brokers: int = 3,
        topics: Mapping[str, Sequence[Sequence[int]]] | None = None,
        size: int = 1_000,
        *,
        down: Collection[int] = (),
        copy_rate: int = 1_000,
        has_zookeeper: bool = False,
        log_dirs: Sequence[str] = ("/data",),
    ) -> FakeCluster:
        """``brokers`` ids 0..n-1 on racks r0..; ``topics``: name → replicas of partition 0, 1, …"""
        parts = {(t, i): (tuple(r), size) for t, rs in (topics or {}).items() for i, r in enumerate(rs)}
        return cls(
            {b: f"r{b}" for b in range(brokers)},
            parts,
            down=down,
            copy_rate=copy_rate,
            has_zookeeper=has_zookeeper,
            log_dirs=log_dirs,
        )

    def at_level(self, metadata_version: int) -> FakeCluster:
        """What the cluster says it is: KRaft at ``metadata.version`` level ``metadata_version``
        (30 = 4.3-IV0, where cordons start; 33 = 4.4-IV2). Returns the fake itself."""
        self.info = ClusterInfo(
            read_at=self.clock,
            mode=ClusterMode.KRAFT,
            features=(Feature(METADATA_VERSION, metadata_version, 7, metadata_version),),
            features_status=OK,
            versions_status=OK,
            quorum_status=OK,
        )
        return self

    @property
    def cordons_known(self) -> bool:
        """Whether the brokers report cordons (``metadata.version`` 4.3-IV0 or later)."""
        return cordons_supported(self.info) is True

    def cordon_entries(self, broker: int) -> tuple[str, ...]:
        """The broker's ``cordoned.log.dirs`` entries as set (``()``: none)."""
        return cordon_list(self.broker_configs.get(BrokerId(broker), {}).get(CORDONED_LOG_DIRS))

    def _broker_dirs(self, b: BrokerId) -> tuple[LogDir, ...]:
        if b not in self.live:
            return ()
        cordoned = self.cordon_entries(b)
        return tuple(
            LogDir(
                path,
                OFFLINE_DIR_ERROR if (b, path) in self.offline_dirs else None,
                None if (b, path) in self.offline_dirs else 10**12,
                None if (b, path) in self.offline_dirs else 10**12,
                (CORDON_ALL in cordoned or path in cordoned) if self.cordons_known else None,
            )
            for path in self.log_dirs
        )

    def dir_of(self, key: TopicPartition, broker: int) -> str:
        """The log dir of the replica of ``key`` on ``broker`` (its current log, not a future one)."""
        return self.parts[key].dirs.get(BrokerId(broker), self.log_dirs[0])

    def _offline(self, p: _Part, b: BrokerId) -> bool:
        """The replica's log is in a dir of its broker that is offline."""
        return (b, p.dirs.get(b, self.log_dirs[0])) in self.offline_dirs

    # -- the gateway ---------------------------------------------------------------------------------
    @property
    def name(self) -> str:
        return self._name

    @property
    def has_zookeeper(self) -> bool:
        return self._zk

    def snapshot(self, max_age_s: float = 0.0, *, lean: bool = False, full: bool = False) -> ClusterState:
        """Never raises a cluster error: a ConsoleError fault on ``snapshot`` reads nothing (the
        cluster did not answer), on ``snapshot:configs`` or ``snapshot:reassignments`` that part
        only (as the live reader does). A :class:`Crash` is raised. Every read is a full one (the
        fake carries nothing over); ``full`` is recorded with the call."""
        call, fault = self._begin("snapshot", max_age_s, *(["lean"] if lean else []), *(["full"] if full else []))
        self._answering.wait(HANG_LIMIT_S)  # hung (:meth:`hang`): until :meth:`answer`
        if self.read_takes_s:
            threading.Event().wait(self.read_takes_s)  # a slow cluster: real time passes
        if fault is not None and not isinstance(fault.error, ConsoleError):
            self._before(call, fault)
        if fault is not None:
            return ClusterState(self.clock, (), (), status=ReadStatus(DOWN, DOWN, DOWN, DOWN), name=self.name)
        no_cfg = self._take("snapshot:configs") is not None
        no_lpr = self._take("snapshot:reassignments") is not None
        brokers = tuple(
            Broker(
                b,
                "fake",
                9092 + b,
                rack,
                registered=b in self.live or self.kafka4,
                in_api=b in self.live or self.kafka4,
                is_controller=b == min(self.live, default=None),
                fenced=(b not in self.live) if self.kafka4 else None,
                log_dirs=self._broker_dirs(b),
                cordoned_log_dirs=self.cordon_entries(b)
                if self.cordons_known and b in self.live and not no_cfg
                else None,
            )
            for b, rack in sorted(self.racks.items())
            # before Kafka 4 a stopped broker leaves Metadata: only a replica list still names it
            if self.kafka4 or b in self.live or any(b in p.replicas for p in self.parts.values())
        )
        partitions = tuple(
            Partition(
                t,
                n,
                tuple(p.replicas),
                tuple(p.isr),
                p.leader,
                () if no_lpr else p.adding,
                () if no_lpr else p.removing,
                Source.API if p.adding or p.removing else None,
                tuple(
                    ReplicaLog(b, p.dirs.get(b, self.log_dirs[0]), p.copied.get(b, p.size))
                    for b in p.replicas
                    if b in self.live and not self._offline(p, b)  # an offline dir lists nothing
                )
                + tuple(ReplicaLog(b, d, n, True) for b, (d, n) in p.future.items() if b in self.live),
                elr=tuple(p.elr),
                last_known_elr=tuple(p.last_known_elr),
            )
            for (t, n), p in self.parts.items()
        )
        throttles = (
            Throttles()
            if no_cfg
            else Throttles.of(
                {
                    **{
                        str(b): {k: v for k, v in c.items() if k in BROKER_THROTTLE_KEYS}
                        for b, c in self.broker_configs.items()
                        if b in self.live  # a broker down is not asked (its configs are not read)
                    },
                    DEFAULT_BROKER: {k: v for k, v in self.cluster_default.items() if k in BROKER_THROTTLE_KEYS},
                },
                {t: {k: v for k, v in c.items() if k in TOPIC_THROTTLE_KEYS} for t, c in self.topic_configs.items()},
            )
        )
        status = ReadStatus(
            OK,
            DOWN if no_lpr else OK,
            OK,
            DOWN if no_cfg else OK,
            OK if self._zk else SourceStatus.NOT_CONFIGURED,
            fenced=OK if self.kafka4 else SourceStatus.UNSUPPORTED,
        )
        return self._after(
            call,
            None,
            ClusterState(
                self.clock,
                brokers,
                partitions,
                self.cluster_id,
                min(self.live, default=None),
                throttles,
                tuple((t, self.min_isr.get(t, 1)) for t in sorted({t for t, _ in self.parts})),
                findings=tuple(offline_dir_findings(partitions, {b.id: b for b in brokers})),
                status=status,
                name=self.name,
                info=self.info,
                # topics with remote storage (KIP-405), read with the topic configs as the real reader does
                tiered_topics=()
                if no_cfg
                else tuple(
                    sorted(t for t, c in self.topic_configs.items() if c.get("remote.storage.enable") == "true")
                ),
            ),
        )

    def cluster_info(self) -> ClusterInfo:
        call, fault = self._begin("cluster_info")
        self._before(call, fault)
        return self._after(call, fault, self.info)

    def list_reassignments(self) -> Collection[TopicPartition]:
        call, fault = self._begin("list_reassignments")
        self._before(call, fault)
        return self._after(call, fault, [k for k, p in self.parts.items() if p.adding or p.removing])

    def replicas_seen(self, keys: Collection[TopicPartition]) -> tuple[BrokerView, ...]:
        """Each live broker's view of ``keys``: the replica sets as the controller had them
        :attr:`broker_lag_s` ago; a :attr:`paused` broker's answer times out (a fault on
        ``replicas_seen`` raises, before anything is read)."""
        call, fault = self._begin("replicas_seen", tuple(keys))
        self._before(call, fault)
        if self.look_takes_s:
            self.advance(self.look_takes_s)
        views = tuple(
            BrokerView(b, {}, "timed out")
            if b in self.paused
            else BrokerView(
                b,
                {
                    k: p.shown_at(self.clock - self.broker_lag_s.get(b, 0.0))
                    for k in keys
                    if (p := self.parts.get(k)) is not None
                },
            )
            for b in sorted(self.live)
        )
        return self._after(call, fault, views)

    def alter_reassignments(self, targets: Targets, *, allow_rf_change: bool = True) -> dict[TopicPartition, Outcome]:
        """Per partition as the controller answers (with ``allow_rf_change`` False and
        :attr:`rf_guard`, an RF change is refused); a :class:`PartiallyApplied` fault applies the
        first half of the targets (in request order) and raises with their outcomes."""
        call, fault = self._begin("alter_reassignments", dict(targets))
        call.options = {"allow_rf_change": allow_rf_change}
        guarded = not allow_rf_change and self.rf_guard
        items = list(targets.items())
        if fault is not None and isinstance(fault.error, PartiallyApplied):
            done = {k: self._alter(k, t, guarded) for k, t in items[: len(items) // 2]}
            call.result = done
            call.error = error = PartiallyApplied(fault.error.cause, done)
            raise error
        self._before(call, fault)
        return self._after(call, fault, {k: self._alter(k, t, guarded) for k, t in items})

    def elect_leaders(self, keys: Iterable[TopicPartition]) -> dict[TopicPartition, Outcome]:
        """Preferred election: the first replica leads when live and in sync (already leading counts as done)."""
        wanted = list(keys)
        call, fault = self._begin("elect_leaders", wanted)
        self._before(call, fault)
        out: dict[TopicPartition, Outcome] = {}
        for k in wanted:
            p = self.parts.get(k)
            if p is None:
                out[k] = Outcome(*k, False, "UNKNOWN_TOPIC_OR_PARTITION", "no such partition")
            elif k in self.election_rejections:
                out[k] = Outcome(
                    *k, False, self.election_rejections[k], "election refused by the fake controller, as asked"
                )
            elif p.replicas[0] in p.isr and p.replicas[0] in self.live:
                p.leader = p.replicas[0]
                out[k] = Outcome(*k, True)
            else:
                out[k] = Outcome(*k, False, "PREFERRED_LEADER_NOT_AVAILABLE", "the preferred replica is not in sync")
        return self._after(call, fault, out)

    def alter_configs(self, brokers: Mapping[BrokerId, Changes], topics: Mapping[str, Changes]) -> None:
        """Applies what it can; raises ClusterUnavailable naming brokers down and unknown topics. A
        ``cordoned.log.dirs`` naming a dir the broker does not have is refused as Kafka refuses it
        (INVALID_REQUEST), and nothing of the request is applied."""
        call, fault = self._begin(
            "alter_configs", {b: dict(c) for b, c in brokers.items()}, {t: dict(c) for t, c in topics.items()}
        )
        self._before(call, fault)
        for changes in brokers.values():
            missing = [
                d for d in cordon_list(changes.get(CORDONED_LOG_DIRS)) if d != CORDON_ALL and d not in self.log_dirs
            ]
            if missing:
                call.error = refused = RequestRefused(
                    f"Kafka refused IncrementalAlterConfigs: INVALID_REQUEST: requirement failed: All entries in "
                    f"cordoned.log.dirs must be present in log.dirs or log.dir. Missing entries : {','.join(missing)}.",
                    "Nothing of this request was applied; Kafka's reason is above.",
                )
                raise refused
        failed = [f"broker {b}" for b in brokers if brokers[b] and b not in self.live]
        failed += [f"topic {t}" for t in topics if topics[t] and t not in self.topics]
        for b, changes in brokers.items():
            if b in self.live:
                _apply(self.broker_configs.setdefault(b, {}), changes)
        for t, changes in topics.items():
            if t in self.topics:
                _apply(self.topic_configs.setdefault(t, {}), changes)
        if failed:
            call.error = error = ClusterUnavailable(
                "Configs were not changed on " + "; ".join(failed),
                "The console retries; check that the brokers named are up.",
            )
            raise error
        self._after(call, fault, None)

    def alter_cluster_default(self, changes: Changes) -> None:
        """Applies ``changes`` to the cluster default; refused while no broker is up to take it."""
        call, fault = self._begin("alter_cluster_default", dict(changes))
        self._before(call, fault)
        if not self.live:
            call.error = error = ClusterUnavailable("No broker answered.", "Start a broker and try again.")
            raise error
        _apply(self.cluster_default, changes)
        self._after(call, fault, None)

    def describe_configs(self, brokers: tuple[BrokerId, ...], topics: tuple[str, ...]) -> Configs:
        call, fault = self._begin("describe_configs", brokers, topics)
        self._before(call, fault)
        default = (
            {DEFAULT_BROKER: dict(self.cluster_default)}
            if self.cluster_default and any(b in self.live for b in brokers)
            else {}
        )
        return self._after(
            call,
            fault,
            Configs(
                {
                    str(b): throttles
                    for b in brokers
                    if (c := self.broker_configs.get(b))
                    and b in self.live
                    and (throttles := {k: v for k, v in c.items() if k != CORDONED_LOG_DIRS})
                }
                | default,
                {t: dict(c) for t in topics if (c := self.topic_configs.get(t))},
                {t: 1 for t in topics if t in self.topics},
                cordons={str(b): self.cordon_entries(b) for b in brokers if b in self.live}
                if self.cordons_known
                else {},
            ),
        )

    def topic_configs_seen(self, topics: tuple[str, ...]) -> tuple[BrokerTopicConfigs, ...]:
        """Each live broker's answer for ``topics``' configs: the controller's, except where
        :attr:`topic_configs_behind` says what a broker still shows; a :attr:`paused` broker's times out."""
        call, fault = self._begin("topic_configs_seen", topics)
        self._before(call, fault)
        views = tuple(
            BrokerTopicConfigs(b, {}, "timed out")
            if b in self.paused
            else BrokerTopicConfigs(
                b,
                {
                    t: dict(self.topic_configs_behind.get(b, {}).get(t, self.topic_configs.get(t, {})))
                    for t in topics
                    if t in self.topics
                },
            )
            for b in sorted(self.live)
        )
        return self._after(call, fault, views)

    def create_legacy_reassignment(self, targets: Mapping[TopicPartition, tuple[BrokerId, ...]]) -> None:
        """Records the znode and applies it as the controller would (its per-partition errors are lost)."""
        call, fault = self._begin("create_legacy_reassignment", dict(targets))
        self._before(call, fault)
        self.legacy.update(targets)
        for k, t in targets.items():
            self._alter(k, t)
        self._after(call, fault, dict(targets))

    def unregister_broker(self, broker: BrokerId) -> bool:
        """As a KRaft controller (with :attr:`kafka4`, or a KRaft ``info`` before Kafka 4): the
        broker's registration is forgotten; a broker never registered is answered
        BROKER_ID_NOT_REGISTERED (False). In ZooKeeper mode, or a mode not said: unsupported."""
        call, fault = self._begin("unregister_broker", broker)
        self._before(call, fault)
        if not self.kafka4 and self.info.mode is not ClusterMode.KRAFT:
            raise UnsupportedByCluster("The cluster does not support UnregisterBroker.", "KRaft only.")
        was = broker in self.racks
        self.racks.pop(broker, None)
        self.live.discard(broker)
        return self._after(call, fault, was)

    # -- driving it ----------------------------------------------------------------------------------
    @property
    def topics(self) -> set[str]:
        return {t for t, _ in self.parts}

    def advance(self, seconds: float) -> None:
        """Let ``seconds`` pass: adding replicas copy, join the ISR, reassignments complete."""
        self.clock += seconds
        lag, self.cancel_lag_s = self.cancel_lag_s, 0.0
        for key, due in list(self.cancelling.items()):
            if due <= self.clock:
                del self.cancelling[key]
                self._alter(key, None)  # the cancel takes effect now
        self.cancel_lag_s = lag
        throttled = Counter(
            b for k, p in self.parts.items() for b in p.adding if b not in p.isr and self._throttled(k, b)
        )
        for key, p in self.parts.items():
            if key in self.cancelling:
                continue  # being cancelled: nothing copies
            for b in p.adding:
                if b in p.isr:
                    continue
                rate = 0.0
                if p.leader in self.live and b in self.live and not self._offline(p, b):
                    rate = float(self.copy_rate)
                    limit = self.broker_configs.get(b, {}).get(FOLLOWER_RATE) or self.cluster_default.get(FOLLOWER_RATE)
                    if limit is not None and self._throttled(key, b):
                        rate = min(rate, int(limit) / throttled[b])
                p.copied[b] = min(p.size, p.copied.get(b, 0) + int(rate * seconds))
                if p.copied[b] >= p.size:
                    p.isr.append(b)
            self._complete(p)
            for b, (d, done) in list(p.future.items()):  # log dir moves copy too
                if b not in self.live or self._offline(p, b):
                    continue  # the copy out of an offline dir stopped where it was
                limit = self.broker_configs.get(b, {}).get(LOG_DIR_RATE)
                rate = float(self.copy_rate) if limit is None else min(float(self.copy_rate), float(limit))
                done = min(p.size, done + int(rate * seconds))
                if done >= p.size:
                    del p.future[b]
                    p.dirs[b] = d
                else:
                    p.future[b] = (d, done)

    def alter_replica_log_dirs(self, moves: Mapping[tuple[str, int, BrokerId], str]) -> list[DirOutcome]:
        """As brokers do: a replica it holds starts copying to the dir (a future replica; back to its
        own dir: the copy is dropped); one it does not hold yet is answered REPLICA_NOT_AVAILABLE and
        its dir kept for when the replica is created; a dir the broker lacks, LOG_DIR_NOT_FOUND; an
        offline dir, or a replica in one, KAFKA_STORAGE_ERROR."""
        call, fault = self._begin("alter_replica_log_dirs", dict(moves))
        self._before(call, fault)
        out = []
        for (t, n, b), d in moves.items():
            p = self.parts.get((t, n))
            if d not in self.log_dirs:
                out.append(DirOutcome(t, n, b, d, "LOG_DIR_NOT_FOUND"))
            elif (b, d) in self.offline_dirs or (p is not None and b in p.replicas and self._offline(p, b)):
                out.append(DirOutcome(t, n, b, d, "KAFKA_STORAGE_ERROR"))
            elif p is None or b not in p.replicas or (b in p.adding and b not in p.isr and not p.copied.get(b)):
                self.preferred_dirs[(t, n, b)] = d
                out.append(DirOutcome(t, n, b, d, REPLICA_NOT_AVAILABLE))
            else:
                if p.dirs.get(b, self.log_dirs[0]) == d:
                    p.future.pop(b, None)
                else:
                    p.future[b] = (d, 0)
                out.append(DirOutcome(t, n, b, d))
        return self._after(call, fault, out)

    def hang(self) -> None:
        """From now on a snapshot waits (real time, at most ``HANG_LIMIT_S``) until :meth:`answer`:
        sent and not answered, as by a cluster whose quorum is lost."""
        self._answering.clear()

    def answer(self) -> None:
        """The snapshots waiting (:meth:`hang`) go on, and the next ones answer at once."""
        self._answering.set()

    def fail_next(self, method: str, error: Exception, times: int = 1, applied: bool = False) -> None:
        """The next ``times`` calls of ``method`` raise ``error`` (after applying, with ``applied``)."""
        self._faults.append(_Fault(error, applied, method=method, times=times))

    def fail_call(self, index: int, error: Exception, applied: bool = False) -> None:
        """The call that will be ``calls[index]`` raises ``error``, whatever its method."""
        self._faults.append(_Fault(error, applied, index=index))

    def reject(self, topic: str, partition: int, code: str) -> None:
        """The controller answers ``code`` for this partition from now on."""
        self.rejections[(topic, partition)] = code

    def reject_election(self, topic: str, partition: int, code: str) -> None:
        """The controller answers ``code`` to a preferred leader election of this partition from now on."""
        self.election_rejections[(topic, partition)] = code

    def stop_broker(self, broker: int) -> None:
        b = BrokerId(broker)
        self.live.discard(b)
        for (t, _), p in self.parts.items():
            if b in p.isr and self.kafka4 and len(p.isr) - 1 < self.min_isr.get(t, 1):
                p.elr.append(b)  # left the ISR while it fell below min ISR: still electable (KIP-966)
            p.isr = [x for x in p.isr if x != b]
            if p.leader == b:
                p.leader = next((x for x in p.replicas if x in p.isr and x in self.live), None)

    def fail_log_dir(self, broker: int, path: str) -> None:
        """Log dir ``path`` of ``broker`` goes offline, as after an I/O error (KAFKA-19571): from now
        on DescribeLogDirs answers it with KAFKA_STORAGE_ERROR and lists nothing in it; its
        replicas are offline on the broker (out of the ISR, a leader among them gives way); a
        future replica copying into it is dropped; a copy out of it stops where it was (its future
        replica in the other dir stays, copying nothing). It comes back when the broker restarts
        (:meth:`stop_broker`, then :meth:`start_broker`)."""
        b = BrokerId(broker)
        if path not in self.log_dirs:
            raise ValueError(f"broker {broker} has no log dir {path}")
        self.offline_dirs.add((b, path))
        for p in self.parts.values():
            if b in p.future and p.future[b][0] == path:
                del p.future[b]  # the copy into it is dropped
            if b in p.replicas and self._offline(p, b):
                p.isr = [x for x in p.isr if x != b]
                if p.leader == b:
                    p.leader = next((x for x in p.replicas if x in p.isr and x in self.live), None)

    def start_broker(self, broker: int) -> None:
        b = BrokerId(broker)
        self.live.add(b)
        self.offline_dirs = {(x, d) for x, d in self.offline_dirs if x != b}  # a restart brings its dirs back
        for (t, _), p in self.parts.items():
            if b in p.replicas and b not in p.adding and b not in p.isr:
                p.isr.append(b)
            if p.leader is None and b in p.isr:
                p.leader = b
            if len(p.isr) >= self.min_isr.get(t, 1):
                p.elr = []  # Kafka clears the ELR once the ISR is back to min ISR
            elif b in p.elr:
                p.elr.remove(b)

    def create_topic(self, name: str, assignment: Sequence[Sequence[int]], size: int = 1_000) -> None:
        """A new topic: partition i on ``assignment[i]`` (the first live one leads), each live replica in sync."""
        for i, r in enumerate(assignment):
            replicas = [BrokerId(b) for b in r]
            isr = [b for b in replicas if b in self.live]
            self.parts[(name, i)] = _Part(replicas, isr, isr[0] if isr else None, size)
        self.parts = dict(sorted(self.parts.items()))

    def delete_topic(self, name: str) -> None:
        self.parts = {k: p for k, p in self.parts.items() if k[0] != name}
        self.topic_configs.pop(name, None)

    def calls_to(self, method: str) -> list[Call]:
        return [c for c in self.calls if c.method == method]

    # -- inside ----------------------------------------------------------------------------------------
    def _alter(self, key: TopicPartition, target: Sequence[BrokerId] | None, guarded: bool = False) -> Outcome:
        p = self.parts.get(key)
        if p is None:
            return Outcome(*key, False, "UNKNOWN_TOPIC_OR_PARTITION", "This server does not host this topic-partition.")
        if key in self.rejections:
            return Outcome(*key, False, self.rejections[key], "rejected by the fake controller, as asked")
        original = p.original
        if target is None:
            if not (p.adding or p.removing):
                return Outcome(*key, False, "NO_REASSIGNMENT_IN_PROGRESS", "No reassignment in progress.")
            if self.cancel_lag_s > 0:
                self.cancelling.setdefault(key, self.clock + self.cancel_lag_s)
                return Outcome(*key, True)
            target = original
        elif not target or len(set(target)) != len(target):
            return Outcome(*key, False, "INVALID_REPLICA_ASSIGNMENT", "Empty or duplicate replicas.")
        elif dead := [b for b in target if b not in original and b not in self.live]:
            return Outcome(
                *key, False, "INVALID_REPLICA_ASSIGNMENT", f"Replica assignment has brokers that are not alive: {dead}."
            )
        elif guarded and len(target) != len(p.target):  # Kafka counts (R ∪ AR) − RR = R − RR
            return Outcome(
                *key,
                False,
                "INVALID_REPLICATION_FACTOR",
                f"The replication factor is changed from {len(p.target)} to {len(target)}",
            )
        self.cancelling.pop(key, None)
        target = tuple(target)
        before = tuple(p.replicas)
        p.adding = tuple(b for b in target if b not in original)
        p.removing = tuple(b for b in original if b not in target)
        for b in p.adding:  # a new replica lands in the dir asked for beforehand (AlterReplicaLogDirs)
            if (d := self.preferred_dirs.pop((key[0], key[1], b), None)) is not None:
                p.dirs[b] = d
        p.replicas = list(target) + list(p.removing)
        self._changed(p, before)
        p.copied = {b: p.copied.get(b, 0) for b in p.adding}
        p.isr = [b for b in p.isr if b in p.replicas]
        if p.leader not in p.replicas:
            p.leader = next((b for b in p.replicas if b in p.isr and b in self.live), None)
        self._complete(p)
        return Outcome(*key, True)

    def _changed(self, p: _Part, before: tuple[BrokerId, ...]) -> None:
        """Note a change of ``p``'s replica set (from ``before``) at the fake clock's time."""
        if tuple(p.replicas) == before:
            return
        if not p.history:
            p.history.append((float("-inf"), before))
        p.history.append((self.clock, tuple(p.replicas)))

    def _complete(self, p: _Part) -> None:
        if not (p.adding or p.removing) or not set(p.target) <= set(p.isr):
            return
        before = tuple(p.replicas)
        p.replicas, p.adding, p.removing, p.copied = list(p.target), (), (), {}
        self._changed(p, before)
        p.isr = [b for b in p.isr if b in p.replicas]
        if p.leader not in p.replicas:
            p.leader = next((b for b in p.replicas if b in p.isr and b in self.live), None)

    def _throttled(self, key: TopicPartition, broker: BrokerId) -> bool:
        listed = self.topic_configs.get(key[0], {}).get(FOLLOWER_LIST, "")
        return listed.strip() == ALL_REPLICAS or f"{key[1]}:{broker}" in {x.strip() for x in listed.split(",")}

    def _take(self, method: str) -> _Fault | None:
        for f in self._faults:
            if f.index == len(self.calls) - 1 or (f.index is None and f.method == method):
                f.times -= 1
                if f.times <= 0:
                    self._faults.remove(f)
                return f
        return None

    def _begin(self, method: str, *args: object) -> tuple[Call, _Fault | None]:
        call = Call(method, args)
        self.calls.append(call)
        return call, self._take(method)

    @staticmethod
    def _before(call: Call, fault: _Fault | None) -> None:
        if fault is not None and not fault.applied:
            call.error = fault.error
            raise fault.error

    @staticmethod
    def _after(call: Call, fault: _Fault | None, result: R) -> R:
        call.result = result
        if fault is not None:
            call.error = fault.error
            raise fault.error
        return result


def _apply(config: dict[str, str], changes: Changes) -> None:
    for k, v in changes.items():
        if v is None:
            config.pop(k, None)
        else:
            config[k] = v


def _is_a_gateway(fake: FakeCluster) -> ClusterGateway:
    return fake  # mypy checks here that the fake implements the protocol


class FakeReader:
    """What the CLI's commands read and send through (``console.cli.cluster.connect``), over a fake
    cluster: ``monkeypatch.setattr(module, "connect", lambda args: FakeReader(fake))``."""

    def __init__(self, fake: FakeCluster) -> None:
        self.fake = fake
        self.settings = ConnectionSettings({"bootstrap.servers": "fake:9092"}, name="fake")

    def __enter__(self) -> FakeReader:
        return self

    def __exit__(self, *exc: type[BaseException] | BaseException | TracebackType | None) -> None:
        return None

    def snapshot(
        self, max_age_s: float = 0.0, info: bool = False, lean: bool = False, full: bool = False
    ) -> ClusterState:
        return self.fake.snapshot(max_age_s, lean=lean, full=full)

    def follow(self, source: Callable[[], Collection[TopicPartition]]) -> None:
        """The fake reads everything at every snapshot: nothing to follow."""

    def gateway(self) -> FakeCluster:
        return self.fake
