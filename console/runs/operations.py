"""Every operation that changes a cluster or the store, in one place.

Pages and the CLI collect input, call one of these and render what comes back; neither writes
to the store nor talks to a cluster directly. Each operation writes its audit entry in the same
transaction as the state change it records (or, for a request to the cluster, the intent before
the request and the answer after it).

* :func:`preflight` what a submission would send (findings, waves, bytes, ETA), and
  :func:`two_person_problem` whether the two-person rule lets it go;
* :func:`save_plan`, :func:`save_rebased_plan` (a stale plan brought up to date, as a new version),
  :func:`add_note`, :func:`approve`, :func:`start_run`;
* :func:`pause`, :func:`resume`, :func:`stop`, :func:`change_throttle`;
* :func:`cancel` (a partition, a topic, a run, everything; :func:`finish_cancel` after a cancel
  followed by its caller), :func:`abandon`;
* :func:`rollback_as_plan`, :func:`sweep` (throttles nothing needs);
* :func:`sign_in`, :func:`resume_session`, :func:`sign_out` (sessions against the users file), and
  :func:`autosave_draft`, :func:`autosave_undo`, :func:`autosave_stack`, :func:`discard_autosave`
  (the Drafts page's draft, saved as it is edited; scratch work, not audited).
"""

from __future__ import annotations

import json
import re
import secrets
import time
from collections import defaultdict
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field, replace

from console.access.auth import Identity, Users, approval_problem
from console.core.calibration import Calibration, Estimate
from console.core.errors import ConfigError, ConsoleError, PartiallyApplied
from console.core.format import plural
from console.core.limits import FOLLOWER_RATE
from console.core.model import (
    BrokerId,
    ClusterState,
    Finding,
    Outcome,
    Severity,
    TopicPartition,
    cluster_key,
    outcome_word,
    partition_name,
    split_outcomes,
)
from console.core.states import RunState, SubmitPath
from console.moves.cancel import CancelPlan, CancelVerdict, plan_cancel, recheck
from console.moves.progress import estimate_run
from console.moves.throttles import Leftover
from console.moves.waves import WaveLimits, plan_waves
from console.plans.diff import diff, first_replica_changes
from console.plans.plan import Plan, PlanEntry, parse_plan, plan_hash, rollback
from console.plans.quality import Report
from console.plans.rebase import RebaseOptions, rebase
from console.plans.validate import validate
from console.runs.executor import Executor, Step
from console.runs.gateway import ClusterGateway
from console.storage.runs import NewRun, RunLimits
from console.storage.store import Store


# -- before a run ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Preflight:
    """What submitting ``plan`` against the cluster as it is now would do."""

    findings: list[Finding]
    waves: list[tuple[PlanEntry, ...]]
    bytes_to_copy: int
    estimate: Estimate | None
    """How long copying takes: calibrated from past moves where the destinations have history, else
    at the throttle; None when neither applies (unthrottled, no history) or sizes are unknown."""

    @property
    def eta_s(self) -> float | None:
        return None if self.estimate is None else self.estimate.seconds

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.severity is Severity.ERROR]

    @property
    def warnings(self) -> list[Finding]:
        return [f for f in self.findings if f.severity is Severity.WARNING]

    @property
    def partitions(self) -> int:
        return sum(map(len, self.waves))


def preflight(
    state: ClusterState,
    plan: Plan,
    limits: WaveLimits = WaveLimits(),
    rate: int | None = None,
    calibration: Calibration | None = None,
) -> Preflight:
    d = diff(state, plan)
    waves = plan_waves(state, plan, limits)
    return Preflight(validate(state, plan, d), waves, d.bytes_to_copy, estimate_run(state, waves, rate, calibration))


def two_person_problem(store: Store, users: Users | None, plan_id: int | None, plan: Plan) -> str | None:
    """Why the two-person rule (when the users file turns it on) does not let ``plan`` be
    submitted yet, or None. ``plan`` must be the content of saved plan ``plan_id``."""
    if users is None or not users.two_person_rule:
        return None
    if plan_id is None:
        return (
            "The two-person rule is on: save the plan so that someone else can approve it, and submit the saved plan."
        )
    saved = store.plans.load(plan_id)
    if saved is None:
        return f"Plan {plan_id} is not in the store."
    digest = plan_hash(plan)
    if plan_hash(saved.plan) != digest:
        return f"This is not the content of saved plan {plan_id}."
    return approval_problem(saved.summary.author, store.plans.approvals(plan_id), digest)


def start_run(
    store: Store,
    cluster: ClusterGateway,
    user: str,
    state: ClusterState,
    plan: Plan,
    name: str,
    rate: int | None = None,
    limits: WaveLimits = WaveLimits(),
    path: SubmitPath = SubmitPath.API,
    elect_leaders: bool | None = None,
) -> int:
    """Record a run of ``plan`` (refused when another active run moves the same partitions, with
    :class:`console.core.errors.ConflictError`); a worker drives it from there. The caller ran
    :func:`preflight` and had it confirmed. ``path`` ZOOKEEPER submits through the pre-2.4 znode
    (needs ZooKeeper; cannot be cancelled). ``elect_leaders``: the run ends with a preferred
    leader election of its partitions; None: when the plan changes some partition's first replica
    (:func:`console.plans.diff.first_replica_changes`)."""
    if elect_leaders is None:
        elect_leaders = first_replica_changes(state, plan)
    if path is SubmitPath.ZOOKEEPER and not cluster.has_zookeeper:
        raise ConfigError(
            "The ZooKeeper path needs the cluster's ZooKeeper connect string.",
            "Give --zookeeper (or configure it for the cluster).",
        )
    if rate is not None:
        _positive_rate(rate)
    waves = plan_waves(state, plan, limits)
    text = plan.to_json()
    digest = plan_hash(plan, text)
    key = cluster_key(state, cluster.name)
    with store.transaction():
        run_id = store.runs.create(
            NewRun(
                key,
                name,
                user,
                text,
                rollback(state, plan).to_json(),
                digest,
                [Plan(w).to_json() for w in waves],
                [e.key for w in waves for e in w],
                rate,
                RunLimits(limits.moves_per_broker, limits.partitions, limits.bytes),
                path,
                elect_leaders,
            )
        )
        store.audit.record(
            user,
            key,
            "submit",
            {
                "run": run_id,
                "name": name,
                "waves": len(waves),
                "rate": rate,
                "path": path.value,
                "elect_leaders": elect_leaders,
            },
            "run recorded",
            plan_hash=digest,
        )
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


def save_plan(
    store: Store, user: str, state: ClusterState, cluster_name: str, name: str, plan: Plan, report: Report | None = None
) -> int:
    """Save a draft (or overwrite the cluster's plan of that name) with its rollback against
    ``state`` and the basis for the stale check, and a generated plan's quality ``report``;
    returns its id."""
    key = cluster_key(state, cluster_name)
    detail: dict[str, object] = {"plan": None, "name": name.strip(), "partitions": len(plan)}
    if report is not None:
        detail |= {"generated": report.goal, "moved_replicas": report.moved_replicas, "moved_bytes": report.moved_bytes}
    with store.transaction():
        plan_id = store.plans.save(
            name,
            key,
            plan,
            rollback(state, plan),
            user,
            state.fingerprint(),
            report_json=None if report is None else json.dumps(report.to_dict()),
        )
        store.audit.record(user, key, "plan-saved", {**detail, "plan": plan_id}, "saved", plan_hash=plan_hash(plan))
    return plan_id


_UP_TO_DATE = re.compile(r"^(?P<base>.*) \(up to date, v(?P<version>\d+)\)$")


def rebased_name(name: str, taken: Iterable[str]) -> str:
    """``<name> (up to date, vN)``: N one more than any version of the same base name in ``taken``
    (and than ``name``'s own), at least 2; a rebased plan's base name is its parent's."""
    m = _UP_TO_DATE.match(name)
    base, version = (m["base"], int(m["version"])) if m else (name, 1)
    for other in taken:
        o = _UP_TO_DATE.match(other)
        if o and o["base"] == base:
            version = max(version, int(o["version"]))
    return f"{base} (up to date, v{version + 1})"


def save_rebased_plan(
    store: Store,
    user: str,
    state: ClusterState,
    cluster_name: str,
    parent_id: int,
    options: RebaseOptions | None = None,
) -> int:
    """Bring saved plan ``parent_id`` up to date against ``state`` (:func:`console.plans.rebase.rebase`:
    the same targets, the current replicas as the basis, optionally without completed or gone
    partitions) and save it as a new plan linked to it, under a new version name (never over
    another plan); returns its id."""
    parent = store.plans.load(parent_id)
    if parent is None:
        raise ConfigError(f"Plan {parent_id} is not in the store.", "Pick a saved plan.")
    report = rebase(state, parent.plan, options)
    if not report.plan.entries:
        raise ConfigError(
            f"Nothing is left of plan {parent_id} once brought up to date ({report.counts_text()}).",
            "Nothing to save: keep the completed or gone partitions, or draft a new plan.",
        )
    key = cluster_key(state, cluster_name)
    with store.transaction():
        name = rebased_name(parent.summary.name, (s.name for s in store.plans.list(key)))
        plan_id = store.plans.save(
            name, key, report.plan, rollback(state, report.plan), user, state.fingerprint(), parent_id=parent_id
        )
        store.audit.record(
            user,
            key,
            "plan-rebased",
            {
                "plan": plan_id,
                "from": parent_id,
                "name": name,
                "partitions": len(report.plan),
                "dropped": len(report.dropped),
                "since": {k.value: n for k, n in report.counts.items() if n},
            },
            "saved",
            plan_hash=plan_hash(report.plan),
        )
    return plan_id


def add_note(store: Store, user: str, plan_id: int, note: str) -> None:
    """A review note on a saved plan (blank notes are ignored)."""
    store.plans.add_note(plan_id, user, note)


# -- during a run ----------------------------------------------------------------------------------
def _positive_rate(rate: int) -> None:
    if rate <= 0:
        raise ConfigError("The throttle must be a positive number of bytes/s.", "For example 10485760 (10 MB/s).")


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


def change_throttle(
    store: Store, cluster: ClusterGateway, user: str, run_id: int, rate: int, confirm_s: float = 10.0
) -> dict[str, str | None]:
    """Change the throttle of an active run: the brokers its running wave throttles get the new
    rate at once, later waves are throttled at it. Returns the follower rate each of those brokers
    reports afterwards (read back for up to ``confirm_s``)."""
    _positive_rate(rate)
    with store.transaction():
        run = store.runs.require(run_id)
        if not run.active:
            raise ConfigError(
                f"Run {run_id} is {run.state}: its throttle cannot change.",
                "List the runs with `python -m console runs`.",
            )
        brokers = sorted({e.name for e in store.runs.ledger(run_id) if e.kind == "broker"})
        store.runs.set_rate(run_id, rate)
        request = {"run": run_id, "rate": rate, "brokers": brokers}
        intent = store.audit.record(user, run.cluster, "throttle-rate", request, "sending", plan_hash=run.plan_hash)
    try:
        Executor(store, cluster, user).apply_rate(run, rate)
    except ConsoleError as e:
        store.audit.record(
            user,
            run.cluster,
            "throttle-rate",
            request,
            "failed",
            ref=intent,
            plan_hash=run.plan_hash,
            response={"error": e.message},
        )
        raise
    store.audit.record(user, run.cluster, "throttle-rate", request, "applied", ref=intent, plan_hash=run.plan_hash)
    ids = tuple(BrokerId(int(b)) for b in brokers)
    deadline = time.monotonic() + confirm_s
    while True:
        got = cluster.describe_configs(ids, ())
        reported = {str(b): got.brokers.get(str(b), {}).get(FOLLOWER_RATE) for b in ids}
        if all(v == str(rate) for v in reported.values()) or time.monotonic() > deadline:
            return reported
        time.sleep(0.2)


# -- cancel and abandon ------------------------------------------------------------------------------
@dataclass(frozen=True)
class CancelResult:
    accepted: tuple[Outcome, ...]
    rejected: tuple[Outcome, ...]
    seconds_to_accept: float
    left: tuple[TopicPartition, ...]
    """Accepted and gone from the in-flight list."""
    still_in_flight: tuple[TopicPartition, ...]
    request: Mapping[str, object] = field(default_factory=dict)
    """The request as audited (the entry after the wait repeats it)."""
    intent: int | None = None
    """The audit entry written before the request (the entry after the wait refers to it)."""

    def leaving(self, in_flight: Collection[TopicPartition]) -> CancelResult:
        """Those still in flight that ``in_flight`` (ListPartitionReassignments now) no longer lists have left."""
        listed = set(in_flight)
        still = tuple(k for k in self.still_in_flight if k in listed)
        left = tuple(sorted({o.key for o in self.accepted} - set(still)))
        return replace(self, left=left, still_in_flight=still)


@dataclass(frozen=True)
class CancelReport:
    """The outcome of a cancel of the set an operator saw, partition by partition."""

    verdicts: tuple[tuple[TopicPartition, CancelVerdict, str], ...]
    """(partition, verdict, detail such as the controller's error), in the order asked."""
    result: CancelResult | None
    """The request's result; None when nothing was left to send."""

    def count(self, verdict: CancelVerdict) -> int:
        return sum(1 for _, v, _ in self.verdicts if v is verdict)

    def rows(self) -> list[dict[str, str]]:
        return [{"partition": partition_name(*k), "outcome": v.value, "detail": d} for k, v, d in self.verdicts]

    def summary(self) -> str:
        parts = [f"{plural(n, 'partition')} {v.short}" for v in CancelVerdict if (n := self.count(v))]
        took = f" in {self.result.seconds_to_accept:.2f} s" if self.result is not None else ""
        return "; ".join(parts) + took + "."

    @property
    def settled(self) -> bool:
        """Nothing accepted is still leaving the in-flight list."""
        return self.result is None or not self.result.still_in_flight

    def leaving(self, in_flight: Collection[TopicPartition]) -> CancelReport:
        """The report once those no longer in ``in_flight`` (ListPartitionReassignments now) have left:
        accepted becomes cancelled, partition by partition (a cancel sent with ``wait_s=0``, followed)."""
        if self.result is None:
            return self
        result = self.result.leaving(in_flight)
        left = set(result.left)
        verdicts = tuple(
            (k, CancelVerdict.CANCELLED, d) if v is CancelVerdict.ACCEPTED and k in left else (k, v, d)
            for k, v, d in self.verdicts
        )
        return CancelReport(verdicts, result)


def cancel_seen(
    store: Store,
    cluster: ClusterGateway,
    user: str,
    cluster_id: str,
    seen: CancelPlan,
    ours: dict[TopicPartition, int],
    force_at_risk: bool = False,
    wait_s: float = 60.0,
) -> CancelReport:
    """Cancel the set the operator saw (``seen``, planned when the dialog opened or the command
    read the cluster) as the cluster is now: partitions that completed meanwhile stay moved,
    those no longer in flight are left alone, the rest are cancelled. Never a silent no-op: every
    call is audited and every partition gets a verdict."""
    checked = recheck(seen, cluster.snapshot(), force_at_risk)
    send, verdicts = checked.send, dict(checked.verdicts)
    not_sent = {partition_name(*k): v.name.lower() for k, (v, _) in verdicts.items()}
    asked: dict[str, object] = {"asked": [[t, p] for t, p in (x.key for x in seen.cancel)], "not_sent": not_sent}
    result = None
    if send:
        result = cancel(store, cluster, user, cluster_id, CancelPlan(tuple(send), (), (), ()), ours, wait_s, asked)
        left = set(result.left)
        for o in result.accepted:
            verdicts[o.key] = (CancelVerdict.CANCELLED if o.key in left else CancelVerdict.ACCEPTED, "")
        for o in result.rejected:
            verdicts[o.key] = (CancelVerdict.REJECTED, f"{o.code}: {o.message}")
    else:
        store.audit.record(
            user, cluster_id, "cancel", {"cancel": [], **asked}, "nothing left to cancel", response=not_sent
        )
    order = [p.key for p in seen.cancel]
    return CancelReport(tuple((k, *verdicts[k]) for k in order if k in verdicts), result)


def cancel(
    store: Store,
    cluster: ClusterGateway,
    user: str,
    cluster_id: str,
    plan: CancelPlan,
    ours: dict[TopicPartition, int],
    wait_s: float = 60.0,
    note: Mapping[str, object] | None = None,
) -> CancelResult:
    """Send ``plan`` (audited before and after), wait up to ``wait_s`` for the partitions to leave
    ListPartitionReassignments, then clean up after the console's runs among them (their
    throttles come off, they end as cancelled). ``note`` goes into the audited request."""
    request = {"cancel": [[t, p] for t, p in plan.targets], **(note or {})}
    intent = store.audit.record(user, cluster_id, "cancel", request, "sending")
    t0 = time.perf_counter()
    try:
        outcomes = cluster.alter_reassignments(plan.targets)
    except ConsoleError as e:
        done = e.outcomes if isinstance(e, PartiallyApplied) else {}
        store.audit.record(
            user,
            cluster_id,
            "cancel",
            request,
            "failed",
            ref=intent,
            response={"error": e.message, "outcomes": [o.to_dict() for o in done.values()]},
        )
        raise
    took = time.perf_counter() - t0
    accepted, rejected = split_outcomes(outcomes.values())
    store.audit.record(
        user,
        cluster_id,
        "cancel",
        request,
        outcome_word(len(accepted), len(rejected)),
        ref=intent,
        response=[o.to_dict() for o in outcomes.values()],
    )
    result = CancelResult(
        tuple(accepted), tuple(rejected), took, (), tuple(sorted(o.key for o in accepted)), request, intent
    )
    if wait_s <= 0:
        return result  # followed by the caller (result.leaving), then finish_cancel
    deadline = time.monotonic() + wait_s
    while result.still_in_flight and time.monotonic() < deadline:
        try:
            result = result.leaving(cluster.list_reassignments())
        except ConsoleError:
            pass  # the controller may be moving: ask again
        if result.still_in_flight:
            time.sleep(0.25)
    finish_cancel(store, cluster, user, cluster_id, result, ours)
    return result


def finish_cancel(
    store: Store,
    cluster: ClusterGateway,
    user: str,
    cluster_id: str,
    result: CancelResult,
    ours: Mapping[TopicPartition, int],
) -> None:
    """After waiting for a cancel's partitions to leave the in-flight list (``result`` as they are
    now): the console's runs among those that left are cleaned up (their throttles come off, they
    end as cancelled; a run its worker holds is left to the worker), and what became of them is audited."""
    executor = Executor(store, cluster, user)
    for run_id in sorted({ours[k] for k in result.left if k in ours}):
        try:
            executor.after_cancel(run_id)  # the run's throttles come off now
        except ConsoleError:
            pass  # its worker cleans up at its next step
    store.audit.record(
        user,
        cluster_id,
        "cancel-complete",
        result.request,
        "left the in-flight list" if not result.still_in_flight else "still in flight",
        ref=result.intent,
        response={"left": result.left, "still_in_flight": sorted(result.still_in_flight)},
    )


def abandon(
    store: Store, cluster: ClusterGateway, user: str, run_id: int, why: str = "", cancel_reassignments: bool = False
) -> tuple[Step, CancelReport | None]:
    """Stop driving an active run for good: its throttles come off through the ledger and its
    unfinished waves are skipped. The reassignments it started are left as they are, unless
    ``cancel_reassignments``: then they are cancelled too (back to their original replicas)."""
    run = store.runs.require(run_id)
    if not run.active:
        raise ConfigError(
            f"Run {run_id} is {run.state}: there is nothing to abandon.", "List the runs with `python -m console runs`."
        )
    moving = [k for k, r in store.runs.active_partitions(run.cluster).items() if r == run_id]
    step = Executor(store, cluster, user).finish(
        run, RunState.ABANDONED, {"why": why, "cancel_reassignments": cancel_reassignments}
    )
    report = None
    if cancel_reassignments and moving:
        state = cluster.snapshot()
        report = cancel_seen(
            store, cluster, user, run.cluster, plan_cancel(state, moving, include_others=True), {}, wait_s=30.0
        )
    return step, report


# -- after a run -----------------------------------------------------------------------------------
def rollback_as_plan(store: Store, user: str, state: ClusterState, cluster_name: str, run_id: int) -> int:
    """The rollback of a run as a saved plan, to review and submit like any other; returns its id."""
    run = store.runs.require(run_id)
    back = parse_plan(run.rollback_json).with_basis(state)
    key = cluster_key(state, cluster_name)
    with store.transaction():
        plan_id = store.plans.save(
            f"rollback of run {run.id}", key, back, parse_plan(run.plan_json), user, state.fingerprint()
        )
        store.audit.record(
            user,
            key,
            "rollback-drafted",
            {"run": run_id, "plan": plan_id},
            "saved for review",
            plan_hash=plan_hash(back),
        )
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
    request = {
        "brokers": {str(b): sorted(k) for b, k in brokers.items()},
        "topics": {t: sorted(k) for t, k in topics.items()},
    }
    intent = store.audit.record(user, key, "throttle-sweep", request, "sending")
    cluster.alter_configs(brokers, topics)
    swept = {(lo.kind, lo.name, lo.key) for lo in chosen}
    with store.transaction():
        for e in store.runs.ledger():
            run = store.runs.get(e.run_id)
            if (e.kind, e.name, e.key) in swept and (run is None or not run.active):
                store.runs.ledger_restored(e.id)
        store.audit.record(user, key, "throttle-sweep", request, "removed", ref=intent)


# -- sign-in sessions --------------------------------------------------------------------------------
CONSOLE_WIDE = "*"
"""The cluster of audit entries about the console as a whole (signing in and out)."""


@dataclass(frozen=True)
class SignedIn:
    identity: Identity
    token: str
    """What the browser keeps (a cookie); the store keeps only its digest."""
    expires_at: float


def sign_in(store: Store, users: Users, name: str, password: str, ttl_s: float) -> SignedIn | None:
    """Check ``name``'s password against the users file and open a session lasting ``ttl_s``
    seconds (audited); None, audited as refused, for an unknown user or a wrong password."""
    who = users.login(name, password)
    if who is None:
        store.audit.record(
            name.strip()[:100] or "(no name)", CONSOLE_WIDE, "sign-in", {"source": "users file"}, "refused"
        )
        return None
    token = secrets.token_urlsafe(32)
    now = time.time()
    with store.transaction():
        session = store.sessions.create(token, who.name, now + ttl_s, now)
        store.audit.record(
            who.name,
            CONSOLE_WIDE,
            "sign-in",
            {"source": "users file", "session": session.ref, "hours": round(ttl_s / 3600, 2)},
            "signed in",
        )
    return SignedIn(who, token, session.expires_at)


def resume_session(store: Store, users: Users, token: str | None) -> Identity | None:
    """Who ``token`` signs in, with the roles the users file gives them now; None when the token
    is unknown, tampered with, expired or signed out, or its user left the users file."""
    session = store.sessions.get(token)
    return None if session is None else users.identity_of(session.user)


def sign_out(store: Store, token: str | None) -> bool:
    """End the session of ``token`` in every tab and browser that holds it (audited); False
    when there was none (already ended or expired)."""
    with store.transaction():
        session = store.sessions.delete(token)
        if session is not None:
            store.audit.record(session.user, CONSOLE_WIDE, "sign-out", {"session": session.ref}, "signed out")
    return session is not None


# -- autosaved drafts --------------------------------------------------------------------------------
UNDO_STEPS_KEPT = 20
UNDO_PARTITIONS_KEPT = 1_000_000
"""At most this many partitions over the undo steps kept (a million-partition draft keeps one)."""


def undo_steps_kept(partitions: int) -> int:
    """How many undo steps are kept below a draft of ``partitions`` partitions."""
    return max(1, min(UNDO_STEPS_KEPT, UNDO_PARTITIONS_KEPT // max(1, partitions)))


def autosave_draft(store: Store, user: str, cluster_id: str, pos: int, plan: Plan | None) -> None:
    """``plan`` is ``user``'s draft for the cluster now, at undo position ``pos`` (the steps
    below it stay for Undo, up to :func:`undo_steps_kept`)."""
    store.drafts.push(user, cluster_id, pos, plan, undo_steps_kept(len(plan) if plan is not None else 0))


def autosave_undo(store: Store, user: str, cluster_id: str, pos: int) -> None:
    """Undo: the step at ``pos`` is the draft again."""
    store.drafts.drop_above(user, cluster_id, pos)


def autosave_stack(store: Store, user: str, cluster_id: str, steps: list[Plan | None], base: int = 0) -> None:
    """Save a whole draft with its undo steps (``steps[-1]`` the draft), from position ``base``
    (a draft started before signing in, adopted by the user who signed in)."""
    top = steps[-1] if steps else None
    keep = undo_steps_kept(len(top) if top is not None else 0)
    kept = steps[-keep - 1 :]
    store.drafts.replace(user, cluster_id, kept, base + len(steps) - len(kept))


def discard_autosave(store: Store, user: str, cluster_id: str) -> None:
    store.drafts.clear(user, cluster_id)
