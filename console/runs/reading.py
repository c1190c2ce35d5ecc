"""A step's read of the cluster, bounded in time: whatever the cluster does, the read a run's step
waits for comes back within :data:`READ_WITHIN_S`, so that the guardrails decide on time.

A snapshot never raises for cluster trouble, but it may take long: with two of three controllers
paused each Admin request waits out its timeout (10 s) and several go in turn, so one read took
75 s and more, and the guardrails heard of the lost quorum only then. :class:`BoundedReads` reads in
a thread of its own and waits for the answer until the deadline; a read not answered by then is
given up by the step (stopped waiting for) and the step gets a picture that says so: every source
:attr:`~console.core.sources.SourceStatus.UNAVAILABLE`, on which the guardrails hold (no wave is
sent) and, once the cluster has not answered for longer than their grace, pause
(:func:`console.moves.guardrails.read_concern`).

At most one read is in flight: a read given up keeps running until the clients' own timeouts end
it, and the next step waits for that same read (up to the deadline again) rather than starting
another, so a hung cluster costs one thread and one request at a time, never more per step. A read
that comes back while no step waits for it is not used (its picture is older than the step that
would act on it): the next step reads afresh. The answer's time (:attr:`Read.seconds`) runs from
the read's start, whichever step started it: a picture that took longer than the grace is no
picture to act on.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass

from console.core.model import ClusterState, ReadStatus, SourceStatus

READ_WITHIN_S = 5.0
"""How long a step waits for its read of the cluster. Half Kafka's request timeout (10 s), so one
request that hangs is given up; ten times a read of a healthy cluster on a loaded machine (0.15 to
0.45 s on the sandbox, a few seconds at 100,000 partitions); and short enough that, at the worker's
poll of 1 s, a lost quorum holds the run within 10 s: a read under way when the cluster stops
answering returns by its deadline, or, when it came back just before, the next step's does (1 s
later, plus 5 s)."""


@dataclass(frozen=True)
class Read:
    """What a step read of the cluster."""

    state: ClusterState
    """The picture; when the cluster did not answer by the deadline, one that says so (every source
    unavailable, nothing else)."""
    seconds: float
    """How long the cluster has been read for it: from the read's start to its answer, or to the
    deadline when it did not answer."""
    answered: bool = True
    full: bool = False
    """Read in full: every partition's sizes and every topic's configs as they are now (else those
    of the partitions not in flight may be carried over from an earlier read)."""


def unanswered(name: str, taken_at: float) -> ClusterState:
    """The picture of a read the cluster did not answer in time: nothing known, every source
    unavailable (Metadata and ListPartitionReassignments among them: the guardrails hold)."""
    down = SourceStatus.UNAVAILABLE
    return ClusterState(taken_at, (), (), status=ReadStatus(down, down, down, down, down, down, down), name=name)


@dataclass
class _Pending:
    """The read in flight: its answer to come, when it began (the reads' clock), whether in full."""

    future: Future[ClusterState]
    began: float
    full: bool = False


class BoundedReads:
    """Snapshots through ``source`` (a step's read of the cluster), each waited for at most
    ``within_s`` seconds, one in flight at a time. ``clock`` times the reads (monotonic); ``wall``
    stamps the picture of a read not answered in time (epoch seconds, as a snapshot's ``taken_at``).
    ``full_source``: the read in full, for a step that asks for one (:meth:`read`); ``source`` too
    when not given."""

    def __init__(
        self,
        source: Callable[[], ClusterState],
        name: str,
        within_s: float = READ_WITHIN_S,
        clock: Callable[[], float] = time.monotonic,
        wall: Callable[[], float] = time.time,
        full_source: Callable[[], ClusterState] | None = None,
    ) -> None:
        self.source = source
        self.full_source = full_source
        self.name = name
        self.within_s = within_s
        self.clock = clock
        self.wall = wall
        self._pending: _Pending | None = None
        self._lock = threading.Lock()

    def read(self, full: bool = False) -> Read:
        """The cluster's picture, within ``within_s`` seconds; ``full``: read in full (the answer
        says whether it was: a read of the other kind still under way is waited for first, one read
        at a time). A read that raises (not cluster trouble: a bug, a process dying) raises here, in
        the step that waits for it."""
        with self._lock:
            pending = self._pending
            if pending is None or pending.future.done():  # answered while no step waited: too old to use
                pending = self._pending = self._start(full and self.full_source is not None)
            try:
                state = pending.future.result(timeout=self.within_s)
            except TimeoutError:  # given up: the read goes on alone, the next step waits for it
                return Read(unanswered(self.name, self.wall()), self.clock() - pending.began, answered=False)
            finally:
                if pending.future.done():
                    self._pending = None
            return Read(state, self.clock() - pending.began, full=pending.full)

    @property
    def in_flight(self) -> bool:
        """A read is under way (one a step gave up, still waiting for the cluster)."""
        pending = self._pending
        return pending is not None and not pending.future.done()

    def _start(self, full: bool) -> _Pending:
        future: Future[ClusterState] = Future()
        future.set_running_or_notify_cancel()
        source = self.full_source if full and self.full_source is not None else self.source

        def read() -> None:
            try:
                future.set_result(source())
            except BaseException as e:  # handed to the step that waits for it
                future.set_exception(e)

        began = self.clock()
        threading.Thread(target=read, name=f"cluster-read-{self.name}", daemon=True).start()
        return _Pending(future, began, full)
