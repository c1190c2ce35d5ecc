"""The store read at scrape time: runs by state, each active run's waves, partitions left, stuck
flag and lease, the throttles the console set, notification failures kept. A few grouped queries
(bounded by :data:`console.storage.scrape.MAX_RUNS`), nothing asked of a cluster."""

from __future__ import annotations

import time
from collections.abc import Iterator

from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from console.core.states import RunState
from console.storage.store import Store

RUN = ["cluster", "run"]


class StoreCollector(Collector):
    def __init__(self, store: Store) -> None:
        self.store = store

    def collect(self) -> Iterator[Metric]:
        yield from self._by_state()
        yield from self._active()
        throttles = GaugeMetricFamily(
            "console_throttles_set",
            "Throttle settings the console's runs set on brokers and topics and have not taken off yet.",
            labels=["cluster"],
        )
        for cluster, n in sorted(self.store.scrape.throttles_set().items()):
            throttles.add_metric([cluster], n)
        yield throttles
        failed = GaugeMetricFamily(
            "console_notification_failures_recorded",
            "Notifications given up on after their retries, as kept in the store (every process's).",
            labels=["cluster", "event"],
        )
        for (cluster, event), n in sorted(self.store.notifications.counts().items()):
            failed.add_metric([cluster, event], n)
        yield failed

    def _by_state(self) -> Iterator[Metric]:
        runs = GaugeMetricFamily(
            "console_runs", "Runs in the store by state, per cluster.", labels=["cluster", "state"]
        )
        counts = self.store.scrape.runs_by_state()
        for cluster in sorted({c for c, _ in counts}):
            for state in RunState:
                runs.add_metric([cluster, state.value], counts.get((cluster, state.value), 0))
        yield runs

    def _active(self) -> Iterator[Metric]:
        left = GaugeMetricFamily(
            "console_run_partitions_left", "Partitions of an active run not moved yet.", labels=RUN
        )
        stuck = GaugeMetricFamily("console_run_stuck", "1 when an active run is flagged stuck.", labels=RUN)
        waves = GaugeMetricFamily("console_run_waves", "Waves of an active run.", labels=RUN)
        sent = GaugeMetricFamily("console_run_waves_sent", "Waves of an active run sent to the controller.", labels=RUN)
        lease = GaugeMetricFamily(
            "console_run_lease_seconds",
            "Seconds left on the lease of the worker driving an active run (negative: expired, another may take it).",
            labels=[*RUN, "owner"],
        )
        now = time.time()
        for r in self.store.scrape.active_runs():
            labels = [r.cluster, str(r.id)]
            left.add_metric(labels, r.partitions_left)
            stuck.add_metric(labels, int(r.stuck))
            waves.add_metric(labels, r.waves)
            sent.add_metric(labels, r.waves_sent)
            if r.owner is not None and r.lease_until is not None:
                lease.add_metric([*labels, r.owner], r.lease_until - now)
        yield from (left, stuck, waves, sent, lease)
