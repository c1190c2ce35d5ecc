"""Cancel (a partition, a topic, a run, everything): :func:`cancel_seen`, the set an operator saw
sent as the cluster is at the click, over :func:`cancel`, which sends it, waits for the partitions
to leave the in-flight list and cleans up after the console's runs among them (:func:`finish_cancel`).
A caller that does not wait (the cancel dialog: ``wait_s=0``) follows the partitions itself
(:meth:`CancelReport.leaving`) and calls :func:`finish_cancel` once they left."""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field, replace
from functools import partial

from console.access.auth import Identity
from console.core.errors import ConsoleError, PartiallyApplied
from console.core.format import plural
from console.core.model import (
    DIR_CANCELLED,
    BrokerId,
    ClusterState,
    DirOutcome,
    Outcome,
    TopicPartition,
    cluster_key,
    outcome_word,
    partition_name,
    split_outcomes,
)
from console.core.states import RunState
from console.metrics.instruments import CANCEL_SECONDS, CANCELS
from console.moves.cancel import CancelPlan, CancelVerdict, recheck
from console.plans.logdirs import DirKey, DirMoveProgress, dir_moves_in_flight
from console.runs.audited import Intent
from console.runs.executor import clean_up_after_cancel
from console.runs.gateway import ClusterGateway
from console.runs.settle import send_settled
from console.services.guard import audited_send, require
from console.storage.store import Store


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
    dirs: DirCancelResult | None = None
    """The log dir moves the console's runs among them had asked for, cancelled with them (None: none)."""

    def count(self, verdict: CancelVerdict) -> int:
        return sum(1 for _, v, _ in self.verdicts if v is verdict)

    def rows(self) -> list[dict[str, str]]:
        return [{"partition": partition_name(*k), "outcome": v.value, "detail": d} for k, v, d in self.verdicts]

    def summary(self) -> str:
        parts = [f"{plural(n, 'partition')} {v.short}" for v in CancelVerdict if (n := self.count(v))]
        took = f" in {self.result.seconds_to_accept:.2f} s" if self.result is not None else ""
        dirs = f" Their runs' {self.dirs.summary()}" if self.dirs is not None else ""
        return "; ".join(parts) + took + "." + dirs

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
        return CancelReport(verdicts, result, self.dirs)


def cancel_seen(
    store: Store,
    cluster: ClusterGateway,
    who: Identity,
    cluster_id: str,
    seen: CancelPlan,
    ours: dict[TopicPartition, int],
    force_at_risk: bool = False,
    wait_s: float = 60.0,
    dir_moves: Collection[DirKey] = (),
) -> CancelReport:
    """Cancel the set the operator saw (``seen``, planned when the dialog opened or the command
    read the cluster) as the cluster is now: partitions that completed meanwhile stay moved,
    those no longer in flight are left alone, the rest are cancelled. Never a silent no-op: every
    call is audited and every partition gets a verdict. ``dir_moves``: the log dir moves the
    console's runs among them asked for (:func:`runs_dir_moves`, as the operator saw them): each
    replica still being copied is asked back into its current dir first (audited), so that the
    runs stop waiting for them and end with the cancel; a run none of whose reassignments is sent
    now (its wave only moved replicas between dirs) is asked to send no further wave (audited).
    ``who`` needs the operator role."""
    asked_for = [[t, p] for t, p in (x.key for x in seen.cancel)]
    require(store, who, "cancel", cluster_id, {"asked": asked_for})
    user = who.name
    dirs = None
    if dir_moves:
        dirs = _cancel_dirs(
            store, cluster, who, cluster_id, cluster.snapshot(), replicas=dir_moves, note={"with_cancel_of": asked_for}
        )
    checked = recheck(seen, cluster.snapshot(lean=True), force_at_risk)  # what is in flight now, nothing more
    send, verdicts = checked.send, dict(checked.verdicts)
    if dirs is not None:
        # a run whose dir moves were cancelled with it but none of whose reassignments is sent now
        # (a wave of dir moves only) would see its wave done and send the next: it stops there
        sending = {ours[p.key] for p in send if p.key in ours}
        for run_id in dirs.runs:
            if run_id not in sending:
                _stop_after_wave(store, who, run_id)
    not_sent = {partition_name(*k): v.name.lower() for k, (v, _) in verdicts.items()}
    asked: dict[str, object] = {"asked": asked_for, "not_sent": not_sent}
    result = None
    if send:
        result = cancel(store, cluster, who, cluster_id, CancelPlan(tuple(send), (), (), ()), ours, wait_s, asked)
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
    return CancelReport(tuple((k, *verdicts[k]) for k in order if k in verdicts), result, dirs)


def _stop_after_wave(store: Store, who: Identity, run_id: int) -> None:
    """Ask ``run_id`` to send no further wave (audited), as its log dir moves were cancelled with it."""
    run = store.runs.require(run_id)
    require(store, who, "stop", run.cluster, {"run": run_id}, plan_hash=run.plan_hash)
    with store.transaction():
        run = store.runs.require(run_id)
        if run.state not in (RunState.RUNNING, RunState.PAUSED):
            return
        store.runs.set_state(run_id, RunState.STOPPING)
        store.audit.record(
            who.name,
            run.cluster,
            f"run-{RunState.STOPPING}",
            {"run": run_id, "why": "its log dir moves were cancelled with its partitions"},
            RunState.STOPPING.value,
            plan_hash=run.plan_hash,
        )


def cancel(
    store: Store,
    cluster: ClusterGateway,
    who: Identity,
    cluster_id: str,
    plan: CancelPlan,
    ours: dict[TopicPartition, int],
    wait_s: float = 60.0,
    note: Mapping[str, object] | None = None,
) -> CancelResult:
    """Send ``plan`` (audited before and after), wait up to ``wait_s`` for the partitions to leave
    ListPartitionReassignments, then clean up after the console's runs among them (their
    throttles come off, they end as cancelled). ``note`` goes into the audited request. ``who``
    needs the operator role."""
    request = {"cancel": [[t, p] for t, p in plan.targets], **(note or {})}
    require(store, who, "cancel", cluster_id, request)
    intent = Intent.open(store, who.name, cluster_id, "cancel", request)
    t0 = time.perf_counter()
    try:
        outcomes = send_settled(cluster, plan.targets, cluster.alter_reassignments)
    except ConsoleError as e:
        done = e.outcomes if isinstance(e, PartiallyApplied) else {}
        CANCELS.labels(cluster_id, "failed").inc()
        intent.failed(e, {"outcomes": [o.to_dict() for o in done.values()]})
        raise
    took = time.perf_counter() - t0
    accepted, rejected = split_outcomes(outcomes.values())
    CANCELS.labels(cluster_id, "taken" if accepted else "refused").inc()
    CANCEL_SECONDS.labels(cluster_id).observe(took)
    intent.answer(outcome_word(len(accepted), len(rejected)), [o.to_dict() for o in outcomes.values()])
    result = CancelResult(
        tuple(accepted), tuple(rejected), took, (), tuple(sorted(o.key for o in accepted)), request, intent.id
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
    finish_cancel(store, cluster, who, cluster_id, result, ours)
    return result


def finish_cancel(
    store: Store,
    cluster: ClusterGateway,
    who: Identity,
    cluster_id: str,
    result: CancelResult,
    ours: Mapping[TopicPartition, int],
) -> None:
    """After waiting for a cancel's partitions to leave the in-flight list (``result`` as they are
    now): the console's runs among those that left are cleaned up (their throttles come off, they
    end as cancelled; a run its worker holds is left to the worker), and what became of them is
    audited. ``who`` needs the operator role."""
    require(store, who, "cancel", cluster_id, result.request)
    clean_up_after_cancel(store, cluster, who.name, (ours[k] for k in result.left if k in ours))  # throttles off now
    store.audit.record(
        who.name,
        cluster_id,
        "cancel-complete",
        result.request,
        "left the in-flight list" if not result.still_in_flight else "still in flight",
        ref=result.intent,
        response={"left": result.left, "still_in_flight": sorted(result.still_in_flight)},
    )


# -- log dir moves -------------------------------------------------------------------------------------
@dataclass(frozen=True)
class DirCancelResult:
    """What a cancel of log dir moves did, per replica."""

    answers: tuple[DirOutcome, ...]
    """Each replica asked back into its current dir (accepted: its future replica is dropped)."""
    runs: tuple[int, ...]
    """The console's runs that had asked for those moves: they no longer wait for them."""
    gone: tuple[DirKey, ...] = ()
    """Replicas asked for that were no longer being moved when the request was sent: nothing sent for them."""

    def rows(self) -> list[dict[str, str]]:
        """Per replica: accepted (back in its dir), refused (with the broker's reason), or no longer moving."""
        return [
            {
                "partition": partition_name(a.topic, a.partition),
                "broker": str(a.broker),
                "outcome": "accepted: stays in " + a.log_dir if a.accepted else "refused",
                "detail": a.code or "",
            }
            for a in self.answers
        ] + [
            {
                "partition": partition_name(t, p),
                "broker": str(b),
                "outcome": "no longer moving",
                "detail": "the copy finished or was dropped before the request",
            }
            for t, p, b in self.gone
        ]

    def summary(self) -> str:
        taken = sum(1 for a in self.answers if a.accepted)
        refused = len(self.answers) - taken
        return (
            f"{plural(taken, 'log dir move')} cancelled"
            + (f", {refused} refused" if refused else "")
            + (f", {len(self.gone)} no longer moving" if self.gone else "")
            + "."
        )


def cancel_dir_moves(
    store: Store,
    cluster: ClusterGateway,
    who: Identity,
    cluster_name: str,
    topic: str | None = None,
    replicas: Collection[DirKey] | None = None,
) -> DirCancelResult:
    """Cancel the log dir moves in flight (of ``topic``, or the ``replicas`` an operator saw, or
    all): each replica with a future replica is asked back into its current dir
    (AlterReplicaLogDirs; the broker drops the copy), audited before and after. A replica of
    ``replicas`` no longer moving is left alone (:attr:`DirCancelResult.gone`). A run of this
    console that asked for one of them records it as cancelled and no longer waits for it. ``who``
    needs the operator role."""
    state = cluster.snapshot()
    return _cancel_dirs(store, cluster, who, cluster_key(state, cluster_name), state, topic, replicas)


def _cancel_dirs(
    store: Store,
    cluster: ClusterGateway,
    who: Identity,
    key: str,
    state: ClusterState,
    topic: str | None = None,
    replicas: Collection[DirKey] | None = None,
    note: Mapping[str, object] | None = None,
) -> DirCancelResult:
    wanted = None if replicas is None else set(replicas)
    moves = [
        m
        for m in dir_moves_in_flight(state)
        if (topic is None or m.topic == topic) and (wanted is None or m.key in wanted)
    ]
    gone = tuple(sorted(wanted - {m.key for m in moves})) if wanted is not None else ()
    request = {
        "cancel_log_dir_moves": [[m.topic, m.partition, int(m.broker), m.from_dir, m.to_dir] for m in moves],
        **({"topic": topic} if topic else {}),
        **({"no_longer_moving": [[t, p, int(b)] for t, p, b in gone]} if gone else {}),
        **(note or {}),
    }
    require(store, who, "cancel", key, request)
    back = {(m.topic, m.partition, m.broker): m.from_dir for m in moves if m.from_dir is not None}
    if not back:
        if wanted:
            store.audit.record(who.name, key, "cancel-log-dir-moves", request, "nothing left to cancel")
        return DirCancelResult((), (), gone)
    answers, intent = audited_send(
        store, who, key, "cancel-log-dir-moves", request, partial(cluster.alter_replica_log_dirs, back)
    )
    taken = {(a.topic, a.partition, a.broker) for a in answers if a.accepted}
    runs: set[int] = set()
    with store.transaction():
        for run in store.runs.list(key, active_only=True):
            for wave in store.runs.waves(run.id):
                asked = {(d.topic, d.partition, d.broker) for d in store.runs.dir_moves(run.id, wave.number)}
                mine = [k for k in taken if k in asked]
                if mine:
                    store.runs.add_dir_moves(
                        run.id, wave.number, [DirOutcome(t, p, b, back[(t, p, b)], CANCELLED) for t, p, b in mine]
                    )
                    runs.add(run.id)
        intent.answer(
            f"{len(taken)} cancelled" + (f", {len(answers) - len(taken)} refused" if len(answers) > len(taken) else ""),
            {"answers": [a.to_dict() for a in answers], "runs": sorted(runs)},
        )
    return DirCancelResult(tuple(answers), tuple(sorted(runs)), gone)


def runs_dir_moves(
    store: Store, read: Callable[[], ClusterState], runs: Collection[int], keys: Collection[TopicPartition] | None
) -> tuple[DirMoveProgress, ...]:
    """The log dir moves in flight that the console's ``runs`` asked for (a future replica in the
    dir the run asked), of the partitions ``keys`` (None: all of them): what a cancel of those
    runs' partitions stops too. The cluster is read (``read``: a snapshot with the log dirs) only
    when one of the runs asked for a dir."""
    asked: set[tuple[str, int, BrokerId, str]] = set()
    for run_id in runs:
        for d in store.runs.dir_moves(run_id):
            if d.accepted:
                asked.add((d.topic, d.partition, d.broker, d.log_dir))
    if not asked:
        return ()
    scope = None if keys is None else set(keys)
    return tuple(
        m
        for m in dir_moves_in_flight(read())
        if (m.topic, m.partition, m.broker, m.to_dir) in asked and (scope is None or (m.topic, m.partition) in scope)
    )


CANCELLED = DIR_CANCELLED
"""Recorded for a run's log dir move an operator cancelled: the run no longer waits for it."""
