"""Every operation that changes a cluster or the store, in one place.

Pages and the CLI collect input, call one of these and render what comes back; neither writes
to the store nor talks to a cluster directly. Each operation writes its audit entry in the same
transaction as the state change it records (or, for a request to the cluster, the intent before
the request and the answer after it).

* :func:`preflight` what a submission would send (findings, waves, bytes, ETA), and
  :func:`two_person_problem` whether the two-person rule lets it go;
* :func:`save_plan`, :func:`add_note`, :func:`approve`, :func:`start_run`;
* :func:`pause`, :func:`resume`, :func:`stop`, :func:`change_throttle`;
* :func:`cancel` (a partition, a topic, a run, everything), :func:`abandon`;
* :func:`rollback_as_plan`, :func:`sweep` (throttles nothing needs).
"""

from __future__ import annotations

import time
from collections import defaultdict
from dataclasses import dataclass
from typing import Iterable

from console.access.auth import Users, approval_problem
from console.core.errors import ConfigError, ConsoleError, PartiallyApplied
from console.core.model import (BrokerId, ClusterState, Finding, Outcome, Severity, TopicPartition, cluster_key,
                                outcome_word, split_outcomes)
from console.core.states import RunState, SubmitPath
from console.plans.diff import diff
from console.plans.plan import Plan, PlanEntry, parse_plan, plan_hash, rollback
from console.plans.validate import validate
from console.runs.cancel import CancelPlan
from console.runs.executor import Executor, Step
from console.runs.gateway import ClusterGateway
from console.runs.progress import estimate_seconds
from console.runs.throttles import Leftover
from console.runs.waves import WaveLimits, plan_waves
from console.storage.runs import NewRun, RunLimits
from console.storage.store import Store


# -- before a run ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Preflight:
    """What submitting ``plan`` against the cluster as it is now would do."""

    findings: list[Finding]
    waves: list[tuple[PlanEntry, ...]]
    bytes_to_copy: int
    eta_s: float | None
    """At the throttle, when throttled and sizes are known."""

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.severity is Severity.ERROR]

    @property
    def warnings(self) -> list[Finding]:
        return [f for f in self.findings if f.severity is Severity.WARNING]

    @property
    def partitions(self) -> int:
        return sum(map(len, self.waves))


def preflight(state: ClusterState, plan: Plan, limits: WaveLimits = WaveLimits(), rate: int | None = None) -> Preflight:
    d = diff(state, plan)
    waves = plan_waves(state, plan, limits)
    return Preflight(validate(state, plan, d), waves, d.bytes_to_copy, estimate_seconds(state, waves, rate))


def two_person_problem(store: Store, users: Users | None, plan_id: int | None, plan: Plan) -> str | None:
    """Why the two-person rule (when the users file turns it on) does not let ``plan`` be
    submitted yet, or None. ``plan`` must be the content of saved plan ``plan_id``."""
    if users is None or not users.two_person_rule:
        return None
    if plan_id is None:
        return "The two-person rule is on: save the plan so that someone else can approve it, and submit the saved plan."
    saved = store.plans.load(plan_id)
    if saved is None:
        return f"Plan {plan_id} is not in the store."
    digest = plan_hash(plan)
    if plan_hash(saved.plan) != digest:
        return f"This is not the content of saved plan {plan_id}."
    return approval_problem(saved.summary.author, store.plans.approvals(plan_id), digest)


def start_run(store: Store, cluster: ClusterGateway, user: str, state: ClusterState, plan: Plan, name: str,
              rate: int | None = None, limits: WaveLimits = WaveLimits(), path: SubmitPath = SubmitPath.API) -> int:
    """Record a run of ``plan`` (refused when another active run moves the same partitions, with
    :class:`console.core.errors.ConflictError`); a worker drives it from there. The caller ran
    :func:`preflight` and had it confirmed. ``path`` ZOOKEEPER submits through the pre-2.4 znode
    (needs ZooKeeper; cannot be cancelled)."""
    if path is SubmitPath.ZOOKEEPER and not cluster.has_zookeeper:
        raise ConfigError("The ZooKeeper path needs the cluster's ZooKeeper connect string.",
                          "Give --zookeeper (or configure it for the cluster).")
    if rate is not None and rate <= 0:
        raise ConfigError("The throttle must be a positive number of bytes/s.", "For example 10000000 (10 MB/s).")
    waves = plan_waves(state, plan, limits)
    text = plan.to_json()
    digest = plan_hash(plan, text)
    key = cluster_key(state, cluster.name)
    with store.transaction():
        run_id = store.runs.create(NewRun(
            key, name, user, text, rollback(state, plan).to_json(), digest, [Plan(w).to_json() for w in waves],
            [e.key for w in waves for e in w], rate, RunLimits(limits.moves_per_broker, limits.partitions, limits.bytes),
            path))
        store.audit.record(user, key, "submit", {"run": run_id, "name": name, "waves": len(waves), "rate": rate,
                                                 "path": path.value}, "run recorded", plan_hash=digest)
    return run_id


def approve(store: Store, user: str, cluster_id: str, plan_id: int) -> None:
    """Approve saved plan ``plan_id`` as it is now (a later change needs a new approval)."""
    saved = store.plans.load(plan_id)
    if saved is None:
        raise ConfigError(f"Plan {plan_id} is not in the store.", "Pick a saved plan.")
    if saved.summary.author == user:
        raise ConfigError("The author of a plan cannot approve it.", "Ask someone else with the approver role.")
    digest = plan_hash(saved.plan)
    with store.transaction():
        store.plans.approve(plan_id, user, digest)
        store.audit.record(user, cluster_id, "approve", {"plan": plan_id}, "approved", plan_hash=digest)


def save_plan(store: Store, user: str, state: ClusterState, cluster_name: str, name: str, plan: Plan) -> int:
    """Save a draft (or overwrite the cluster's plan of that name) with its rollback against
    ``state`` and the basis for the stale check; returns its id."""
    key = cluster_key(state, cluster_name)
    with store.transaction():
        plan_id = store.plans.save(name, key, plan, rollback(state, plan), user, state.fingerprint())
        store.audit.record(user, key, "plan-saved", {"plan": plan_id, "name": name.strip(), "partitions": len(plan)},
                           "saved", plan_hash=plan_hash(plan))
    return plan_id


def add_note(store: Store, user: str, plan_id: int, note: str) -> None:
    """A review note on a saved plan (blank notes are ignored)."""
    store.plans.add_note(plan_id, user, note)


# -- during a run ----------------------------------------------------------------------------------
def _change(store: Store, user: str, run_id: int, to: RunState) -> None:
    with store.transaction():
        run = store.runs.require(run_id)
        store.runs.set_state(run_id, to)
        store.audit.record(user, run.cluster, f"run-{to}", {"run": run_id}, to.value, plan_hash=run.plan_hash)


def pause(store: Store, user: str, run_id: int) -> None:
    """The current wave finishes; the next one waits for :func:`resume`."""
    _change(store, user, run_id, RunState.PAUSED)


def resume(store: Store, user: str, run_id: int) -> None:
    _change(store, user, run_id, RunState.RUNNING)


def stop(store: Store, user: str, run_id: int) -> None:
    """The current wave finishes; no later wave is sent."""
    _change(store, user, run_id, RunState.STOPPING)


def change_throttle(store: Store, cluster: ClusterGateway, user: str, run_id: int, rate: int) -> None:
    """Change the throttle of an active run: the brokers its running wave throttles get the new
    rate at once, later waves are throttled at it."""
    if rate <= 0:
        raise ConfigError("The throttle must be a positive number of bytes/s.", "For example 10000000 (10 MB/s).")
    with store.transaction():
        run = store.runs.require(run_id)
        if not run.active:
            raise ConfigError(f"Run {run_id} is {run.state}: its throttle cannot change.",
                              "List the runs with `python -m console runs`.")
        brokers = sorted({e.name for e in store.runs.ledger(run_id) if e.kind == "broker"})
        store.runs.set_rate(run_id, rate)
        request = {"run": run_id, "rate": rate, "brokers": brokers}
        intent = store.audit.record(user, run.cluster, "throttle-rate", request, "sending", plan_hash=run.plan_hash)
    try:
        Executor(store, cluster, user).apply_rate(run, rate)
    except ConsoleError as e:
        store.audit.record(user, run.cluster, "throttle-rate", request, "failed", ref=intent, plan_hash=run.plan_hash,
                           response={"error": e.message})
        raise
    store.audit.record(user, run.cluster, "throttle-rate", request, "applied", ref=intent, plan_hash=run.plan_hash)


# -- cancel and abandon ------------------------------------------------------------------------------
@dataclass(frozen=True)
class CancelResult:
    accepted: tuple[Outcome, ...]
    rejected: tuple[Outcome, ...]
    seconds_to_accept: float
    left: tuple[TopicPartition, ...]
    """Accepted and gone from the in-flight list."""
    still_in_flight: tuple[TopicPartition, ...]


def cancel(store: Store, cluster: ClusterGateway, user: str, cluster_id: str, plan: CancelPlan,
           ours: dict[TopicPartition, int], wait_s: float = 60.0) -> CancelResult:
    """Send ``plan`` (audited before and after), wait up to ``wait_s`` for the partitions to leave
    ListPartitionReassignments, then clean up after the console's runs among them (their
    throttles come off, they end as cancelled)."""
    request = {"cancel": [[t, p] for t, p in plan.targets]}
    intent = store.audit.record(user, cluster_id, "cancel", request, "sending")
    t0 = time.perf_counter()
    try:
        outcomes = cluster.alter_reassignments(plan.targets)
    except ConsoleError as e:
        done = e.outcomes if isinstance(e, PartiallyApplied) else {}
        store.audit.record(user, cluster_id, "cancel", request, "failed", ref=intent,
                           response={"error": e.message, "outcomes": [o.to_dict() for o in done.values()]})
        raise
    took = time.perf_counter() - t0
    accepted, rejected = split_outcomes(outcomes.values())
    store.audit.record(user, cluster_id, "cancel", request, outcome_word(len(accepted), len(rejected)), ref=intent,
                       response=[o.to_dict() for o in outcomes.values()])
    waiting = {o.key for o in accepted}
    deadline = time.monotonic() + wait_s
    while waiting and wait_s > 0 and time.monotonic() < deadline:
        try:
            waiting &= set(cluster.list_reassignments())
        except ConsoleError:
            pass  # the controller may be moving: ask again
        if waiting:
            time.sleep(0.25)
    left = tuple(sorted({o.key for o in accepted} - waiting))
    executor = Executor(store, cluster, user)
    for run_id in sorted({ours[k] for k in left if k in ours}):
        try:
            executor.after_cancel(run_id)  # the run's throttles come off now
        except ConsoleError:
            pass  # its worker cleans up at its next step
    if wait_s > 0:
        store.audit.record(user, cluster_id, "cancel-complete", request,
                           "left the in-flight list" if not waiting else "still in flight", ref=intent,
                           response={"left": left, "still_in_flight": sorted(waiting)})
    return CancelResult(tuple(accepted), tuple(rejected), took, left, tuple(sorted(waiting)))


def abandon(store: Store, cluster: ClusterGateway, user: str, run_id: int, why: str = "") -> Step:
    """Stop driving an active run for good: its throttles come off through the ledger, its unsent
    waves are skipped, and the reassignments it started are left as they are (cancel them
    separately if they must stop too)."""
    run = store.runs.require(run_id)
    if not run.active:
        raise ConfigError(f"Run {run_id} is {run.state}: there is nothing to abandon.",
                          "List the runs with `python -m console runs`.")
    return Executor(store, cluster, user).finish(run, RunState.ABANDONED, {"why": why} if why else None)


# -- after a run -----------------------------------------------------------------------------------
def rollback_as_plan(store: Store, user: str, state: ClusterState, cluster_name: str, run_id: int) -> int:
    """The rollback of a run as a saved plan, to review and submit like any other; returns its id."""
    run = store.runs.require(run_id)
    back = parse_plan(run.rollback_json).with_basis(state)
    key = cluster_key(state, cluster_name)
    with store.transaction():
        plan_id = store.plans.save(f"rollback of run {run.id}", key, back, parse_plan(run.plan_json), user,
                                   state.fingerprint())
        store.audit.record(user, key, "rollback-drafted", {"run": run_id, "plan": plan_id}, "saved for review",
                           plan_hash=plan_hash(back))
    return plan_id


def sweep(store: Store, cluster: ClusterGateway, user: str, leftovers: Iterable[Leftover]) -> None:
    """Remove throttles nothing needs (audited before and after); ledger entries for them are closed."""
    chosen = list(leftovers)
    brokers: dict[BrokerId, dict[str, str | None]] = defaultdict(dict)
    topics: dict[str, dict[str, str | None]] = defaultdict(dict)
    for lo in chosen:
        if lo.kind == "topic":
            topics[lo.name][lo.key] = None
        elif lo.name.isdigit():  # "<default>" broker configs are not the console's to remove
            brokers[BrokerId(int(lo.name))][lo.key] = None
    key = cluster_key(cluster.snapshot(), cluster.name)
    request = {"brokers": {str(b): sorted(k) for b, k in brokers.items()}, "topics": {t: sorted(k) for t, k in topics.items()}}
    intent = store.audit.record(user, key, "throttle-sweep", request, "sending")
    cluster.alter_configs(brokers, topics)
    swept = {(lo.kind, lo.name, lo.key) for lo in chosen}
    with store.transaction():
        for e in store.runs.ledger():
            run = store.runs.get(e.run_id)
            if (e.kind, e.name, e.key) in swept and (run is None or not run.active):
                store.runs.ledger_restored(e.id)
        store.audit.record(user, key, "throttle-sweep", request, "removed", ref=intent)

