"""Counters, gauges and histograms updated where things happen, in the console's own registry
(no process or platform metrics: the console's work only). Cheap to update: in memory."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

REGISTRY = CollectorRegistry(auto_describe=True)
"""What the metrics address serves."""

WAVES_SENT = Counter("console_waves_sent", "Waves this process sent to the controller.", ["cluster"], registry=REGISTRY)
CANCELS = Counter("console_cancels", "Cancels asked for, by outcome.", ["cluster", "outcome"], registry=REGISTRY)
CANCEL_SECONDS = Histogram(
    "console_cancel_duration_seconds",
    "From a cancel asked for to the controller's answer.",
    ["cluster"],
    buckets=(0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60),
    registry=REGISTRY,
)
HEARTBEAT = Gauge(
    "console_executor_heartbeat_timestamp_seconds",
    "When this process's executor last stepped a cluster's runs (Unix time).",
    ["cluster"],
    registry=REGISTRY,
)
IN_FLIGHT = Gauge(
    "console_reassignments_in_flight",
    "Partitions reassigning on the cluster at the executor's last look: the console's runs' and others'.",
    ["cluster", "mover"],
    registry=REGISTRY,
)
BYTES_LEFT = Gauge(
    "console_run_bytes_left",
    "Bytes the running wave of a run still has to copy, at the executor's last look.",
    ["cluster", "run"],
    registry=REGISTRY,
)
ETA_SECONDS = Gauge(
    "console_run_eta_seconds",
    "Seconds until the running wave's copies are done at the rate seen since the last look.",
    ["cluster", "run"],
    registry=REGISTRY,
)
NOTIFICATION_FAILURES = Counter(
    "console_notification_failures",
    "Notifications this process gave up on after their retries.",
    ["cluster", "event"],
    registry=REGISTRY,
)
NOTIFICATIONS_SENT = Counter(
    "console_notifications_sent",
    "Notifications this process delivered.",
    ["cluster", "event"],
    registry=REGISTRY,
)


def forget_run(cluster: str, run: int) -> None:
    """A run ended: its per-run gauges go (a series of an ended run would stay at its last value)."""
    for gauge in (BYTES_LEFT, ETA_SECONDS):
        try:
            gauge.remove(cluster, str(run))
        except KeyError:
            pass
