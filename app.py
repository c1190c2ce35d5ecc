"""The Streamlit entry point: page config, navigation, sidebar chrome; nothing else."""

from __future__ import annotations

import streamlit as st

from components import deps, keys, warmup, widgets
from components.errors import run_page

warmup.start()  # once per server: the chart and table libraries load while the first page reads the cluster
st.set_page_config(page_title="Reassignment console", page_icon=":material/swap_horiz:", layout="wide")

known = deps.clusters()
deps.audit_stream()  # ships the audit log to its file and topic when [audit_stream] is set (a thread, once)
with st.sidebar:
    for problem in deps.configuration_problems():
        st.error(problem, icon=":material/settings_alert:")
    st.markdown("### Kafka reassignment console")
    if known:
        names = list(known)
        st.selectbox("Cluster", names, key=keys.CLUSTER)
        chosen = known[st.session_state[keys.CLUSTER]]
        deps.worker(chosen)  # drives the cluster's unfinished runs (resumed after a server restart)
        deps.collector(chosen)  # appends snapshots to the history when CONSOLE_COLLECT_EVERY is set
        st.caption(
            f"`{chosen.bootstrap_servers}`" + (f"  \nZooKeeper `{chosen.zookeeper}`" if chosen.zookeeper else "")
        )
        if st.session_state[keys.CLUSTER] == "sandbox":
            st.info("Local sandbox cluster", icon=":material/science:")
    else:
        st.caption("No cluster configured.")
    st.divider()
    widgets.sign_in_box()

page = st.navigation(
    [
        # the default page lives at /; it reserves its own path too, so it gets one nobody types,
        # and the same page answers at /live for links and bookmarks
        st.Page("views/live.py", title="Live", icon=":material/monitor_heart:", default=True, url_path="home"),
        st.Page("views/live.py", title="Live", icon=":material/monitor_heart:", url_path="live", visibility="hidden"),
        st.Page("views/overview.py", title="Overview", icon=":material/dns:"),
        st.Page("views/drafts.py", title="Drafts", icon=":material/edit_note:"),
        st.Page("views/review.py", title="Review", icon=":material/fact_check:"),
        st.Page("views/runs.py", title="Runs", icon=":material/play_circle:"),
        st.Page("views/history.py", title="History", icon=":material/timeline:"),
    ]
)
run_page(page)  # a bug in a page: an internal-error box with a reference to the log, not a traceback
