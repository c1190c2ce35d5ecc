"""The dialogs that change a cluster: cancel (Live and Runs pages) and submit (Review page).
Each shows exactly what will be sent, asks for confirmation, and records who did it."""

from __future__ import annotations

from typing import Any, Callable

import streamlit as st

from components import deps, keys, widgets
from console.access.auth import load_users
from console.access.settings import ConnectionSettings
from console.core.errors import ConflictError, ConsoleError
from console.core.format import human_duration
from console.core.model import ClusterState, TopicPartition, cluster_key
from console.plans.plan import Plan
from console.runs import operations
from console.runs.cancel import plan_cancel
from console.runs.waves import WaveLimits


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


@st.dialog("Cancel reassignments", width="large", on_dismiss=_closed)
def cancel_dialog(settings: ConnectionSettings, scope: list[TopicPartition] | None, include_others: bool) -> None:
    me = widgets.identity()
    if not me.can("cancel"):
        st.error(me.why_not("cancel"))
        return
    reader, store = deps.reader(settings), deps.store()
    state = reader.snapshot(max_age_s=1.0)
    cluster = cluster_key(state, settings.name)
    ours = store.runs.active_partitions(cluster)
    plan = plan_cancel(state, scope, ours, include_others)
    st.markdown("**What cancel means (KIP-455)**")
    st.code("\n".join(plan.explain()), language=None, wrap_lines=True)
    if not plan.cancel:
        st.info("Nothing to cancel" + (": tick “include reassignments this console did not start” to cancel those."
                                       if plan.not_ours else "."))
        return
    override = True
    if plan.at_risk:
        override = st.checkbox(f"Cancel the {len(plan.at_risk)} partitions at risk anyway (they may be left "
                               "without a leader)")
    if st.button(f"Send the cancel for {len(plan.cancel)} partition(s)", type="primary", disabled=not override,
                 icon=":material/cancel:"):
        with st.status("Sending the cancel to the controller…", expanded=True) as status:
            try:
                result = operations.cancel(store, deps.gateway(settings), me.name, cluster, plan, ours, wait_s=15.0)
            except ConsoleError as e:
                status.update(label="The cancel was not taken", state="error")
                st.error(f"{e.message} {e.hint}")
                return
            st.write(f"Accepted for {len(result.accepted)} partition(s) in {result.seconds_to_accept:.2f} s; "
                     f"{len(result.left)} left the in-flight list.")
            for o in result.rejected:
                st.write(f"Rejected: {o.name}: {o.message}")
            if result.still_in_flight:
                st.write("Still in flight: " + ", ".join(f"{t}-{p}" for t, p in result.still_in_flight))
            status.update(label="Cancel sent", state="complete" if not result.rejected else "error")
        st.session_state[keys.LAST_ACTION] = (
            f"Cancel sent by {me.name}: accepted for {len(result.accepted)} partition(s) in "
            f"{result.seconds_to_accept:.2f} s, {len(result.rejected)} rejected, {len(result.left)} left the in-flight list"
            + (f", still in flight: {', '.join(f'{t}-{p}' for t, p in result.still_in_flight)}"
               if result.still_in_flight else "") + ".")
        st.caption("Partitions that had completed stay where they are; their rollback JSON is on the Runs page.")


def two_person_problem(plan_id: int | None, plan: Plan) -> str | None:
    """Why the two-person rule (when the users file turns it on) blocks submitting, or None."""
    return operations.two_person_problem(deps.store(), load_users(), plan_id, plan)


@st.dialog("Submit the plan", width="large", on_dismiss=_closed)
def submit_dialog(settings: ConnectionSettings, plan: Plan, name: str, reviewed: ClusterState,
                  warnings: int, rate: int | None, limits: WaveLimits, plan_id: int | None = None) -> None:
    me = widgets.identity()
    if not me.can("submit"):
        st.error(me.why_not("submit"))
        return
    problem = two_person_problem(plan_id, plan)
    if problem:
        st.error(problem)
        return
    reader, store = deps.reader(settings), deps.store()
    state = reader.snapshot()
    # the plan is checked again against the cluster as it is now; a partition that moved since
    # the review is a "stale" error
    pre = operations.preflight(state, plan.with_basis(reviewed) if not plan.basis else plan, limits, rate)
    bad = pre.errors
    if bad:
        st.error(f"{len(bad)} errors against the cluster as it is now; nothing was sent. Press “Check again” and "
                 "review the plan once more.")
        st.code("\n".join(f.message for f in bad[:20]), language=None, wrap_lines=True)
        return
    waves, eta = pre.waves, pre.eta_s
    st.markdown(f"**{pre.partitions:,} partitions in {len(waves)} wave(s)**, "
                + (f"throttled at {rate:,} B/s" if rate else "not throttled")
                + (f" (about {human_duration(eta)} at the throttle)" if eta else "")
                + f"; at most {limits.moves_per_broker} adding replicas per broker and {limits.partitions} "
                  "partitions per wave.")
    st.dataframe([{"wave": i, "partitions": len(w), "first": ", ".join(f"{e.name}→{','.join(map(str, e.replicas))}"
                                                                       for e in w[:5])}
                  for i, w in enumerate(waves, 1)], hide_index=True)
    ack = st.checkbox(f"I acknowledge the {warnings} warnings") if warnings else True
    typed = st.text_input(f"Type the cluster's name (**{settings.name}**) to start")
    if st.button("Start the run", type="primary", disabled=not ack or typed.strip() != settings.name,
                 icon=":material/play_arrow:"):
        try:
            run_id = operations.start_run(store, deps.gateway(settings), me.name, state, plan, name, rate, limits)
        except ConflictError as e:
            st.error(f"{e.message} {e.hint}")
            return
        deps.worker(settings)  # the server's worker drives it from here
        st.session_state[keys.LAST_ACTION] = f"Run {run_id} started by {me.name}."
        st.success(f"Run {run_id} started.")
        st.page_link("views/runs.py", label=f"Watch run {run_id}", icon=":material/play_circle:",
                     query_params={"run": str(run_id)})
