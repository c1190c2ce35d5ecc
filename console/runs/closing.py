"""A run's end: how it ends, in words and for its audit entry (:class:`Ending`), and the end itself:
its open waves and its state closed in one transaction with its audit entry, its lease given up,
the team told (and told of any throttle it could not take off)."""

from __future__ import annotations

from dataclasses import dataclass

from console.core.format import plural
from console.core.model import PARTITION_CANCELLED, partition_name
from console.core.states import RunState, wave_end_for
from console.metrics.instruments import forget_run
from console.moves.cancel import cancelled_text
from console.notify.events import Event
from console.runs.steps import Elected, Ports, Step
from console.storage.runs import Run

_ENDED = {
    RunState.COMPLETED: Event.RUN_COMPLETED,
    RunState.PARTLY_CANCELLED: Event.RUN_PARTLY_CANCELLED,
    RunState.STOPPED: Event.RUN_STOPPED,
    RunState.CANCELLED: Event.RUN_CANCELLED,
    RunState.ABANDONED: Event.RUN_ABANDONED,
    RunState.FAILED: Event.RUN_FAILED,
}


@dataclass(frozen=True)
class Ending:
    """How a run ends: its state, in words, and the answer of its audit entry."""

    how: RunState
    did: str
    response: dict[str, object] | None = None


class Closer:
    """Says how a run ends and ends it, once (a cancel's clean-up and the worker may both see the end)."""

    def __init__(self, ports: Ports, owner: str) -> None:
        self.ports = ports
        self.store = ports.store
        self.owner = owner
        """The executor that ends its runs: the lease it gives up."""

    def completed(self, run: Run, not_in_dir: list[list[object]], election: Elected | None) -> Ending:
        """A run whose waves all ended (and its closing ``election``, if any): completed, or partly
        cancelled when an operator cancelled some of its partitions while it ran; the replicas
        ``not_in_dir`` (a dir went offline during their move) said."""
        keys = sorted({o.key for o in self.store.runs.outcomes(run.id) if o.code == PARTITION_CANCELLED})
        how, said = RunState.COMPLETED, "run completed"
        if keys:
            how, said = RunState.PARTLY_CANCELLED, f"run completed, {cancelled_text(keys)}"
        if election is not None and (election.elected or election.not_elected):
            said += f"; preferred leader election: {election.elected} elected, {election.not_elected} not"
        if not_in_dir:
            said += f"; {not_in_dir_text(not_in_dir)}"
        response: dict[str, object] = {
            **({"elected": election.elected, "not_elected": election.not_elected} if election is not None else {}),
            **({"not_in_log_dir": not_in_dir} if not_in_dir else {}),
            **({"cancelled": [partition_name(*k) for k in keys]} if keys else {}),
        }
        return Ending(how, said, response or None)

    def cancelled(self, run: Run, asked: str | None) -> Ending:
        """The run ends cancelled (its later waves too), naming who cancelled it as a run and the
        partitions that went back."""
        keys = [o.key for o in self.store.runs.outcomes(run.id) if o.code == PARTITION_CANCELLED]
        return Ending(
            RunState.CANCELLED,
            "run cancelled" + (f" by {asked}" if asked else "") + (f"; {cancelled_text(keys)}" if keys else ""),
            {"cancelled": [partition_name(*k) for k in sorted(keys)]} if keys else None,
        )

    def close(self, run: Run, how: RunState, request: dict[str, object] | None, response: object) -> Step | None:
        """End ``run`` as ``how``: its open waves closed, its state set, audited (``request`` added to
        the entry's), its lease given up; None once done, or the Step of a run that had ended
        meanwhile (nothing done: it ends once only)."""
        end = wave_end_for(how)
        with self.store.transaction():
            now = self.store.runs.require(run.id)
            if not now.active:  # ended meanwhile (a cancel's clean-up and the worker both saw it): once only
                return Step(now, None, now.state)
            for w in self.store.runs.waves(run.id):
                if w.state.open:
                    self.store.runs.set_wave(run.id, w.number, end)
            self.store.runs.set_state(run.id, how)
            action = f"run-{how.value.replace(' ', '-')}"
            self.ports.record(run, action, {"run": run.id, **(request or {})}, how.value, response=response)
        self.store.runs.release(run.id, self.owner)
        return None

    def told(self, run: Run, how: RunState, did: str | None) -> None:
        """A run just ended: said to the team, and so is any throttle it could not take off."""
        forget_run(run.cluster, run.id)
        self.ports.notify(
            run, _ENDED[how], _sentence(did or f"run {how}") + f" (run #{run.id}, {run.name}, by {run.author})."
        )
        left = self.store.runs.ledger(run.id)
        if left:
            where = ", ".join(sorted({f"{e.kind} {e.name}: {e.key}" for e in left})[:10])
            self.ports.notify(
                run,
                Event.THROTTLE_LEFT,
                f"{len(left)} throttle setting(s) run #{run.id} set are still on the cluster ({where}); "
                "take them off with `python -m console throttle --sweep` (or Overview's throttles).",
            )


def not_in_dir_text(off: list[list[object]]) -> str:
    """``2 replicas not in the log dir the plan asked (a dir went offline during the move)``: the run's end."""
    return f"{plural(len(off), 'replica')} not in the log dir the plan asked (a dir went offline during the move)"


def _sentence(text: str) -> str:
    return text[:1].upper() + text[1:]
