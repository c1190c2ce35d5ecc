"""Ships the audit log to its sinks from the store: in id order, at least once, each sink resuming
after its cursor (``store.stream``), so a sink that is briefly unreachable, or a restart, loses
nothing.

Entries are taken while their ids follow on without a gap. The store's ids are given in commit
order on SQLite; where a gap can appear (an id given to a transaction that has not committed yet,
or rolled back), the shipper waits ``gap_wait_s`` for it to be filled before it passes over it.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from console.core.errors import ConsoleError
from console.storage.audit import AuditEntry
from console.storage.store import Store
from console.stream.sinks import Sink

log = logging.getLogger(__name__)

BATCH = 500
"""Entries per batch sent to a sink."""
GAP_WAIT_S = 5.0


@dataclass(frozen=True)
class Shipped:
    """One sink's turn: entries taken, its cursor after, and why it stopped short (None: it did not)."""

    sink: str
    taken: int
    cursor: int
    problem: str | None = None


class Shipper:
    def __init__(
        self,
        store: Store,
        sinks: Sequence[Sink],
        batch: int = BATCH,
        gap_wait_s: float = GAP_WAIT_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.store = store
        self.sinks = list(sinks)
        self.batch = max(1, batch)
        self.gap_wait_s = gap_wait_s
        self.clock = clock
        self._gap_since: dict[str, tuple[int, float]] = {}
        self.last: dict[str, Shipped] = {}
        """Each sink's last turn (what a page or the CLI shows of the stream)."""

    def _following(self, sink: str, cursor: int, entries: list[AuditEntry]) -> list[AuditEntry]:
        """The entries whose ids follow on from ``cursor``; a gap at the start is passed over once
        it has lasted ``gap_wait_s``."""
        expected = cursor + 1
        if entries and entries[0].id != expected:
            seen = self._gap_since.get(sink)
            if seen is None or seen[0] != expected:
                self._gap_since[sink] = (expected, self.clock())
                return []
            if self.clock() - seen[1] < self.gap_wait_s:
                return []
            expected = entries[0].id  # waited long enough: the missing ids are not coming
        self._gap_since.pop(sink, None)
        out: list[AuditEntry] = []
        for e in entries:
            if e.id != expected:
                break
            out.append(e)
            expected += 1
        return out

    def ship_once(self) -> list[Shipped]:
        """One turn of every sink: at most ``batch`` entries each."""
        out = []
        for sink in self.sinks:
            cursor = self.store.stream.get(sink.name)
            entries = self._following(sink.name, cursor, self.store.stream.entries_after(cursor, self.batch))
            problem = None
            try:
                n = sink.take(entries)
            except (ConsoleError, OSError) as e:
                n, problem = 0, str(e)
            if n:
                cursor = entries[n - 1].id
                self.store.stream.advance(sink.name, cursor)
            if n < len(entries) and problem is None:
                problem = f"{len(entries) - n} entries not delivered yet; sent again on the next turn"
            if problem:
                log.warning("audit stream %s: %s", sink.name, problem)
            shipped = Shipped(sink.name, n, cursor, problem)
            self.last[sink.name] = shipped
            out.append(shipped)
        return out

    def drain(self, max_turns: int = 1_000) -> int:
        """Turns until no sink takes anything (or ``max_turns``); entries taken in all."""
        total = 0
        for _ in range(max_turns):
            taken = sum(s.taken for s in self.ship_once())
            total += taken
            if not taken:
                break
        return total

    def run(self, stop: threading.Event, interval_s: float = 1.0) -> None:
        """Ship until ``stop`` is set: at once while there is more, else every ``interval_s``."""
        while not stop.is_set():
            try:
                busy = any(s.taken == self.batch for s in self.ship_once())
            except ConsoleError as e:  # the store itself: said, and tried again
                log.warning("audit stream: %s", e)
                busy = False
            if not busy:
                stop.wait(interval_s)
        for sink in self.sinks:
            sink.close()


def start_thread(shipper: Shipper, interval_s: float = 1.0) -> threading.Event:
    """Run ``shipper`` in a daemon thread; set the returned event to stop it."""
    stop = threading.Event()
    threading.Thread(target=shipper.run, args=(stop, interval_s), name="audit-stream", daemon=True).start()
    return stop
