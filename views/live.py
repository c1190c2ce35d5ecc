"""Live: every partition in flight, its R / I / AR / RR and progress, refreshing on its own."""

from __future__ import annotations

import time
from datetime import datetime, timedelta

import streamlit as st

from components import actions, charts, deps, keys, widgets
from console.core.format import human_bytes, page, page_count
from console.present import live
from console.core.model import PartitionHealth, cluster_key

PAGE_SIZE = 50

st.header("Live reassignments")
settings = widgets.require_cluster()

c1, c2, c3 = st.columns([2, 1, 3])
interval = c1.select_slider("Refresh every (s)", options=[2, 5, 10, 30, 60], value=5, key=keys.LIVE_INTERVAL)
paused = c2.toggle("Pause", key=keys.LIVE_PAUSED)
in_flight_only = c3.toggle("Only partitions in flight", value=True, key=keys.LIVE_IN_FLIGHT_ONLY)


@st.fragment(run_every=None if paused else timedelta(seconds=interval))
def live_panel() -> None:
    state, fresh = widgets.load_snapshot(settings, keys.LIVE_LAST_GOOD)
    if state is None:
        return
    widgets.source_banner(state)
    age = time.time() - state.taken_at
    st.caption(
        f"Cluster **{settings.name}** · last refreshed {datetime.fromtimestamp(state.taken_at):%H:%M:%S}"
        + (f" ({age:.0f} s ago)" if not fresh else "")
        + (" · paused" if paused else f" · every {interval} s"
           + (" and on every ZooKeeper watch" if settings.zookeeper else ""))
    )
    n = live.counts(state)
    m = st.columns(5)
    m[0].metric("Reassigning partitions", n.reassigning)
    m[1].metric("Truly under-replicated", n.under_replicated, help="KIP-352: replicas still being added do not count.")
    m[2].metric("Adding replicas in sync", f"{n.adding_copied}/{n.adding_replicas}")
    m[3].metric("Stalled (adding on a down broker)", n.stalled)
    m[4].metric("Left to copy", human_bytes(n.bytes_to_copy) if n.bytes_to_copy is not None else "unknown")

    f1, f2, f3 = st.columns(3)
    topics = f1.multiselect("Topics", state.topics, key=keys.LIVE_TOPICS)
    brokers = f2.multiselect("Brokers", [b.id for b in state.brokers], key=keys.LIVE_BROKERS)
    healths = f3.multiselect("State", [h.value for h in PartitionHealth], key=keys.LIVE_STATES)
    flt = live.LiveFilter(tuple(topics), tuple(int(b) for b in brokers),
                          tuple(PartitionHealth(h) for h in healths), in_flight_only)
    parts = live.select(state, flt)
    if not parts:
        st.success("No partition reassignments found." if in_flight_only else "No partition matches the filters.")
        return
    pages = page_count(len(parts), PAGE_SIZE)
    number = st.number_input(f"Page (of {pages}; {len(parts)} partitions)", 1, pages, 1, key=keys.LIVE_PAGE) if pages > 1 else 1
    shown, _ = page(parts, int(number), PAGE_SIZE)
    runs = deps.store().runs.active_partitions(cluster_key(state, settings.name))
    st.dataframe(
        live.partition_rows(state, shown, runs),
        hide_index=True,
        width="stretch",
        column_config={
            "progress": st.column_config.ProgressColumn("progress", min_value=0, max_value=100, format="%.0f%%",
                                                        help="Least-advanced adding replica: bytes copied / leader's bytes"),
            "topic": None,
        },
    )
    st.subheader("Replicas by broker")
    st.altair_chart(charts.replica_grid(live.replica_cells(state, shown), [p.name for p in shown]), width="stretch")


live_panel()

with st.expander("Cancel reassignments", icon=":material/cancel:"):
    st.caption("For on-call: cancel never waits for reviews or approvals. In-flight partitions go back to their "
               "original replicas; completed ones stay where they are.")
    now = deps.reader(settings).snapshot(max_age_s=widgets.SHARED_SNAPSHOT_AGE_S)
    names = {p.name: p.key for p in now.in_flight}
    scope = st.radio("Cancel", ["Chosen partitions", "A topic", "Everything in flight"], horizontal=True,
                     key=keys.LIVE_CANCEL_SCOPE)
    chosen: list[tuple[str, int]] | None = None
    if scope == "Chosen partitions":
        chosen = [names[n] for n in st.multiselect("Partitions in flight", list(names), key=keys.LIVE_CANCEL)]
    elif scope == "A topic":
        topic = st.selectbox("Topic", sorted({k[0] for k in names.values()}), key=keys.LIVE_CANCEL_TOPIC)
        chosen = [k for k in names.values() if k[0] == topic]
    others = st.checkbox("Include reassignments this console did not start", value=scope == "Everything in flight",
                         disabled=scope == "Everything in flight", key=keys.LIVE_CANCEL_OTHERS)
    me = widgets.identity()
    if not me.can("cancel"):
        st.caption(me.why_not("cancel") + " Sign in as an operator in the sidebar.")
    if st.button("Cancel…", icon=":material/cancel:", disabled=not names or chosen == [] or not me.can("cancel")):
        actions.open_dialog(actions.cancel_dialog, settings, chosen, others)
    actions.last_result()

if not paused:
    widgets.zookeeper_watch(settings, keys.LIVE_ZK_GENERATION)
