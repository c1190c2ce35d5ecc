"""The app's parts for one cluster, built in one place: the reader the pages share, the gateway
the write path talks to, the server's worker, the copy tracker and the history collector.

``components/deps.py`` keeps one :class:`Parts` per cluster (and data dir) and hands it to the
pages. What builds it is a :data:`PartsFactory`: :func:`live_parts` for a real cluster; tests
hand ``deps.use_parts`` one over the in-memory fake cluster (``tests/fakes/app.py``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from console.access.settings import ConnectionSettings
from console.core.errors import ConsoleError
from console.core.model import ClusterState, TopicPartition
from console.moves.progress import CopyTracker
from console.runs.gateway import ClusterGateway
from console.storage.store import Store

if TYPE_CHECKING:
    from console.pipeline.collect import BackgroundCollector
    from console.runs.worker import Worker


class Reader(Protocol):
    """What the pages read a cluster with (``console.state.reader.ClusterReader`` is the real one)."""

    def snapshot(
        self, max_age_s: float = 0.0, info: bool = False, lean: bool = False, full: bool = False
    ) -> ClusterState:
        """A snapshot at most ``max_age_s`` old, shared by the sessions watching the cluster; with
        ``info``, carrying what the cluster is (version, mode, features, quorum; read at most once
        a minute); ``lean``: fresh, with only what a cancel needs (no log dirs, no configs);
        ``full``: fresh, every size and topic config read now (else those of the partitions not in
        flight may be carried over from up to ``sizes_every_s`` ago: ``read_at`` says)."""

    def follow(self, source: Callable[[], Collection[TopicPartition]]) -> None:
        """Read the sizes of the partitions ``source`` names (a run's) at every snapshot."""

    @property
    def zookeeper_generation(self) -> int:
        """Goes up each time a ZooKeeper watch fires (the pages rerun on a change)."""

    def watch(self, watcher: Callable[[ClusterState], object]) -> None:
        """Hand every full snapshot read from now on to ``watcher`` too."""


@dataclass(frozen=True)
class Collecting:
    """Where and how often the server appends snapshots to the history (``CONSOLE_COLLECT_EVERY``)."""

    snapshots: Path
    every_s: float


@dataclass(frozen=True)
class Parts:
    """Everything the app keeps for one cluster, shared by every session watching it."""

    settings: ConnectionSettings
    reader: Reader
    gateway: ClusterGateway
    store: Store
    worker: Worker
    """Drives the cluster's unfinished runs (started when built; a standalone executor may run as well)."""
    copy_tracker: CopyTracker
    """Copy rates observed across refreshes (the sessions share the reader's snapshots, so each
    snapshot is counted once)."""
    collector: BackgroundCollector | None
    """Appends snapshots to the history; None when the server does not collect."""

    def stop(self) -> None:
        """Stop the worker and the collector (the reader's connections close with the process)."""
        self.worker.stop()
        if self.collector is not None:
            self.collector.stop()


PartsFactory = Callable[[ConnectionSettings, Store, Collecting | None], Parts]
"""Builds a cluster's parts over the console's store, collecting when asked."""


def assemble(
    settings: ConnectionSettings, reader: Reader, gateway: ClusterGateway, store: Store, collecting: Collecting | None
) -> Parts:
    """The parts over a reader and a gateway: the worker and the collector started."""
    import getpass

    from console.metrics.server import serve_metrics
    from console.notify.hub import notifier
    from console.runs.worker import Worker

    collector = None
    if collecting is not None:
        from console.pipeline.collect import BackgroundCollector

        collector = BackgroundCollector(reader, collecting.snapshots, collecting.every_s).start()
    worker = Worker(store, gateway, f"console-server ({getpass.getuser()})", guardrails=settings.guardrails)
    reader.follow(worker.moving)  # the sizes of what its runs move, at every read
    worker.start()
    notifier()  # notify.toml read and Apprise imported now, not at a run's first event
    try:
        serve_metrics(store)  # CONSOLE_METRICS_ADDRESS; off when unset
    except ConsoleError as e:  # a bad address: the console serves its pages all the same
        logging.getLogger(__name__).warning("%s %s", e.message, e.hint)
    tracker = CopyTracker()
    reader.watch(tracker.observe)  # the rates from every read (the worker's too), not only the Live page's
    return Parts(settings, reader, gateway, store, worker, tracker, collector)


def live_parts(settings: ConnectionSettings, store: Store, collecting: Collecting | None) -> Parts:
    """A real cluster: one long-lived, thread-safe reader, and the gateway over it."""
    from console.state.reader import ClusterReader

    reader = ClusterReader(settings)
    return assemble(settings, reader, reader.gateway(), store, collecting)
