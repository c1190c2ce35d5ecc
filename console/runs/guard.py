"""The guard of the runs an executor drives: it applies the guardrails (:mod:`console.moves.guardrails`)
at each step of a run and remembers what they need between steps: since when the cluster has not
answered, how many polls in a row a broker copied faster than its throttle, since when a paused
run's causes have been clear, and what was last said of each run (so that everyone is told once).

The executor owns one and asks it one question per step (:meth:`Guard.check`); what to do with the
answer (pause, hold, slow, set a throttle back) is the executor's, through its own requests."""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import dataclass, field

from console.core.model import BrokerId, ClusterState
from console.moves.guardrails import (
    Action,
    Approved,
    Concern,
    GuardrailSettings,
    Rule,
    RunView,
    ThrottleFix,
    destinations_gone,
    isr_concerns,
    overrun_concern,
    read_concern,
    throttle_changes,
    throttle_overruns,
)
from console.moves.progress import BrokerIntake


@dataclass(frozen=True)
class Verdict:
    """What the guardrails ask of a run at one step."""

    concerns: tuple[Concern, ...] = ()
    fixes: tuple[ThrottleFix, ...] = ()
    new: tuple[Concern, ...] = ()
    """The concerns not said at the step before (each is audited, notified and shown once)."""
    cleared: tuple[Rule, ...] = ()
    """The rules that held the run at the step before and no longer do."""
    resume: bool = False
    """The run was paused by guardrails whose causes have been clear long enough, and the settings
    allow it to go on by itself."""

    @property
    def pause(self) -> bool:
        return any(c.action is Action.PAUSE for c in self.concerns)

    @property
    def hold(self) -> bool:
        """No wave is sent at this step (a pause holds too)."""
        return any(c.action in (Action.PAUSE, Action.HOLD) for c in self.concerns)

    @property
    def slow(self) -> bool:
        return any(c.action is Action.SLOW for c in self.concerns)

    def why(self) -> str:
        """The concerns in one sentence each, strongest first."""
        order = {Action.PAUSE: 0, Action.HOLD: 1, Action.SLOW: 2}
        return "; ".join(c.text for c in sorted(self.concerns, key=lambda c: order.get(c.action, 3)))


@dataclass
class _Memory:
    """What the guard remembers of one run between its steps."""

    intake: BrokerIntake = field(default_factory=BrokerIntake)
    overruns: dict[BrokerId, int] = field(default_factory=dict)
    unread_since: float | None = None
    said: frozenset[tuple[Rule, str]] = frozenset()
    holding: frozenset[Rule] = frozenset()
    clear_since: float | None = None


class Guard:
    """The guardrails of one cluster's runs, with their settings and what they remember."""

    def __init__(self, settings: GuardrailSettings | None = None) -> None:
        self.settings = settings if settings is not None else GuardrailSettings()
        self._runs: dict[int, _Memory] = {}
        self._lock = threading.Lock()

    def check(
        self,
        run_id: int,
        state: ClusterState,
        view: RunView,
        approved: Iterable[Approved],
        paused: bool = False,
        read_s: float = 0.0,
    ) -> Verdict:
        """The guardrails on one step of run ``run_id``: ``state`` the snapshot the step read (in
        ``read_s`` seconds), ``view`` what the run still has to do, ``approved`` the throttle configs
        it set (its ledger). ``paused``: the run is paused now (a guardrail's causes may have cleared)."""
        set_by_run = list(approved)
        with self._lock:
            memory = self._runs.setdefault(run_id, _Memory())
            concerns = self._concerns(memory, state, view, set_by_run, read_s)
            unread = any(c.rule is Rule.CLUSTER_UNREAD for c in concerns)  # no throttle judged on that picture
            on = self.settings.on(Rule.THROTTLE_CHANGED) and not unread
            fixes = tuple(throttle_changes(state, set_by_run)) if on else ()
            said = frozenset((c.rule, c.text) for c in concerns)
            new = tuple(c for c in concerns if (c.rule, c.text) not in memory.said)
            holding = frozenset(c.rule for c in concerns if c.action in (Action.PAUSE, Action.HOLD, Action.SLOW))
            cleared = tuple(sorted(memory.holding - holding))
            memory.said, memory.holding = said, holding
            resume = self._may_resume(memory, state.taken_at, paused, holding)
            return Verdict(tuple(concerns), fixes, new, cleared, resume)

    def forget(self, run_id: int) -> None:
        """The run ended: nothing more to remember of it."""
        with self._lock:
            self._runs.pop(run_id, None)

    def _concerns(
        self, memory: _Memory, state: ClusterState, view: RunView, approved: list[Approved], read_s: float
    ) -> list[Concern]:
        s = self.settings
        if s.on(Rule.CLUSTER_UNREAD):
            unread = read_concern(state, memory.unread_since, s.unread_grace_s, read_s)
            if unread is not None:
                began = state.taken_at - read_s  # the cluster has not answered in time since this read began
                memory.unread_since = memory.unread_since if memory.unread_since is not None else began
                return [unread]  # nothing else can be judged on a picture the cluster did not give
        memory.unread_since = None
        out: list[Concern] = []
        if s.on(Rule.DESTINATION_GONE) and (gone := destinations_gone(state, view)) is not None:
            out.append(gone)
        out += [c for c in isr_concerns(state, view) if s.on(c.rule)]
        if s.on(Rule.THROTTLE_NOT_HOLDING) and (overrun := self._overrun(memory, state, approved)) is not None:
            out.append(overrun)
        return out

    def _overrun(self, memory: _Memory, state: ClusterState, approved: list[Approved]) -> Concern | None:
        """A broker taking in more than its throttle allows, its configs read back right, for
        ``overrun_polls`` polls in a row. Nothing is looked at while the run has set no broker rate."""
        if not any(a.kind == "broker" for a in approved):
            memory.overruns = {}
            return None
        if not memory.intake.observe(state):
            return None
        into = memory.intake.rates()
        over = throttle_overruns(into, state, approved, self.settings.overrun_factor, self.settings.overrun_slack)
        memory.overruns = {b: memory.overruns.get(b, 0) + 1 for b in over}
        held = sorted(b for b, n in memory.overruns.items() if n >= self.settings.overrun_polls)
        return overrun_concern(held, into, self.settings.overrun_polls) if held else None

    def _may_resume(self, memory: _Memory, now: float, paused: bool, holding: frozenset[Rule]) -> bool:
        """A paused run goes on by itself only where the settings allow it, once nothing has held
        it for ``clear_for_s``."""
        if not paused or holding:
            memory.clear_since = None
            return False
        memory.clear_since = memory.clear_since if memory.clear_since is not None else now
        return self.settings.auto_resume and now - memory.clear_since >= self.settings.clear_for_s
