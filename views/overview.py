"""Overview: brokers, racks, liveness, load, throttles and what the two views disagree on."""

from __future__ import annotations

from datetime import datetime

import streamlit as st

from components import charts, keys, widgets
from console import live

st.header("Cluster overview")
settings = widgets.require_cluster()
if st.button("Refresh"):
    st.rerun()
state, fresh = widgets.require_snapshot(settings, keys.OVERVIEW_LAST_GOOD)
widgets.source_banner(state)
st.caption(
    f"Cluster **{settings.name}** ({state.cluster_id or 'id unknown'}) · controller "
    f"{state.controller if state.controller is not None else 'unknown'} · snapshot "
    f"{datetime.fromtimestamp(state.taken_at):%H:%M:%S} · fingerprint `{state.fingerprint()}`"
)
n = live.counts(state)
m = st.columns(4)
m[0].metric("Brokers live", f"{len(state.live_brokers)}/{len(state.brokers)}")
m[1].metric("Partitions", n.partitions)
m[2].metric("Reassigning", n.reassigning)
m[3].metric("Truly under-replicated", n.under_replicated)

st.subheader("Brokers")
rows = live.broker_rows(state)
st.dataframe(rows, hide_index=True, width="stretch", column_config={"bytes": None})
st.altair_chart(charts.broker_bytes(rows), width="stretch")

st.subheader("Replication throttles set now")
thr = live.throttle_rows(state)
if thr:
    st.dataframe(thr, hide_index=True, width="stretch")
    if not state.in_flight:
        st.warning("Throttles are set but nothing is being reassigned: they slow down any replica that falls "
                   "out of sync. Remove them once you are sure no one needs them.")
else:
    st.write("None.")

st.subheader("Findings")
found = live.finding_rows(state)
if found:
    st.dataframe(found, hide_index=True, width="stretch")
else:
    st.write("The Admin API and ZooKeeper agree; nothing to report.")
