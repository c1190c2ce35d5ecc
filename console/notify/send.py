"""Sending one message through Apprise (one URL: Slack, Teams, PagerDuty, email, ntfy, a JSON
webhook, ...); its refusal, with Apprise's own words, as a :class:`DeliveryError`. Apprise is
imported by :func:`prepare` when a process first needs it (it takes a second to import; most
commands never send), before any message is queued: a send while the process ends cannot import
what registers exit handlers."""

from __future__ import annotations

import logging

from console.metrics import instruments
from console.notify.delivery import DeliveryError
from console.notify.events import Message


def prepare() -> None:
    """Import what a send needs, now (the delivery thread then never imports at exit)."""
    import concurrent.futures.thread  # noqa: F401

    import apprise  # noqa: F401


def apprise_send(url: str, message: Message) -> None:
    import apprise

    kinds = {
        "info": apprise.NotifyType.INFO,
        "warning": apprise.NotifyType.WARNING,
        "failure": apprise.NotifyType.FAILURE,
    }
    sender = apprise.Apprise(asset=apprise.AppriseAsset(async_mode=False))  # in this thread: no pool to refuse at exit
    if not sender.add(url):
        raise DeliveryError("not a URL Apprise knows (check its scheme and fields)")
    with apprise.LogCapture(level=logging.WARNING) as said:  # type: ignore[no-untyped-call]
        ok = sender.notify(title=message.title, body=message.body, notify_type=kinds[message.kind])
    if not ok:
        lines = [line.strip() for line in said.getvalue().splitlines() if line.strip()]
        raise DeliveryError(lines[-1] if lines else "the destination did not take it")
    instruments.NOTIFICATIONS_SENT.labels(message.cluster, message.event.value).inc()
