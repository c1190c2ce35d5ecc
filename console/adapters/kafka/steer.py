"""Reads a hung broker does not hold up.

A broker paused (SIGSTOP, a stalled disk, a full GC) keeps its sockets open: the kernel still
accepts connections, and nothing answers. kafka-python sends a request that names no broker to its
"least loaded" node, which prefers an open connection with nothing in flight: the hung broker's, as
often as not. Each such request then waits for the whole request timeout, and the console said "the
cluster did not answer" about a cluster whose other brokers and controllers were all well.

:class:`Unanswering` remembers the brokers a request timed out on for a minute; :func:`steer` makes
a kafka-python client's next requests go to another broker while there is one.
"""

from __future__ import annotations

import random
import threading
import time
from dataclasses import dataclass
from typing import Any

AVOID_S = 60.0
"""How long a broker a request timed out on is passed over (the page's cluster info is read at most
once a minute: the next read avoids it, the one after asks it again)."""


class Unanswering:
    """The brokers a request timed out on lately, by id (thread-safe)."""

    def __init__(self, for_s: float = AVOID_S) -> None:
        self.for_s = for_s
        self._until: dict[int, float] = {}
        self._lock = threading.Lock()

    def mark(self, node: int) -> None:
        with self._lock:
            self._until[node] = time.monotonic() + self.for_s

    def clear(self, node: int) -> None:
        with self._lock:
            self._until.pop(node, None)

    def avoided(self) -> frozenset[int]:
        now = time.monotonic()
        with self._lock:
            return frozenset(n for n, until in self._until.items() if until > now)


@dataclass
class Picked:
    """The broker a steered client sent its last request to (None before any): an admin call's
    requests go one after another, so a call that timed out timed out there. The library's own
    metadata refresh does not count: it follows the timeout, from another broker it names, and
    the broker to blame is the one the call's request went to."""

    last: int | None = None


def steer(client: Any, unanswering: Unanswering) -> Picked:
    """Make ``client`` (a kafka-python admin client) send its requests that name no broker to a
    broker not in ``unanswering`` while there is one, and say where it sent the last. The choice
    is the library's own (``least_loaded_node``) unless it falls on an avoided broker."""
    manager = client._manager
    picked = Picked()
    library = type(manager)

    def send(request: Any, node_id: int | None = None, request_timeout_ms: int | None = None) -> Any:
        if node_id is None:
            node_id = library.least_loaded_node(manager)
            avoided = unanswering.avoided()
            if node_id in avoided:
                others = [b.node_id for b in manager.cluster.brokers() if b.node_id not in avoided]
                if others:
                    node_id = random.choice(others)
        if not type(request).__name__.startswith("MetadataRequest"):
            picked.last = node_id
        return library.send(manager, request, node_id=node_id, request_timeout_ms=request_timeout_ms)

    manager.send = send  # this client only: the library's class is untouched
    return picked


def timed_out(exc: BaseException) -> bool:
    """Whether ``exc`` is a request that got no answer in time (not a refusal, not a closed port)."""
    from kafka import errors as ke

    return isinstance(exc, (ke.KafkaTimeoutError, ke.RequestTimedOutError, TimeoutError))
