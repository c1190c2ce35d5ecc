"""Carries runs out, one step at a time: throttle a wave, submit it, wait for it, clean up.

Every step writes its intent to the store before the side effect, so a worker that restarts
anywhere picks the run up from the store, reconciles with the cluster and never sends a wave
twice: before (re)sending a wave it leaves out every partition the cluster already shows moving
to, or sitting at, its target. A run can end with a preferred leader election of its partitions
(:meth:`Executor._elect`), after its last wave and before it is marked completed. The executor
talks to the cluster only through a :class:`~console.runs.gateway.ClusterGateway`, so it can be
driven against an in-memory fake.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable

from console.core.errors import (
    AuthorizationFailed,
    ConsoleError,
    UnsupportedByCluster,
)
from console.core.model import (
    SourceStatus,
)
from console.core.states import RunState, WaveState, wave_end_for
from console.metrics.instruments import forget_run
from console.notify.events import Event
from console.plans.plan import parse_plan
from console.runs.dirmoves import DirMoving, _not_in_dir_text
from console.runs.election import Electing
from console.runs.gateway import ClusterGateway
from console.runs.steps import ExecutorBase, Step
from console.runs.submitting import Submitting
from console.runs.throttling import Throttling
from console.runs.watching import Watching
from console.storage.runs import Run, Wave
from console.storage.store import Store

__all__ = ["LEASE_S", "Executor", "Step", "clean_up_after_cancel"]

LEASE_S = float(os.environ.get("CONSOLE_RUN_LEASE_S", "30"))
"""A worker that stops without saying so (killed) gives its runs up to another after this long."""


_ENDED = {
    RunState.COMPLETED: Event.RUN_COMPLETED,
    RunState.STOPPED: Event.RUN_STOPPED,
    RunState.CANCELLED: Event.RUN_CANCELLED,
    RunState.ABANDONED: Event.RUN_ABANDONED,
    RunState.FAILED: Event.RUN_FAILED,
}


class Executor(Submitting, Watching, DirMoving, Throttling, Electing, ExecutorBase):
    """Carries runs out one step at a time; each concern a part of its own (a module each), this
    class the coordinator: a tick reads the cluster, then submits, watches, elects or finishes."""

    # -- stepping --------------------------------------------------------------------------------
    def tick(self, run_id: int) -> Step:
        run = self.store.runs.require(run_id)
        if not run.active:
            return Step(run, None, run.state)
        with self.store.transaction():
            lease = self.store.runs.take(run_id, self.owner, LEASE_S)
            if lease.took_from is not None:  # the worker that drove it stopped, or was stopped
                self._record(
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

    def _step(self, run: Run) -> Step:
        state = self.cluster.snapshot()
        if state.status.reassignments is not SourceStatus.OK:
            return Step(run, None, "waiting: ListPartitionReassignments did not answer")
        wave = next((w for w in self.store.runs.waves(run.id) if w.state.open), None)
        if wave is None:
            if run.elect_leaders:  # every wave completed: the closing election, then completed
                return self._elect(run, state)
            off = self._not_in_dir(run)
            return self._finish(
                run,
                RunState.COMPLETED,
                response={"not_in_log_dir": off} if off else None,
                did="run completed" + (f"; {_not_in_dir_text(off)}" if off else ""),
            )
        if wave.state is WaveState.PENDING:
            if run.state is RunState.PAUSED:
                return Step(run, wave.number, "paused")
            if run.state is RunState.STOPPING:
                return self._finish(run, RunState.STOPPED)
            self._throttle(run, wave.number, state, parse_plan(wave.entries_json).entries)
            with self.store.transaction():  # intent, before the request, by the run's driver only
                self._fence()
                self.store.runs.set_wave(run.id, wave.number, WaveState.SUBMITTING)
            return self._submit(run, wave, state)
        if wave.state is WaveState.SUBMITTING:  # a worker stopped between intent and answer: reconcile
            return self._submit(run, wave, state, resuming=True)
        gone = self._gone(run, wave, state)
        entries = self._accepted_entries(run, wave)
        self._dirs_offline(run, wave.number, state, entries)
        self._dir_moves(run, wave.number, state, entries)
        accepted, pending, cancelled = self._wave_status(run, wave, state, entries)
        if cancelled:
            return self._cancelled(run, wave)
        if pending:
            self._min_isr_changes(run, state, pending)
            self._watch(run, state, pending, accepted)
            return Step(
                run,
                wave.number,
                f"wave {wave.number}: {accepted - len(pending)} of {accepted} done"
                + (f" ({len(gone)} gone)" if gone else ""),
            )
        self._unthrottle(run, wave.number)
        with self.store.transaction():
            self.store.runs.set_wave(run.id, wave.number, WaveState.COMPLETED)
            self._record(run, "wave-complete", {"run": run.id, "wave": wave.number}, "completed")
        self._notify(run, Event.WAVE_DONE, f"Wave {wave.number} of run #{run.id} ({run.name}) completed.")
        return Step(self.store.runs.require(run.id), wave.number, f"wave {wave.number} completed")

    def _after_cancel(self, run_id: int) -> Step:
        """Clean up a run whose running wave was cancelled (see :func:`clean_up_after_cancel`):
        throttles off, run marked cancelled.
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
            _, _, cancelled = self._wave_status(run, wave, self.cluster.snapshot())
            if cancelled:
                return self._cancelled(run, wave)
            return Step(run, wave.number, "still moving")
        finally:
            self.driving = None
            self.store.runs.release(run_id, self.owner)

    def _cancelled(self, run: Run, wave: Wave) -> Step:
        """The wave's partitions left the list without reaching their targets: cancelled."""
        self._unthrottle(run, wave.number)
        self.store.runs.set_wave(run.id, wave.number, WaveState.CANCELLED)
        return self._finish(self.store.runs.require(run.id), RunState.CANCELLED)

    # -- ending a run -------------------------------------------------------------------------------
    def _fail(self, run: Run, why: str) -> Step:
        try:
            self._unthrottle(run, None)
        except ConsoleError:
            pass  # left in the ledger for the sweeper
        return self._finish(run, RunState.FAILED, unthrottle=False, response={"error": why}, did=f"run failed: {why}")

    def finish(self, run: Run, how: RunState, request: dict[str, object] | None = None) -> Step:
        """End ``run`` as ``how`` (its throttles off first); for operations such as abandon."""
        return self._finish(run, how, request=request)

    def _finish(
        self,
        run: Run,
        how: RunState,
        unthrottle: bool = True,
        request: dict[str, object] | None = None,
        response: object = None,
        did: str | None = None,
    ) -> Step:
        if unthrottle:
            self._unthrottle(run, None)
        end = wave_end_for(how)
        with self.store.transaction():
            now = self.store.runs.require(run.id)
            if not now.active:  # ended meanwhile (a cancel's clean-up and the worker both saw it): once only
                return Step(now, None, now.state)
            for w in self.store.runs.waves(run.id):
                if w.state.open:
                    self.store.runs.set_wave(run.id, w.number, end)
            self.store.runs.set_state(run.id, how)
            self._record(run, f"run-{how}", {"run": run.id, **(request or {})}, how.value, response=response)
        self.store.runs.release(run.id, self.owner)
        self._ended(run, how, did)
        return Step(self.store.runs.require(run.id), None, did or f"run {how}")

    def _ended(self, run: Run, how: RunState, did: str | None) -> None:
        """A run just ended: said to the team, and so is any throttle it could not take off."""
        forget_run(run.cluster, run.id)
        self._notify(
            run, _ENDED[how], _sentence(did or f"run {how}") + f" (run #{run.id}, {run.name}, by {run.author})."
        )
        left = self.store.runs.ledger(run.id)
        if left:
            where = ", ".join(sorted({f"{e.kind} {e.name}: {e.key}" for e in left})[:10])
            self._notify(
                run,
                Event.THROTTLE_LEFT,
                f"{len(left)} throttle setting(s) run #{run.id} set are still on the cluster ({where}); "
                "take them off with `python -m console throttle --sweep` (or Overview's throttles).",
            )


def _sentence(text: str) -> str:
    return text[:1].upper() + text[1:]


def clean_up_after_cancel(store: Store, cluster: ClusterGateway, user: str, run_ids: Iterable[int]) -> list[Step]:
    """After a cancel the controller took, each run among ``run_ids`` whose running wave it ended
    has its throttles taken off and ends as cancelled, now: the one place a cancel's clean-up is
    driven from outside a run's worker. A run a worker drives (it holds the lease) is left to that
    worker, which cleans up at its next step; so is one the cluster does not answer for now."""
    executor = Executor(store, cluster, user)
    steps = []
    for run_id in sorted(set(run_ids)):
        try:
            steps.append(executor._after_cancel(run_id))
        except ConsoleError:
            pass  # its worker cleans up at its next step
    return steps
