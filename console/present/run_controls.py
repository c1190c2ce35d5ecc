"""What the Runs page offers an operator for an active run, and its words (pure): which of pause,
resume, stop and cancel apply to the run as it is now, why a button that is drawn cannot be
pressed, and how a paused run ends."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from console.core.states import RunState, SubmitPath, WaveState
from console.storage.runs import Run, Wave

ZOOKEEPER_NO_CANCEL = (
    "Submitted through /admin/reassign_partitions (the path of Kafka before 2.4): it cannot be cancelled. "
    "Let it complete, then roll back if needed."
)


@dataclass(frozen=True)
class RunControls:
    """The buttons an active run gets, each with what it does (its help)."""

    pause: bool
    resume: bool
    stop: str | None
    """The Stop button's label (what it does differs with a wave copying or not); None: not offered."""
    stop_help: str
    cancel: bool
    """Offered: some of the run's partitions are in flight (nothing else can be cancelled)."""
    cancel_off: str | None
    """Why the Cancel button cannot be pressed (drawn off, with this as its help), or None."""
    cancel_help: str
    abandon_help: str
    ending: str | None
    """For a paused run: how it ends, each way with what it does."""


def run_controls(run: Run, waves: Sequence[Wave], moving: int) -> RunControls:
    """The controls of active ``run`` (its ``waves``; ``moving``: how many of its partitions are in
    flight now, as the store knows them)."""
    current = next((w for w in waves if w.state in (WaveState.SUBMITTING, WaveState.RUNNING)), None)
    pending = [w.number for w in waves if w.state is WaveState.PENDING]
    between = run.state is RunState.PAUSED and current is None  # no wave is sent while paused
    if run.state is RunState.STOPPING:
        stop, stop_help = None, ""
    elif between:
        stop = "Stop here"
        stop_help = (
            "No wave is copying: the run ends as stopped now, its waves not sent are skipped and its "
            "throttles come off."
        )
    else:
        stop = "Stop after this wave"
        stop_help = (
            f"Wave {current.number} finishes" if current is not None else "The wave being sent finishes"
        ) + "; no later wave is sent, and the run ends as stopped (its throttles come off)."
    wave = f"wave {current.number}" if current is not None else "the running wave"
    return RunControls(
        pause=run.state is RunState.RUNNING,
        resume=run.state is RunState.PAUSED,
        stop=stop,
        stop_help=stop_help,
        cancel=moving > 0,
        cancel_off=ZOOKEEPER_NO_CANCEL if run.path is SubmitPath.ZOOKEEPER else None,
        cancel_help=f"Takes {wave}'s partitions back to their original replicas (KIP-455) and ends the run as "
        "cancelled; the waves that completed stay moved (the Rollback JSON takes them back).",
        abandon_help="Stop driving the run for good (its throttles come off); for a run that cannot finish.",
        ending=_paused_text(run, waves, current, pending) if run.state is RunState.PAUSED else None,
    )


def _paused_text(run: Run, waves: Sequence[Wave], current: Wave | None, pending: list[int]) -> str:
    """How paused ``run`` ends: Resume, Stop, Cancel (with a wave copying) or Abandon, each with what it does."""
    done = sum(w.state is WaveState.COMPLETED for w in waves)
    after = f"wave {pending[0]} waits for Resume" if pending else "it is the last wave: the run completes when it does"
    if current is not None:
        n = current.number
        return (
            f"**Run {run.id} is paused**: wave {n} of {len(waves)} is still copying; {after}. To end the run: "
            f"**Resume** sends the waves left, one after the other, until it completes; **Stop after this wave** "
            f"lets wave {n} finish and ends the run as stopped (the later waves are never sent); **Cancel the "
            f"run…** takes wave {n}'s partitions back to their original replicas and ends it as cancelled; "
            f"**Abandon…** stops driving it at once: it ends as abandoned, and wave {n}'s reassignments stay in "
            "flight unless its dialog's box cancels them too. Each way its throttles come off; the waves that "
            "completed stay moved (the Rollback JSON takes them back)."
        )
    return (
        f"**Run {run.id} is paused** between waves: {done} of {len(waves)} completed and nothing of it is in "
        f"flight (so there is nothing to cancel); {after}. To end the run: **Resume** sends the waves left, one "
        "after the other, until it completes; **Stop here** ends it now as stopped (the waves not sent are "
        "skipped); **Abandon…** ends it now as abandoned (for a run that cannot finish). Each way its throttles "
        "come off; the waves that completed stay moved (the Rollback JSON takes them back)."
    )
