"""The one way the console's parts announce an event: :func:`emit`, called by the service or the
executor step that changed the state, after its transaction. It reads the run's progress from the
store (a few rows), picks the destinations that asked for the event on the run's cluster and
queues the message; the delivery thread does the rest. It never raises into its caller and never
waits on a destination.

The process's notifier is built on first use from :mod:`console.notify.settings` (nothing is
started when no destination is configured); :func:`configure` replaces it (tests, a new file)."""

from __future__ import annotations

import atexit
import logging
import threading
from collections import Counter
from collections.abc import Callable
from functools import partial
from typing import NotRequired, TypedDict, Unpack

import msgspec

from console.core.model import PARTITION_CANCELLED, PARTITION_GONE
from console.core.states import WaveState
from console.metrics import instruments
from console.notify.delivery import Delivery, Failure, Sender
from console.notify.events import Event, Message, Progress, plan_link, run_link
from console.notify.send import apprise_send, prepare
from console.notify.settings import NotifySettings, load
from console.storage.store import Store

log = logging.getLogger(__name__)
EXIT_WAIT_S = 5.0
"""How long a process that ends waits for its queued messages (a destination that is down costs this once)."""
SYSTEM_USER = "console"
"""Who the audit log names for a notification that failed: the console itself."""


class Notifier:
    def __init__(self, settings: NotifySettings, delivery: Delivery) -> None:
        self.settings = settings
        self.delivery = delivery

    def emit(
        self,
        store: Store,
        event: Event,
        *,
        cluster: str,
        who: str,
        detail: str,
        run: int | None = None,
        plan: int | None = None,
        eta_s: float | None = None,
    ) -> None:
        if not any(self.settings.destinations.values()):
            return  # nothing configured: not a single read
        name = store.clusters.names().get(cluster, cluster)
        wanted = [d for d in self.settings.for_cluster(cluster, name) if event in d.events]
        if not wanted:
            return
        public = self.settings.public_url
        link = run_link(public, run) if run is not None else plan_link(public, plan) if plan is not None else None
        run_name, progress = _progress(store, run, eta_s) if run is not None else (None, None)
        message = Message(event, name, who, detail, run, run_name, progress, link, plan)
        self.delivery.submit(message, wanted, lambda f: _failed(store, cluster, f))


def _progress(store: Store, run_id: int, eta_s: float | None) -> tuple[str | None, Progress | None]:
    run = store.runs.get(run_id)
    if run is None:
        return None, None
    waves = store.runs.waves(run_id)
    outcomes = store.runs.outcomes(run_id)
    accepted = Counter(o.wave for o in outcomes if o.accepted)
    # accepted, then cancelled by an operator or gone: neither moved nor left
    dropped = Counter(o.wave for o in outcomes if not o.accepted and o.code in (PARTITION_CANCELLED, PARTITION_GONE))
    cancelled = sum(1 for o in outcomes if o.code == PARTITION_CANCELLED)
    sizes = [(w, _count(w.entries_json)) for w in waves]
    moved = sum(
        (accepted[w.number] - dropped[w.number]) if accepted[w.number] else n
        for w, n in sizes
        if w.state is WaveState.COMPLETED
    )
    total = sum(n for _, n in sizes)
    done = sum(1 for w in waves if w.state is WaveState.COMPLETED)
    return run.name, Progress(moved, max(total - moved - sum(dropped.values()), 0), done, len(waves), eta_s, cancelled)


def _count(entries_json: str) -> int:
    """The partitions of a wave's plan JSON (decoded, not validated again: the store holds it valid)."""
    partitions = msgspec.json.decode(entries_json).get("partitions", [])
    return len(partitions) if isinstance(partitions, list) else 0


def _failed(store: Store, cluster: str, failure: Failure) -> None:
    """A message given up on: kept for the Runs page and audited, in one transaction."""
    m = failure.message
    with store.transaction():
        store.notifications.add(cluster, m.run, m.event.value, failure.destination, failure.attempts, failure.error)
        store.audit.record(
            SYSTEM_USER,
            cluster,
            "notification-failed",
            {"event": m.event.value, "run": m.run, "plan": m.plan, "destination": failure.destination},
            "failed",
            response={"attempts": failure.attempts, "error": failure.error},
        )
    instruments.NOTIFICATION_FAILURES.labels(cluster, m.event.value).inc()


_lock = threading.Lock()
_notifier: Notifier | None = None


def notifier() -> Notifier:
    """The process's notifier, built from the settings on first use."""
    global _notifier
    with _lock:
        if _notifier is None:
            _notifier = _build(load(), apprise_send)
        return _notifier


def configure(settings: NotifySettings, send: Sender = apprise_send) -> Notifier:
    """Replace the process's notifier (the old one's waiting messages are dropped)."""
    global _notifier
    with _lock:
        if _notifier is not None:
            _notifier.delivery.stop()
        _notifier = _build(settings, send)
        return _notifier


def _build(settings: NotifySettings, send: Sender) -> Notifier:
    for problem in settings.problems:
        log.warning("notifications: %s", problem)
    delivery = Delivery(send, settings.retries, settings.backoff_s)
    if any(settings.destinations.values()):
        if send is apprise_send:
            prepare()
        delivery.start()
        _at_exit(partial(delivery.drain, EXIT_WAIT_S))  # a command that queued messages sends them before it ends
    return Notifier(settings, delivery)


def _at_exit(drain: Callable[[], object]) -> None:
    """Run ``drain`` as the process ends, before the thread pools Apprise sends through stop taking
    work: threading's own exit hooks run before ``atexit``'s, the last registered first (the pools'
    hook was registered when Apprise was imported, before this)."""
    hook = getattr(threading, "_register_atexit", None)
    try:
        (hook or atexit.register)(drain)
    except RuntimeError:  # the process is ending already
        pass


class About(TypedDict):
    """What an event is about, as :meth:`Notifier.emit` takes it: the cluster (its key), who, a
    sentence of detail, and the run, plan and ETA when there are."""

    cluster: str
    who: str
    detail: str
    run: NotRequired[int | None]
    plan: NotRequired[int | None]
    eta_s: NotRequired[float | None]


def emit(store: Store, event: Event, **about: Unpack[About]) -> None:
    """Announce ``event`` on ``about["cluster"]``; see the module's docstring. Never raises."""
    try:
        notifier().emit(store, event, **about)
    except Exception:  # a notification is never worth failing the step that made the change
        log.exception("notification of %s not queued", event)


def reset() -> None:
    """Forget the process's notifier: the next :func:`emit` reads the settings again."""
    global _notifier
    with _lock:
        if _notifier is not None:
            _notifier.delivery.stop()
        _notifier = None
