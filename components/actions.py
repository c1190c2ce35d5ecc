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
from console.core.errors import ConsoleError, NotPermitted, RunOverlap, StoreWriteClash, SubmitRefused
from console.core.format import human_bytes, human_rate, plural
from console.core.model import ClusterState, Finding, TopicPartition, cluster_key
from console.moves.cancel import CancelPlan, CancelVerdict, plan_cancel
from console.moves.others import moves_text, since_text
from console.moves.readback import AGREE_S, LOOK_EVERY_S
from console.moves.waves import WaveLimits
from console.plans.diff import first_replica_changes
from console.plans.logdirs import DirMoveProgress, dir_moves_in_flight
from console.plans.plan import Plan
from console.present import review, throttles
from console.present.estimate import estimate_text, run_summary
from console.services import cancel as cancel_service
from console.services import other_moves as other_moves_service
from console.services import other_throttles
from console.services import runs as run_service
from console.services.cancel import CancelReport, DirCancelResult
from console.services.other_throttles import OtherThrottles
from console.services.preflight import Preflight, preflight
from console.services.unthrottled import unthrottled_problem
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
    scope: tuple[TopicPartition, ...] | None = None
    """The partitions chosen (None: everything in flight), for the dialog to freeze them again."""
    include_others: bool = False
    """Reassignments this console did not start among ``scope`` are cancelled too."""
    whole_runs: frozenset[int] = frozenset()
    """The console's runs cancelled as runs (everything in flight, or a run's own cancel): they send
    no further wave; the others among those partitions go on with the rest of theirs."""


def freeze_cancel(
    settings: ConnectionSettings, scope: list[TopicPartition] | None, include_others: bool, run: int | None = None
) -> None:
    """Freeze the set to cancel as the cluster is now (a fresh, lean read) and ask for the cancel
    dialog: the "Cancel…" button's callback, so the page's next run opens the dialog first
    (:func:`pending_cancel` at the top of the page), before it draws the page again. When the
    console's runs among those partitions asked for log dir moves, the log dirs are read too
    (a fresh full read) and those still being copied are frozen with the set. Everything in flight
    (``scope`` None) cancels the runs among it as runs, as does a ``run``'s own cancel; chosen
    partitions or a topic cancel only those of their runs."""
    state = deps.reader(settings).snapshot(lean=True)  # fresh, and only what a cancel needs
    cluster = cluster_key(state, settings.name)
    store = deps.store()
    ours = store.runs.active_partitions(cluster)
    plan = plan_cancel(state, scope, ours, include_others)
    in_scope = [p.key for p in state.in_flight] if scope is None else scope
    runs = {ours[k] for k in in_scope if k in ours}
    dir_moves = cancel_service.runs_dir_moves(store, deps.reader(settings).snapshot, runs, scope)
    chosen = None if scope is None else tuple(scope)
    whole = frozenset(runs if scope is None else () if run is None else {run})
    st.session_state[keys.CANCEL_SEEN] = SeenCancel(
        plan, cluster, ours, state.taken_at, dir_moves, scope=chosen, include_others=include_others, whole_runs=whole
    )
    st.session_state[keys.CANCEL_OTHERS] = include_others
    st.session_state.pop(keys.CANCEL_SENT, None)
    st.session_state.pop(keys.CANCEL_FAILED, None)
    st.session_state.pop(keys.CANCEL_OVERRIDE, None)  # an override is ticked for the set it was shown with only
    for k in (keys.CANCEL_CLEAR_ASKED, keys.CANCEL_CLEARED, keys.CANCEL_CLEAR_FAILED):
        st.session_state.pop(k, None)
    st.session_state[keys.CANCEL_PENDING] = True


def pending_cancel(settings: ConnectionSettings) -> None:
    """Open the cancel dialog a "Cancel…" click asked for (:func:`freeze_cancel`): called at the
    top of the page, so the on-call engineer sees the dialog without waiting for the page's tables
    and charts to be drawn again behind it."""
    if st.session_state.pop(keys.CANCEL_PENDING, False):
        open_dialog(cancel_dialog, settings)


def open_cancel(
    settings: ConnectionSettings, scope: list[TopicPartition] | None, include_others: bool, run: int | None = None
) -> None:
    """Freeze the set to cancel as the cluster is now, then open the cancel dialog on it (where
    the page draws little before the button; the Live page uses the callback instead); ``run``:
    the run cancelled as a run (the Runs page's "Cancel the run…")."""
    freeze_cancel(settings, scope, include_others, run)
    pending_cancel(settings)


CANCEL_FOLLOW_S = 15.0 + AGREE_S
"""How long the dialog follows a cancel's partitions leaving the in-flight list, then the brokers
showing them back at their original replicas, before it cleans up after the runs among those that
left and records what became of them."""
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
    others: OtherThrottles | None = None
    """At the end: the throttles another tool left on the topics and brokers of those that left."""


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
            whole_runs=seen.whole_runs,
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
    if report.result is not None and report.result.still_in_flight:
        try:
            report = report.leaving(deps.gateway(settings).list_reassignments())
        except ConsoleError:
            pass  # the controller may be moving: ask again at the next run
    if not report.settled:  # what the brokers show of those that left (each broker asked)
        report = cancel_service.look_back(deps.gateway(settings), report, every_s=LOOK_EVERY_S)
    done = report.settled or time.monotonic() - sent.sent_at >= CANCEL_FOLLOW_S
    others = None
    if done and report.result is not None:
        left = set(report.result.left)
        try:
            cancel_service.finish_cancel(
                deps.store(), deps.gateway(settings), sent.by, seen.cluster, report.result, seen.ours
            )
            cancelled = [p for p in seen.plan.cancel if p.key in left]
            others = other_throttles.left_by_others(deps.store(), deps.gateway(settings), seen.cluster, cancelled)
        except ConsoleError as e:
            st.error(f"{e.message} {e.hint}")
    return replace(sent, report=report, finished=done, others=others)


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
        st.caption("Following the partitions as they leave the in-flight list, until every broker shows them back…")
    st.caption(
        "Partitions that had completed stay where they are: a run's rollback JSON (Runs page) takes them back; "
        "a reassignment this console did not start has no run, and no rollback of its own here."
    )
    if sent.others is not None:
        _left_by_others(settings, sent.others)


def _left_by_others(settings: ConnectionSettings, others: OtherThrottles) -> None:
    """The throttles another tool left on the cancel's topics and brokers, said; removed on one more
    click after a confirmation that lists exactly them (the sweep: role, audit, read back)."""
    if not others.read:
        st.caption("The throttle configs could not be read after the cancel: nothing is said of them.")
        return
    if not others.settings:
        return
    n = len(others.settings)
    st.warning(
        f"{plural(n, 'throttle setting')} {other_throttles.LEFT_BY_OTHERS}, on "
        f"{throttles.involved_text(others.topics, others.brokers)}: nothing in flight needs "
        f"{'it' if n == 1 else 'them'} (they slow down any replica that falls out of sync).",
        icon=":material/speed:",
    )
    st.table(widgets.markdown_cells(throttles.setting_rows(others.settings)), hide_index=True)
    if (cleared := st.session_state.get(keys.CANCEL_CLEARED)) is not None:
        st.markdown("  \n".join(throttles.cleared_lines(*cleared)))
        return
    if (failed := st.session_state.get(keys.CANCEL_CLEAR_FAILED)) is not None:
        st.error(f"Nothing removed: {failed}")
    me = widgets.identity()
    if not me.can("sweep"):
        st.caption(me.why_not("sweep"))
    elif not st.session_state.get(keys.CANCEL_CLEAR_ASKED):
        st.button(
            f"Remove the {plural(n, 'setting')} left by another tool…",
            key=keys.CANCEL_CLEAR_ASK,
            icon=":material/cleaning_services:",
            on_click=st.session_state.__setitem__,
            args=(keys.CANCEL_CLEAR_ASKED, True),
        )
    else:
        st.markdown(
            f"**Remove exactly the {plural(n, 'throttle setting')} above** (one request, then read back from the "
            "brokers; one that something in flight needs by then is kept)."
        )
        st.button(
            f"Remove {plural(n, 'throttle setting')}",
            type="primary",
            key=keys.CANCEL_CLEAR,
            on_click=_clear_others,
            args=(settings, others, me),
        )


def _clear_others(settings: ConnectionSettings, others: OtherThrottles, me: Identity) -> None:
    """The confirmation's callback: exactly the settings listed, removed through the service."""
    if st.session_state.get(keys.CANCEL_CLEARED) is not None:
        return  # removed already: a click is never sent twice
    try:
        done = other_throttles.clear_left_by_others(deps.store(), deps.gateway(settings), me, others.settings)
    except ConsoleError as e:
        st.session_state[keys.CANCEL_CLEAR_FAILED] = f"{e.message} {e.hint}"
        return
    st.session_state.pop(keys.CANCEL_CLEAR_FAILED, None)
    rep = done.sweep
    st.session_state[keys.CANCEL_CLEARED] = (
        rep.removed,
        rep.still_set,
        rep.unconfirmed,
        done.needed_now,
        done.gone_already,
    )


@st.dialog("Cancel reassignments", width="large", on_dismiss=_closed)
def cancel_dialog(settings: ConnectionSettings) -> None:
    me = widgets.permitted("cancel")
    if me is None:
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
    if said := plan.explain() + _dir_lines(seen.dir_moves):
        st.text("\n".join(said))
    _others_choice(settings, seen)
    if not plan.cancel and not seen.dir_moves:
        if plan.unread:  # what is in flight is not known: never "nothing to cancel"
            st.error(f"The cluster's read failed ({plan.unread}): close this and press Cancel… again to read it again.")
        else:
            st.info("Nothing to cancel" + (": tick the box above to cancel those." if plan.not_ours else "."))
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


def _others_choice(settings: ConnectionSettings, seen: SeenCancel) -> None:
    """For chosen partitions (or a topic) among which are reassignments this console did not start:
    say so, name them, and let the operator include them here (the set is frozen again, as the
    cluster is now), rather than close the dialog and start over."""
    others = [p for p in seen.plan.cancel if p.key not in seen.ours] if seen.include_others else []
    if seen.scope is None or not (seen.plan.not_ours or others):
        return
    named = seen.plan.not_ours or tuple(others)
    shown = ", ".join(p.name for p in named[:10]) + (f" and {len(named) - 10} more" if len(named) > 10 else "")
    st.warning(
        f"{plural(len(named), 'of the partitions chosen is', 'of the partitions chosen are')} a reassignment this "
        f"console did not start (another mover's): {shown}.",
        icon=":material/group:",
    )
    st.checkbox(
        "Include the reassignments this console did not start in this cancel",
        key=keys.CANCEL_OTHERS,
        disabled=st.session_state.get(keys.CANCEL_SENT) is not None,
        on_change=_include_others,
        args=(settings, seen),
    )


def _include_others(settings: ConnectionSettings, seen: SeenCancel) -> None:
    """The dialog's "include" box changed: freeze the same choice again with or without them."""
    include = bool(st.session_state.get(keys.CANCEL_OTHERS))
    run = next(iter(seen.whole_runs)) if seen.scope is not None and seen.whole_runs else None  # a run's own cancel
    freeze_cancel(settings, None if seen.scope is None else list(seen.scope), include, run)
    st.session_state.pop(keys.CANCEL_PENDING, None)  # the dialog is open: it shows the new set when it reruns


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
    state = deps.reader(settings).snapshot(full=True)  # every replica's log dirs, as they are now
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
    me = widgets.permitted("cancel")
    if me is None:
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
    me = widgets.permitted("cancel")
    if me is None:
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
        f"**{run_summary(estimate_text(pre.partitions, len(waves), pre.bytes_to_copy, pre.dir_bytes_to_copy, rate, est), limits)}**"
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


def _elect_box(ticked: bool) -> bool:
    """Whether the run finishes with a preferred leader election (starting ``ticked``)."""
    return st.checkbox(
        "Finish with a preferred leader election",
        value=ticked,
        help="After the last wave, the first replica of each partition of the run leads where it is "
        "in sync (in batches, audited). On by default when the plan changes some partition's "
        "first replica; the review's leaders after assume it.",
    )


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
    unthrottled_ok: bool = False,
) -> None:
    """``elect_default``: whether the closing preferred leader election starts ticked (the review's
    choice); None: when the plan changes some partition's first replica. ``allow_cordoned``: the
    operator overrides the cordoned-destination errors (the run's audit entry says so);
    ``unthrottled_ok``: the operator ticked "Send it effectively unthrottled" for a ``rate`` above
    the cluster's ceiling (said again here; the run's audit entry says so)."""
    me = widgets.permitted("submit")
    if me is None:
        return
    reader, store = deps.reader(settings), deps.store()
    # the release: the run's rollback names log dirs from Kafka 4.2 on; every size and topic config
    # read now (the pages' reads carry those of partitions not in flight over): the checks use them
    state = reader.snapshot(info=True, full=True)
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
    if unthrottled_ok and (problem := unthrottled_problem(rate, settings.max_throttle)):
        st.warning(f"{problem} You ticked “Send it effectively unthrottled”: it is sent so.", icon=":material/warning:")
    elect = _elect_box(first_replica_changes(reviewed, plan) if elect_default is None else elect_default)
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
            how = run_service.RunSettings(
                rate=rate,
                limits=limits,
                elect_leaders=elect,
                allow_cordoned=allow_cordoned,
                allow_other_moves=bool(others),
                unthrottled_ok=unthrottled_ok,
            )
            request = run_service.RunRequest(me, plan, name, how, plan_id=plan_id, checked=pre)
            run_id = run_service.start_run(store, deps.gateway(settings), state, request, users=load_users())
        except (RunOverlap, StoreWriteClash, NotPermitted) as e:  # SubmitRefused too: said with its findings
            refusal_box(e.message, e.hint, e.findings if isinstance(e, SubmitRefused) else ())
            return
        deps.worker(settings)  # the server's worker drives it from here
        st.session_state[keys.LAST_ACTION] = f"Run {run_id} started by {me.name}."
        st.session_state[keys.SUBMIT_STARTED] = run_id
        st.rerun(scope="fragment")  # the dialog again, its button off: a run is started once
    if started is not None:
        _started(started)
