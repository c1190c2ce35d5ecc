"""Decommission brokers end to end, as Kafka documents it for KRaft (KIP-1066): cordon them, drain
them, check they hold nothing, and once they are shut down, unregister them.

One flow per set of brokers, kept in the store (:mod:`console.storage.decommissions`) so that it
resumes after a reload or a restart. :func:`advance` moves it on as far as it can go by itself and
stops where it needs a person or the cluster: the drain plan is reviewed and submitted on Review
(or with ``submit --plan-id``), the brokers are shut down on their hosts (the console does not stop
processes), the unregister is confirmed (:func:`unregister`). Where it cannot go on, the flow says
why and what to do (``blocked``): a partition that cannot leave the brokers, a broker still
running, a drain run that ended without completing.

Every step needs the operator role (refused and audited otherwise, nothing sent or stored), and is
audited (action ``decommission``) with its state change; the cordons and the unregister requests
are audited as the requests they are.
"""

from __future__ import annotations

from dataclasses import replace
from functools import partial

from console.access.auth import Identity
from console.core.cluster_info import cordons_supported, cordons_text
from console.core.errors import ClusterUnavailable, ConfigError, ConsoleError, GoalImpossible, IllegalTransition
from console.core.format import ids_text, plural
from console.core.model import BrokerId, ClusterMode, ClusterState, SourceStatus, cluster_key
from console.core.states import DecommissionStep, RunState
from console.notify.events import Event
from console.notify.hub import emit
from console.plans.generate import generate
from console.plans.generators.brokers import DRAIN_INCOMPLETE
from console.plans.generators.options import GenerateOptions, Goal
from console.plans.plan import plan_hash
from console.runs.gateway import ClusterGateway
from console.services import cordons, plans
from console.services.guard import audited_send, require
from console.storage.decommissions import Decommission
from console.storage.store import Store

ACTION = "decommission"
Step = DecommissionStep


def start(
    store: Store, cluster: ClusterGateway, who: Identity, cluster_name: str, brokers: tuple[int, ...]
) -> Decommission:
    """A new flow for ``brokers`` (or the open one for exactly these brokers), moved on as far as
    it goes (:func:`advance`). Refused (:class:`ConfigError`, nothing stored) for brokers the cluster
    does not know, for all of its brokers, or for brokers already in another open flow."""
    state = _readable(cluster.snapshot())
    key = cluster_key(state, cluster_name)
    wanted = tuple(sorted({BrokerId(int(b)) for b in brokers}))
    require(store, who, ACTION, key, {"brokers": list(wanted)})
    if not wanted:
        raise ConfigError("Name the brokers to decommission.", "For example --broker 3.")
    unknown = [b for b in wanted if state.broker(b) is None]
    if unknown:
        raise ConfigError(
            f"Broker {ids_text(unknown)} is unknown to the cluster.", "Use ids from the cluster's broker list."
        )
    if not [b for b in state.brokers if b.registered and b.id not in wanted]:
        raise ConfigError("Decommissioning every broker leaves the cluster none.", "Keep at least one broker.")
    for flow in store.decommissions.list(key, open_only=True):
        if flow.brokers == wanted:
            return advance(store, cluster, who, cluster_name, flow.id)
        if set(flow.brokers) & set(wanted):
            raise IllegalTransition(
                f"Broker {ids_text(sorted(set(flow.brokers) & set(wanted)))} is in decommission {flow.id} already "
                f"(brokers {ids_text(flow.brokers)}, step {flow.step.value}).",
                f"Continue that one, or abandon it first (decommission --abandon {flow.id}).",
            )
    _drain_fits(state, wanted)
    with store.transaction():
        flow_id = store.decommissions.create(key, wanted, who.name)
        store.audit.record(who.name, key, ACTION, {"flow": flow_id, "brokers": list(wanted)}, "started")
    return advance(store, cluster, who, cluster_name, flow_id)


def _drain_fits(state: ClusterState, brokers: tuple[BrokerId, ...]) -> None:
    """Refuse (:class:`ConfigError`, before anything is cordoned or stored) a decommission whose
    drain cannot fit on the brokers that stay: on three brokers, a topic of replication factor 3
    has nowhere to go. The flow would cordon the brokers and then stop at its drain plan."""
    if not _holding(state, brokers):
        return
    try:
        generate(state, GenerateOptions(Goal.DECOMMISSION, brokers=tuple(int(b) for b in brokers)))
    except GoalImpossible as e:
        raise ConfigError(
            f"The drain cannot fit: {e.message} Nothing was cordoned.",
            e.hint or "Add brokers, or lower the replication factor of the topics named, first.",
        ) from None


def advance(store: Store, cluster: ClusterGateway, who: Identity, cluster_name: str, flow_id: int) -> Decommission:
    """Move the flow on, step after step, until a step needs a person or the cluster (its
    ``blocked`` then says what). A flow that is blocked is tried again from its step."""
    flow = _flow(store, flow_id)
    require(store, who, ACTION, flow.cluster, {"flow": flow_id, "step": flow.step.value})
    for _ in range(len(Step)):
        if not flow.open:
            return flow
        before = flow.step
        state = _readable(cluster.snapshot())
        _STEPS[flow.step](store, cluster, who, cluster_name, flow, state)
        flow = _flow(store, flow_id)
        if flow.blocked is not None or flow.step is before:
            return flow
    return flow


def unregister(store: Store, cluster: ClusterGateway, who: Identity, flow_id: int) -> Decommission:
    """UnregisterBroker for each broker of a flow at :attr:`DecommissionStep.UNREGISTER`, after
    checking once more that each holds nothing and is not running (a refusal says which and sends
    nothing). Each request audited before it is sent and with its answer."""
    flow = _flow(store, flow_id)
    require(store, who, "unregister", flow.cluster, {"flow": flow_id, "brokers": list(flow.brokers)})
    if flow.step is not Step.UNREGISTER:
        raise IllegalTransition(
            f"Decommission {flow_id} is at step {flow.step.value}, not ready to unregister.",
            "Continue the flow until its brokers are drained and shut down.",
        )
    state = _readable(cluster.snapshot())
    problem = _holding(state, flow.brokers) or _running(state, flow.brokers)
    if problem:
        _set(store, who, flow, Step.UNREGISTER, blocked=problem)
        raise IllegalTransition(f"Not unregistered: {problem}", "Nothing was sent.")
    # the registrations are known only where DescribeCluster lists fenced brokers too (Kafka 4.0+):
    # elsewhere a stopped broker drops out of Metadata while the controller still holds it, so
    # UnregisterBroker is sent, and an answer "not registered" is said as such
    known = state.status.fenced is SourceStatus.OK
    unregistered: list[BrokerId] = []
    gone: list[BrokerId] = []
    for b in flow.brokers:
        broker = state.broker(b)
        if known and (broker is None or not broker.registered):
            gone.append(b)  # unregistered already (elsewhere)
            continue
        try:
            took = _unregister_one(store, cluster, who, flow.cluster, b, {"flow": flow_id})
        except ConsoleError as e:
            _set(store, who, flow, Step.UNREGISTER, blocked=f"Broker {b} was not unregistered: {e.message}")
            raise
        (unregistered if took else gone).append(b)
    said = []
    if unregistered:
        said.append(
            f"Unregistered broker {ids_text(unregistered)}: the controller no longer knows "
            f"{'it' if len(unregistered) == 1 else 'them'} (the brokers' metadata follows within seconds)."
        )
    if gone:
        said.append(f"Broker {ids_text(gone)} was not registered any more: nothing to unregister.")
    _set(store, who, flow, Step.DONE, note=" ".join(said))
    return _flow(store, flow_id)


def idle_fenced(state: ClusterState) -> tuple[BrokerId, ...]:
    """Brokers that are registered but fenced and hold no replica: offered for unregister (KIP-1073)."""
    held = {b for p in state.partitions for b in p.replicas}
    return tuple(b.id for b in state.brokers if b.registered and b.fenced and b.id not in held)


def unregister_idle(store: Store, cluster: ClusterGateway, who: Identity, cluster_name: str, broker: int) -> str:
    """UnregisterBroker for a fenced broker that holds nothing, outside a decommission flow (one
    that was shut down for good without one), and what came of it in words. Refused, nothing
    sent, for a broker that runs or holds replicas."""
    state = _readable(cluster.snapshot())
    key = cluster_key(state, cluster_name)
    b = BrokerId(int(broker))
    require(store, who, "unregister", key, {"broker": b})
    if b not in idle_fenced(state):
        problem = _holding(state, (b,)) or _running(state, (b,)) or f"Broker {b} is not registered."
        raise IllegalTransition(f"Not unregistered: {problem}", "Nothing was sent.")
    if _unregister_one(store, cluster, who, key, b, {}):
        return f"Unregistered broker {b}: the controller no longer knows it."
    return f"Broker {b} was not registered any more: nothing to unregister."


def _unregister_one(
    store: Store, cluster: ClusterGateway, who: Identity, key: str, broker: BrokerId, extra: dict[str, object]
) -> bool:
    """One UnregisterBroker, audited before it is sent and with its answer; False when the
    controller answered that the broker was not registered."""
    request = {**extra, "broker": broker}
    was, intent = audited_send(
        store, who, key, "unregister-broker", request, partial(cluster.unregister_broker, broker)
    )
    intent.answer("unregistered" if was else "not registered")
    return was


def abandon(store: Store, who: Identity, flow_id: int, why: str = "") -> Decommission:
    """Stop the flow (its drain run, if any, goes on: cancel it on Live or Runs; cordons stay)."""
    flow = _flow(store, flow_id)
    require(store, who, ACTION, flow.cluster, {"flow": flow_id, "abandon": why})
    if flow.open:
        _set(
            store,
            who,
            flow,
            Step.ABANDONED,
            note="Abandoned" + (f": {why}" if why else "") + ". The cordons stay; uncordon the brokers if wanted.",
        )
    return _flow(store, flow_id)


def describe(flow: Decommission) -> str:
    """Where the flow stands and what comes next, in words."""
    what = f"Decommission {flow.id} of broker {ids_text(flow.brokers)}: {flow.step.value}"
    if flow.blocked:
        return f"{what}. Cannot go on: {flow.blocked}"
    return f"{what}. {_NEXT[flow.step]}"


_NEXT = {
    Step.CORDON: "Next: cordon the brokers.",
    Step.PLAN: "Next: generate the drain plan.",
    Step.REVIEW: "Next: review the drain plan and submit it (Review, or submit --plan-id).",
    Step.DRAIN: "The drain run moves the replicas away; check again when it has completed.",
    Step.VERIFY: "Next: check that the brokers hold nothing.",
    Step.SHUT_DOWN: "Next: shut the brokers down on their hosts, then check again.",
    Step.UNREGISTER: "The brokers hold nothing and are shut down: unregister them.",
    Step.DONE: "The brokers are gone from the cluster.",
    Step.ABANDONED: "Stopped by an operator; its cordons stay.",
}


# -- the steps -----------------------------------------------------------------------------------
def _cordon(
    store: Store, cluster: ClusterGateway, who: Identity, name: str, flow: Decommission, state: ClusterState
) -> None:
    supported = cordons_supported(cluster.cluster_info())
    if not supported:
        why = cordons_text(cluster.cluster_info())
        _set(
            store,
            who,
            flow,
            Step.PLAN,
            note=f"Cordons are not available on this cluster ({why}): the drain plan leaves the brokers out, but "
            "new topics may still place replicas on them until they are shut down.",
        )
        return
    for b in flow.brokers:
        report = cordons.change(store, cluster, who, cordons.CORDON, int(b))
        if report.changed and not report.confirmed:
            _set(store, who, flow, Step.CORDON, blocked=f"{report.summary()} Check the broker, then continue.")
            return
    _set(store, who, flow, Step.PLAN, note=f"Cordoned broker {ids_text(flow.brokers)}: no new replica lands on them.")


def _plan(
    store: Store, cluster: ClusterGateway, who: Identity, name: str, flow: Decommission, state: ClusterState
) -> None:
    if not _holding(state, flow.brokers):
        _set(store, who, flow, Step.VERIFY, note="Nothing to move: the brokers hold no replica.")
        return
    try:
        made = generate(state, GenerateOptions(Goal.DECOMMISSION, brokers=tuple(int(b) for b in flow.brokers)))
    except GoalImpossible as e:
        _set(store, who, flow, Step.PLAN, blocked=f"{e.message} {e.hint}")
        return
    stuck = [f for f in made.report.findings if f.code == DRAIN_INCOMPLETE]
    if stuck:
        _set(store, who, flow, Step.PLAN, blocked=f"{stuck[0].message} {stuck[0].hint}")
        return
    base = f"decommission {ids_text(flow.brokers)} (flow {flow.id}"
    earlier = sum(1 for p in store.plans.list(flow.cluster) if p.name.startswith(base))
    plan_name = f"{base})" if not earlier else f"{base}, v{earlier + 1})"
    # its rollback names log dirs where the official tool of the cluster's release does: what the cluster is
    known = state if state.info.known else replace(state, info=cluster.cluster_info())
    plan_id = plans.save_plan(store, who, known, name, plan_name, made.plan, made.report)
    _set(
        store,
        who,
        flow,
        Step.REVIEW,
        note=f"Drain plan {plan_id} saved: {made.report.headline()}",
        plan=(plan_id, plan_hash(made.plan)),
    )


def _review(
    store: Store, cluster: ClusterGateway, who: Identity, name: str, flow: Decommission, state: ClusterState
) -> None:
    runs = [
        r
        for r in store.runs.list(flow.cluster)
        if r.plan_hash == flow.plan_hash and flow.planned_at is not None and r.created_at >= flow.planned_at
    ]
    if runs:
        run = max(runs, key=lambda r: r.id)
        _set(store, who, flow, Step.DRAIN, note=f"Drain run {run.id} submitted by {run.author}.", run_id=run.id)
    elif flow.blocked is not None:
        _set(store, who, flow, Step.REVIEW)  # nothing blocks a review: clear an old message


def _drain(
    store: Store, cluster: ClusterGateway, who: Identity, name: str, flow: Decommission, state: ClusterState
) -> None:
    run = store.runs.get(flow.run_id) if flow.run_id is not None else None
    if run is None:
        _set(store, who, flow, Step.REVIEW, blocked="The drain run is no longer in the store: submit the plan again.")
    elif run.state is RunState.COMPLETED:
        _set(store, who, flow, Step.VERIFY, note=f"Drain run {run.id} completed.")
    elif not run.active:
        _set(
            store,
            who,
            flow,
            Step.PLAN,
            blocked=f"Drain run {run.id} ended {run.state.value} without completing. Continue to generate a new drain "
            "plan from what is left on the brokers.",
        )


def _verify(
    store: Store, cluster: ClusterGateway, who: Identity, name: str, flow: Decommission, state: ClusterState
) -> None:
    if not _back_to_plan_if_holding(store, who, flow, state):
        _set(store, who, flow, Step.SHUT_DOWN, note=f"Verified: broker {ids_text(flow.brokers)} holds no replica.")


def _back_to_plan_if_holding(store: Store, who: Identity, flow: Decommission, state: ClusterState) -> bool:
    """Replicas on the brokers (left, or placed there since): the flow goes back to planning, saying which."""
    holding = _holding(state, flow.brokers)
    if holding:
        _set(store, who, flow, Step.PLAN, blocked=f"{holding} Continue to generate a drain plan for them.")
    return bool(holding)


def _shut_down(
    store: Store, cluster: ClusterGateway, who: Identity, name: str, flow: Decommission, state: ClusterState
) -> None:
    if _back_to_plan_if_holding(store, who, flow, state):
        return
    running = _running(state, flow.brokers)
    if running:
        _set(store, who, flow, Step.SHUT_DOWN, blocked=running)
        return
    if cluster.cluster_info().mode is ClusterMode.ZOOKEEPER:
        _set(
            store,
            who,
            flow,
            Step.DONE,
            note="Shut down: in ZooKeeper mode a broker leaves /brokers/ids when it stops; there is nothing to unregister.",
        )
        return
    _set(store, who, flow, Step.UNREGISTER, note=f"Broker {ids_text(flow.brokers)} is shut down (fenced or gone).")


def _unregister_ready(
    store: Store, cluster: ClusterGateway, who: Identity, name: str, flow: Decommission, state: ClusterState
) -> None:
    running = _running(state, flow.brokers)
    if running:
        _set(store, who, flow, Step.SHUT_DOWN, blocked=running)
    elif flow.blocked is not None:
        _set(store, who, flow, Step.UNREGISTER)


_STEPS = {
    Step.CORDON: _cordon,
    Step.PLAN: _plan,
    Step.REVIEW: _review,
    Step.DRAIN: _drain,
    Step.VERIFY: _verify,
    Step.SHUT_DOWN: _shut_down,
    Step.UNREGISTER: _unregister_ready,
}


# -- helpers -------------------------------------------------------------------------------------
def _holding(state: ClusterState, brokers: tuple[BrokerId, ...]) -> str:
    """Why the brokers are not empty yet (the partitions with a replica on them), or ''."""
    mine = set(brokers)
    names = [p.name for p in state.partitions if mine & set(p.replicas)]
    if not names:
        return ""
    return (
        f"{plural(len(names), 'partition')} still {'has' if len(names) == 1 else 'have'} a replica on broker "
        f"{ids_text(brokers)} ({', '.join(names[:8])}{' …' if len(names) > 8 else ''})."
    )


def _running(state: ClusterState, brokers: tuple[BrokerId, ...]) -> str:
    """Which brokers still run (registered and not fenced), with what to do, or ''."""
    up = [b for b in brokers if (x := state.broker(b)) is not None and x.live]
    if not up:
        return ""
    return (
        f"Broker {ids_text(up)} is still running (registered, not fenced): shut it down on its host "
        "(kafka-server-stop.sh), then check again."
    )


def _readable(state: ClusterState) -> ClusterState:
    if state.status.metadata is not SourceStatus.OK:
        raise ClusterUnavailable(
            "The cluster's state could not be read: the flow cannot be checked now.",
            "Check that the cluster answers, then continue; nothing was changed.",
        )
    return state


def _flow(store: Store, flow_id: int) -> Decommission:
    flow = store.decommissions.get(flow_id)
    if flow is None:
        raise ConfigError(f"There is no decommission {flow_id}.", "List them with python -m console decommission.")
    return flow


_WAITS = {
    Step.REVIEW: "review the drain plan and submit it.",
    Step.SHUT_DOWN: "shut the brokers down (the console does not stop processes).",
    Step.UNREGISTER: "unregister the brokers once they are shut down.",
}
"""The steps only a person takes, and what they do."""


def _set(
    store: Store,
    who: Identity,
    flow: Decommission,
    step: Step,
    *,
    blocked: str | None = None,
    note: str | None = None,
    plan: tuple[int, str] | None = None,
    run_id: int | None = None,
) -> None:
    """The flow's new step (and why it cannot go on, a note, its plan or run) with its audit entry."""
    with store.transaction():
        store.decommissions.update(flow.id, step=step, blocked=blocked, note=note, plan=plan, run_id=run_id)
        if step is not flow.step or blocked != flow.blocked or note:
            store.audit.record(
                who.name,
                flow.cluster,
                ACTION,
                {"flow": flow.id, "brokers": list(flow.brokers), "from": flow.step.value, "to": step.value},
                "blocked" if blocked else step.value,
                response={k: v for k, v in (("blocked", blocked), ("note", note)) if v},
            )
    if step is not flow.step and step in _WAITS:
        emit(
            store,
            Event.DECOMMISSION_WAITING,
            cluster=flow.cluster,
            who=who.name,
            detail=f"Decommission #{flow.id} of broker(s) {', '.join(map(str, flow.brokers))} waits for a person: {_WAITS[step]}",
            run=run_id if run_id is not None else flow.run_id,
        )
