"""The in-memory fake cluster as the Streamlit app uses it.

:class:`AppCluster` is one object that is both the pages' reader and the write path's gateway over
a :class:`~tests.fakes.cluster.FakeCluster`: safe to call from the script thread, the server's
worker and a test at once (one lock), and its copying follows the wall clock (every call first
lets the fake's clock catch up), so the server's worker carries runs out as on a real cluster.
:class:`FakeParts` builds the app's parts over it (``components.deps.use_parts``).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from contextlib import contextmanager

from components.parts import Collecting, Parts, PartsFactory, Reader, assemble
from console.access.settings import ConnectionSettings
from console.adapters.records import Configs
from console.core.model import BrokerId, ClusterInfo, ClusterState, DirOutcome, Outcome, TopicPartition
from console.core.shown import BrokerTopicConfigs, BrokerView
from console.runs.gateway import Changes, ClusterGateway, Targets
from console.sandbox.demo import DEMO_TOPICS
from console.storage.store import Store
from tests.fakes.cluster import FakeCluster

DEMO_RACKS = {0: "rack-a", 1: "rack-b", 2: "rack-c"}


def demo_cluster(megabytes: float = 0.5, copy_rate: int = 10_000_000) -> FakeCluster:
    """The sandbox's demo as a fake: brokers 0, 1, 2 on racks rack-a, rack-b, rack-c, and the demo
    topics (``megabytes`` each, as the app tier's ``demo_sandbox``), replicas spread round the brokers."""
    partitions = {
        (t.name, i): (
            tuple((i + j) % len(DEMO_RACKS) for j in range(t.replication)),
            int(megabytes * 2**20) // t.partitions,
        )
        for t in DEMO_TOPICS
        for i in range(t.partitions)
    }
    return FakeCluster(DEMO_RACKS, partitions, copy_rate=copy_rate)


class AppCluster:
    """A fake cluster on the wall clock, thread-safe: the app's reader and gateway in one."""

    def __init__(self, cluster: FakeCluster) -> None:
        self.cluster = cluster
        self._lock = threading.RLock()
        self._generation = 0
        self._in_flight: frozenset[TopicPartition] = frozenset()
        self._watchers: list[Callable[[ClusterState], object]] = []
        cluster.clock = time.time()

    def _catch_up(self) -> None:
        gap = time.time() - self.cluster.clock
        if gap > 0:
            self.cluster.advance(gap)

    @contextmanager
    def held(self) -> Iterator[FakeCluster]:
        """The fake itself, caught up with the clock, for a test to change (topics, brokers, faults)."""
        with self._lock:
            self._catch_up()
            yield self.cluster

    # -- the reader ------------------------------------------------------------------------------------
    def snapshot(
        self, max_age_s: float = 0.0, info: bool = False, lean: bool = False, full: bool = False
    ) -> ClusterState:
        """Always a fresh snapshot (the fake reads in no time, everything at every read), always
        with the fake's ``info``; handed to the watchers."""
        with self.held() as fake:
            state = fake.snapshot(max_age_s)
        for watcher in self._watchers:
            watcher(state)
        return state

    def watch(self, watcher: Callable[[ClusterState], object]) -> None:
        self._watchers.append(watcher)

    def follow(self, source: Callable[[], Collection[TopicPartition]]) -> None:
        """The fake reads everything at every snapshot: nothing to follow."""

    @property
    def zookeeper_generation(self) -> int:
        """Goes up when the set of partitions in flight changes (a watch on the reassignment znode)."""
        with self.held() as fake:
            now = frozenset(k for k, p in fake.parts.items() if p.adding or p.removing)
            if now != self._in_flight:
                self._in_flight, self._generation = now, self._generation + 1
            return self._generation

    # -- the gateway -----------------------------------------------------------------------------------
    @property
    def name(self) -> str:
        return self.cluster.name

    @property
    def has_zookeeper(self) -> bool:
        return self.cluster.has_zookeeper

    @property
    def max_throttle(self) -> int:
        return self.cluster.max_throttle

    def cluster_info(self) -> ClusterInfo:
        with self.held() as fake:
            return fake.cluster_info()

    def list_reassignments(self) -> Collection[TopicPartition]:
        with self.held() as fake:
            return fake.list_reassignments()

    def replicas_seen(self, keys: Collection[TopicPartition]) -> tuple[BrokerView, ...]:
        with self.held() as fake:
            return fake.replicas_seen(keys)

    def alter_reassignments(self, targets: Targets, *, allow_rf_change: bool = True) -> dict[TopicPartition, Outcome]:
        with self.held() as fake:
            return fake.alter_reassignments(targets, allow_rf_change=allow_rf_change)

    def elect_leaders(self, keys: Iterable[TopicPartition]) -> dict[TopicPartition, Outcome]:
        with self.held() as fake:
            return fake.elect_leaders(keys)

    def alter_configs(self, brokers: Mapping[BrokerId, Changes], topics: Mapping[str, Changes]) -> None:
        with self.held() as fake:
            fake.alter_configs(brokers, topics)

    def alter_cluster_default(self, changes: Changes) -> None:
        with self.held() as fake:
            fake.alter_cluster_default(changes)

    def describe_configs(self, brokers: tuple[BrokerId, ...], topics: tuple[str, ...]) -> Configs:
        with self.held() as fake:
            return fake.describe_configs(brokers, topics)

    def topic_configs_seen(self, topics: tuple[str, ...]) -> tuple[BrokerTopicConfigs, ...]:
        with self.held() as fake:
            return fake.topic_configs_seen(topics)

    def create_legacy_reassignment(self, targets: Mapping[TopicPartition, tuple[BrokerId, ...]]) -> None:
        with self.held() as fake:
            fake.create_legacy_reassignment(targets)

    def alter_replica_log_dirs(self, moves: Mapping[tuple[str, int, BrokerId], str]) -> list[DirOutcome]:
        with self.held() as fake:
            return fake.alter_replica_log_dirs(moves)

    def unregister_broker(self, broker: BrokerId) -> bool:
        with self.held() as fake:
            return fake.unregister_broker(broker)


class FakeParts:
    """A parts factory over one :class:`AppCluster` (whatever cluster the app asks for), which
    remembers what it built so a test can stop the workers and collectors it started."""

    def __init__(self, cluster: AppCluster) -> None:
        self.cluster = cluster
        self.built: list[Parts] = []

    def __call__(self, settings: ConnectionSettings, store: Store, collecting: Collecting | None) -> Parts:
        parts = assemble(settings, self.cluster, self.cluster, store, collecting)
        self.built.append(parts)
        return parts

    def stop(self) -> None:
        for parts in self.built:
            parts.stop()


def _typed(cluster: AppCluster) -> tuple[Reader, ClusterGateway, PartsFactory]:
    return cluster, cluster, FakeParts(cluster)  # mypy checks here that they implement the protocols
