"""The Admin API gateway: confluent-kafka for Metadata and configs, kafka-python only for what
librdkafka lacks (ListPartitionReassignments, AlterPartitionReassignments, DescribeLogDirs).

``KafkaGateway.read()`` never raises for a cluster that misbehaves: each part of the answer has a
status, and what went wrong becomes a ``Finding`` with a hint. Only bad settings raise
(``ConfigError``).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from functools import wraps
from typing import Concatenate, ParamSpec, TypeVar

from console.access.settings import ConnectionSettings
from console.adapters.kafka.balancer_configs import balancer_configs
from console.adapters.kafka.base import Client
from console.adapters.kafka.configs import ConfigsAdmin
from console.adapters.kafka.kraft import KraftAdmin
from console.adapters.kafka.logdirs import LogDirsAdmin
from console.adapters.kafka.reads import Reads
from console.adapters.kafka.wire import (
    CONFIGS_PARTIAL,
    _Health,
    _problem,
    _status_of,
    out_of_isr_topics,
)
from console.adapters.kafka.writes import Writes
from console.adapters.records import ApiView, Asked, BrokerLogDirs, Configs, Elr, PartitionMeta, Reassignment
from console.core.errors import AuthorizationFailed, ConsoleError
from console.core.model import (
    BrokerId,
    ClusterInfo,
    DirOutcome,
    Finding,
    Outcome,
    Severity,
    SourceStatus,
    TopicPartition,
)
from console.core.shown import BrokerTopicConfigs, BrokerView

T = TypeVar("T")
P = ParamSpec("P")
G = TypeVar("G", bound="KafkaGateway")

for _name in ("kafka", "kafka.conn", "kafka.client", "kafka.admin"):
    logging.getLogger(_name).setLevel(logging.CRITICAL)

Narrowing = Callable[[Mapping[TopicPartition, PartitionMeta], Mapping[TopicPartition, Reassignment] | None], Asked]
"""What a narrow read asks for, decided once Metadata and the reassignments in flight are read
(None: ListPartitionReassignments did not answer): :mod:`console.state.carry` decides it."""


def _changes_cluster(method: Callable[Concatenate[G, P], T]) -> Callable[Concatenate[G, P], T]:
    """Marks a request that changes the cluster: ``writes`` is bumped once it returned or failed
    (a request that failed may still have been applied in part), so a snapshot read before it is
    no longer shared (:meth:`console.state.reader.ClusterReader.snapshot`)."""

    @wraps(method)
    def sent(self: G, /, *args: P.args, **kwargs: P.kwargs) -> T:
        try:
            return method(self, *args, **kwargs)
        finally:
            self.writes += 1

    return sent


class KafkaGateway:
    """Long-lived, thread-safe gateway to one cluster through the Admin API: one object per API
    family (its reads, the writes that move partitions and leaders, configs, log dirs, what the
    cluster is and its KRaft administration; a module each), all sending through one
    :class:`~console.adapters.kafka.base.Client`; the requests the rest of the console makes are
    handed to the family that sends them, and :meth:`read` gathers everything the Admin API can
    tell, part by part."""

    def __init__(self, settings: ConnectionSettings) -> None:
        self.client = Client(settings)
        self.reads = Reads(self.client)
        self.moves = Writes(self.client)
        self.configs = ConfigsAdmin(self.client)
        self.log_dirs = LogDirsAdmin(self.client)
        self.kraft = KraftAdmin(self.client)
        self.writes = 0
        """Requests that change the cluster sent through this gateway (see :func:`_changes_cluster`)."""
        self.requests = self.client.requests
        """Told of every request this gateway sends (:mod:`.requests`: ``requests.listen(fn)``)."""

    @property
    def settings(self) -> ConnectionSettings:
        return self.client.settings

    def close(self) -> None:
        self.client.close()

    # -- the requests, each sent by its family ---------------------------------------------------
    def list_reassignments(self) -> dict[TopicPartition, Reassignment]:
        return self.reads.list_reassignments()

    def replicas_by_broker(self, keys: Iterable[TopicPartition]) -> tuple[BrokerView, ...]:
        return self.reads.replicas_by_broker(keys)

    @_changes_cluster
    def alter_reassignments(
        self, targets: Mapping[TopicPartition, tuple[BrokerId, ...] | None], *, allow_rf_change: bool = True
    ) -> dict[TopicPartition, Outcome]:
        return self.moves.alter_reassignments(targets, allow_rf_change=allow_rf_change)

    @_changes_cluster
    def elect_leaders(self, keys: Iterable[TopicPartition]) -> dict[TopicPartition, Outcome]:
        return self.moves.elect_leaders(keys)

    @_changes_cluster
    def alter_configs(
        self, brokers: Mapping[BrokerId, Mapping[str, str | None]], topics: Mapping[str, Mapping[str, str | None]]
    ) -> None:
        self.configs.alter_configs(brokers, topics)

    @_changes_cluster
    def alter_cluster_default(self, changes: Mapping[str, str | None]) -> None:
        self.configs.alter_cluster_default(changes)

    def describe_configs(self, brokers: tuple[BrokerId, ...], topics: tuple[str, ...]) -> Configs:
        return self.configs.describe_configs(brokers, topics)

    def topic_configs_by_broker(self, topics: tuple[str, ...]) -> tuple[BrokerTopicConfigs, ...]:
        return self.configs.topic_configs_by_broker(topics)

    def balancer_configs(self, broker: BrokerId) -> dict[str, str]:
        """The configs of ``broker`` that name a balancer (:mod:`.balancer_configs`)."""
        return balancer_configs(self.client, broker)

    @_changes_cluster
    def alter_replica_log_dirs(self, moves: Mapping[tuple[str, int, BrokerId], str]) -> list[DirOutcome]:
        return self.log_dirs.alter_replica_log_dirs(moves)

    @_changes_cluster
    def unregister_broker(self, broker: BrokerId) -> bool:
        return self.kraft.unregister_broker(broker)

    def read_cluster_info(self, zookeeper_configured: bool = False) -> ClusterInfo:
        return self.kraft.read_cluster_info(zookeeper_configured)

    # -- everything the Admin API can tell -------------------------------------------------------
    def _read_reassignments(
        self, problems: list[Finding]
    ) -> tuple[dict[TopicPartition, Reassignment] | None, SourceStatus]:
        """ListPartitionReassignments for :meth:`read`: None and its status when it could not be
        read (the reason added to ``problems``)."""
        try:
            return self.list_reassignments(), SourceStatus.OK
        except ConsoleError as e:
            problems.append(_problem("reassignments-unreadable", e))
            return None, _status_of(e)

    def _health_reads(
        self,
        parts: Mapping[TopicPartition, PartitionMeta],
        reassignments: Mapping[TopicPartition, Reassignment] | None,
        problems: list[Finding],
    ) -> _Health:
        """Fenced brokers (DescribeCluster) and the ELR of topics with a replica out of the ISR
        (DescribeTopicPartitions), for :meth:`read`; what the cluster does not support is said by
        the status, what it did not answer also by a finding in ``problems``."""
        try:
            registered = self.reads.describe_registered()
            fenced_status = SourceStatus.OK if registered is not None else SourceStatus.UNSUPPORTED
        except ConsoleError as e:
            registered, fenced_status = None, _status_of(e)
        elr: dict[TopicPartition, Elr] = {}
        elr_status = SourceStatus.OK
        suspect = out_of_isr_topics(parts, reassignments)
        if suspect:
            try:
                elr = self.reads.describe_elr(suspect)
            except ConsoleError as e:
                elr_status = _status_of(e)
                if elr_status is not SourceStatus.UNSUPPORTED:
                    problems.append(_problem("elr-unreadable", e))
        return _Health(registered, fenced_status, elr, elr_status)

    def read(self, lean: bool = False, narrow: Narrowing | None = None) -> ApiView:
        """Everything the Admin API can tell, part by part, never raising for cluster trouble.
        ``lean``: only what a cancel needs (metadata and the reassignments in flight), each from the
        first broker that answers (a hung broker does not hold a cancel up); log dirs and configs
        are not asked for (their status says so: ``NOT_CONFIGURED``). ``narrow``: the log dirs of
        only the partitions it names (every broker still says its dirs, their sizes and free space)
        and the configs of every broker but only of the topics it names (the view's ``asked``)."""
        problems: list[Finding] = []
        try:
            cluster_id, controller, brokers, parts = self.reads.lean_metadata() if lean else self.reads.read_metadata()
        except ConsoleError as e:
            return ApiView(
                metadata_status=_status_of(e),
                reassignments_status=_status_of(e),
                log_dirs_status=_status_of(e),
                configs_status=_status_of(e),
                reassignments=None,
                problems=(
                    _problem("kafka-unavailable" if _status_of(e) is SourceStatus.UNAVAILABLE else "kafka-refused", e),
                ),
            )
        by_topic: dict[str, list[int]] = {}
        for t, p in parts:
            by_topic.setdefault(t, []).append(p)
        got = (
            self._lean_reads(parts, problems)
            if lean
            else self._full_reads(tuple(b.id for b in brokers), by_topic, parts, problems, narrow)
        )
        if not parts and SourceStatus.UNAUTHORIZED in (got.reassignments_status, got.configs_status):
            problems.append(_topics_hidden())  # Metadata silently leaves out topics the principal may not DESCRIBE
        configs = got.configs
        return ApiView(
            cluster_id=cluster_id,
            controller=controller,
            brokers=brokers,
            partitions=parts,
            reassignments=got.reassignments,
            log_dirs=got.log_dirs,
            broker_throttles=configs.brokers,
            topic_throttles=configs.topics,
            min_insync=configs.min_insync,
            tiered_topics=configs.tiered_topics,
            registered=got.health.registered,
            elr=got.health.elr,
            cordons={BrokerId(int(b)): v for b, v in configs.cordons.items()},
            metadata_status=SourceStatus.OK,
            reassignments_status=got.reassignments_status,
            log_dirs_status=got.log_dirs_status,
            configs_status=got.configs_status,
            fenced_status=got.health.fenced_status,
            elr_status=got.health.elr_status,
            problems=tuple(problems),
            asked=got.asked,
        )

    def _lean_reads(self, parts: Mapping[TopicPartition, PartitionMeta], problems: list[Finding]) -> _Parts:
        """What a cancel needs besides Metadata: the reassignments, the health reads and the moving
        topics' min ISR; log dirs and configs are not asked for (``NOT_CONFIGURED``)."""
        reassignments, lpr_status = self._read_reassignments(problems)
        moving = tuple(sorted({t for t, _ in reassignments})) if reassignments else ()
        configs = Configs()
        with ThreadPoolExecutor(max_workers=1) as pool:
            # each moving topic's min.insync.replicas: what a cancel's projection compares with
            min_f = pool.submit(self.configs.topics_min_isr, moving) if moving else None
            health = self._health_reads(parts, reassignments, problems)
            if min_f is not None:
                with contextlib.suppress(ConsoleError):  # unknown min ISR: the projection says so
                    got = min_f.result()
                    configs = Configs(min_insync=got.min_insync, tiered_topics=got.tiered_topics)
        none = SourceStatus.NOT_CONFIGURED
        return _Parts(reassignments, lpr_status, health, (), none, configs, none)

    def _full_reads(
        self,
        broker_ids: tuple[BrokerId, ...],
        by_topic: dict[str, list[int]],
        parts: Mapping[TopicPartition, PartitionMeta],
        problems: list[Finding],
        narrow: Narrowing | None = None,
    ) -> _Parts:
        """The reassignments, the health reads, every broker's log dirs and the configs: of every
        partition and topic, or (``narrow``) of those it names once the reassignments are read."""
        configs = Configs()
        with ThreadPoolExecutor(max_workers=2) as pool:

            def ask(topics: tuple[str, ...]) -> Future[Configs]:
                return pool.submit(self.configs.describe_configs, broker_ids, topics)

            early = None if narrow else ask(tuple(sorted(by_topic)))  # beside ListPartitionReassignments
            reassignments, lpr_status = self._read_reassignments(problems)
            asked = narrow(parts, reassignments) if narrow is not None else None
            if asked is not None:
                by_topic = _grouped(asked.partitions)
            configs_f = early if early is not None else ask(tuple(sorted(asked.topics if asked else by_topic)))
            health = self._health_reads(parts, reassignments, problems)
            log_dirs: list[BrokerLogDirs] = []
            logs_status = SourceStatus.OK
            for b in broker_ids:
                try:
                    log_dirs.append(self.log_dirs.describe_log_dirs(b, by_topic))
                except ConsoleError as e:
                    problems.append(_problem("log-dirs-unreadable", e, broker=b))
                    logs_status = _status_of(e)
            if log_dirs:
                logs_status = SourceStatus.OK  # partial answers still give sizes for those brokers
            cfg_status = SourceStatus.OK
            try:
                configs = configs_f.result()
            except ConsoleError as e:
                cfg_status = _status_of(e)
                problems.append(_problem("configs-unreadable", e))
            problems += _configs_partial(configs)
        return _Parts(reassignments, lpr_status, health, tuple(log_dirs), logs_status, configs, cfg_status, asked)


@dataclass(frozen=True, slots=True)
class _Parts:
    """What :meth:`KafkaGateway.read` asked for besides Metadata, each with its status."""

    reassignments: dict[TopicPartition, Reassignment] | None
    reassignments_status: SourceStatus
    health: _Health
    log_dirs: tuple[BrokerLogDirs, ...]
    log_dirs_status: SourceStatus
    configs: Configs
    configs_status: SourceStatus
    asked: Asked | None = None


def _grouped(keys: Iterable[TopicPartition]) -> dict[str, list[int]]:
    """Partition ids by topic, sorted (DescribeLogDirs' request)."""
    out: dict[str, list[int]] = {}
    for t, p in sorted(keys):
        out.setdefault(t, []).append(p)
    return out


def _configs_partial(configs: Configs) -> list[Finding]:
    """A warning per broker and per topic DescribeConfigs did not answer for (throttles unknown there)."""
    return [
        Finding(
            CONFIGS_PARTIAL,
            Severity.WARNING,
            f"Broker {b} did not answer DescribeConfigs: its throttles are unknown.",
            "Check the broker; the console changes no throttle on it until it answers.",
            broker=BrokerId(int(b)),
        )
        for b in configs.missing_brokers
    ] + [
        Finding(
            CONFIGS_PARTIAL,
            Severity.WARNING,
            f"The configs of topic {t} could not be read: its throttles are unknown.",
            "It may be being deleted; the console changes no throttle on it until it answers.",
            topic=t,
        )
        for t in configs.missing_topics
    ]


def _topics_hidden() -> Finding:
    return _problem(
        "topics-hidden",
        AuthorizationFailed(
            "Metadata shows no topic, and the cluster refuses other reads: the console's principal "
            "probably lacks DESCRIBE on the topics.",
            "Grant DESCRIBE and DESCRIBE_CONFIGS on the topics and on CLUSTER (or give a ZooKeeper "
            "connect string to read the znodes).",
        ),
    )
