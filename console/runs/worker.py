"""The worker that drives a cluster's unfinished runs: inside the console's server process (a
daemon thread) or standalone (``python -m console executor``). Several may run at once: a
run's lease lets one of them drive it, and another takes over when that one stops."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from console.core.errors import ConsoleError
from console.core.model import SourceStatus, TopicPartition, cluster_key
from console.metrics.instruments import HEARTBEAT, IN_FLIGHT
from console.metrics.server import served
from console.moves.guardrails import GuardrailSettings
from console.runs.executor import Executor
from console.runs.gateway import ClusterGateway
from console.runs.reading import BoundedReads
from console.runs.steps import Step
from console.storage.store import Store

log = logging.getLogger(__name__)


class Worker:
    def __init__(
        self,
        store: Store,
        cluster: ClusterGateway,
        user: str,
        every_s: float = 1.0,
        progress: Callable[[Step], None] | None = None,
        guardrails: GuardrailSettings | None = None,
    ) -> None:
        self.executor = Executor(store, cluster, user, guardrails=guardrails)
        self.store = store
        self.gateway = cluster
        self.every_s = every_s
        self.progress = progress
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._cluster: str | None = None
        self._gauge_reads = BoundedReads(lambda: cluster.snapshot(max_age_s=5.0), cluster.name)
        """The gauge's read, bounded as the steps' are: a cluster that hangs does not hold the loop up."""

    def cluster(self) -> str:
        """The cluster's id once it answered (for good), else its configured name."""
        if self._cluster is not None:
            return self._cluster
        state = self.gateway.snapshot(max_age_s=5.0, lean=True)  # the metadata names it
        if state.cluster_id is not None:
            self._cluster = state.cluster_id
        return cluster_key(state, self.gateway.name)

    def moving(self) -> frozenset[TopicPartition]:
        """The partitions the cluster's active runs move (their waves sent), from the store, never
        from the cluster (none until the cluster's id is known): what the reader reads the sizes of
        at every snapshot (:meth:`console.state.reader.ClusterReader.follow`)."""
        if self._cluster is None:
            return frozenset()
        return frozenset(self.store.runs.active_partitions(self._cluster))

    def step_all(self) -> list[Step]:
        """One step of every unfinished run of the cluster."""
        steps = []
        for run in self.store.runs.list(self.cluster(), active_only=True):
            try:
                step = self.executor.tick(run.id)
            except ConsoleError as e:  # the cluster did not answer: the next step tries again
                step = Step(run, None, f"retrying: {e.message}")
            steps.append(step)
            if self.progress is not None:
                self.progress(step)
        self._gauge(self.cluster())
        return steps

    def _gauge(self, cluster: str) -> None:
        """The heartbeat, and (while this process serves its metrics) the partitions reassigning: the
        console's runs' and others'."""
        HEARTBEAT.labels(cluster).set(time.time())
        if served() is None:  # nothing scrapes it: the cluster is not read for it (the pages share one read)
            return
        state = self._gauge_reads.read().state
        if state.status.reassignments is not SourceStatus.OK:
            return
        ours = self.store.runs.active_partitions(cluster)
        moving = [p.key for p in state.in_flight]
        IN_FLIGHT.labels(cluster, "console").set(sum(1 for k in moving if k in ours))
        IN_FLIGHT.labels(cluster, "other").set(sum(1 for k in moving if k not in ours))

    def run_forever(self) -> None:
        while not self._stop.is_set():
            try:
                self.step_all()
            except ConsoleError as e:
                log.warning("worker: %s", e.message)
            except Exception:
                log.exception("worker step failed")
            self._stop.wait(self.every_s)
        for run in self.store.runs.list(self.cluster(), active_only=True):  # stopping: others may take over at once
            self.store.runs.release(run.id, self.executor.owner)

    def start(self) -> Worker:
        if self._thread is None:
            self._thread = threading.Thread(target=self.run_forever, name="console-worker", daemon=True)
            self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
