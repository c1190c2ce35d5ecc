"""Sending one message through Apprise (one URL: Slack, Teams, PagerDuty, email, ntfy, a JSON
webhook, ...); its refusal, with Apprise's own words, as a :class:`DeliveryError`. Apprise is
imported on the first send (it takes a second to import; most commands never send)."""

from __future__ import annotations

import logging

from console.metrics import instruments
from console.notify.delivery import DeliveryError
from console.notify.events import Message


def apprise_send(url: str, message: Message) -> None:
    import apprise

    kinds = {
        "info": apprise.NotifyType.INFO,
        "warning": apprise.NotifyType.WARNING,
        "failure": apprise.NotifyType.FAILURE,
    }
    sender = apprise.Apprise()
    if not sender.add(url):
        raise DeliveryError("not a URL Apprise knows (check its scheme and fields)")
    with apprise.LogCapture(level=logging.WARNING) as said:  # type: ignore[no-untyped-call]
        ok = sender.notify(title=message.title, body=message.body, notify_type=kinds[message.kind])
    if not ok:
        lines = [line.strip() for line in said.getvalue().splitlines() if line.strip()]
        raise DeliveryError(lines[-1] if lines else "the destination did not take it")
    instruments.NOTIFICATIONS_SENT.labels(message.cluster, message.event.value).inc()
