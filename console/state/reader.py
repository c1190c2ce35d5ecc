"""One entry point for a snapshot: read the Admin API and ZooKeeper at once, then merge."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Collection
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import replace

from console.access.settings import ConnectionSettings
from console.adapters.gateway import LiveGateway
from console.adapters.kafka import KafkaGateway
from console.adapters.records import ApiView
from console.adapters.zookeeper import ZkReader
from console.core.errors import ConsoleError
from console.core.model import ClusterInfo, ClusterState, ReadTimes, SourceStatus, TopicPartition
from console.state.cadence import Cadence
from console.state.carry import Carried, answered_in_full, carry, narrowing
from console.state.merge import merge, with_info

log = logging.getLogger(__name__)

INFO_MAX_AGE_S = 60.0
"""How long what the cluster is (version, mode, features, quorum) is kept before it is read again."""


class ClusterReader:
    """Long-lived and thread-safe: build one per cluster and call ``snapshot()`` as often as needed.

    What the cluster is (:class:`ClusterInfo`) changes rarely: it is read only when asked for
    (``snapshot(info=True)``: Overview, ``state``), on its own client, in parallel with the
    snapshot, and kept ``INFO_MAX_AGE_S``; every other snapshot carries the last one read, at no
    cost (the Live refresh and ``list`` never wait for it).

    Every partition's sizes and every topic's configs are read in full at most every
    ``settings.sizes_every_s`` seconds (:mod:`console.state.cadence`); the snapshots in between
    read those of the partitions in flight (and of those a run moves: :meth:`follow`) and carry
    the rest over (:mod:`console.state.carry`); each snapshot says when each part was read
    (``read_at``)."""

    def __init__(self, settings: ConnectionSettings) -> None:
        self.settings = settings
        self.kafka = KafkaGateway(settings)
        self.zookeeper = ZkReader(settings.zookeeper, settings.zookeeper_timeout_s) if settings.zookeeper else None
        self._pool = ThreadPoolExecutor(max_workers=3, thread_name_prefix="cluster-reader")
        self._shared_lock = threading.Lock()
        self._info_lock = threading.Lock()
        self._info: ClusterInfo | None = None
        self._info_kafka: KafkaGateway | None = None
        self._last: ClusterState | None = None
        self._last_generation = (-1, -1)
        self._last_lean: ClusterState | None = None
        self._lean_generation = (-1, -1)
        self._watchers: list[Callable[[ClusterState], object]] = []
        self.cadence = Cadence(settings.sizes_every_s, lambda: time.time())
        """When sizes and topic configs are read in full (on the clock the snapshots are stamped with)."""
        self._carry_lock = threading.Lock()
        self._carried: Carried | None = None
        self._follows: list[Callable[[], Collection[TopicPartition]]] = []

    def follow(self, source: Callable[[], Collection[TopicPartition]]) -> None:
        """Read the sizes (and topics' configs) of the partitions ``source`` names at every
        snapshot, whether in flight or not: the partitions a run moves (a log dir move does not
        show in the reassignments in flight). ``source`` is asked at each narrow snapshot; it must
        not read the cluster."""
        self._follows.append(source)

    def watch(self, watcher: Callable[[ClusterState], object]) -> None:
        """Hand every full snapshot this reader reads from now on to ``watcher`` too (whoever asked
        for it: a page, the worker driving a run, the collector), e.g. the copy rates' tracker, so
        that a page opened later has the rates the server has been watching."""
        self._watchers.append(watcher)

    def gateway(self) -> LiveGateway:
        """The write path's gateway to this cluster, over this reader's connections (its snapshots
        are this reader's)."""
        return LiveGateway(
            self.settings.name,
            self.kafka,
            self.zookeeper,
            self.snapshot,
            self.cluster_info,
            max_throttle=self.settings.max_throttle,
        )

    def snapshot(
        self, max_age_s: float = 0.0, info: bool = False, lean: bool = False, full: bool = False
    ) -> ClusterState:
        """A fresh snapshot; never raises for an unreachable cluster (see ``state.status``).

        With ``max_age_s``, a snapshot taken that recently is shared instead: several people
        watching the same cluster cost one read (and one snapshot in memory), not one each. A
        ZooKeeper watch that fired since then, or a request that changes the cluster sent through
        this reader's connections (``gateway()``: a submit, a cancel, a throttle, a cordon), always
        forces a fresh read: no page shows the cluster as it was before the console changed it.

        With ``info``, the snapshot carries what the cluster is, read at most ``INFO_MAX_AGE_S``
        ago; without, the last one read (unknown when none was).

        ``lean``: only what a cancel needs (metadata, the reassignments in flight and ZooKeeper's
        view): no log dirs, no configs (their status is ``NOT_CONFIGURED``); fresh, or with
        ``max_age_s`` the newest lean or full snapshot taken that recently, shared the same way
        (the on-call page's Cancel button is drawn from it before the full read).

        ``full``: every partition's sizes and every topic's configs read now, none carried over
        (a submit's checks); always a fresh read, which the others then share.
        """
        pending: Future[ClusterInfo] | None = self._pool.submit(self.cluster_info) if info else None
        if full and not lean:
            state = self._full()
        else:
            state = self._lean(max_age_s) if lean else self._snapshot(max_age_s)
        known = pending.result() if pending is not None else self._info
        return with_info(state, known) if known is not None else state

    def cluster_info(self, max_age_s: float = INFO_MAX_AGE_S) -> ClusterInfo:
        """Version, mode, features and quorum, read at most ``max_age_s`` ago (an answer that was
        not complete is read again next time)."""
        with self._info_lock:
            last = self._info
            if last is not None and time.time() - last.read_at <= max_age_s:
                return last
            if self._info_kafka is None:
                self._info_kafka = KafkaGateway(self.settings)
            fresh = self._info_kafka.read_cluster_info(zookeeper_configured=self.zookeeper is not None)
            answered = SourceStatus.UNAVAILABLE not in (
                fresh.versions_status,
                fresh.features_status,
                fresh.quorum_status,
            )
            self._info = fresh if answered else None
            return fresh

    def _snapshot(self, max_age_s: float) -> ClusterState:
        if max_age_s <= 0:
            return self._read()
        with self._shared_lock:
            last = self._last
            generation = self._generation()
            if last is None or time.time() - last.taken_at > max_age_s or generation != self._last_generation:
                last = self._last = self._read()
                self._last_generation = generation
            return last

    def _full(self) -> ClusterState:
        """A fresh read of everything, shared afterwards as a snapshot read then."""
        generation = self._generation()
        state = self._read(full=True)
        with self._shared_lock:
            if self._last is None or state.taken_at > self._last.taken_at:
                self._last, self._last_generation = state, generation
        return state

    def _generation(self) -> tuple[int, int]:
        """What changes when the cluster was changed through this reader or a ZooKeeper watch fired."""
        return (self.zookeeper_generation, self.kafka.writes)

    def _lean(self, max_age_s: float) -> ClusterState:
        if max_age_s <= 0:
            return self._read(lean=True)
        with self._shared_lock:
            generation = self._generation()
            shared = [
                s
                for s, g in ((self._last, self._last_generation), (self._last_lean, self._lean_generation))
                if s is not None and g == generation and time.time() - s.taken_at <= max_age_s
            ]
            if shared:
                return max(shared, key=lambda s: s.taken_at)
            self._last_lean = self._read(lean=True)
            self._lean_generation = generation
            return self._last_lean

    def _read(self, lean: bool = False, full: bool = False) -> ClusterState:
        taken_at = time.time()
        zk_future = self._pool.submit(self.zookeeper.read) if self.zookeeper is not None else None
        api, times = (self.kafka.read(lean=True), None) if lean else self._sized(taken_at, full)
        zk = zk_future.result() if zk_future is not None else None
        state = merge(api, zk, taken_at=taken_at, name=self.settings.name, read_times=times)
        if not lean:
            for watcher in self._watchers:
                watcher(state)
        return state

    def _sized(self, taken_at: float, full: bool) -> tuple[ApiView, ReadTimes | None]:
        """The Admin API's answer with sizes and configs: read in full when the cadence says so (or
        ``full``), else those in flight read and the rest carried over; and when each part was read."""
        generation = self._generation()
        carried = self._carried
        if carried is not None and self.cadence.due(generation, asked=full) is None:
            fresh = self.kafka.read(narrow=narrowing(carried, self._followed()))
            view, complete = carry(fresh, carried)
            if complete:
                self._keep(
                    Carried.after(view, taken_at, carried.sizes_at, carried.configs_at, carried, self.cadence.every_s)
                )
            else:
                self.cadence.lost()  # a broker or the configs did not answer: read everything next time
            return view, ReadTimes(taken_at, carried.sizes_at, carried.configs_at)
        view = self.kafka.read()
        complete = answered_in_full(view)
        self.cadence.read_in_full(taken_at, generation, complete)
        if complete:
            self._keep(Carried.after(view, taken_at, taken_at, taken_at, self._carried, self.cadence.every_s))
        return view, None

    def _keep(self, carried: Carried) -> None:
        """What the next narrow reads carry over, unless a read that began later is kept already."""
        with self._carry_lock:
            if self._carried is None or carried.read_at >= self._carried.read_at:
                self._carried = carried

    def _followed(self) -> frozenset[TopicPartition]:
        """The partitions the :meth:`follow` sources name now (a source that fails names none)."""
        out: set[TopicPartition] = set()
        for source in self._follows:
            try:
                out.update(source())
            except ConsoleError as e:  # the store did not answer: the in-flight list still covers a run's moves
                log.warning("partitions to follow not known: %s", e.message)
        return frozenset(out)

    @property
    def zookeeper_generation(self) -> int:
        """Bumped by ZooKeeper watches (reassignment znode, controller, brokers, topics)."""
        return self.zookeeper.generation if self.zookeeper is not None else 0

    def close(self) -> None:
        self.kafka.close()
        if self._info_kafka is not None:
            self._info_kafka.close()
        if self.zookeeper is not None:
            self.zookeeper.close()
        self._pool.shutdown(wait=False)

    def __enter__(self) -> ClusterReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def connect(cluster: str | None = None, zookeeper: str | None = None, **properties: str) -> ClusterReader:
    """A reader of one cluster, for notebooks and scripts.

    ``cluster`` is a bootstrap server list (``host:port,...``) or the name of a known cluster
    (``CONSOLE_BOOTSTRAP_SERVERS``, or the running sandbox: ``"sandbox"``); with nothing given,
    the only known cluster (the sandbox when it runs). ``properties`` are librdkafka settings with
    dots written as underscores (``security_protocol="SASL_SSL"``).
    """
    from console.access.clusters import discover
    from console.core.errors import ConfigError

    extra = {k.replace("_", "."): v for k, v in properties.items()}
    if cluster is not None and (":" in cluster or "," in cluster):
        settings = ConnectionSettings(
            {"bootstrap.servers": cluster, **extra}, zookeeper=zookeeper, name=cluster.split(",")[0]
        )
        return ClusterReader(settings)
    known = discover()
    if cluster is None and len(known) == 1:
        cluster = next(iter(known))
    if cluster not in known:
        raise ConfigError(
            f"No cluster {cluster!r} is known" if cluster else "No cluster is known",
            "Pass bootstrap servers (connect('host:9092')), set CONSOLE_BOOTSTRAP_SERVERS, or start "
            "the sandbox (python -m console sandbox up --demo). Known: " + (", ".join(known) or "none") + ".",
        )
    found = known[cluster]
    if extra or zookeeper:
        found = replace(found, properties={**found.properties, **extra}, zookeeper=zookeeper or found.zookeeper)
    return ClusterReader(found)
