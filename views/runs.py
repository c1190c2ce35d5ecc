"""Runs: what the console is moving, wave by wave; pause, throttle, cancel, roll back; the audit log."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import timedelta

import streamlit as st

from components import actions, audit, deps, holds, keys, widgets
from console.access.auth import Identity
from console.core.errors import ConsoleError
from console.core.format import human_bytes, human_duration, human_rate, plural, timestamp
from console.core.model import ClusterState, cluster_key
from console.core.states import SubmitPath, WaveState
from console.moves.progress import Progress
from console.plans.plan import parse_plan
from console.present import guardrails, history, review
from console.present.estimate import wave_eta
from console.present.run_controls import ZOOKEEPER_NO_CANCEL, run_controls
from console.services import runs as run_service
from console.services import sessions as session_service
from console.storage.runs import Run, Wave
from console.storage.store import Store

SIGN_INS = frozenset({"sign-in", "sign-out"})
AUDIT_KINDS: dict[str, Callable[[str], bool]] = {
    "everything": lambda action: True,
    "cluster actions": lambda action: action not in SIGN_INS,
    "sign-ins": lambda action: action in SIGN_INS,
}


def running_wave(run: Run, running: Wave, now: ClusterState) -> None:
    """The running wave's copy rate (per broker: a throttle is per broker), bytes left and ETA."""
    run_id = run.id
    keys_now = [e.key for e in parse_plan(running.entries_json).entries]
    tracker = st.session_state.setdefault(f"runs.progress.{run_id}.{running.number}", Progress())
    tracker.update(now, keys_now)
    copies = deps.copy_tracker(settings)  # the Live page's: per replica, shared by the sessions
    copies.observe(now)
    # paused or stopping: the current wave finishes and the next waits (or is never sent): no ETA counts it
    eta = wave_eta(
        now,
        run.state,
        keys_now,
        lambda: [parse_plan(w.entries_json).entries for w in store.runs.waves(run_id) if w.state is WaveState.PENDING],
        run.rate,
        copies.rates(),
        copies.dir_rates(),
        deps.calibration(now, settings),
    )
    left, this, waits = eta.left, eta.this, eta.waits
    by_broker = tracker.broker_rates()
    busiest = max(by_broker.items(), key=lambda kv: kv[1], default=None)
    p1, p2, p3 = st.columns(3)
    p1.metric(
        "Observed copy rate",
        f"{human_rate(busiest[1])} on broker {busiest[0][1]}" if busiest and busiest[1] > 0 else "measuring…",
        help="The busiest broker's copy rate (a throttle is per broker), from the growth of each replica "
        "between refreshes (a replica counted from its second refresh on)"
        + (
            ": "
            + ", ".join(
                f"broker {b} {'between dirs' if d else 'taking in'} {human_rate(r)}"
                for (d, b), r in sorted(by_broker.items(), key=lambda kv: kv[0][1])
            )
            if by_broker
            else ""
        )
        + ".",
    )
    p2.metric("Left in this wave", human_bytes(left) if left is not None else "unknown")
    if this.seconds is not None and waits:
        p3.metric(
            "ETA (this wave)",
            human_duration(this.seconds),
            help=f"This wave until its last copy is done ({this.basis}). The run is {run.state.value}: {waits}.",
        )
        st.caption(f"ETA rests on {this.basis}; the run is {run.state.value}: this wave finishes, {waits}.")
    elif eta.seconds is not None:
        p3.metric(
            "ETA",
            human_duration(eta.seconds),
            help=f"This wave until its last copy is done ({this.basis}); the waves after it {eta.later_basis}.",
        )
        st.caption(f"ETA rests on {this.basis}" + (f"; later waves {eta.later_basis}." if eta.later_waves else "."))
    else:
        p3.metric("ETA", "…", help="Measuring the copy rate: " + this.basis + ".")
    if local_only := sorted({t for t, _ in keys_now if t in now.tiered}):
        st.caption(review.tiered_note(local_only))
    for line in tracker.stuck(now):
        st.warning(f"Stuck: {line}. Check the broker (Overview) and the throttle.")


st.header("Runs")
actions.last_result()
# a dialog of an earlier run of the page is closed by this one (this page opens its dialogs on a click only)
st.session_state.pop(keys.DIALOG_OPEN, None)
settings = widgets.require_cluster()
actions.pending_cancel(settings)  # a guardrail's "Cancel these…": its dialog first
store = deps.store()
deps.worker(settings)  # the server's worker drives unfinished runs
me = widgets.identity()
state, _ = widgets.require_snapshot(settings, keys.RUNS_LAST_GOOD)
cluster = cluster_key(state, settings.name)
# the cluster's entries and the console-wide ones (signing in and out, refused sign-ins)
logged = (cluster, session_service.CONSOLE_WIDE)
# what the page draws below is read once, here: the runs table, the run's controls and the audit
# log are one picture; every change the console makes to a run is audited, so a newer entry means
# the picture is out of date, and the run's part (refreshing on its own) reruns the whole page
drawn = store.audit.latest_id(logged)
runs = store.runs.list(cluster)
if failed := store.notifications.list(cluster, limit=20):
    st.warning(
        f"**Notifications not delivered**: {plural(len(failed), 'message')} given up on after retries "
        "(latest first; each is in the audit log as notification-failed). Check the destination in notify.toml.",
        icon=":material/notifications_off:",
    )
    st.dataframe(
        [
            {
                "at": timestamp(f.at),
                "event": f.event,
                "run": f.run_id,
                "destination": f.destination,
                "attempts": f.attempts,
                "error": f.error,
            }
            for f in failed
        ],
        hide_index=True,
        width="stretch",
    )

if not runs:
    st.info("No runs yet: review a plan and submit it from the Review page.")
else:
    waves = {r.id: store.runs.waves(r.id) for r in runs}
    st.dataframe(
        history.run_rows(runs, waves),
        hide_index=True,
        width="stretch",
        column_config={"state": st.column_config.TextColumn("state", width=widgets.STATE_WIDTH)},  # 'completed' in full
    )
    by_id = {r.id: r for r in runs}
    wanted = st.query_params.get("run")
    ids = list(by_id)
    run_id = st.selectbox(
        "Run",
        ids,
        index=ids.index(int(wanted)) if wanted and wanted.isdigit() and int(wanted) in by_id else 0,
        format_func=lambda i: f"#{i} {by_id[i].name}",  # its state in the table above (a picker keeps a label)
        key=keys.RUNS_SELECTED,
    )
    st.query_params["run"] = str(run_id)

    with_page = [True]  # the part's first run is this page run's: a rerun there would drop a click below it

    @st.fragment(run_every=timedelta(seconds=2))
    def progress() -> None:
        run = store.runs.get(run_id)
        if run is None:
            return
        # the runs table, the controls and the audit log say another (a wave ended, the state or the
        # throttle changed): drawn again together, unless a dialog is open (it would close under the
        # operator's hands; the page is drawn again when it closes)
        changed = run.state is not by_id[run_id].state or store.audit.latest_id(logged) != drawn
        if changed and not with_page[0] and not st.session_state.get(keys.DIALOG_OPEN):
            st.rerun(scope="app")
        with_page[0] = False
        if (held := guardrails.hold_notice(run, store.holds.get(run_id), time.time())) is not None:
            holds.notice(settings, held, "runs", link=False)
        now = deps.reader(settings).snapshot(max_age_s=widgets.SHARED_SNAPSHOT_AGE_S)
        before = {e.key: e.replicas for e in parse_plan(run.rollback_json).entries}
        rows = history.wave_rows(now, store.runs.waves(run_id), store.runs.outcomes(run_id), before)
        st.markdown(
            f"**Run {run.id}** · {run.state} · by {run.author}"
            + (f" · throttle {history.throttle_text(run.rate)}" if run.rate else " · not throttled")
            + (" · ends with a preferred leader election" if run.elect_leaders else "")
        )
        st.dataframe(
            rows,
            hide_index=True,
            width="stretch",
            placeholder="—",
            column_config={
                "progress": st.column_config.ProgressColumn(
                    "progress", min_value=0, max_value=100, format="%d%%", help="Bytes copied of the wave's bytes"
                ),
                # a grid sizes a column once, to what it first held ("—" before the wave is sent or done)
                "state": st.column_config.TextColumn("state", width=widgets.STATE_WIDTH),
                "submitted": st.column_config.TextColumn("submitted", width=widgets.TIME_WIDTH),
                "completed": st.column_config.TextColumn("completed", width=widgets.TIME_WIDTH),
            },
        )
        running = next((w for w in store.runs.waves(run_id) if w.state is WaveState.RUNNING), None)
        if running is not None and run.active:
            running_wave(run, running, now)
        why = store.runs.stuck(run_id) if run.active else None
        if why:
            st.error(f"**Stuck**: {why}. Fix what it waits on, or abandon the run (below).", icon=":material/warning:")
        outcomes = store.runs.outcomes(run_id)
        if record := history.record_line(run, outcomes):  # partitions an operator cancelled while it ran
            st.info(record, icon=":material/cancel:")
            st.dataframe(history.cancelled_rows(outcomes), hide_index=True, placeholder="—")
        rejected = history.rejected_rows(outcomes)
        if rejected:
            st.error(f"{plural(len(rejected), 'partition')} rejected by the controller:")
            st.dataframe(rejected, hide_index=True, placeholder="—")
        if gone := history.gone_rows(outcomes):
            st.info(
                f"{plural(len(gone), 'partition')} no longer {'exists' if len(gone) == 1 else 'exist'}: not waited for."
            )
            st.dataframe(gone, hide_index=True, placeholder="—")
        if not_in_dir := history.not_in_dir_rows(outcomes):
            st.warning(
                f"{plural(len(not_in_dir), 'replica')} not in the log dir the plan asked: a dir went offline "
                "during the move, and the run no longer waits for it:"
            )
            st.dataframe(not_in_dir, hide_index=True, placeholder="—")
        for said in history.min_isr_warnings(
            store.audit.entries(cluster=run.cluster, action="min-isr-changed"), run_id
        ):
            st.warning(said, icon=":material/warning:")
        election = history.election_line(run, outcomes)
        if election:
            st.caption(election)
        not_elected = history.not_elected_rows(outcomes)
        if not_elected:
            st.warning(
                f"The preferred leader was not elected for {plural(len(not_elected), 'partition')}; "
                f"{'it keeps' if len(not_elected) == 1 else 'they keep'} the leader "
                f"{'it' if len(not_elected) == 1 else 'they'} had (the run completed all the same):"
            )
            st.dataframe(not_elected, hide_index=True, placeholder="—")

    progress()
    run = by_id[run_id]
    held_now = guardrails.hold_notice(run, store.holds.get(run_id), time.time())  # its Resume is there
    if run.path is SubmitPath.ZOOKEEPER:
        st.warning(ZOOKEEPER_NO_CANCEL)
    if run.active and me.can("pause"):
        ours = [k for k, r in store.runs.active_partitions(cluster).items() if r == run_id]
        controls = run_controls(run, waves[run_id], len(ours))
        if controls.ending:
            st.info(controls.ending, icon=":material/pause_circle:")
        c1, c2, c3, c4 = st.columns(4)

        def change(operation: Callable[[Store, Identity, int], None]) -> None:
            if widgets.acted(lambda: operation(store, me, run_id)):
                st.rerun()

        if controls.pause and c1.button("Pause before the next wave", icon=":material/pause:"):
            change(run_service.pause)
        if (
            controls.resume
            and held_now is None
            and c1.button("Resume", icon=":material/play_arrow:", help="Sends the waves left, one after the other.")
        ):
            change(run_service.resume)
        if controls.stop and c2.button(controls.stop, icon=":material/stop:", help=controls.stop_help):
            change(run_service.stop)
        rate = widgets.rate_input(
            "Throttle (10 MB/s, or a number in bytes/s)",
            f"{keys.RUNS_RATE}.{run_id}",
            human_rate(run.rate or 10_000_000),
            container=c3,
        )
        unthrottled = widgets.unthrottled_confirmed(
            rate, settings.max_throttle, f"{keys.RUNS_UNTHROTTLED}.{run_id}", container=c3
        )
        if (
            c3.button("Change the throttle", disabled=rate is None or unthrottled is False)
            and rate is not None
            and unthrottled is not False
        ):
            try:
                reported = run_service.change_throttle(
                    store, deps.gateway(settings), me, run_id, rate, unthrottled_ok=bool(unthrottled)
                )
            except ConsoleError as e:
                st.error(f"{e.message} {e.hint}")
            else:
                st.session_state[keys.RUNS_RATE_DONE] = (run_id, rate, reported)
                st.rerun()  # the runs table shows the new rate
        done = st.session_state.get(keys.RUNS_RATE_DONE)
        if done is not None and done[0] == run_id:
            _, asked, reported = done
            st.success(
                f"Throttle of run {run_id} set to {human_rate(asked)}; the brokers now report "
                + (
                    ", ".join(
                        f"broker {b}: {human_rate(int(v)) if v and v.isdigit() else 'nothing'}"
                        for b, v in sorted(reported.items())
                    )
                    or "no broker in flight for it yet"
                )
                + "."
            )
        if controls.cancel and c4.button(
            "Cancel the run…",
            icon=":material/cancel:",
            disabled=controls.cancel_off is not None,
            help=controls.cancel_off or controls.cancel_help,
        ):
            actions.open_cancel(settings, ours, False, run=run_id)
        if c4.button("Abandon…", icon=":material/block:", help=controls.abandon_help):
            actions.open_dialog(actions.abandon_dialog, settings, run_id)
    elif run.active:
        st.caption(me.why_not("pause"))

    d1, d2, d3 = st.columns(3)
    d1.download_button(
        "Plan JSON", run.plan_json, file_name=f"run-{run.id}.json", mime="application/json", icon=":material/download:"
    )
    d2.download_button(
        "Rollback JSON",
        run.rollback_json,
        file_name=f"run-{run.id}-rollback.json",
        mime="application/json",
        icon=":material/undo:",
    )
    if not run.active and d3.button(
        "Roll back (review it first)",
        icon=":material/history:",
        disabled=not me.can("save plans"),
        help=None if me.can("save plans") else me.why_not("save plans"),
    ):
        plan_id = run_service.rollback_as_plan(store, me, state, settings.name, run.id)
        st.page_link(
            "views/review.py",
            label=f"Review the rollback (plan {plan_id})",
            icon=":material/fact_check:",
            query_params={"plan": str(plan_id)},
        )

st.subheader("Audit log")
entries = store.audit.entries(clusters=logged)
if not entries:
    st.write("Nothing recorded yet: every submit, wave, throttle change, cancel and approval appears here.")
    st.stop()
kind = st.segmented_control(
    "Show",
    list(AUDIT_KINDS),
    default="everything",
    key="runs.audit_kind",
    help="Sign-ins: signing in and out, and refused sign-ins (console-wide, on every cluster's log).",
)
fits = AUDIT_KINDS[kind or "everything"]
acts = sorted({a.action for a in entries})
chosen = st.multiselect("Actions", acts, key=keys.AUDIT_ACTIONS)
users = sorted({a.user for a in entries})
who = st.multiselect("Users", users, key="runs.audit_users")
shown = [a for a in entries if fits(a.action) and (not chosen or a.action in chosen) and (not who or a.user in who)]
names = {**store.clusters.names(), cluster: settings.name}  # the cluster's name, not its id
audit.audit_log(shown, names)
downloads = (
    ("CSV", history.audit_csv(shown, names), "audit.csv", "text/csv"),
    ("JSON", history.audit_json(shown, names), "audit.json", "application/json"),
)
for column, (kind, data, file_name, mime) in zip(st.columns(2), downloads, strict=True):
    column.download_button(f"Audit log ({kind})", data, file_name=file_name, mime=mime, icon=":material/download:")
