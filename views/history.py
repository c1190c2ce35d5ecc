"""History: what past moves teach, from the pipeline's tables (moves, copy rates, broker load,
under-replicated vs reassigning), for one cluster and a time range."""

from __future__ import annotations

import time
from datetime import datetime

import pandas as pd
import streamlit as st

from components import deps, keys, widgets
from console.core.errors import ConsoleError, JobAlreadyRunning, NotPermitted
from console.core.format import human_duration, human_rate, plural
from console.core.model import cluster_key
from console.core.paths import history_dir
from console.pipeline.calibration import load_topic_rates
from console.pipeline.datasets import newest_snapshot
from console.pipeline.tables import clusters_in, load_history
from console.present import charts
from console.present import moves as past
from console.services import history as history_service

RANGES = {
    "Last hour": pd.Timedelta(hours=1),
    "Last 6 hours": pd.Timedelta(hours=6),
    "Last day": pd.Timedelta(days=1),
    "Last week": pd.Timedelta(days=7),
    "All": None,
}
RECENT_S = 300.0  # a snapshot this recent (seconds) means something collects, when this server does not

st.header("History")
settings = widgets.require_cluster()
root = history_dir()
tables, snapshots = root / "tables", root / "snapshots"
collector = deps.collector(settings)
state = deps.reader(settings).snapshot(max_age_s=60)
mine = cluster_key(state, settings.name)
newest = newest_snapshot(snapshots, mine)
now = time.time()
if newest is None:
    taken = f"No snapshot of this cluster in `{snapshots}` yet."
else:
    taken = (
        f"The newest snapshot of this cluster was taken at {datetime.fromtimestamp(newest):%Y-%m-%d %H:%M:%S} "
        f"({human_duration(max(0.0, now - newest))} ago)."
    )
if collector is not None:
    st.caption(
        f"{taken} This server collects a snapshot every {collector.every_s:g} s into `{snapshots}` "
        f"({plural(collector.kept, 'snapshot')} since the server started)."
        + (f" Last attempt: {collector.problem}" if collector.problem else "")
    )
elif newest is not None and now - newest <= RECENT_S:
    st.caption(
        f"{taken} Collected by another process (e.g. `make demo`'s collector or `python -m console collect`); "
        "this server does not collect."
    )
else:
    st.caption(
        f"{taken} Nothing seems to collect them: this server does not collect snapshots (set `CONSOLE_COLLECT_EVERY=30` "
        f"to have it do so), or run "
        f"`python -m console collect --bootstrap-server {settings.bootstrap_servers} --out {snapshots}`."
    )

me = widgets.acting("update the history")
if st.button(
    "Update the history now",
    icon=":material/refresh:",
    key=keys.HISTORY_UPDATE,
    disabled=not me.can("update the history"),
    help="Runs the history job on Spark (local) in a separate process over the collected snapshots "
    "(operators; one at a time).",
):
    with st.status("Running the history job…", expanded=True) as status:
        try:
            history_service.update_history(deps.store(), me, mine, snapshots, tables, on_line=st.text)
            status.update(label="History updated", state="complete", expanded=False)
        except ConsoleError as e:
            status.update(
                label="The history job did not run"
                if isinstance(e, NotPermitted | JobAlreadyRunning)
                else "The history job failed",
                state="error",
            )
            st.error(f"{e.message} {e.hint}")

known = clusters_in(tables)
if not known:
    st.info(
        "No history yet. Collect snapshots (above), then update the history: "
        f"`python -m console pipeline history --snapshots {snapshots} --out {tables}`.",
        icon=":material/history:",
    )
    st.stop()

# the names people know: this cluster's (other clusters' ids are not known without reading them)
names = {mine: f"{settings.name} ({mine})"} if mine != settings.name else {}
c1, c2 = st.columns([1, 2])
cluster = c1.selectbox(
    "Cluster",
    known,
    index=known.index(mine) if mine in known else 0,
    format_func=lambda key: names.get(key, key),
    key=keys.HISTORY_CLUSTER,
    help="Clusters in the history, by cluster id (this one with its name)",
)
span = c2.segmented_control("Time range", list(RANGES), default="Last day", key=keys.HISTORY_RANGE) or "Last day"
since = pd.Timestamp.now(tz="UTC") - RANGES[span] if RANGES[span] is not None else None
try:
    view = load_history(tables, cluster, since=since)
except ConsoleError as e:
    st.error(f"{e.message} {e.hint}")
    st.stop()
if view is None:
    st.stop()
age = time.time() - view.finished_at
st.caption(
    f"The history job last ran {datetime.fromtimestamp(view.finished_at):%Y-%m-%d %H:%M:%S} "
    f"({human_duration(age)} ago) over `{view.manifest.get('inputs', {}).get('snapshots', '?')}`."
)

m = view.moves
outcomes = m["outcome"].value_counts().to_dict() if len(m) else {}
rates = m["rate_bps"].dropna() if len(m) else pd.Series(dtype=float)
k = st.columns(5)
k[0].metric("Moves", len(m))
k[1].metric("Completed", outcomes.get("completed", 0))
k[2].metric("Cancelled", outcomes.get("cancelled", 0))
k[3].metric("In flight / stuck", f"{outcomes.get('in_flight', 0)} / {outcomes.get('stuck', 0)}")
k[4].metric("Median copy rate", human_rate(float(rates.median())) if len(rates) else "—")

st.subheader("Moves")
if len(m):
    shown = past.timeline_rows(m)
    if len(m) > len(shown):
        st.caption(f"The {len(shown)} most recent of {len(m)} moves.")
    st.altair_chart(charts.move_timeline(shown), width="stretch")
    st.dataframe(past.move_rows(m), hide_index=True, width="stretch", placeholder="—")
else:
    st.write("No replica moved in this range.")

st.subheader("Copy rates")
st.altair_chart(charts.copy_rate_over_time(m), width="stretch")
st.dataframe(past.copy_rate_rows(view.copy_rates), hide_index=True, width="stretch", placeholder="—")
# said below the grid, not as its column headers' tooltips: a grid's header tooltip stays where it
# was drawn when the page scrolls, over the headers and text that scroll under it
st.caption(
    "**broker throughput**: what the broker took in per second while the move copied (all its copies at once: "
    "the throttle is per broker); the ETAs use it. **of the throttle**: that throughput over the throttle in "
    "force while those bytes were copied."
)

st.subheader("Broker load")
measure = (
    st.segmented_control("Measure", ["replicas", "bytes", "leaders"], default="bytes", key=keys.HISTORY_MEASURE)
    or "bytes"
)
st.altair_chart(charts.broker_load_over_time(view.broker_load, measure), width="stretch")

st.subheader("Produce rates")
produced = load_topic_rates(tables, cluster)
if produced:
    shown_rates = past.produce_rate_rows(produced)
    if len(produced) > len(shown_rates):
        st.caption(f"The {len(shown_rates)} most produced-to of {plural(len(produced), 'topic')}.")
    st.dataframe(shown_rates, hide_index=True, width="stretch")
    st.caption(
        "Each topic's produce rate, from its leaders' growth between the last snapshots (the whole history, "
        "whatever the range): Review prices a plan's steady cross-zone replication with it."
    )
else:
    st.write("No produce rate learned yet: it takes two snapshots of a topic whose leaders' logs grew.")

st.subheader("Truly under-replicated vs reassigning")
st.altair_chart(charts.urp_vs_reassigning(view.partition_counts), width="stretch")
incidents = past.incident_rows(view.incidents)
if len(incidents):
    st.dataframe(incidents, hide_index=True, width="stretch", placeholder="—")
else:
    st.write("No under-replicated or reassigning period in this range.")
