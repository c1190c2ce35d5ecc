"""How often a reader reads every partition's sizes and every topic's configs (pure: a clock is given).

Every snapshot reads Metadata and the reassignments in flight. The sizes of every partition
(DescribeLogDirs, on every broker) and the configs of every topic (DescribeConfigs) are most of
what a snapshot asks of a large cluster, and change slowly: they are read in full at most every
``sizes_every_s`` seconds. In between, a snapshot asks only for the sizes and topic configs of the
partitions in flight (what the copy progress, the ETA and the guardrails need at every refresh),
and carries the rest over from the last full read (:mod:`console.state.carry`).

A full read is due when none was complete yet (or the last one was not), when the period has
passed, when the cluster changed through the reader's own connections or a ZooKeeper watch fired
since the last one (the ``generation`` the reader hands in), or when a caller asks for one (a
submit: its checks need every size).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Hashable
from enum import Enum


class FullRead(str, Enum):
    """Why a snapshot reads every size and topic config."""

    FIRST = "none read in full yet"
    INCOMPLETE = "the last read did not answer in full"
    DUE = "the period passed"
    CHANGED = "the cluster changed through this reader, or a ZooKeeper watch fired"
    ASKED = "asked for"
    EVERY_TIME = "sizes_every_s is 0"


class Cadence:
    """When a reader reads sizes and topic configs in full (thread-safe). ``every_s``: at most that
    often (0: at every snapshot); ``clock``: epoch seconds (a fake in tests)."""

    def __init__(self, every_s: float, clock: Callable[[], float] = time.time) -> None:
        self.every_s = every_s
        self.clock = clock
        self._lock = threading.Lock()
        self._full_at: float | None = None
        self._generation: Hashable = None
        self._complete = False

    def due(self, generation: Hashable, asked: bool = False) -> FullRead | None:
        """Why the next snapshot reads in full, or None: it reads only what is in flight.
        ``generation``: what changes when the cluster was changed through the reader or a
        ZooKeeper watch fired (compared with the one of the last full read); ``asked``: the caller
        wants every size and topic config as they are now."""
        with self._lock:
            if asked:
                return FullRead.ASKED
            if self.every_s <= 0:
                return FullRead.EVERY_TIME
            if self._full_at is None:
                return FullRead.FIRST
            if not self._complete:
                return FullRead.INCOMPLETE
            if generation != self._generation:
                return FullRead.CHANGED
            if self.clock() - self._full_at >= self.every_s:
                return FullRead.DUE
            return None

    def read_in_full(self, started_at: float, generation: Hashable, complete: bool) -> None:
        """A full read that started at ``started_at`` (epoch seconds), when the generation was
        ``generation``, came back; ``complete``: every broker answered its log dirs and the configs
        were all read (else the next snapshot reads in full again)."""
        with self._lock:
            if self._full_at is not None and started_at < self._full_at:
                return  # a read that began before the last one recorded: it says nothing newer
            self._full_at, self._generation, self._complete = started_at, generation, complete

    def lost(self) -> None:
        """A narrow read could not carry everything over (a broker did not answer): the next
        snapshot reads in full."""
        with self._lock:
            self._complete = False

    @property
    def full_at(self) -> float | None:
        """When the last full read began (epoch seconds), None before the first."""
        return self._full_at
