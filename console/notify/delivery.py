"""Delivery that never holds up the caller: messages are queued (a bounded queue, a lock held for an
append) and one background thread sends them, per destination in order, retrying with back-off;
a message that still cannot be delivered after its retries is handed to its ``on_failure``.

The thread is the only sender, so a destination that hangs or refuses costs a run or a cancel
nothing: :meth:`Delivery.submit` returns at once whatever the destinations do. ``clock`` and
:meth:`Delivery.step` let a test drive the retries without the thread or real waiting."""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from console.notify.events import Message
from console.notify.settings import MAX_BACKOFF_S, Destination

log = logging.getLogger(__name__)

Sender = Callable[[str, Message], None]
"""Sends one message to one URL; raises :class:`DeliveryError` (or any exception) when it was not taken."""

CAPACITY = 1000
"""Messages waiting at most; beyond it a new one fails at once (said as a failure, not queued)."""


class DeliveryError(Exception):
    """The destination did not take the message."""


@dataclass(frozen=True)
class Failure:
    """A message given up on after its attempts."""

    message: Message
    destination: str
    """Its URL with the secrets hidden."""
    attempts: int
    error: str


OnFailure = Callable[[Failure], None]


@dataclass
class _Pending:
    message: Message
    destination: Destination
    on_failure: OnFailure
    attempts: int = 0
    next_at: float = 0.0


class Delivery:
    def __init__(
        self,
        send: Sender,
        retries: int = 5,
        backoff_s: float = 2.0,
        clock: Callable[[], float] = time.monotonic,
        capacity: int = CAPACITY,
    ) -> None:
        self.send = send
        self.retries = retries
        self.backoff_s = backoff_s
        self.clock = clock
        self.capacity = capacity
        self._queues: dict[str, deque[_Pending]] = {}
        self._refused: deque[Failure] = deque()
        self._refused_to: dict[int, OnFailure] = {}
        self._cond = threading.Condition()
        self._busy = False
        self._stop = False
        self._thread: threading.Thread | None = None

    # -- the caller's side: never waits ---------------------------------------------------------------
    def submit(self, message: Message, destinations: Iterable[Destination], on_failure: OnFailure) -> None:
        with self._cond:
            for d in destinations:
                if self._waiting() >= self.capacity:
                    failure = Failure(message, d.shown, 0, f"more than {self.capacity} messages waiting: not queued")
                    self._refused.append(failure)
                    self._refused_to[id(failure)] = on_failure
                    continue
                self._queues.setdefault(d.url, deque()).append(_Pending(message, d, on_failure, 0, self.clock()))
            self._cond.notify_all()

    def waiting(self) -> int:
        """Messages not yet delivered nor given up on."""
        with self._cond:
            return self._waiting() + len(self._refused) + int(self._busy)

    def _waiting(self) -> int:
        return sum(len(q) for q in self._queues.values())

    # -- the sender's side ------------------------------------------------------------------------------
    def step(self) -> float | None:
        """Send every message that is due (each destination's in order; one that fails holds back
        the later ones of its destination until it is delivered or given up on). Returns the
        seconds until the next one is due, or None when nothing waits."""
        self._report_refused()
        for url in list(self._queues):
            while (head := self._due(url)) is not None:
                if not self._attempt(url, head):
                    break
        with self._cond:
            due = [q[0].next_at for q in self._queues.values() if q]
        return None if not due else max(0.0, min(due) - self.clock())

    def _due(self, url: str) -> _Pending | None:
        with self._cond:
            q = self._queues.get(url)
            if not q:
                self._queues.pop(url, None)
                return None
            if q[0].next_at > self.clock():
                return None
            self._busy = True
            return q[0]

    def _attempt(self, url: str, head: _Pending) -> bool:
        """One attempt at ``head``; True when it left the queue (delivered or given up on)."""
        head.attempts += 1
        error = None
        try:
            self.send(url, head.message)
        except Exception as e:  # any failure of a destination is the destination's: retried, then said
            error = f"{type(e).__name__}: {e}" if not isinstance(e, DeliveryError) else str(e)
        gone = error is None or head.attempts > self.retries
        with self._cond:
            if gone:
                self._queues[url].popleft()
            else:
                head.next_at = self.clock() + min(self.backoff_s * 2 ** (head.attempts - 1), MAX_BACKOFF_S)
        if error is not None and gone:
            self._fail(head.on_failure, Failure(head.message, head.destination.shown, head.attempts, error))
        elif error is not None:
            log.info("notification to %s failed (attempt %d): %s", head.destination.shown, head.attempts, error)
        with self._cond:  # busy until its failure is kept: drain() then sees it done
            self._busy = False
            self._cond.notify_all()
        return gone

    def _report_refused(self) -> None:
        while True:
            with self._cond:
                if not self._refused:
                    return
                failure = self._refused.popleft()
                on_failure = self._refused_to.pop(id(failure))
                self._busy = True
            self._fail(on_failure, failure)
            with self._cond:
                self._busy = False
                self._cond.notify_all()

    @staticmethod
    def _fail(on_failure: OnFailure, failure: Failure) -> None:
        try:
            on_failure(failure)
        except Exception:
            log.exception("recording a failed notification failed")

    # -- the thread ---------------------------------------------------------------------------------
    def start(self) -> Delivery:
        with self._cond:
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="console-notify", daemon=True)
                self._thread.start()
        return self

    def _run(self) -> None:
        while True:
            self.step()
            with self._cond:  # what arrived since the step is seen here, under the lock: no wake-up lost
                if self._stop:
                    return
                due = [q[0].next_at for q in self._queues.values() if q]
                wait = None if not due else min(due) - self.clock()
                if not self._refused and (wait is None or wait > 0):
                    self._cond.wait(timeout=wait)

    def drain(self, timeout: float) -> bool:
        """Wait (at most ``timeout`` seconds of real time) until nothing waits; True if so."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while self._waiting() or self._refused or self._busy:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._cond.wait(timeout=min(left, 0.1))
        return True

    def stop(self) -> None:
        with self._cond:
            self._stop = True
            self._cond.notify_all()
