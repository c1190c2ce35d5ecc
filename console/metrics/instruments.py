"""Counters, gauges and histograms updated where things happen, in the console's own registry
(no process or platform metrics: the console's work only). Cheap to update: in memory."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

REGISTRY = CollectorRegistry(auto_describe=True)
"""What the metrics address serves."""


def _counter(name: str, doc: str, *labels: str) -> Counter:
    return Counter(name, doc, labels, registry=REGISTRY)


def _gauge(name: str, doc: str, *labels: str) -> Gauge:
    return Gauge(name, doc, labels, registry=REGISTRY)


WAVES_SENT = _counter("console_waves_sent", "Waves this process sent to the controller.", "cluster")
CANCELS = _counter("console_cancels", "Cancels asked for, by outcome.", "cluster", "outcome")
CANCEL_SECONDS = Histogram(
    "console_cancel_duration_seconds",
    "From a cancel asked for to the controller's answer.",
    ["cluster"],
    buckets=(0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60),
    registry=REGISTRY,
)
HEARTBEAT = _gauge(
    "console_executor_heartbeat_timestamp_seconds",
    "When this process's executor last stepped a cluster's runs (Unix time).",
    "cluster",
)
IN_FLIGHT = _gauge(
    "console_reassignments_in_flight",
    "Partitions reassigning on the cluster at the executor's last look: the console's runs' and others'.",
    "cluster",
    "mover",
)
BYTES_LEFT = _gauge(
    "console_run_bytes_left",
    "Bytes the running wave of a run still has to copy, at the executor's last look.",
    "cluster",
    "run",
)
ETA_SECONDS = _gauge(
    "console_run_eta_seconds",
    "Seconds until the running wave's copies are done at the rate seen since the last look.",
    "cluster",
    "run",
)
NOTIFICATION_FAILURES = _counter(
    "console_notification_failures", "Notifications this process gave up on after their retries.", "cluster", "event"
)
NOTIFICATIONS_SENT = _counter("console_notifications_sent", "Notifications this process delivered.", "cluster", "event")
GUARDRAIL = _gauge(
    "console_run_guardrail",
    "1 while a guardrail holds a run (paused, held or slowed), by the guardrail; 0 once it no longer does.",
    "cluster",
    "run",
    "rule",
)
_GUARDRAILS_SET: set[tuple[str, str, str]] = set()


def guardrail(cluster: str, run: int, rule: str, holding: bool) -> None:
    """Whether guardrail ``rule`` holds ``run`` now."""
    labels = (cluster, str(run), rule)
    _GUARDRAILS_SET.add(labels)
    GUARDRAIL.labels(*labels).set(1 if holding else 0)


def forget_run(cluster: str, run: int) -> None:
    """A run ended: its per-run gauges go (a series of an ended run would stay at its last value)."""
    for gauge in (BYTES_LEFT, ETA_SECONDS):
        try:
            gauge.remove(cluster, str(run))
        except KeyError:
            pass
    for labels in [x for x in _GUARDRAILS_SET if x[:2] == (cluster, str(run))]:
        _GUARDRAILS_SET.discard(labels)
        GUARDRAIL.remove(*labels)
