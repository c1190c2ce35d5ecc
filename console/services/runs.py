"""What changes a run, before, during and after it: what a submission would send
(:func:`preflight`) and whether the two-person rule lets it go (:func:`two_person_problem`),
:func:`start_run`, :func:`approve`; :func:`pause`, :func:`resume`, :func:`stop`,
:func:`change_throttle`, :func:`abandon`; :func:`rollback_as_plan` and :func:`sweep` (throttles
nothing needs).

Pages and the CLI collect input, call one of these and render what comes back; neither writes
to the store nor talks to a cluster directly. Each writes its audit entry in the same transaction
as the state change it records (or, for a request to the cluster, the intent before the request
and the answer after it).
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from console.access.auth import Identity, Users, approval_problem
from console.core.calibration import Calibration, Estimate
from console.core.errors import ConfigError, ConsoleError
from console.core.format import human_rate, plural
from console.core.limits import FOLLOWER_RATE
from console.core.model import (
    DEFAULT_BROKER,
    BrokerId,
    ClusterState,
    Finding,
    Severity,
    cluster_key,
)
from console.core.states import RunState, SubmitPath
from console.moves.cancel import plan_cancel
from console.moves.progress import estimate_run
from console.moves.throttles import Leftover, LeftoverKind
from console.moves.waves import WaveLimits, plan_waves
from console.notify.events import Event
from console.notify.hub import emit
from console.plans.diff import diff, first_replica_changes
from console.plans.plan import Plan, PlanEntry, parse_plan, plan_hash, rollback
from console.plans.validate import CORDONED_DESTINATION, blocking, validate
from console.runs.executor import Executor, Step
from console.runs.gateway import ClusterGateway
from console.services.cancel import CancelReport, cancel_seen
from console.services.guard import refuse, require
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
    dir_bytes_to_copy: int = 0
    """Bytes copied between the log dirs of a broker (no network), at the log-dir throttle."""
    tiered_topics: tuple[str, ...] = ()
    """The tiered topics the plan copies (over the network or between dirs): their local log only."""

    @property
    def eta_s(self) -> float | None:
        return None if self.estimate is None else self.estimate.seconds

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.severity is Severity.ERROR]

    def blocking(self, allow_cordoned: bool = False) -> list[Finding]:
        """The errors that stop a submission: all of them, bar the cordoned destinations when the
        operator allows them (``submit --allow-cordoned``; :func:`start_run` audits it)."""
        return blocking(self.findings, allow_cordoned)

    @property
    def cordoned(self) -> list[Finding]:
        """Replicas this plan sends to a cordoned broker or log dir (errors the operator may override)."""
        return [f for f in self.findings if f.code == CORDONED_DESTINATION]

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
    return Preflight(
        validate(state, plan, d),
        waves,
        d.bytes_to_copy,
        estimate_run(state, waves, rate, calibration),
        d.dir_bytes_to_copy,
        tuple(d.copied_topics(state.tiered)),
    )


def two_person_problem(
    store: Store, users: Users | None, plan_id: int | None, plan: Plan, cluster_id: str | None = None
) -> str | None:
    """Why the two-person rule (when the users file turns it on) does not let ``plan`` be
    submitted on ``cluster_id`` yet, or None. ``plan`` must be the content of saved plan
    ``plan_id``, a plan of that cluster, approved on it by someone who authored no version of it
    (:func:`console.access.auth.approval_problem`). ``cluster_id`` None (a check before the cluster
    is read): approvals on the plan's own cluster; :func:`start_run` checks again on the run's."""
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
    key = saved.summary.cluster if cluster_id is None else cluster_id
    if saved.summary.cluster != key:
        return f"Plan {plan_id} is a plan of cluster {saved.summary.cluster}, not of {key}."
    return approval_problem(store.plans.authors(plan_id), store.plans.approvals(plan_id), digest, key)


def _plan_cluster_problem(store: Store, plan_id: int | None, key: str) -> str | None:
    """Why saved plan ``plan_id`` cannot be run on cluster ``key`` (it is another cluster's), or None."""
    saved = None if plan_id is None else store.plans.load(plan_id)
    if saved is None or saved.summary.cluster == key:
        return None
    return f"Plan {plan_id} is a plan of cluster {saved.summary.cluster}, not of {key}: it is not run on another."


def start_run(
    store: Store,
    cluster: ClusterGateway,
    who: Identity,
    state: ClusterState,
    plan: Plan,
    name: str,
    rate: int | None = None,
    limits: WaveLimits = WaveLimits(),
    path: SubmitPath = SubmitPath.API,
    elect_leaders: bool | None = None,
    *,
    users: Users | None,
    plan_id: int | None = None,
    allow_cordoned: bool = False,
) -> int:
    """Record a run of ``plan`` (refused when another active run moves the same partitions, with
    :class:`console.core.errors.ConflictError`); a worker drives it from there. The caller ran
    :func:`preflight` and had it confirmed. ``who`` needs the operator role, and with the
    two-person rule of ``users`` on, ``plan`` must be saved plan ``plan_id`` approved by someone
    else (:func:`two_person_problem`); else :class:`console.core.errors.NotPermitted`. ``path``
    ZOOKEEPER submits through the pre-2.4 znode (needs ZooKeeper; cannot be cancelled).
    ``elect_leaders``: the run ends with a preferred leader election of its partitions; None: when
    the plan changes some partition's first replica (:func:`console.plans.diff.first_replica_changes`).
    A plan that sends replicas to cordoned brokers or log dirs (KIP-1066: the controller would take
    it) is refused, audited, unless ``allow_cordoned``: then the run's audit entry records the
    override and what it lets through. The run keeps the plan's rollback against ``state``
    (:func:`console.plans.plan.rollback`), whose log dirs are named only when ``state`` carries what
    the cluster is (``snapshot(info=True)``) and it is Kafka 4.2 or later; else ``any``."""
    key = cluster_key(state, cluster.name)
    asked: dict[str, object] = {"name": name, "plan": plan_id, "partitions": len(plan)}
    require(store, who, "submit", key, asked)
    onto_cordoned = _cordoned_destinations(state, plan)
    if onto_cordoned and not allow_cordoned:
        refuse(
            store,
            who,
            "submit",
            key,
            f"The plan sends {len(onto_cordoned)} replica(s) to cordoned brokers or log dirs "
            f"({_first_sentence(onto_cordoned[0])}); Kafka's controller would take them, the console does not.",
            "Change the plan, uncordon the broker first, or allow it explicitly (submit --allow-cordoned; "
            "Review: “Submit onto cordoned brokers anyway”), which is audited.",
            {**asked, "cordoned_destinations": len(onto_cordoned)},
        )
    problem = _plan_cluster_problem(store, plan_id, key) or two_person_problem(store, users, plan_id, plan, key)
    if problem is not None:
        refuse(
            store,
            who,
            "submit",
            key,
            problem,
            "Save the plan, have someone who authored no version of it approve it on this cluster, and submit the saved plan.",
            asked,
        )
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
    with store.transaction():
        run_id = store.runs.create(
            NewRun(
                key,
                name,
                who.name,
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
            who.name,
            key,
            "submit",
            {
                "run": run_id,
                "name": name,
                "waves": len(waves),
                "rate": rate,
                "path": path.value,
                "elect_leaders": elect_leaders,
                **(
                    {
                        "allow_cordoned": True,
                        "cordoned_destinations": len(onto_cordoned),
                        "cordoned": [_first_sentence(f) for f in onto_cordoned[:100]],
                    }
                    if onto_cordoned
                    else {}
                ),
            },
            "run recorded",
            plan_hash=digest,
        )
    return _announced(store, state, key, who.name, run_id, name, waves, rate)


def _announced(
    store: Store,
    state: ClusterState,
    key: str,
    who: str,
    run_id: int,
    name: str,
    waves: list[tuple[PlanEntry, ...]],
    rate: int | None,
) -> int:
    """The team hears of the new run ``run_id``, with its estimate; returns ``run_id``."""
    estimate = estimate_run(state, waves, rate)
    emit(
        store,
        Event.RUN_STARTED,
        cluster=key,
        who=who,
        detail=f"{who} started run #{run_id} ({name}): {plural(len(waves), 'wave')}"
        + (f", throttled at {human_rate(rate)}." if rate else ", not throttled."),
        run=run_id,
        eta_s=estimate.seconds if estimate is not None else None,
    )
    return run_id


def _first_sentence(f: Finding) -> str:
    return f.message.split(". ")[0]


def _cordoned_destinations(state: ClusterState, plan: Plan) -> list[Finding]:
    """The plan's replicas that go to a cordoned broker or log dir (checked only where some broker
    has a cordon: a cluster without one costs nothing)."""
    if not any(b.cordoned or b.cordoned_dirs for b in state.brokers):
        return []
    return [f for f in validate(state, plan) if f.code == CORDONED_DESTINATION]


def approve(store: Store, who: Identity, cluster_id: str, plan_id: int) -> None:
    """Approve saved plan ``plan_id`` as it is now, for runs on its cluster (a later change needs a
    new approval). ``cluster_id`` is the cluster the caller acts on: it must be the plan's. ``who``
    needs the approver role and must have authored no version of the plan
    (:meth:`console.storage.plans.PlanStore.authors`). A refusal is audited under the plan's cluster."""
    saved = store.plans.load(plan_id)
    if saved is None:
        raise ConfigError(f"Plan {plan_id} is not in the store.", "Pick a saved plan.")
    key = saved.summary.cluster
    asked: dict[str, object] = {"plan": plan_id}
    digest = plan_hash(saved.plan)
    require(store, who, "approve", key, asked, plan_hash=digest)
    if cluster_id != key:
        refuse(
            store,
            who,
            "approve",
            key,
            f"Plan {plan_id} is a plan of cluster {key}, not of {cluster_id}.",
            "Approve it on the cluster it was drafted for.",
            {**asked, "asked_on": cluster_id},
            plan_hash=digest,
        )
    if who.name in store.plans.authors(plan_id):
        refuse(
            store,
            who,
            "approve",
            key,
            f"{who.name} authored a version of plan {plan_id}: an author cannot approve it.",
            "Ask someone with the approver role who did not save, overwrite or bring up to date any version of it.",
            asked,
            plan_hash=digest,
        )
    with store.transaction():
        now = store.plans.load(plan_id)
        if now is None or plan_hash(now.plan) != digest or who.name in store.plans.authors(plan_id):
            raise ConfigError(f"Plan {plan_id} changed while it was being approved.", "Review it again.")
        store.plans.approve(plan_id, who.name, digest, key)
        store.audit.record(who.name, key, "approve", asked, "approved", plan_hash=digest)


# -- during a run ----------------------------------------------------------------------------------
def _positive_rate(rate: int) -> None:
    if rate <= 0:
        raise ConfigError("The throttle must be a positive number of bytes/s.", "For example 10000000 (10.0 MB/s).")


def _change(store: Store, who: Identity, action: str, run_id: int, to: RunState) -> None:
    run = store.runs.require(run_id)
    require(store, who, action, run.cluster, {"run": run_id}, plan_hash=run.plan_hash)
    with store.transaction():
        run = store.runs.require(run_id)
        store.runs.set_state(run_id, to)
        store.audit.record(who.name, run.cluster, f"run-{to}", {"run": run_id}, to.value, plan_hash=run.plan_hash)


def pause(store: Store, who: Identity, run_id: int) -> None:
    """The current wave finishes; the next one waits for :func:`resume`."""
    _change(store, who, "pause", run_id, RunState.PAUSED)


def resume(store: Store, who: Identity, run_id: int) -> None:
    _change(store, who, "resume", run_id, RunState.RUNNING)


def stop(store: Store, who: Identity, run_id: int) -> None:
    """The current wave finishes; no later wave is sent."""
    _change(store, who, "stop", run_id, RunState.STOPPING)


def change_throttle(
    store: Store, cluster: ClusterGateway, who: Identity, run_id: int, rate: int, confirm_s: float = 10.0
) -> dict[str, str | None]:
    """Change the throttle of an active run (``who`` needs the operator role): the brokers its
    running wave throttles get the new rate at once, later waves are throttled at it. Returns the
    follower rate each of those brokers reports afterwards (read back for up to ``confirm_s``)."""
    run = store.runs.require(run_id)
    require(store, who, "throttle", run.cluster, {"run": run_id, "rate": rate}, plan_hash=run.plan_hash)
    user = who.name
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


def abandon(
    store: Store, cluster: ClusterGateway, who: Identity, run_id: int, why: str = "", cancel_reassignments: bool = False
) -> tuple[Step, CancelReport | None]:
    """Stop driving an active run for good (``who`` needs the operator role): its throttles come
    off through the ledger and its unfinished waves are skipped. The reassignments it started are
    left as they are, unless ``cancel_reassignments``: then they are cancelled too (back to their
    original replicas)."""
    run = store.runs.require(run_id)
    require(
        store,
        who,
        "abandon",
        run.cluster,
        {"run": run_id, "why": why, "cancel_reassignments": cancel_reassignments},
        plan_hash=run.plan_hash,
    )
    if not run.active:
        raise ConfigError(
            f"Run {run_id} is {run.state}: there is nothing to abandon.", "List the runs with `python -m console runs`."
        )
    moving = [k for k, r in store.runs.active_partitions(run.cluster).items() if r == run_id]
    step = Executor(store, cluster, who.name).finish(
        run, RunState.ABANDONED, {"why": why, "cancel_reassignments": cancel_reassignments}
    )
    report = None
    if cancel_reassignments and moving:
        state = cluster.snapshot()
        report = cancel_seen(
            store, cluster, who, run.cluster, plan_cancel(state, moving, include_others=True), {}, wait_s=30.0
        )
    return step, report


# -- after a run -----------------------------------------------------------------------------------
def rollback_as_plan(store: Store, who: Identity, state: ClusterState, cluster_name: str, run_id: int) -> int:
    """The rollback of a run as a saved plan, to review and submit like any other (``who`` needs a
    role that saves plans); returns its id."""
    run = store.runs.require(run_id)
    key = cluster_key(state, cluster_name)
    require(store, who, "save plans", key, {"rollback of run": run_id}, plan_hash=run.plan_hash)
    user = who.name
    back = parse_plan(run.rollback_json).with_basis(state)
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


@dataclass(frozen=True)
class SweepReport:
    """What a sweep did, as the brokers report it afterwards (never what was only asked for)."""

    removed: tuple[Leftover, ...] = ()
    still_set: tuple[Leftover, ...] = ()
    """Reported set after the sweep (a broker that had not applied it yet, someone setting it again)."""
    unconfirmed: tuple[Leftover, ...] = ()
    """The removal was sent but the broker (or topic) could not be read back."""


def sweep(
    store: Store, cluster: ClusterGateway, who: Identity, leftovers: Iterable[Leftover], confirm_s: float = 5.0
) -> SweepReport:
    """Remove throttles nothing needs (``who`` needs the operator role; audited before and after):
    broker and topic configs, and the cluster default ones among ``leftovers`` (there only when the
    operator asked for them). The configs are read back for up to ``confirm_s`` seconds and the
    report says what is gone; ledger entries for those are closed."""
    user = who.name
    chosen = list(dict.fromkeys(leftovers))
    brokers: dict[BrokerId, dict[str, str | None]] = defaultdict(dict)
    topics: dict[str, dict[str, str | None]] = defaultdict(dict)
    default: dict[str, str | None] = {}
    for lo in chosen:
        if lo.kind is LeftoverKind.TOPIC:
            topics[lo.name][lo.key] = None
        elif lo.kind is LeftoverKind.CLUSTER_DEFAULT:
            default[lo.key] = None
        else:
            brokers[BrokerId(int(lo.name))][lo.key] = None
    state = cluster.snapshot()
    key = cluster_key(state, cluster.name)
    request = {
        "brokers": {str(b): sorted(k) for b, k in brokers.items()},
        "topics": {t: sorted(k) for t, k in topics.items()},
        "cluster_default": sorted(default),
    }
    require(store, who, "sweep", key, request)
    if not chosen:
        return SweepReport()
    intent = store.audit.record(user, key, "throttle-sweep", request, "sending")
    try:
        if brokers or topics:
            cluster.alter_configs(brokers, topics)
        if default:
            cluster.alter_cluster_default(default)
    except ConsoleError as failed:
        store.audit.record(
            user, key, "throttle-sweep", request, "failed", ref=intent, response={"error": failed.message}
        )
        raise
    asked = tuple(sorted(set(brokers) | ({b.id for b in state.brokers if b.live} if default else set())))
    report = _read_back(cluster, chosen, asked, tuple(topics), confirm_s)
    gone = {(lo.kind, lo.name, lo.key) for lo in report.removed}
    with store.transaction():
        for e in store.runs.ledger():
            run = store.runs.get(e.run_id)
            if (e.kind, e.name, e.key) in gone and (run is None or not run.active):
                store.runs.ledger_restored(e.id)
        left = {
            part: [f"{lo.where}: {lo.key}" for lo in los]
            for part, los in (("still set", report.still_set), ("unconfirmed", report.unconfirmed))
            if los
        }
        store.audit.record(
            user,
            key,
            "throttle-sweep",
            request,
            "partly removed" if left else "removed",
            ref=intent,
            response=left or None,
        )
    return report


def _read_back(
    cluster: ClusterGateway,
    chosen: list[Leftover],
    brokers: tuple[BrokerId, ...],
    topics: tuple[str, ...],
    confirm_s: float,
) -> SweepReport:
    """Which of ``chosen`` the brokers still report, asking again until none or ``confirm_s``."""
    deadline = time.monotonic() + confirm_s
    while True:
        try:
            got = cluster.describe_configs(brokers, topics)
        except ConsoleError:
            return SweepReport(unconfirmed=tuple(chosen))
        removed: list[Leftover] = []
        still: list[Leftover] = []
        unknown: list[Leftover] = []
        for lo in chosen:
            if lo.kind is LeftoverKind.TOPIC:
                missing, now = lo.name in got.missing_topics, got.topics.get(lo.name, {})
            elif lo.kind is LeftoverKind.CLUSTER_DEFAULT:
                missing = len(got.missing_brokers) == len(brokers)
                now = got.brokers.get(DEFAULT_BROKER, {})
            else:
                missing, now = lo.name in got.missing_brokers, got.brokers.get(lo.name, {})
            (unknown if missing else still if lo.key in now else removed).append(lo)
        if not still or time.monotonic() > deadline:
            return SweepReport(tuple(removed), tuple(still), tuple(unknown))
        time.sleep(0.2)
