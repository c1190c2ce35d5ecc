"""The guardrails at work on the runs an executor drives: the executor owns one :class:`Guarding`
and asks it at each step of a run, before anything is sent (:meth:`Guarding.step`). It asks its
:class:`~console.runs.guard.Guard` what the guardrails see, and does what they ask:

* a throttle changed by someone else is set back (an intent and its answer in the audit log, with
  the value seen and the one approved); one a person lowered is adopted (the ledger goes on at it);
* a run is paused (by a guardrail: what holds it is kept, :mod:`console.storage.holds`), or held
  for this step, or its next wave is cut to one adding move per broker (:meth:`Guarding.cut`);
* a run a guardrail paused is resumed when its cause has been clear long enough and the settings
  allow it.

Each of these is told once: one audit entry (``guardrail``: the rule, what it saw, what it did), one
notification (``guardrail``), the metric ``console_run_guardrail{cluster,run,rule}``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, replace

from console.core.errors import ConsoleError
from console.core.model import BrokerId, ClusterState, SourceStatus, TopicPartition
from console.core.states import RunState, WaveState
from console.metrics.instruments import guardrail as guardrail_metric
from console.moves.guardrails import GUARDRAIL, Action, Approved, Concern, GuardrailSettings, RunView, ThrottleFix
from console.moves.throttles import merged
from console.notify.events import Event
from console.notify.hub import emit
from console.plans.plan import Plan, PlanEntry, parse_plan
from console.runs.audited import Intent
from console.runs.gateway import ClusterGateway
from console.runs.guard import Guard, Verdict
from console.storage.runs import Run
from console.storage.store import Store

_DID = {Action.PAUSE: "paused", Action.HOLD: "held", Action.SLOW: "slowed"}


@dataclass(frozen=True)
class Guarded:
    """What the guardrails decided for one step of a run."""

    run: Run
    """The run as it is after the guardrails acted (paused or resumed by them)."""
    hold: bool = False
    """Send no wave at this step."""
    slow: bool = False
    """Cut the next wave to one adding move per broker (:meth:`Guarding.cut`)."""
    why: str = ""


class Guarding:
    """The guardrails applied to one cluster's runs, through the executor's fenced gateway."""

    def __init__(
        self,
        store: Store,
        cluster: ClusterGateway,
        user: str,
        announce: Callable[[Run, str, object], Intent],
        settings: GuardrailSettings | None = None,
    ) -> None:
        self.store = store
        self.cluster = cluster
        self.user = user
        self.announce = announce
        self.guard = Guard(settings)
        self._views: dict[int, tuple[tuple[str, tuple[tuple[int, WaveState, str], ...]], RunView]] = {}
        """Per run, its rollback and open waves as last read, and what the guardrails made of them."""

    def step(self, run: Run, state: ClusterState, read_s: float = 0.0) -> Guarded:
        """The guardrails on this step of ``run`` (``state``: the snapshot the step read, in ``read_s`` s)."""
        if run.state not in (RunState.RUNNING, RunState.PAUSED, RunState.STOPPING):
            return Guarded(run)
        held = self.store.holds.get(run.id)
        acknowledged = held.acknowledged if held is not None else set()
        by_guardrail = run.state is RunState.PAUSED and held is not None and held.paused
        view = self._view(run)
        moving = {p.key for p in state.in_flight}
        # the throttles are judged while the wave in flight copies (once it is done they come off)
        approved = _approved(self.store, run.id) if any(e.key in moving for e in view.current) else []
        approved = self._follow_rate(run, state, approved)
        verdict = self.guard.check(run.id, state, view, approved, by_guardrail, read_s)
        for fix in verdict.fixes:
            try:
                self._fix(run, fix)
            except ConsoleError:
                pass  # answered in the audit log (failed, or answer lost); tried again at the next step
        active = [c for c in verdict.concerns if (c.rule.value, c.text) not in acknowledged]
        run = self._act(run, state, verdict, active, stored=held is not None and bool(held.concerns))
        holding = [c for c in active if c.action in (Action.PAUSE, Action.HOLD)]
        return Guarded(
            run,
            hold=bool(holding),
            slow=any(c.action is Action.SLOW for c in active),
            why="; ".join(c.text for c in active),
        )

    def forget(self, run: Run) -> None:
        """``run`` ended: what the guardrails said of it is cleared."""
        self.guard.forget(run.id)
        self._views.pop(run.id, None)
        self.store.holds.clear(run.id, resumed=True)

    # -- what the guardrails see of a run -----------------------------------------------------------
    def _view(self, run: Run) -> RunView:
        """What the run still has to do, parsed from its waves once and again only when they change
        (a wave sent, done or cut): a run of 10,000 partitions is not parsed at every step."""
        waves = tuple(
            (w.number, w.state, w.entries_json)
            for w in self.store.runs.waves(run.id)
            if w.state in (WaveState.SUBMITTING, WaveState.RUNNING, WaveState.PENDING)
        )
        known = self._views.get(run.id)
        if known is not None and known[0] == (run.rollback_json, waves):
            return known[1]
        current: tuple[PlanEntry, ...] = ()
        later: list[tuple[int, tuple[PlanEntry, ...]]] = []
        for number, state, entries_json in waves:
            if state is WaveState.PENDING:
                later.append((number, parse_plan(entries_json).entries))
            else:
                current = parse_plan(entries_json).entries
        before = {e.key: e.replicas for e in parse_plan(run.rollback_json).entries}
        view = RunView(current, tuple(later), before)
        self._views[run.id] = ((run.rollback_json, waves), view)
        return view

    def _follow_rate(self, run: Run, state: ClusterState, approved: list[Approved]) -> list[Approved]:
        """A broker rate the cluster shows at the run's rate now is the run's own: a person changed
        the run's throttle (the Runs page, ``throttle --run``), which sets every rate the run set to it.
        What the run was approved at follows (its ledger), so that it is neither set back nor taken
        for a rate lowered by a person; someone else's change is judged against it from then on."""
        if run.rate is None or state.status.configs is not SourceStatus.OK:
            return approved
        rate, shown = str(run.rate), state.throttles.broker_map()
        out = []
        for a in approved:
            if a.kind == "broker" and a.value != rate and shown.get(a.name, {}).get(a.key) == rate:
                if a.ledger_id is not None:
                    self.store.runs.ledger_adopt(a.ledger_id, rate)
                a = replace(a, value=rate)
            out.append(a)
        return out

    # -- what they do -----------------------------------------------------------------------------
    def _act(self, run: Run, state: ClusterState, verdict: Verdict, active: list[Concern], stored: bool) -> Run:
        """Pause, hold or slow for what is new; clear what no longer holds (``stored``: the store
        says something holds the run, perhaps from a worker that stopped since); resume when allowed."""
        new = [c for c in verdict.new if c in active]
        pause = run.state is RunState.RUNNING and any(c.action is Action.PAUSE for c in active)
        if active:
            self.store.holds.hold(run.id, [c.to_dict() for c in active], state.taken_at, paused=pause)
        elif verdict.cleared or stored:
            self.store.holds.clear(run.id)
        with self.store.transaction():
            if pause:
                self.store.runs.set_state(run.id, RunState.PAUSED)
            for c in new:
                did = _DID.get(c.action, c.action.value) if c.action is not Action.PAUSE or pause else "holds paused"
                self._said(run, c.rule.value, c.text, did, c.to_dict())
        for c in active:
            guardrail_metric(run.cluster, run.id, c.rule.value, True)
        for rule in verdict.cleared:
            guardrail_metric(run.cluster, run.id, rule.value, False)
        if verdict.resume and run.state is RunState.PAUSED:
            with self.store.transaction():
                self.store.runs.set_state(run.id, RunState.RUNNING)
                self.store.holds.clear(run.id, resumed=True)
                self._said(run, "resume", "every cause has been clear for the time the settings ask", "resumed", {})
        return self.store.runs.require(run.id)

    def _fix(self, run: Run, fix: ThrottleFix) -> None:
        """Set a throttle back to what the run was approved at, or adopt one a person lowered."""
        a = fix.approved
        request = {"run": run.id, "rule": "throttle_changed", "where": f"{a.kind} {a.name}", "key": a.key}
        if fix.action is Action.ADOPT:
            if a.ledger_id is not None:
                self.store.runs.ledger_adopt(a.ledger_id, str(fix.seen))
            self._said(run, "throttle_changed", fix.text, "adopted", {**request, "before": a.value, "after": fix.seen})
            return
        value = a.value if a.kind == "broker" else merged(fix.seen, a.value.split(","))
        intent = self.announce(run, GUARDRAIL, {**request, "seen": fix.seen, "set": value, "did": "restore"})
        if a.kind == "broker":
            intent.send(lambda: self.cluster.alter_configs({BrokerId(int(a.name)): {a.key: value}}, {}))
        else:
            intent.send(lambda: self.cluster.alter_configs({}, {a.name: {a.key: value}}))
        intent.answer("restored", {"before": fix.seen, "after": value})
        self._notify(run, f"Run #{run.id} ({run.name}): {fix.text}.")

    def _said(self, run: Run, rule: str, saw: str, did: str, detail: dict[str, object]) -> None:
        """One audit entry and one notification of what a guardrail saw and did."""
        self.store.audit.record(
            self.user,
            run.cluster,
            GUARDRAIL,
            {"run": run.id, "rule": rule, "saw": saw, "did": did, **detail},
            did,
            plan_hash=run.plan_hash,
        )
        self._notify(run, f"Run #{run.id} ({run.name}) {did} by a guardrail at {time.strftime('%H:%M:%S')}: {saw}.")

    def _notify(self, run: Run, detail: str) -> None:
        emit(self.store, Event.GUARDRAIL, cluster=run.cluster, who=self.user, detail=detail, run=run.id)

    def cut(self, run: Run, number: int) -> int:
        """Cut pending wave ``number`` of ``run`` to one adding move per broker (the rest becomes
        the next wave); the number of partitions it keeps."""
        wave = next(w for w in self.store.runs.waves(run.id) if w.number == number)
        entries = parse_plan(wave.entries_json).entries
        before = {e.key: e.replicas for e in parse_plan(run.rollback_json).entries}
        keep, rest = one_adding_move_per_broker(entries, before)
        if rest:
            self.store.runs.split_wave(run.id, number, Plan(keep).to_json(), Plan(rest).to_json())
        return len(keep)


def one_adding_move_per_broker(
    entries: tuple[PlanEntry, ...], before: dict[TopicPartition, tuple[BrokerId, ...]]
) -> tuple[tuple[PlanEntry, ...], tuple[PlanEntry, ...]]:
    """The entries that add at most one replica on each broker (first fit, in order), and the rest;
    entries that add no replica stay in the first part."""
    busy: set[BrokerId] = set()
    keep: list[PlanEntry] = []
    rest: list[PlanEntry] = []
    for e in entries:
        adding = set(e.replicas) - set(before.get(e.key, ()))
        if adding & busy:
            rest.append(e)
        else:
            busy |= adding
            keep.append(e)
    return tuple(keep), tuple(rest)


def _approved(store: Store, run_id: int) -> list[Approved]:
    """What the run set for its wave in flight, from its ledger (a pending wave's throttle may be
    recorded and not yet set, a finished wave's taken off and not yet marked so: a worker stopped in
    between finishes either when it resumes)."""
    sent = {w.number for w in store.runs.waves(run_id) if w.state in (WaveState.SUBMITTING, WaveState.RUNNING)}
    return [Approved(e.kind, e.name, e.key, e.added, e.id) for e in store.runs.ledger(run_id) if e.wave in sent]
