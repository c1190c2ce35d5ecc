"""Carries runs out, one step at a time: throttle a wave, submit it, wait for it, clean up.

Every step writes its intent to the store before the side effect, so a worker that restarts
anywhere picks the run up from the store, reconciles with the cluster and never sends a wave
twice: before (re)sending a wave it leaves out every partition the cluster already shows moving
to, or sitting at, its target. A run can end with a preferred leader election of its partitions
(:class:`~console.runs.election.Elector`), after its last wave and before it is marked completed. The executor
talks to the cluster only through a :class:`~console.runs.gateway.ClusterGateway`, so it can be
driven against an in-memory fake.
"""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Callable, Iterable

from console.core.errors import (
    AuthorizationFailed,
    ConsoleError,
    LeaseLost,
    UnsupportedByCluster,
)
from console.core.format import plural
from console.core.model import ClusterState, SourceStatus, partition_name
from console.core.states import RunState, WaveState
from console.moves.cancel import cancelled_text
from console.moves.guardrails import GuardrailSettings
from console.notify.events import Event
from console.plans.plan import parse_plan
from console.runs.closing import Closer, Ending
from console.runs.dirmoves import DirMover
from console.runs.election import Elector
from console.runs.gateway import ClusterGateway
from console.runs.guarding import Guarding
from console.runs.lease import fenced
from console.runs.reading import READ_WITHIN_S, BoundedReads
from console.runs.steps import Ports, Step
from console.runs.submitting import Submitter
from console.runs.throttling import Throttler
from console.runs.watching import Watcher, WaveStatus
from console.storage.runs import Run, Wave
from console.storage.store import Store

__all__ = ["LEASE_S", "Executor", "clean_up_after_cancel"]

LEASE_S = float(os.environ.get("CONSOLE_RUN_LEASE_S", "30"))
"""A worker that stops without saying so (killed) gives its runs up to another after this long."""


class Executor:
    """Carries runs out one step at a time: the coordinator of a run's parts, each an object of its
    own (a module each) that it owns and sequences; a tick reads the cluster, asks the guardrails,
    then submits, watches, elects or ends the run. It holds the lease of the run it drives: every
    request of a part that changes the cluster is fenced by it."""

    def __init__(
        self,
        store: Store,
        cluster: ClusterGateway,
        user: str,
        settle_s: float = 1.5,
        poll_s: float = 0.5,
        stuck_after_s: float | None = None,
        guardrails: GuardrailSettings | None = None,
        read_within_s: float = READ_WITHIN_S,
    ) -> None:
        self.store = store
        self.user = user
        self.owner = f"{socket.gethostname()}:{os.getpid()}:{id(self):x}"
        self.driving: int | None = None
        """The run whose step is being taken (its lease checked before every request), or None."""
        self.lease_s = 30.0
        """How long the lease is renewed for (set with :attr:`driving`)."""
        self.cluster = fenced(cluster, self._fence)
        """The cluster, each request that changes it sent only while this executor holds the lease
        of the run it drives (:mod:`console.runs.lease`)."""
        self.read_clock: Callable[[], float] = time.monotonic
        """Times each step's read of the cluster (the guardrails hold a wave on a picture that took too long)."""
        self.reads = BoundedReads(
            lambda: self.cluster.snapshot(),
            cluster.name,
            read_within_s,
            lambda: self.read_clock(),
            full_source=lambda: self.cluster.snapshot(full=True),
        )
        """Each step's read of the cluster, given up after ``read_within_s`` (:mod:`console.runs.reading`):
        in full when the step may send a wave (:meth:`_sends`), else with the sizes and topic configs
        of what is not in flight carried over from up to the cluster's ``sizes_every_s`` ago."""
        ports = Ports(store, self.cluster, user, self._fence)
        self.guarding = Guarding(store, self.cluster, user, ports.announce, guardrails)
        """The guardrails, asked at each step of a run before anything is sent (:mod:`console.runs.guarding`)."""
        self.dirs = DirMover(ports)
        self.throttler = Throttler(ports, poll_s)
        self.submitter = Submitter(ports, poll_s)
        self.watcher = Watcher(ports, settle_s, stuck_after_s)
        self.elector = Elector(ports)
        self.closer = Closer(ports, self.owner)
        self.ports = ports

    def _fence(self) -> None:
        """Before a request of the run being driven: still its lease holder (renewed), or nothing is sent."""
        run_id = self.driving
        if run_id is not None and not self.store.runs.renew(run_id, self.owner, self.lease_s):
            raise LeaseLost(
                f"Run {run_id} is driven by another worker now: this one lost its lease (it was paused or "
                "cut off from the store) and sends nothing more for it.",
                "Nothing was sent; the run goes on with the worker that took it over.",
            )

    # -- stepping --------------------------------------------------------------------------------
    def tick(self, run_id: int) -> Step:
        run = self.store.runs.require(run_id)
        if not run.active:
            return Step(run, None, run.state)
        with self.store.transaction():
            lease = self.store.runs.take(run_id, self.owner, LEASE_S)
            if lease.took_from is not None:  # the worker that drove it stopped, or was stopped
                self.ports.record(
                    run, "run-handover", {"run": run.id, "from": lease.took_from, "to": self.owner}, "taken over"
                )
        if lease.holder is not None:
            return Step(run, None, f"driven by another worker ({lease.holder})")
        self.driving, self.lease_s = run_id, LEASE_S
        try:
            return self._step(run)
        except (AuthorizationFailed, UnsupportedByCluster) as e:  # asking again will not help
            return self._fail(run, f"{e.message} {e.hint}")
        finally:
            self.driving = None

    def drive(
        self,
        run_id: int,
        every: float = 1.0,
        progress: Callable[[Step], None] | None = None,
        timeout: float | None = None,
    ) -> Run:
        """Tick until the run ends (or ``timeout`` seconds pass)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            try:
                step = self.tick(run_id)
            except ConsoleError as e:  # the cluster did not answer: the next tick tries again
                step = Step(self.store.runs.require(run_id), None, f"retrying: {e.message}")
            if progress is not None:
                progress(step)
            if step.run.state.terminal or (deadline is not None and time.monotonic() > deadline):
                return step.run
            time.sleep(every)

    def _sends(self, run: Run) -> bool:
        """Whether this step of ``run`` may send a wave (its next open wave is pending): its read is
        then a full one, so that the guardrails, the wave's throttle (merged into its topics' lists)
        and its log dirs see every topic's configs and every size as they are now."""
        wave = next((w for w in self.store.runs.waves(run.id) if w.state.open), None)
        return run.state is RunState.RUNNING and wave is not None and wave.state is WaveState.PENDING

    def _step(self, run: Run) -> Step:
        read = self.reads.read(full=self._sends(run))  # within its deadline, whatever the cluster does
        state = read.state
        # before anything is sent: it may pause, hold or slow the run (a picture that took too long, too)
        guarded = self.guarding.step(run, state, read.seconds)
        run = guarded.run
        if state.status.reassignments is not SourceStatus.OK:
            waits = "paused" if run.state is RunState.PAUSED else "waiting"
            return Step(run, None, f"{waits}: {guarded.why or 'ListPartitionReassignments did not answer'}")
        wave = next((w for w in self.store.runs.waves(run.id) if w.state.open), None)
        if wave is None:
            if run.elect_leaders:  # every wave completed: the closing election, then completed
                elected = self.elector.elect(run, state)
                if isinstance(elected, Step):
                    return elected
                return self._end(run, self.closer.completed(run, self.dirs.not_in_dir(run), elected))
            return self._end(run, self.closer.completed(run, self.dirs.not_in_dir(run), None))
        if wave.state is WaveState.PENDING:
            if asked := self.store.runs.cancel_asked(run.id):  # cancelled as a run between two waves
                return self._finish(run, RunState.CANCELLED, did=f"run cancelled by {asked}")
            if run.state is RunState.PAUSED:
                return Step(run, wave.number, "paused" + (f": {guarded.why}" if guarded.why else ""))
            if run.state is RunState.STOPPING:
                return self._finish(run, RunState.STOPPED)
            if guarded.hold:
                return Step(run, wave.number, f"holding wave {wave.number}: {guarded.why}")
            if guarded.slow:
                kept = self.guarding.cut(run, wave.number)
                wave = next(w for w in self.store.runs.waves(run.id) if w.number == wave.number)
                self.ports.record(run, "wave-cut", {"run": run.id, "wave": wave.number, "kept": kept}, "cut")
            if not read.full:  # a read under way when the step began (the cluster slow): the next step's
                return Step(run, wave.number, f"waiting: wave {wave.number} is sent on a full read of the cluster")
            self.throttler.throttle(run, wave.number, state, parse_plan(wave.entries_json).entries)
            with self.store.transaction():  # intent, before the request, by the run's driver only
                self._fence()
                self.store.runs.set_wave(run.id, wave.number, WaveState.SUBMITTING)
            return self._submit(run, wave, state)
        if wave.state is WaveState.SUBMITTING:  # a worker stopped between intent and answer: reconcile
            return self._submit(run, wave, state, resuming=True)
        gone = self.watcher.gone(run, wave, state)
        entries = self.watcher.accepted(run, wave)
        self.dirs.offline(run, wave.number, state, entries)
        self.dirs.send(run, wave.number, state, entries)
        status = self.watcher.status(run, wave, state, entries)
        if status.pending:
            self.watcher.watch(run, state, status)
            return Step(run, wave.number, status.progress(wave.number, len(gone)))
        behind = self.watcher.shown_on_brokers(run, wave, (e for e in entries if e.key not in status.cancelled))
        if behind is not None:
            return Step(run, wave.number, behind)
        return self._wave_ended(run, wave, status)

    def _submit(self, run: Run, wave: Wave, state: ClusterState, resuming: bool = False) -> Step:
        """Send ``wave`` (``resuming``: reconciled with the cluster first): running, or, when the
        controller took none of it, the run failed (nothing more is sent)."""
        # named log dirs first, as the official tool does: a replica still to be created is placed there
        self.dirs.send(run, wave.number, state, parse_plan(wave.entries_json).entries)
        if not self.submitter.send(run, wave, state, resuming):  # older than 2.4: the znode path instead
            return self._submit(self.store.runs.require(run.id), wave, state)
        took = [o for o in self.store.runs.outcomes(run.id, wave.number) if o.accepted]
        if not took:  # nothing of the wave runs: stop here, nothing more is sent
            self.throttler.unthrottle(run, wave.number)
            self.store.runs.set_wave(run.id, wave.number, WaveState.FAILED)
            return self._finish(self.store.runs.require(run.id), RunState.FAILED)
        self.store.runs.set_wave(run.id, wave.number, WaveState.RUNNING)
        return Step(
            self.store.runs.require(run.id),
            wave.number,
            f"wave {wave.number} submitted ({plural(len(took), 'partition')})",
        )

    def _wave_ended(self, run: Run, wave: Wave, status: WaveStatus) -> Step:
        """Nothing of the wave is left to wait for. The run goes on (its wave completed, naming the
        partitions an operator cancelled) unless it was cancelled as a run, or the cancels took back
        everything the wave was moving: then it ends cancelled, and no further wave is sent."""
        asked = self.store.runs.cancel_asked(run.id)
        if asked or (status.cancelled and not status.accepted):
            if status.accepted:
                self._wave_completed(run, wave, status)
            else:
                self.throttler.unthrottle(run, wave.number)
                self.store.runs.set_wave(run.id, wave.number, WaveState.CANCELLED)
            return self._end(run, self.closer.cancelled(self.store.runs.require(run.id), asked))
        self._wave_completed(run, wave, status)
        said = f"; {cancelled_text(status.cancelled)}" if status.cancelled else ""
        return Step(self.store.runs.require(run.id), wave.number, f"wave {wave.number} completed{said}")

    def _wave_completed(self, run: Run, wave: Wave, status: WaveStatus) -> None:
        """Its throttles off, the wave completed (audited, naming the partitions cancelled), said."""
        self.throttler.unthrottle(run, wave.number)
        cancelled = [partition_name(*k) for k in status.cancelled]
        response = {**({"cancelled": cancelled} if cancelled else {}), **self.watcher.brokers_said(run, wave)}
        with self.store.transaction():
            self.store.runs.set_wave(run.id, wave.number, WaveState.COMPLETED)
            self.ports.record(
                run,
                "wave-complete",
                {"run": run.id, "wave": wave.number},
                "completed",
                response=response or None,
            )
        said = f", {cancelled_text(status.cancelled)}" if status.cancelled else ""
        self.ports.notify(run, Event.WAVE_DONE, f"Wave {wave.number} of run #{run.id} ({run.name}) completed{said}.")

    def _after_cancel(self, run_id: int) -> Step:
        """Clean up after a cancel of a run's partitions (see :func:`clean_up_after_cancel`): those
        cancelled are recorded, and once nothing of the wave is left to wait for, the wave ends as
        :meth:`_wave_ended` says (the run cancelled: its throttles off).
        Only with the run's lease: when a worker drives the run, the worker cleans up at its next
        step (two clean-ups at once would each take the throttles off and record it)."""
        run = self.store.runs.require(run_id)
        wave = next((w for w in self.store.runs.waves(run_id) if w.state is WaveState.RUNNING), None)
        if not run.active or wave is None:
            return Step(run, None, run.state)
        holder = self.store.runs.claim(run_id, self.owner, LEASE_S)
        if holder is not None:
            return Step(run, wave.number, f"its worker cleans up ({holder})")
        self.driving, self.lease_s = run_id, LEASE_S
        try:
            status = self.watcher.status(run, wave, self.cluster.snapshot())
            if not status.pending:
                return self._wave_ended(run, wave, status)
            return Step(run, wave.number, "still moving")
        finally:
            self.driving = None
            self.store.runs.release(run_id, self.owner)

    # -- ending a run -------------------------------------------------------------------------------
    def apply_rate(self, run: Run, rate: int) -> None:
        """Give the brokers the running wave throttles the run's new ``rate`` (the ledger keeps
        what was there before the run); the caller recorded the change."""
        self.throttler.apply_rate(run, rate)

    def _fail(self, run: Run, why: str) -> Step:
        try:
            self.throttler.unthrottle(run, None)
        except ConsoleError:
            pass  # left in the ledger for the sweeper
        return self._finish(run, RunState.FAILED, unthrottle=False, response={"error": why}, did=f"run failed: {why}")

    def finish(self, run: Run, how: RunState, request: dict[str, object] | None = None) -> Step:
        """End ``run`` as ``how`` (its throttles off first); for operations such as abandon."""
        return self._finish(run, how, request=request)

    def _end(self, run: Run, ending: Ending) -> Step:
        return self._finish(run, ending.how, response=ending.response, did=ending.did)

    def _finish(
        self,
        run: Run,
        how: RunState,
        unthrottle: bool = True,
        request: dict[str, object] | None = None,
        response: object = None,
        did: str | None = None,
    ) -> Step:
        """End ``run`` as ``how``: its throttles off (unless ``unthrottle`` is False), then closed
        once (:meth:`Closer.close`), the guardrails forget it, the team is told."""
        if unthrottle:
            self.throttler.unthrottle(run, None)
        ended = self.closer.close(run, how, request, response)
        if ended is not None:
            return ended
        self.guarding.forget(run)
        self.closer.told(run, how, did)
        return Step(self.store.runs.require(run.id), None, did or f"run {how}")


def clean_up_after_cancel(store: Store, cluster: ClusterGateway, user: str, run_ids: Iterable[int]) -> list[Step]:
    """After a cancel the controller took, each run among ``run_ids`` has its cancelled partitions
    recorded and, when nothing of its running wave is left to wait for, the wave ended now (the run
    cancelled, its throttles off, when it was cancelled as a run or nothing of the wave moved): the
    one place a cancel's clean-up is driven from outside a run's worker. A run a worker drives (it
    holds the lease) is left to that worker, which cleans up at its next step; so is one the
    cluster does not answer for now."""
    executor = Executor(store, cluster, user)
    steps = []
    for run_id in sorted(set(run_ids)):
        try:
            steps.append(executor._after_cancel(run_id))
        except ConsoleError:
            pass  # its worker cleans up at its next step
    return steps
