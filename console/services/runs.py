"""What changes a run, before, during and after it: what a submission would send
(:func:`preflight`) and whether the two-person rule lets it go (:func:`two_person_problem`; refused,
audited, by :func:`check_approval`), :func:`start_run`, :func:`approve`; :func:`pause`, :func:`resume`, :func:`stop`,
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
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import partial

from console.access.auth import Identity, Users, approval_problem
from console.core.errors import ConfigError, ConsoleError, IllegalTransition
from console.core.format import human_rate, plural
from console.core.limits import FOLLOWER_RATE
from console.core.model import (
    DEFAULT_BROKER,
    BrokerId,
    ClusterState,
    Finding,
    cluster_key,
)
from console.core.states import RunState, SubmitPath
from console.moves.cancel import plan_cancel
from console.moves.throttles import Leftover, LeftoverKind
from console.moves.waves import WaveLimits
from console.notify.events import Event
from console.notify.hub import emit
from console.plans.diff import first_replica_changes
from console.plans.plan import Plan, PlanEntry, parse_plan, plan_hash, rollback
from console.runs.audited import Intent
from console.runs.executor import Executor
from console.runs.gateway import ClusterGateway
from console.runs.steps import Step
from console.services.cancel import CancelReport, cancel_seen
from console.services.guard import REFUSED, refuse, require
from console.services.other_moves import check_other_moves
from console.services.preflight import Preflight, check_submit, first_sentence, preflight
from console.services.unthrottled import check_ceiling
from console.storage.runs import NewRun, RunLimits
from console.storage.store import Store


# -- before a run ----------------------------------------------------------------------------------
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


@dataclass(frozen=True)
class RunSettings:
    """How a run goes: its throttle, its waves, how it is sent and ends, and what the operator
    let through that would otherwise refuse it."""

    rate: int | None = None
    """The throttle, bytes/s on each broker that sends or receives (None: not throttled)."""
    limits: WaveLimits = WaveLimits()
    """What one wave may move."""
    path: SubmitPath = SubmitPath.API
    """ZOOKEEPER submits through the pre-2.4 znode (needs ZooKeeper; cannot be cancelled)."""
    elect_leaders: bool | None = None
    """The run ends with a preferred leader election of its partitions; None: when the plan changes
    some partition's first replica (:func:`console.plans.diff.first_replica_changes`)."""
    allow_cordoned: bool = False
    """Cordoned destinations (KIP-1066: the controller would take them) do not refuse the run; the
    run's audit entry records the override and what it lets through."""
    allow_other_moves: bool = False
    """Reassignments this console did not start in flight do not refuse the run
    (:mod:`console.services.other_moves`)."""
    unthrottled_ok: bool = False
    """A ``rate`` above the cluster's ceiling (effectively unthrottled, :mod:`console.services.unthrottled`)
    does not refuse the run."""


@dataclass(frozen=True)
class RunRequest:
    """What :func:`start_run` is asked: run ``plan`` (saved as ``plan_id``, or not saved), named
    ``name``, as ``how`` says, by ``who``."""

    who: Identity
    plan: Plan
    name: str
    how: RunSettings = RunSettings()
    plan_id: int | None = None
    """The saved plan ``plan`` is the content of (needed under the two-person rule), or None."""
    checked: Preflight | None = None
    """The :func:`preflight` of ``plan`` the operator confirmed (None, or one of another plan: it is made again)."""


def start_run(
    store: Store, cluster: ClusterGateway, state: ClusterState, request: RunRequest, *, users: Users | None
) -> int:
    """Record the run ``request`` asks for against ``state`` (refused when another active run moves
    the same partitions, with :class:`console.core.errors.RunOverlap`); a worker drives it from
    there. Its ``who`` needs the operator role, and with the two-person rule of ``users`` on, its
    plan must be its saved plan approved by someone else (:func:`two_person_problem`); else
    :class:`console.core.errors.NotPermitted`. A plan with blocking errors, or a ``state`` whose
    Metadata or ListPartitionReassignments did not answer, is refused, audited, with
    :class:`console.core.errors.SubmitRefused` (:meth:`~console.services.preflight.Preflight.refusal`);
    so are cordoned destinations, other movers' reassignments in flight and a rate above the
    cluster's ceiling (``cluster.max_throttle``), each unless :class:`RunSettings` lets it through.
    The run keeps the plan's rollback against ``state`` (:func:`console.plans.plan.rollback`), whose
    log dirs are named only when ``state`` carries what the cluster is (``snapshot(info=True)``)
    and it is Kafka 4.2 or later; else ``any``."""
    who, plan, name, plan_id, how = request.who, request.plan, request.name, request.plan_id, request.how
    rate, limits, path = how.rate, how.limits, how.path
    key = cluster_key(state, cluster.name)
    asked: dict[str, object] = {"name": name, "plan": plan_id, "partitions": len(plan)}
    require(store, who, "submit", key, asked)
    unthrottled = check_ceiling(store, who, "submit", key, rate, cluster.max_throttle, how.unthrottled_ok, asked)
    other_moves = check_other_moves(store, who, key, state, how.allow_other_moves, asked)
    text = plan.to_json()
    digest = plan_hash(plan, text)
    checked = request.checked
    pre = checked if checked is not None and checked.digest == digest else preflight(state, plan, limits, rate)
    check_submit(store, who, key, pre, how.allow_cordoned, asked)
    check_approval(store, who, key, users, plan_id, plan, asked)
    _check_sending(cluster, path, rate)
    elect_leaders = first_replica_changes(state, plan) if how.elect_leaders is None else how.elect_leaders
    limits_kept = RunLimits(limits.moves_per_broker, limits.partitions, limits.bytes)
    waves = pre.waves
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
                limits_kept,
                path,
                elect_leaders,
            )
        )
        recorded = {"run": run_id, "name": name, "waves": len(waves), "rate": rate, "path": path.value}
        overridden = _cordon_override(pre.cordoned)
        record = {**recorded, "elect_leaders": elect_leaders, **overridden, **other_moves, **unthrottled}
        store.audit.record(who.name, key, "submit", record, "run recorded", plan_hash=digest)
    return _announced(store, key, who.name, run_id, name, waves, rate, pre.eta_s)


def _announced(
    store: Store,
    key: str,
    who: str,
    run_id: int,
    name: str,
    waves: list[tuple[PlanEntry, ...]],
    rate: int | None,
    eta_s: float | None,
) -> int:
    """The team hears of the new run ``run_id``, with its estimate (``eta_s``); returns ``run_id``."""
    emit(
        store,
        Event.RUN_STARTED,
        cluster=key,
        who=who,
        detail=f"{who} started run #{run_id} ({name}): {plural(len(waves), 'wave')}"
        + (f", throttled at {human_rate(rate)}." if rate else ", not throttled."),
        run=run_id,
        eta_s=eta_s,
    )
    return run_id


def _check_sending(cluster: ClusterGateway, path: SubmitPath, rate: int | None) -> None:
    """Refuse a run that cannot be sent as asked: the ZooKeeper path without ZooKeeper, a throttle not positive."""
    if path is SubmitPath.ZOOKEEPER and not cluster.has_zookeeper:
        raise ConfigError(
            "The ZooKeeper path needs the cluster's ZooKeeper connect string.",
            "Give --zookeeper (or configure it for the cluster).",
        )
    if rate is not None:
        _positive_rate(rate)


def check_approval(
    store: Store,
    who: Identity,
    key: str,
    users: Users | None,
    plan_id: int | None,
    plan: Plan,
    asked: dict[str, object],
) -> None:
    """Refuse (audited: one entry, outcome ``refused``, with why) a saved plan of another cluster
    than ``key``, or one the two-person rule of ``users`` does not let go on it
    (:func:`two_person_problem`: no saved plan named, another content, a plan not in the store, no
    valid approval). :func:`start_run` checks it after its role check; the command line checks it
    first, once it knows the cluster, so that a refused submit reads nothing more."""
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
            plan_hash=plan_hash(plan),
        )


def _cordon_override(onto: list[Finding]) -> dict[str, object]:
    """What a run's audit entry says of the cordoned destinations the operator let through."""
    if not onto:
        return {}
    return {
        "allow_cordoned": True,
        "cordoned_destinations": len(onto),
        "cordoned": [first_sentence(f) for f in onto[:100]],
    }


def approve(store: Store, who: Identity, cluster_id: str, plan_id: int, reviewed: Plan | None = None) -> None:
    """Approve saved plan ``plan_id`` as it is now, for runs on its cluster (a later change needs a
    new approval). ``cluster_id`` is the cluster the caller acts on: it must be the plan's. ``who``
    needs the approver role and must have authored no version of the plan
    (:meth:`console.storage.plans.PlanStore.authors`). ``reviewed``: the plan the approver reviewed
    (the command line's file); the saved plan must have its content. A refusal is audited under the
    plan's cluster."""
    saved = store.plans.load(plan_id)
    if saved is None:
        raise ConfigError(f"Plan {plan_id} is not in the store.", "Pick a saved plan.")
    key = saved.summary.cluster
    asked: dict[str, object] = {"plan": plan_id}
    digest = plan_hash(saved.plan)
    require(store, who, "approve", key, asked, plan_hash=digest)
    if reviewed is not None and plan_hash(reviewed) != digest:
        refuse(
            store,
            who,
            "approve",
            key,
            f"Plan {plan_id} is not the plan reviewed: its content is another.",
            "Review the saved plan's own content (the author's file, the Review page) and approve that.",
            {**asked, "reviewed": plan_hash(reviewed)},
            plan_hash=digest,
        )
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


def _change(store: Store, who: Identity, action: str, run_id: int, to: RunState, why: str = "") -> None:
    """Take run ``run_id`` to ``to`` (the person's ``action``, with ``why`` for the audit log); a
    run that cannot go there is refused, audited, with :class:`IllegalTransition`."""
    run = store.runs.require(run_id)
    asked: dict[str, object] = {"run": run_id, **({"why": why} if why else {})}
    require(store, who, action, run.cluster, asked, plan_hash=run.plan_hash)
    if not run.state.can_become(to):
        problem = f"Run {run_id} is {run.state.value}: it cannot be {_BECOME[to]}."
        store.audit.record(
            who.name, run.cluster, action, asked, REFUSED, plan_hash=run.plan_hash, response={"why": problem}
        )
        raise IllegalTransition(problem, "List the runs and their states with `python -m console runs`.")
    with store.transaction():
        run = store.runs.require(run_id)
        store.runs.set_state(run_id, to)
        store.audit.record(who.name, run.cluster, f"run-{to}", asked, to.value, plan_hash=run.plan_hash)


_BECOME = {RunState.PAUSED: "paused", RunState.RUNNING: "resumed", RunState.STOPPING: "stopped after its wave"}


def pause(store: Store, who: Identity, run_id: int, why: str = "") -> None:
    """The current wave finishes; the next one waits for :func:`resume`."""
    _change(store, who, "pause", run_id, RunState.PAUSED, why)


def resume(store: Store, who: Identity, run_id: int) -> None:
    """The next wave is sent. What the guardrails held the run for (if they did) is acknowledged:
    they do not pause it again for that, only for something new."""
    _change(store, who, "resume", run_id, RunState.RUNNING)
    store.holds.acknowledge(run_id)


def stop(store: Store, who: Identity, run_id: int) -> None:
    """The current wave finishes; no later wave is sent."""
    _change(store, who, "stop", run_id, RunState.STOPPING)


def change_throttle(
    store: Store,
    cluster: ClusterGateway,
    who: Identity,
    run_id: int,
    rate: int,
    confirm_s: float = 10.0,
    *,
    unthrottled_ok: bool = False,
) -> dict[str, str | None]:
    """Change the throttle of an active run (``who`` needs the operator role): the brokers its
    running wave throttles get the new rate at once, later waves are throttled at it. A ``rate``
    above the cluster's ceiling (``cluster.max_throttle``) is refused, audited, unless
    ``unthrottled_ok`` (:mod:`console.services.unthrottled`). Returns the follower rate each of
    those brokers reports afterwards (read back for up to ``confirm_s``)."""
    run = store.runs.require(run_id)
    asked: dict[str, object] = {"run": run_id, "rate": rate}
    require(store, who, "throttle", run.cluster, asked, plan_hash=run.plan_hash)
    user = who.name
    _positive_rate(rate)
    ceiling = cluster.max_throttle
    unthrottled = check_ceiling(
        store, who, "throttle", run.cluster, rate, ceiling, unthrottled_ok, asked, plan_hash=run.plan_hash
    )
    with store.transaction():
        run = store.runs.require(run_id)
        if not run.active:
            raise IllegalTransition(
                f"Run {run_id} is {run.state}: its throttle cannot change.",
                "List the runs with `python -m console runs`.",
            )
        brokers = sorted({e.name for e in store.runs.ledger(run_id) if e.kind == "broker"})
        store.runs.set_rate(run_id, rate)
        request = {"run": run_id, "rate": rate, "brokers": brokers, **unthrottled}
        intent = Intent.announce(store, user, run, "throttle-rate", request)
    intent.send(partial(Executor(store, cluster, user).apply_rate, run, rate))
    intent.answer("applied")
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
        raise IllegalTransition(
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
            store,
            cluster,
            who,
            run.cluster,
            plan_cancel(state, moving, include_others=True),
            dict.fromkeys(moving, run_id),  # its audit entries name the run
            wait_s=30.0,
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
    store: Store,
    cluster: ClusterGateway,
    who: Identity,
    leftovers: Iterable[Leftover],
    confirm_s: float = 5.0,
    note: Mapping[str, object] | None = None,
) -> SweepReport:
    """Remove throttles nothing needs (``who`` needs the operator role; audited before and after,
    ``note`` in the request): broker and topic configs, and the cluster default ones among
    ``leftovers`` (there only when the operator asked for them). The configs are read back for up
    to ``confirm_s`` seconds and the report says what is gone; ledger entries for those are closed."""
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
        **(note or {}),
    }
    require(store, who, "sweep", key, request)
    if not chosen:
        return SweepReport()
    intent = Intent.open(store, user, key, "throttle-sweep", request)
    intent.send(partial(_remove, cluster, brokers, topics, default))
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
        intent.answer("partly removed" if left else "removed", left or None)
    return report


def _topic_configs_behind(cluster: ClusterGateway, topics: tuple[str, ...]) -> set[tuple[str, str]] | None:
    """The (topic, config) pairs some broker still shows, asked of each broker; None when no broker
    answered (nothing is known)."""
    if not topics:
        return set()
    seen = cluster.topic_configs_seen(topics)
    answered = [v for v in seen if v.error is None]
    if not answered:
        return None
    return {(t, k) for v in answered for t, keys in v.topics.items() for k in keys}


def _remove(
    cluster: ClusterGateway,
    brokers: dict[BrokerId, dict[str, str | None]],
    topics: dict[str, dict[str, str | None]],
    default: dict[str, str | None],
) -> None:
    if brokers or topics:
        cluster.alter_configs(brokers, topics)
    if default:
        cluster.alter_cluster_default(default)


def _read_back(
    cluster: ClusterGateway,
    chosen: list[Leftover],
    brokers: tuple[BrokerId, ...],
    topics: tuple[str, ...],
    confirm_s: float,
) -> SweepReport:
    """Which of ``chosen`` the brokers still report, asking again until none or ``confirm_s``. A
    topic's list counts as removed only once every broker that answers shows it gone: each applies
    the change as its metadata reaches it, and ``kafka-configs --describe`` asks any one of them."""
    deadline = time.monotonic() + confirm_s
    while True:
        try:
            got = cluster.describe_configs(brokers, topics)
            behind = _topic_configs_behind(cluster, topics)
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
            shown = lo.key in now
            if lo.kind is LeftoverKind.TOPIC and not missing:  # and on every broker that answers
                missing = behind is None
                shown = shown or (lo.name, lo.key) in (behind or set())
            (unknown if missing else still if shown else removed).append(lo)
        if not still or time.monotonic() > deadline:
            return SweepReport(tuple(removed), tuple(still), tuple(unknown))
        time.sleep(0.2)
