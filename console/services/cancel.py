"""Cancel (a partition, a topic, a run, everything): :func:`cancel_seen`, the set an operator saw
sent as the cluster is at the click, over :func:`cancel`, which sends it, waits for the partitions
to leave the in-flight list and cleans up after the console's runs among them (:func:`finish_cancel`).
A run cancelled as a run ends cancelled; a run some of whose partitions are cancelled goes on with
the rest (it ends partly cancelled, naming them).
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
from console.moves.cancel import CancelPlan, CancelVerdict, SeenNow, recheck
from console.moves.readback import AGREE_S, LOOK_EVERY_S, ReadBack, Shown, silent_text
from console.plans.logdirs import DirKey, DirMoveProgress, dir_moves_in_flight
from console.runs.audited import Intent
from console.runs.executor import clean_up_after_cancel
from console.runs.gateway import ClusterGateway
from console.runs.settle import send_settled
from console.services.guard import audited_send, refuse, require
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
    original: Mapping[TopicPartition, tuple[BrokerId, ...]] = field(default_factory=dict)
    """What each partition sent goes back to (R − AR when it was sent)."""
    answered_at: float = 0.0
    """``time.monotonic()`` when the controller answered."""
    shown: ReadBack = field(default_factory=lambda: ReadBack({}))
    """What the brokers show of those that left the in-flight list, look after look."""

    def leaving(self, in_flight: Collection[TopicPartition]) -> CancelResult:
        """Those still in flight that ``in_flight`` (ListPartitionReassignments now) no longer lists
        have left: from now on the brokers are asked what they show of them."""
        listed = set(in_flight)
        still = tuple(k for k in self.still_in_flight if k in listed)
        left = tuple(sorted({o.key for o in self.accepted} - set(still)))
        shown = self.shown.expect({k: self.original[k] for k in left if k in self.original})
        return replace(self, left=left, still_in_flight=still, shown=shown)

    @property
    def unshown(self) -> tuple[TopicPartition, ...]:
        """Those that left the in-flight list that not every broker shows back yet."""
        return tuple(k for k in self.left if self.shown.state(k) is not Shown.SHOWN)


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
        shown = self.result.shown.summary() if self.result is not None and self.result.shown.expected else ""
        shown = f" The brokers: {shown}." if shown else ""
        dirs = f" Their runs' {self.dirs.summary()}" if self.dirs is not None else ""
        return "; ".join(parts) + took + "." + shown + dirs

    @property
    def settled(self) -> bool:
        """Nothing accepted is still leaving the in-flight list, and every broker shows each back."""
        return self.result is None or not (self.result.still_in_flight or self.result.unshown)

    def leaving(self, in_flight: Collection[TopicPartition]) -> CancelReport:
        """The report once those no longer in ``in_flight`` (ListPartitionReassignments now) have
        left (a cancel sent with ``wait_s=0``, followed); see :meth:`with_result`."""
        return self if self.result is None else self.with_result(self.result.leaving(in_flight))

    def with_result(self, result: CancelResult) -> CancelReport:
        """Each partition sent said as ``result`` has it: still in flight (accepted), out of the list
        but not yet read back, out of the list while a broker still shows the old replica set, or
        back at its original replicas on every broker (cancelled)."""
        left = set(result.left)
        sent = {o.key for o in result.accepted}
        verdicts = tuple(
            (k, *_verdict(result, k, k in left)) if k in sent and v in _FOLLOWED else (k, v, d)
            for k, v, d in self.verdicts
        )
        return CancelReport(verdicts, result, self.dirs)


_FOLLOWED = (CancelVerdict.ACCEPTED, CancelVerdict.UNCONFIRMED, CancelVerdict.BEHIND, CancelVerdict.CANCELLED)


def _verdict(result: CancelResult, key: TopicPartition, left: bool) -> tuple[CancelVerdict, str]:
    """A partition the controller took: what it is as the in-flight list and the brokers show it."""
    if not left:
        return CancelVerdict.ACCEPTED, ""
    state = result.shown.state(key)
    if state is Shown.SHOWN:
        return CancelVerdict.CANCELLED, result.shown.detail(key)
    if state is Shown.BEHIND:
        return CancelVerdict.BEHIND, result.shown.detail(key)
    return CancelVerdict.UNCONFIRMED, result.shown.detail(key)


def look_back(cluster: ClusterGateway, report: CancelReport, every_s: float = 0.0) -> CancelReport:
    """One look at what the brokers show of the cancel's partitions that left the in-flight list
    and are not shown back yet (Metadata asked of each broker; a failed look changes nothing);
    none when the last was less than ``every_s`` ago."""
    result = report.result
    if result is None or not result.unshown:
        return report
    last = result.shown.looked_s
    if last is not None and time.monotonic() - result.answered_at - last < every_s:
        return report
    try:
        views = cluster.replicas_seen(result.unshown)
    except ConsoleError:
        return report  # asked again at the next look
    shown = result.shown.look(views, time.monotonic() - result.answered_at)
    return report.with_result(replace(result, shown=shown))


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
    whole_runs: Collection[int] = (),
) -> CancelReport:
    """Cancel the set the operator saw (``seen``, planned when the dialog opened or the command
    read the cluster) as the cluster is now: partitions that completed meanwhile stay moved,
    those no longer in flight are left alone, the rest are cancelled. Never a silent no-op: every
    call is audited and every partition gets a verdict. ``whole_runs``: the console's runs the
    operator cancelled as runs (a run's cancel, everything in flight; see :func:`cancel`); the
    others among them go on with their other partitions. ``dir_moves``: the log dir moves the
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
            store,
            cluster,
            who,
            cluster_id,
            cluster.snapshot(full=True),  # every replica's log dirs now
            replicas=dir_moves,
            note={"with_cancel_of": asked_for},
        )
    checked = _recheck(cluster, seen, force_at_risk)
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
        result = cancel(
            store, cluster, who, cluster_id, CancelPlan(tuple(send), (), (), ()), ours, wait_s, asked, whole_runs
        )
        left = set(result.left)
        for o in result.accepted:
            verdicts[o.key] = _verdict(result, o.key, o.key in left)
        for o in result.rejected:
            verdicts[o.key] = (CancelVerdict.REJECTED, f"{o.code}: {o.message}")
    else:  # a run cancelled as a run whose partitions all completed meanwhile sends no further wave either
        whole = sorted(set(whole_runs))
        with store.transaction():
            for run_id in whole:
                store.runs.ask_cancel(run_id, user)
            store.audit.record(
                user,
                cluster_id,
                "cancel",
                {"cancel": [], **asked, **({"runs_cancelled": whole} if whole else {})},
                "not read: nothing sent"
                if any(v is CancelVerdict.NOT_READ for v, _ in verdicts.values())
                else "nothing left to cancel",
                response=not_sent,
            )
    order = [p.key for p in seen.cancel]
    return CancelReport(tuple((k, *verdicts[k]) for k in order if k in verdicts), result, dirs)


RECHECK_READS = 2
"""Lean reads a cancel takes, at most, for the partitions the first did not cover (a read that
meets a broker that does not answer times out; the next is asked of another)."""


def _recheck(cluster: ClusterGateway, seen: CancelPlan, force_at_risk: bool) -> SeenNow:
    """:func:`recheck` against what is in flight now (a lean read, nothing more), read again while
    the read did not cover some partitions; those it still does not cover are not sent, said not
    read, naming the brokers that did not answer when one look at each broker finds them."""
    checked = recheck(seen, cluster.snapshot(lean=True), force_at_risk)
    for _ in range(RECHECK_READS - 1):
        if not _unread(checked):
            return checked
        checked = recheck(seen, cluster.snapshot(lean=True), force_at_risk)
    unread = _unread(checked)
    if not unread:
        return checked
    try:
        silent = [v.broker for v in cluster.replicas_seen(unread) if v.error is not None]
    except ConsoleError:
        silent = []
    if not silent:
        return checked
    said = silent_text(silent)
    return replace(checked, verdicts={k: (v, said if k in unread else d) for k, (v, d) in checked.verdicts.items()})


def _unread(checked: SeenNow) -> list[TopicPartition]:
    return [k for k, (v, _) in checked.verdicts.items() if v is CancelVerdict.NOT_READ]


def check_at_risk(store: Store, who: Identity, cluster_id: str, seen: CancelPlan, force_at_risk: bool) -> None:
    """Refuse the whole of a cancel (audited: one entry, outcome ``refused``, naming the partitions
    at risk; nothing sent) when some partition of ``seen`` would be left without a leader or below
    ``min.insync.replicas``, unless ``force_at_risk``: the command line's cancel, all or nothing
    (:func:`cancel_seen` leaves those partitions out instead, as the pages do). ``who`` needs the
    operator role."""
    asked: dict[str, object] = {"asked": [[t, p] for t, p in (x.key for x in seen.cancel)]}
    require(store, who, "cancel", cluster_id, asked)
    if not seen.at_risk or force_at_risk:
        return
    refuse(
        store,
        who,
        "cancel",
        cluster_id,
        f"{seen.risk_summary()}.",
        "Add --force-at-risk to cancel them anyway.",
        {**asked, "at_risk": {p.name: seen.risks.get(p.key, "") for p in seen.at_risk}},
    )


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
    whole_runs: Collection[int] = (),
) -> CancelResult:
    """Send ``plan`` (audited before and after, naming the console's runs its partitions belong
    to), wait up to ``wait_s`` for the partitions to leave ListPartitionReassignments, then clean
    up after those runs (:func:`finish_cancel`). A run among ``whole_runs`` is cancelled as a run
    (recorded with the intent: it sends no further wave and ends cancelled when its wave ends);
    another goes on with its other partitions, the cancelled ones recorded as such. ``note`` goes
    into the audited request. ``who`` needs the operator role."""
    runs = sorted({ours[k] for k in plan.targets if k in ours})
    whole = sorted(set(whole_runs))
    request = {
        "cancel": [[t, p] for t, p in plan.targets],
        **({"runs": runs} if runs else {}),
        **({"runs_cancelled": whole} if whole else {}),
        **(note or {}),
    }
    require(store, who, "cancel", cluster_id, request)
    with store.transaction():  # the runs cancelled as runs recorded with the intent, before the request
        asked_now = [run_id for run_id in whole if store.runs.ask_cancel(run_id, who.name)]
        intent = Intent.open(store, who.name, cluster_id, "cancel", request)
    t0 = time.perf_counter()
    try:
        outcomes = send_settled(cluster, plan.targets, cluster.alter_reassignments)
    except ConsoleError as e:
        done = e.outcomes if isinstance(e, PartiallyApplied) else {}
        CANCELS.labels(cluster_id, "failed").inc()
        with store.transaction():
            intent.failed(e, {"outcomes": [o.to_dict() for o in done.values()]})
            _not_taken(store, who, asked_now, runs, {ours.get(k) for k, o in done.items() if o.accepted})
        raise
    took = time.perf_counter() - t0
    accepted, rejected = split_outcomes(outcomes.values())
    CANCELS.labels(cluster_id, "taken" if accepted else "refused").inc()
    CANCEL_SECONDS.labels(cluster_id).observe(took)
    with store.transaction():
        intent.answer(outcome_word(len(accepted), len(rejected)), [o.to_dict() for o in outcomes.values()])
        _not_taken(store, who, asked_now, runs, {ours.get(o.key) for o in accepted})
    result = CancelResult(
        tuple(accepted),
        tuple(rejected),
        took,
        (),
        tuple(sorted(o.key for o in accepted)),
        request,
        intent.id,
        {p.key: p.original for p in plan.cancel},
        time.monotonic(),
    )
    if wait_s <= 0:
        return result  # followed by the caller (result.leaving, look_back), then finish_cancel
    deadline = time.monotonic() + wait_s
    while result.still_in_flight and time.monotonic() < deadline:
        try:
            result = result.leaving(cluster.list_reassignments())
        except ConsoleError:
            pass  # the controller may be moving: ask again
        if result.still_in_flight:
            time.sleep(0.25)
    result = _shown_back(cluster, result, min(wait_s, AGREE_S))
    finish_cancel(store, cluster, who, cluster_id, result, ours)
    return result


def _shown_back(cluster: ClusterGateway, result: CancelResult, within_s: float) -> CancelResult:
    """Ask the brokers what they show of those that left the in-flight list until every broker
    shows each back at its original replicas, or ``within_s`` passed since the last one left."""
    deadline = time.monotonic() + within_s
    report = CancelReport((), result)
    while True:
        report = look_back(cluster, report)
        assert report.result is not None
        if not report.result.unshown or time.monotonic() >= deadline:
            return report.result
        time.sleep(LOOK_EVERY_S)


def _not_taken(store: Store, who: Identity, asked: list[int], sent: list[int], taken: set[int | None]) -> None:
    """A run cancelled as a run (``asked`` now) some of whose partitions were sent (``sent``) and
    none taken (``taken``: the runs of those the controller took) goes on as it was: its cancel did
    not happen."""
    for run_id in asked:
        if run_id in sent and run_id not in taken:
            store.runs.drop_cancel_ask(run_id, who.name)


def finish_cancel(
    store: Store,
    cluster: ClusterGateway,
    who: Identity,
    cluster_id: str,
    result: CancelResult,
    ours: Mapping[TopicPartition, int],
) -> None:
    """After waiting for a cancel's partitions to leave the in-flight list (``result`` as they are
    now): the console's runs among those that left are cleaned up (their partitions recorded
    cancelled; a run cancelled as a run, or left with nothing of its wave moved, ends cancelled,
    its throttles off; a run its worker holds is left to the worker), and what became of them is
    audited. ``who`` needs the operator role."""
    require(store, who, "cancel", cluster_id, result.request)
    clean_up_after_cancel(store, cluster, who.name, (ours[k] for k in result.left if k in ours))  # throttles off now
    if result.still_in_flight:
        outcome = "still in flight"
    elif result.unshown:
        outcome = "left the in-flight list; the brokers still show the old replica set"
    else:
        outcome = "left the in-flight list; every broker shows the original replicas"
    store.audit.record(
        who.name,
        cluster_id,
        "cancel-complete",
        result.request,
        outcome,
        ref=result.intent,
        response={
            "left": result.left,
            "still_in_flight": sorted(result.still_in_flight),
            "brokers": result.shown.to_dict(),
        },
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
    state = cluster.snapshot(full=True)  # every replica's log dirs now: a copy another tool started is not missed
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
