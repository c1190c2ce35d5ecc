"""The states of a run and of its waves, and the only transitions allowed between them.

A **run** is a reviewed plan carried out in waves; a **wave** is one bounded request's worth of
partitions. The storage layer checks every change against these tables in the same transaction
as the change, so two people (or a worker and a person) can never take a run somewhere it
cannot go: an illegal transition raises :class:`console.core.errors.IllegalTransition`.

Run::

    running ──pause──▶ paused ──resume──▶ running
       │ │               │
       │ └──stop──▶ stopping ──(current wave done)──▶ stopped
       │                 │
       └──────┴──────────┴──▶ completed | partly cancelled | cancelled | failed | abandoned   (terminal)

Wave::

    pending ──▶ submitting ──▶ running ──▶ completed
       │            │             │
       └────────────┴─────────────┴──▶ cancelled | failed | skipped      (terminal)
"""

from __future__ import annotations

from enum import StrEnum

from console.core.errors import IllegalTransition


class RunState(StrEnum):
    RUNNING = "running"
    """Waves are being sent, one after the other."""
    PAUSED = "paused"
    """The current wave finishes; the next one waits for "resume"."""
    STOPPING = "stopping"
    """The current wave finishes; no further wave is sent."""
    COMPLETED = "completed"
    """Every partition the controller took reached its target."""
    PARTLY_CANCELLED = "partly cancelled"
    """Completed, except for the partitions an operator cancelled while it ran (named in its
    record: "completed, 1 partition cancelled: t-5"): those went back to their original replicas,
    every other partition reached its target, and the closing leader election ran for those."""
    CANCELLED = "cancelled"
    """Cancelled as a run (its cancel on the Runs page, ``cancel --run``, everything in flight), or
    a cancel took back every partition its wave was moving: no further wave is sent. Partitions that
    had completed stay moved (its rollback JSON undoes them)."""
    FAILED = "failed"
    """The cluster refused the run (not authorised, unsupported) or no partition of a wave was accepted."""
    STOPPED = "stopped"
    """Stopped after a wave, on request; the later waves were not sent."""
    ABANDONED = "abandoned"
    """An operator stopped driving it (e.g. its topic was deleted); its throttles were taken off."""

    @property
    def active(self) -> bool:
        """Still driven by a worker."""
        return self in _ACTIVE_RUN

    @property
    def terminal(self) -> bool:
        return not self.active

    def can_become(self, new: RunState) -> bool:
        return new in _RUN_NEXT[self]


class WaveState(StrEnum):
    PENDING = "pending"
    SUBMITTING = "submitting"
    """Intent recorded, request on its way: a worker that resumes here reconciles with the cluster."""
    RUNNING = "running"
    """Accepted by the controller; the partitions are copying."""
    COMPLETED = "completed"
    """Every accepted partition at its target and in sync, and out of the in-flight list, but those
    an operator cancelled meanwhile (recorded as cancelled: back to their original replicas)."""
    CANCELLED = "cancelled"
    """None of its partitions moved: they went back to their original replicas (or it was never
    sent: the run was cancelled)."""
    FAILED = "failed"
    """The controller accepted none of it (or the run failed before it was sent)."""
    SKIPPED = "skipped"
    """Not followed any further: never sent because the run stopped first, or left as it was when
    the run was abandoned."""

    @property
    def open(self) -> bool:
        """Not finished: pending, submitting or running."""
        return self in _OPEN_WAVE

    def can_become(self, new: WaveState) -> bool:
        return new in _WAVE_NEXT[self]


class SubmitPath(StrEnum):
    """How a run's waves reach the controller."""

    API = "api"
    """AlterPartitionReassignments (Kafka 2.4 and newer): can be cancelled."""
    ZOOKEEPER = "zookeeper"
    """The ``/admin/reassign_partitions`` znode of Kafka before 2.4: cannot be cancelled."""


_ACTIVE_RUN = frozenset({RunState.RUNNING, RunState.PAUSED, RunState.STOPPING})
_ENDS = frozenset(
    {RunState.COMPLETED, RunState.PARTLY_CANCELLED, RunState.CANCELLED, RunState.FAILED, RunState.ABANDONED}
)
_RUN_NEXT: dict[RunState, frozenset[RunState]] = {
    RunState.RUNNING: _ENDS | {RunState.PAUSED, RunState.STOPPING},
    RunState.PAUSED: _ENDS | {RunState.RUNNING, RunState.STOPPING},
    RunState.STOPPING: _ENDS | {RunState.STOPPED},
    **{s: frozenset() for s in RunState if s not in _ACTIVE_RUN},
}
ACTIVE_RUN_STATES = tuple(sorted(_ACTIVE_RUN))
"""For SQL ``IN`` clauses."""

_OPEN_WAVE = frozenset({WaveState.PENDING, WaveState.SUBMITTING, WaveState.RUNNING})
_WAVE_ENDS = frozenset({WaveState.CANCELLED, WaveState.FAILED, WaveState.SKIPPED})
_WAVE_NEXT: dict[WaveState, frozenset[WaveState]] = {
    WaveState.PENDING: _WAVE_ENDS | {WaveState.SUBMITTING},
    WaveState.SUBMITTING: _WAVE_ENDS | {WaveState.RUNNING},
    WaveState.RUNNING: _WAVE_ENDS | {WaveState.COMPLETED},
    **{s: frozenset() for s in WaveState if s not in _OPEN_WAVE},
}

_VERB = {
    RunState.RUNNING: "resumed",
    RunState.PAUSED: "paused",
    RunState.STOPPING: "stopped",
    RunState.STOPPED: "stopped",
    RunState.COMPLETED: "completed",
    RunState.PARTLY_CANCELLED: "completed (partly cancelled)",
    RunState.CANCELLED: "cancelled",
    RunState.FAILED: "failed",
    RunState.ABANDONED: "abandoned",
}


def check_run(run_id: int, old: RunState, new: RunState) -> None:
    """Raise :class:`IllegalTransition` unless a run may go from ``old`` to ``new``."""
    if old != new and not old.can_become(new):
        raise IllegalTransition(
            f"Run {run_id} is {old}: it cannot be {_VERB[new]}.",
            "Reload the Runs page: someone (or the worker) changed it meanwhile.",
        )


def check_wave(run_id: int, number: int, old: WaveState, new: WaveState) -> None:
    """Raise :class:`IllegalTransition` unless a wave may go from ``old`` to ``new``."""
    if old != new and not old.can_become(new):
        raise IllegalTransition(
            f"Wave {number} of run {run_id} is {old}: it cannot become {new}.",
            "This is a bug in the console if it happens: report it with the run's audit log.",
        )


def wave_end_for(run: RunState) -> WaveState:
    """What the unsent waves of a run that ends in ``run`` become."""
    return {RunState.CANCELLED: WaveState.CANCELLED, RunState.FAILED: WaveState.FAILED}.get(run, WaveState.SKIPPED)


class DecommissionStep(StrEnum):
    """Where a decommission flow stands (:mod:`console.services.decommission`), in order."""

    CORDON = "cordon"
    """The brokers are to be cordoned (KIP-1066): no new replica lands on them meanwhile."""
    PLAN = "plan"
    """The drain plan is to be generated (every replica off the brokers, least data moved)."""
    REVIEW = "review"
    """The drain plan is saved: an operator reviews and submits it (Review, or ``submit --plan-id``)."""
    DRAIN = "drain"
    """The drain run moves the replicas away."""
    VERIFY = "verify"
    """The run ended: the brokers must hold nothing."""
    SHUT_DOWN = "shut down"
    """The brokers hold nothing: an operator shuts them down (the console does not stop processes)."""
    UNREGISTER = "unregister"
    """The brokers are shut down: an operator unregisters them (UnregisterBroker)."""
    DONE = "done"
    """The brokers are gone from the cluster."""
    ABANDONED = "abandoned"
    """An operator stopped the flow (cordons stay as they are; uncordon on Overview if wanted)."""

    @property
    def open(self) -> bool:
        return self not in (DecommissionStep.DONE, DecommissionStep.ABANDONED)
