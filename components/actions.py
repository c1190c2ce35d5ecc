"""The dialogs that change a cluster: cancel (Live and Runs pages) and submit (Review page).
Each shows exactly what will be sent, asks for confirmation, and records who did it."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

import streamlit as st

from components import deps, keys, widgets
from console.access.auth import Identity, load_users
from console.access.settings import ConnectionSettings
from console.core.errors import ConflictError, ConsoleError, NotPermitted, SubmitRefused
from console.core.format import human_bytes, human_rate, plural
from console.core.model import ClusterState, Finding, TopicPartition, cluster_key
from console.moves.cancel import CancelPlan, CancelVerdict, plan_cancel
from console.moves.others import moves_text, since_text
from console.moves.waves import WaveLimits
from console.plans.diff import first_replica_changes
from console.plans.logdirs import DirMoveProgress, dir_moves_in_flight
from console.plans.plan import Plan
from console.present import review
from console.present.estimate import run_summary
from console.services import cancel as cancel_service
from console.services import other_moves as other_moves_service
from console.services import runs as run_service
from console.services.cancel import CancelReport, DirCancelResult
from console.services.preflight import Preflight, preflight
from console.storage.store import Store


def _closed() -> None:
    st.session_state.pop(keys.DIALOG_OPEN, None)


def open_dialog(dialog: Callable[..., None], *args: Any) -> None:
    """Open ``dialog``; while it is open, ZooKeeper watches do not rerun the page (a full rerun
    would close it under the operator's hands)."""
    st.session_state[keys.DIALOG_OPEN] = True
    dialog(*args)


def last_result() -> None:
    """The outcome of the last cancel or submit of this session, shown on the page too (the
    dialog may have been closed)."""
    text = st.session_state.get(keys.LAST_ACTION)
    if text:
        st.info(text, icon=":material/history:")


@dataclass(frozen=True)
class SeenCancel:
    """What the operator asked to cancel, frozen when the dialog opened: the dialog's text and
    its button do not change under the operator while the cluster moves on."""

    plan: CancelPlan
    cluster: str
    ours: dict[TopicPartition, int]
    seen_at: float
    dir_moves: tuple[DirMoveProgress, ...] = ()
    """The log dir moves in flight that the console's runs among those partitions asked for:
    cancelled with them (each replica stays in its current dir)."""


def freeze_cancel(settings: ConnectionSettings, scope: list[TopicPartition] | None, include_others: bool) -> None:
    """Freeze the set to cancel as the cluster is now (a fresh, lean read) and ask for the cancel
    dialog: the "Cancel…" button's callback, so the page's next run opens the dialog first
    (:func:`pending_cancel` at the top of the page), before it draws the page again. When the
    console's runs among those partitions asked for log dir moves, the log dirs are read too
    (a fresh full read) and those still being copied are frozen with the set."""
    state = deps.reader(settings).snapshot(lean=True)  # fresh, and only what a cancel needs
    cluster = cluster_key(state, settings.name)
    store = deps.store()
    ours = store.runs.active_partitions(cluster)
    plan = plan_cancel(state, scope, ours, include_others)
    in_scope = [p.key for p in state.in_flight] if scope is None else scope
    runs = {ours[k] for k in in_scope if k in ours}
    dir_moves = cancel_service.runs_dir_moves(store, deps.reader(settings).snapshot, runs, scope)
    st.session_state[keys.CANCEL_SEEN] = SeenCancel(plan, cluster, ours, state.taken_at, dir_moves)
    st.session_state.pop(keys.CANCEL_SENT, None)
    st.session_state.pop(keys.CANCEL_FAILED, None)
    st.session_state.pop(keys.CANCEL_OVERRIDE, None)  # an override is ticked for the set it was shown with only
    st.session_state[keys.CANCEL_PENDING] = True


def pending_cancel(settings: ConnectionSettings) -> None:
    """Open the cancel dialog a "Cancel…" click asked for (:func:`freeze_cancel`): called at the
    top of the page, so the on-call engineer sees the dialog without waiting for the page's tables
    and charts to be drawn again behind it."""
    if st.session_state.pop(keys.CANCEL_PENDING, False):
        open_dialog(cancel_dialog, settings)


def open_cancel(settings: ConnectionSettings, scope: list[TopicPartition] | None, include_others: bool) -> None:
    """Freeze the set to cancel as the cluster is now, then open the cancel dialog on it (where
    the page draws little before the button; the Live page uses the callback instead)."""
    freeze_cancel(settings, scope, include_others)
    pending_cancel(settings)


CANCEL_FOLLOW_S = 15.0
"""How long the dialog follows a cancel's partitions leaving the in-flight list before it cleans up
after the runs among those that left and records what became of them."""
CANCEL_POLL_S = 0.5
"""How often the dialog asks the controller which partitions are still in flight."""


@dataclass(frozen=True)
class SentCancel:
    """A cancel sent from the dialog, followed as its partitions leave the in-flight list."""

    report: CancelReport
    by: Identity
    sent_at: float
    """``time.monotonic()`` when the controller answered."""
    finished: bool = False
    """Followed to the end (every partition left, or ``CANCEL_FOLLOW_S`` passed): the runs among
    those that left were cleaned up and the outcome audited."""


def _send_cancel(settings: ConnectionSettings, seen: SeenCancel, me: Identity) -> None:
    """The Send button's callback: the click is recorded and the cancel sent before the dialog is
    drawn again, without waiting for the partitions to leave the in-flight list (the dialog's
    outcome fragment follows them)."""
    if st.session_state.get(keys.CANCEL_SENT) is not None:
        return  # sent already: a click is never sent twice
    override = bool(st.session_state.get(keys.CANCEL_OVERRIDE))
    try:
        report = cancel_service.cancel_seen(
            deps.store(),
            deps.gateway(settings),
            me,
            seen.cluster,
            seen.plan,
            seen.ours,
            force_at_risk=bool(seen.plan.at_risk and override),
            wait_s=0,
            dir_moves=[m.key for m in seen.dir_moves],
        )
    except ConsoleError as e:
        st.session_state[keys.CANCEL_FAILED] = f"{e.message} {e.hint}"
        st.session_state[keys.LAST_ACTION] = f"Cancel by {me.name} was not taken: {e.message}"
        return
    st.session_state.pop(keys.CANCEL_FAILED, None)
    st.session_state[keys.CANCEL_SENT] = SentCancel(report, me, time.monotonic())
    st.session_state[keys.LAST_ACTION] = f"Cancel by {me.name}: {report.summary()}"


def _follow(settings: ConnectionSettings, seen: SeenCancel, sent: SentCancel) -> SentCancel:
    """One look at which of the cancel's partitions are still in flight; at the end, the clean-up
    after the runs among those that left (their throttles come off; a run its worker drives is
    left to the worker, which also cleans up when the dialog is closed before the end)."""
    report = sent.report
    if not report.settled:
        try:
            report = report.leaving(deps.gateway(settings).list_reassignments())
        except ConsoleError:
            pass  # the controller may be moving: ask again at the next run
    done = report.settled or time.monotonic() - sent.sent_at >= CANCEL_FOLLOW_S
    if done and report.result is not None:
        try:
            cancel_service.finish_cancel(
                deps.store(), deps.gateway(settings), sent.by, seen.cluster, report.result, seen.ours
            )
        except ConsoleError as e:
            st.error(f"{e.message} {e.hint}")
    return replace(sent, report=report, finished=done)


@st.fragment(run_every=CANCEL_POLL_S)
def _cancel_outcome(settings: ConnectionSettings, seen: SeenCancel) -> None:
    """The outcome of the cancel sent, partition by partition, as the partitions leave the list."""
    sent: SentCancel | None = st.session_state.get(keys.CANCEL_SENT)
    if sent is None:
        return
    if not sent.finished:
        sent = _follow(settings, seen, sent)
        st.session_state[keys.CANCEL_SENT] = sent
        st.session_state[keys.LAST_ACTION] = f"Cancel by {sent.by.name}: {sent.report.summary()}"
    st.markdown(f"**Outcome:** {sent.report.summary()}")
    st.dataframe(sent.report.rows(), hide_index=True, width="stretch")
    if sent.report.dirs is not None:
        st.markdown(f"**Log dir moves:** {sent.report.dirs.summary()}")
        st.dataframe(sent.report.dirs.rows(), hide_index=True, width="stretch")
    if not sent.finished:
        st.caption("Following the partitions as they leave the in-flight list…")
    st.caption(
        "Partitions that had completed stay where they are: a run's rollback JSON (Runs page) takes them back; "
        "a reassignment this console did not start has no run, and no rollback of its own here."
    )


@st.dialog("Cancel reassignments", width="large", on_dismiss=_closed)
def cancel_dialog(settings: ConnectionSettings) -> None:
    me = widgets.identity()
    if not me.can("cancel"):
        st.error(me.why_not("cancel"))
        return
    seen: SeenCancel | None = st.session_state.get(keys.CANCEL_SEEN)
    if seen is None:
        st.info("Nothing chosen to cancel: close this and choose again.")
        return
    plan = seen.plan
    st.markdown(
        f"**What cancel means (KIP-455)** · as the cluster was at {datetime.fromtimestamp(seen.seen_at):%H:%M:%S}"
    )
    # st.text, not st.code: the browser draws text with the page's own code, while a code block waits
    # for a chunk it loads on first use, and the Send button (already loaded) came out above it
    st.text("\n".join(plan.explain() + _dir_lines(seen.dir_moves)))
    if not plan.cancel and not seen.dir_moves:
        st.info(
            "Nothing to cancel"
            + (": tick “include reassignments this console did not start” to cancel those." if plan.not_ours else ".")
        )
        return
    override = False
    if plan.at_risk:
        st.warning(
            f"At risk: {plan.risk_summary()}. Kafka does not check this; without the override they are left "
            "out of the cancel (the others are sent)."
        )
        override = st.checkbox(
            f"Cancel the {plural(len(plan.at_risk), 'partition')} at risk too",
            key=keys.CANCEL_OVERRIDE,
        )
    st.caption(
        "Sent for these partitions as the cluster is when you press the button: one that completed "
        "meanwhile stays moved, one no longer in flight is left alone"
        + (", one at risk then is left out unless the override is ticked." if plan.at_risk else ".")
    )
    sent: SentCancel | None = st.session_state.get(keys.CANCEL_SENT)
    sending = len(plan.cancel) - (0 if override else len(plan.at_risk))
    st.button(
        "Send the cancel for "
        + " and ".join(
            x
            for x in (
                plural(sending, "partition") if sending else "",
                plural(len(seen.dir_moves), "log dir move") if seen.dir_moves else "",
            )
            if x
        )
        + (f" (leaving out {len(plan.at_risk)} at risk)" if plan.at_risk and not override else ""),
        type="primary",
        key=keys.CANCEL_SEND,
        disabled=not (sending or seen.dir_moves) or sent is not None,
        icon=":material/cancel:",
        on_click=_send_cancel,
        args=(settings, seen, me),
    )
    _not_taken(keys.CANCEL_FAILED)
    if sent is not None:
        rejected = sent.report.count(CancelVerdict.REJECTED)
        st.status(
            "Cancel sent"
            if sent.report.result is not None or sent.report.dirs is not None
            else "Nothing left to cancel",
            state="error" if rejected else "complete",
        )
        _cancel_outcome(settings, seen)


def _dir_lines(moves: tuple[DirMoveProgress, ...]) -> list[str]:
    """The log dir moves a cancel asks back, one line each (what the request names)."""
    if not moves:
        return []
    return [
        f"Cancel {plural(len(moves), 'log dir move')} the console's runs asked for: each replica stays in its "
        "current dir (AlterReplicaLogDirs; the broker drops the copy). A run with no reassignment in flight to "
        "cancel then sends no further wave."
    ] + [f"  {_dir_move_text(m)}" for m in moves]


def _dir_move_text(m: DirMoveProgress) -> str:
    return f"{m.topic}-{m.partition} on broker {m.broker}: {m.from_dir} → {m.to_dir} (stays in {m.from_dir})"


def _not_taken(key: str) -> None:
    """A cancel the cluster did not take (its message kept under ``key`` by the Send callback), said."""
    failed: str | None = st.session_state.get(key)
    if failed is not None:
        st.status("The cancel was not taken", state="error")
        st.error(failed)


@dataclass(frozen=True)
class SeenDirCancel:
    """The log dir moves an operator asked to cancel, frozen when the dialog opened."""

    moves: tuple[DirMoveProgress, ...]
    seen_at: float


@dataclass(frozen=True)
class SentDirCancel:
    result: DirCancelResult
    by: Identity


def freeze_dir_cancel(settings: ConnectionSettings) -> None:
    """The "Cancel log dir moves…" button's callback: freeze the log dir moves in flight as the
    cluster is now (a fresh read, log dirs included) and ask for the dialog, which the page's next
    run opens first (:func:`pending_dir_cancel`)."""
    state = deps.reader(settings).snapshot()
    moves = tuple(m for m in dir_moves_in_flight(state) if m.from_dir is not None)
    st.session_state[keys.DIR_CANCEL_SEEN] = SeenDirCancel(moves, state.taken_at)
    st.session_state.pop(keys.DIR_CANCEL_SENT, None)
    st.session_state.pop(keys.DIR_CANCEL_FAILED, None)
    st.session_state[keys.DIR_CANCEL_PENDING] = True


def pending_dir_cancel(settings: ConnectionSettings) -> None:
    """Open the log dir cancel dialog a click asked for (:func:`freeze_dir_cancel`), at the top of the page."""
    if st.session_state.pop(keys.DIR_CANCEL_PENDING, False):
        open_dialog(dir_cancel_dialog, settings)


def _send_dir_cancel(settings: ConnectionSettings, seen: SeenDirCancel, me: Identity) -> None:
    """The Send button's callback: the click is recorded and the request sent before the dialog is drawn again."""
    if st.session_state.get(keys.DIR_CANCEL_SENT) is not None:
        return  # sent already: a click is never sent twice
    try:
        result = cancel_service.cancel_dir_moves(
            deps.store(), deps.gateway(settings), me, settings.name, replicas=[m.key for m in seen.moves]
        )
    except ConsoleError as e:
        st.session_state[keys.DIR_CANCEL_FAILED] = f"{e.message} {e.hint}"
        st.session_state[keys.LAST_ACTION] = f"Cancel of log dir moves by {me.name} was not taken: {e.message}"
        return
    st.session_state.pop(keys.DIR_CANCEL_FAILED, None)
    st.session_state[keys.DIR_CANCEL_SENT] = SentDirCancel(result, me)
    st.session_state[keys.LAST_ACTION] = f"Cancel of log dir moves by {me.name}: {result.summary()}"


@st.dialog("Cancel log dir moves", width="large", on_dismiss=_closed)
def dir_cancel_dialog(settings: ConnectionSettings) -> None:
    me = widgets.identity()
    if not me.can("cancel"):
        st.error(me.why_not("cancel"))
        return
    seen: SeenDirCancel | None = st.session_state.get(keys.DIR_CANCEL_SEEN)
    if seen is None or not seen.moves:
        st.info("No log dir move in flight: nothing to cancel.")
        return
    st.markdown(
        f"**Each replica is asked back into its current dir** (AlterReplicaLogDirs; the broker drops the copy "
        f"made so far) · as the cluster was at {datetime.fromtimestamp(seen.seen_at):%H:%M:%S}"
    )
    st.text("\n".join(_dir_move_text(m) for m in seen.moves))  # drawn before the button: see cancel_dialog
    st.caption(
        "Sent for these replicas as the cluster is when you press the button: one whose copy finished or was "
        "dropped meanwhile is left alone. A run of this console that asked for one no longer waits for it."
    )
    sent: SentDirCancel | None = st.session_state.get(keys.DIR_CANCEL_SENT)
    st.button(
        f"Send the cancel for {plural(len(seen.moves), 'log dir move')}",
        type="primary",
        key=keys.DIR_CANCEL_SEND,
        disabled=sent is not None,
        icon=":material/cancel:",
        on_click=_send_dir_cancel,
        args=(settings, seen, me),
    )
    _not_taken(keys.DIR_CANCEL_FAILED)
    if sent is not None:
        refused = any(not a.accepted for a in sent.result.answers)
        st.status("Cancel sent", state="error" if refused else "complete")
        st.markdown(f"**Outcome:** {sent.result.summary()}")
        st.dataframe(sent.result.rows(), hide_index=True, width="stretch")


@st.dialog("Abandon the run", width="large", on_dismiss=_closed)
def abandon_dialog(settings: ConnectionSettings, run_id: int) -> None:
    me = widgets.identity()
    if not me.can("cancel"):
        st.error(me.why_not("cancel"))
        return
    st.markdown(
        f"The console stops driving run **{run_id}** for good: its throttles come off (what was set "
        "before the run comes back), its unsent waves are skipped, and it ends as *abandoned*. "
        "The reassignments it started stay in flight unless you cancel them too."
    )
    cancel_too = st.checkbox(
        "Cancel its reassignments in flight too (back to their original replicas)", key=keys.RUNS_ABANDON_CANCEL
    )
    why = st.text_input("Why (for the audit log)", key=keys.RUNS_ABANDON_WHY)
    if st.button("Abandon the run", type="primary", icon=":material/block:", key="actions.abandon_send"):
        try:
            _step, report = run_service.abandon(deps.store(), deps.gateway(settings), me, run_id, why, cancel_too)
        except ConsoleError as e:
            st.error(f"{e.message} {e.hint}")
            return
        text = f"Run {run_id} abandoned by {me.name}" + (f"; its reassignments: {report.summary()}" if report else ".")
        st.session_state[keys.LAST_ACTION] = text
        st.success(text)
        if report is not None:
            st.dataframe(report.rows(), hide_index=True, width="stretch")


def two_person_problem(plan_id: int | None, plan: Plan, cluster_id: str | None = None) -> str | None:
    """Why the two-person rule (when the users file turns it on) blocks submitting on
    ``cluster_id`` (None: the plan's own cluster), or None."""
    return run_service.two_person_problem(deps.store(), load_users(), plan_id, plan, cluster_id)


def refusal_box(message: str, hint: str, findings: tuple[Finding, ...]) -> None:
    """The service's refusal of a submission (:class:`console.core.errors.SubmitRefused`), as it says it."""
    st.error(f"{message} {hint}")
    if findings:
        st.code("\n".join(f.message for f in findings[:20]), language=None, wrap_lines=True)


def _what_is_sent(pre: Preflight, rate: int | None, limits: WaveLimits) -> None:
    """The submit dialog's account of the run: the override, the summary sentence, the copies
    between dirs, the tiered topics, the waves."""
    waves, est = pre.waves, pre.estimate
    if pre.cordoned:
        st.warning(
            f"Overridden: {plural(len(pre.cordoned), 'replica')} onto cordoned brokers or log dirs; the run's "
            "audit entry records it."
        )
    st.markdown(
        f"**{run_summary(pre.partitions, len(waves), pre.bytes_to_copy, pre.dir_bytes_to_copy, rate, est, limits)}**"
    )
    if pre.dir_bytes_to_copy:
        st.caption(
            f"{human_bytes(pre.dir_bytes_to_copy)} copied between the log dirs of brokers (on their own disks, no "
            "network): "
            + (
                f"at {human_rate(rate)} per broker as the log-dir throttle "
                "(replica.alter.log.dirs.io.max.bytes.per.second), counted in the estimate."
                if rate
                else "not throttled, so not estimated (as network copies without a throttle)."
            )
        )
    local_only = sorted(set(review.local_only_topics(pre.findings)) | set(pre.tiered_topics))
    if local_only:
        st.caption(review.tiered_note(local_only))
    st.dataframe(
        [
            {
                "wave": i,
                "partitions": len(w),
                "first": ", ".join(f"{e.name}→{','.join(map(str, e.replicas))}" for e in w[:5]),
            }
            for i, w in enumerate(waves, 1)
        ],
        hide_index=True,
    )


def _acknowledged(warnings: int) -> bool:
    if not warnings:
        return True
    return st.checkbox("I acknowledge the warning" if warnings == 1 else f"I acknowledge the {warnings} warnings")


def _started(run_id: int) -> None:
    st.success(f"Run {run_id} started.")
    st.page_link(
        "views/runs.py", label=f"Watch run {run_id}", icon=":material/play_circle:", query_params={"run": str(run_id)}
    )


def other_moves_confirmed(store: Store, key: str, state: ClusterState) -> bool | None:
    """Name the reassignments in flight that this console did not start and ask to submit anyway:
    False when there are none, True when the operator confirmed (the run's audit entry records it),
    None while not confirmed (the run cannot start)."""
    others = other_moves_service.others_in_flight(store, key, state)
    if not others:
        return False
    st.warning(
        f"Another mover is reassigning on this cluster: {moves_text(others)} {since_text(others)} Two movers "
        "compete for the same brokers, bandwidth and throttles; the console refuses to start unless you confirm."
    )
    sure = st.checkbox("Submit while other reassignments are in flight", key="actions.submit_other_moves")
    return True if sure else None


@st.dialog("Submit the plan", width="large", on_dismiss=_closed)
def submit_dialog(
    settings: ConnectionSettings,
    plan: Plan,
    name: str,
    reviewed: ClusterState,
    warnings: int,
    rate: int | None,
    limits: WaveLimits,
    plan_id: int | None = None,
    elect_default: bool | None = None,
    allow_cordoned: bool = False,
) -> None:
    """``elect_default``: whether the closing preferred leader election starts ticked (the review's
    choice); None: when the plan changes some partition's first replica. ``allow_cordoned``: the
    operator overrides the cordoned-destination errors (the run's audit entry says so)."""
    me = widgets.identity()
    if not me.can("submit"):
        st.error(me.why_not("submit"))
        return
    reader, store = deps.reader(settings), deps.store()
    state = reader.snapshot(info=True)  # the release: the run's rollback names log dirs from Kafka 4.2 on
    problem = two_person_problem(plan_id, plan, cluster_key(state, settings.name))
    if problem:
        st.error(problem)
        return
    # the plan is checked again against the cluster as it is now; a partition that moved since
    # the review is a "stale" error
    pre = preflight(
        state, plan.with_basis(reviewed) if not plan.basis else plan, limits, rate, deps.calibration(state, settings)
    )
    refused = pre.refusal(allow_cordoned)
    if refused is not None:
        refusal_box(refused.message, refused.hint, refused.findings)
        return
    _what_is_sent(pre, rate, limits)
    elect = st.checkbox(
        "Finish with a preferred leader election",
        value=first_replica_changes(reviewed, plan) if elect_default is None else elect_default,
        help="After the last wave, the first replica of each partition of the run leads where it is "
        "in sync (in batches, audited). On by default when the plan changes some partition's "
        "first replica; the review's leaders after assume it.",
    )
    ack = _acknowledged(warnings)
    others = other_moves_confirmed(store, cluster_key(state, settings.name), state)
    typed = st.text_input(f"Type the cluster's name (**{settings.name}**) to start")
    started: int | None = st.session_state.get(keys.SUBMIT_STARTED)
    if st.button(
        "Start the run",
        type="primary",
        key="actions.submit_start",
        icon=":material/play_arrow:",
        disabled=started is not None or not ack or others is None or typed.strip() != settings.name,
        help="Started: see the Runs page." if started is not None else None,
    ):
        try:
            run_id = run_service.start_run(
                store,
                deps.gateway(settings),
                me,
                state,
                plan,
                name,
                rate,
                limits,
                elect_leaders=elect,
                users=load_users(),
                plan_id=plan_id,
                allow_cordoned=allow_cordoned,
                allow_other_moves=bool(others),
                checked=pre,
            )
        except (ConflictError, NotPermitted) as e:  # SubmitRefused too: said with its findings
            refusal_box(e.message, e.hint, e.findings if isinstance(e, SubmitRefused) else ())
            return
        deps.worker(settings)  # the server's worker drives it from here
        st.session_state[keys.LAST_ACTION] = f"Run {run_id} started by {me.name}."
        st.session_state[keys.SUBMIT_STARTED] = run_id
        st.rerun(scope="fragment")  # the dialog again, its button off: a run is started once
    if started is not None:
        _started(started)
