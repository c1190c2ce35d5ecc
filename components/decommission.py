"""The Drafts page's decommission flow: start one for brokers, see where each stands, move it on,
open its drain plan in Review, unregister the brokers, abandon it. Every action is a call of
:mod:`console.services.decommission` (roles checked and audited there); this only collects the
clicks and draws the steps."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import streamlit as st

from components import deps, keys
from console.access.settings import ConnectionSettings
from console.core.errors import ConsoleError
from console.core.format import ids_text
from console.core.model import ClusterState, cluster_key
from console.core.states import DecommissionStep
from console.services import decommission as flow_service
from console.storage.decommissions import Decommission

_ORDER = [s for s in DecommissionStep if s is not DecommissionStep.ABANDONED]
_SHOWN = {
    DecommissionStep.CORDON: "cordon",
    DecommissionStep.PLAN: "drain plan",
    DecommissionStep.REVIEW: "review",
    DecommissionStep.DRAIN: "drain",
    DecommissionStep.VERIFY: "verify empty",
    DecommissionStep.SHUT_DOWN: "shut down",
    DecommissionStep.UNREGISTER: "unregister",
    DecommissionStep.DONE: "done",
}


def steps_line(flow: Decommission) -> str:
    """The steps as one line of Streamlit markdown: done ones ticked, the current one marked (blocked:
    a stop sign), the rest empty circles (Material icons: no emoji font needed)."""
    if flow.step is DecommissionStep.ABANDONED:
        return ":material/cancel: abandoned"
    at = _ORDER.index(flow.step)
    parts = []
    for i, s in enumerate(_ORDER):
        if i < at or flow.step is DecommissionStep.DONE:
            parts.append(f":green[:material/check_circle:] {_SHOWN[s]}")
        elif i == at:
            icon = ":red[:material/block:]" if flow.blocked else ":blue[:material/play_circle:]"
            parts.append(f"{icon} **{_SHOWN[s]}**")
        else:
            parts.append(f":gray[:material/radio_button_unchecked:] {_SHOWN[s]}")
    return " → ".join(parts)


def _act(what: str, call: Callable[[], object]) -> None:
    """Run a service call for a click; its error is shown, never lost. What it sends goes through
    the shared reader's connections, so the pages read the cluster afresh after it (not the
    snapshot shared from before the click)."""
    try:
        call()
    except ConsoleError as e:
        st.session_state[keys.DECOMMISSION_ERROR] = f"{what}: {e.message} {e.hint}".strip()


def panel(settings: ConnectionSettings, state: ClusterState) -> None:
    """The expander's content."""
    from components.widgets import identity

    me = identity()
    store = deps.store()
    key = cluster_key(state, settings.name)
    may = me.can("decommission")
    st.caption(
        "Takes brokers out the way Kafka documents it: cordon them (Kafka 4.3+: no new replica lands there), "
        "drain them with a generated plan you review and submit, check they hold nothing, shut them down on "
        "their hosts, then unregister them (KRaft). Each step is audited; the flow resumes after a reload."
    )
    if problem := st.session_state.pop(keys.DECOMMISSION_ERROR, None):
        st.error(problem)
    flows = store.decommissions.list(key)
    shown = [f for f in flows if f.open] + [f for f in flows if not f.open][:2]
    gateway = deps.gateway(settings)
    for flow in shown:
        with st.container(border=True):
            st.markdown(f"**Decommission {flow.id}** · broker {ids_text(flow.brokers)} · started by {flow.author}")
            st.markdown(steps_line(flow))
            if flow.blocked:
                st.warning(flow.blocked)
            else:
                st.caption(flow_service.describe(flow))
            if flow.notes:
                with st.expander("What each step did"):
                    st.markdown("\n".join(f"- {n}" for n in flow.notes))
            if not flow.open or not may:
                continue
            b = st.columns(4)
            if b[0].button("Check and continue", key=f"decommission.advance.{flow.id}", icon=":material/play_arrow:"):
                _act(
                    "Not moved on",
                    partial(flow_service.advance, store, gateway, me, settings.name, flow.id),
                )
                st.rerun()
            reviewing = flow.step is DecommissionStep.REVIEW and flow.plan_id is not None
            if reviewing and b[1].button(
                "Open the drain plan in Review", key=f"decommission.review.{flow.id}", type="primary"
            ):
                st.switch_page("views/review.py", query_params={"plan": str(flow.plan_id)})
            if flow.step is DecommissionStep.UNREGISTER:
                sure = b[1].checkbox(
                    "They are shut down for good", key=f"decommission.sure.{flow.id}", help="UnregisterBroker"
                )
                if b[2].button(
                    f"Unregister broker {ids_text(flow.brokers)}",
                    key=f"decommission.unregister.{flow.id}",
                    type="primary",
                    disabled=not sure,
                ):
                    _act("Not unregistered", partial(flow_service.unregister, store, gateway, me, flow.id))
                    st.rerun()
            if b[3].button("Abandon", key=f"decommission.abandon.{flow.id}", icon=":material/close:"):
                _act(
                    "Not abandoned",
                    partial(flow_service.abandon, store, me, flow.id, "abandoned on Drafts"),
                )
                st.rerun()
    if not may:
        st.info("Sign in as an operator to start or move on a decommission.")
        return
    busy = {b for f in flows if f.open for b in f.brokers}
    choices = [int(b.id) for b in state.brokers if b.registered and b.id not in busy]
    with st.form("decommission.start"):
        chosen = st.multiselect("Brokers to decommission", choices, key=keys.DECOMMISSION_BROKERS)
        if st.form_submit_button("Start the decommission", type="primary"):
            if not chosen:
                st.session_state[keys.DECOMMISSION_ERROR] = "Not started: choose the brokers to decommission."
            else:
                _act(
                    "Not started",
                    lambda: flow_service.start(store, gateway, me, settings.name, tuple(chosen)),
                )
            st.rerun()
