"""Overview: brokers, racks, liveness, health in Kafka 4's terms (which partitions), cordons, load,
throttles and what the two views disagree on."""

from __future__ import annotations

import time
from datetime import datetime

import streamlit as st

from components import deps, keys, movers, widgets
from console.core.cluster_info import (
    active_controller,
    cordons_supported,
    cordons_text,
    quorum_text,
    status_text,
    summary_line,
)
from console.core.errors import ConsoleError
from console.core.format import ids_text, plural
from console.core.health import HealthGroup, kafka_health
from console.core.model import BrokerId, ClusterMode, SourceStatus
from console.moves.throttles import Leftover, cluster_default_kept, leftover_throttles
from console.present import charts, cluster, live, throttles
from console.present.review import tiered_note
from console.services import cordons as cordon_service
from console.services import decommission as decommission_service
from console.services import runs as run_service

st.header("Cluster overview")
settings = widgets.require_cluster()
# a click reads everything again now, sizes and every topic's configs included (the page's other
# reads share the last snapshot, whose sizes and topic configs may be carried over: its caption says)
refresh = st.button("Refresh", help="Read the cluster again now: sizes and topic configs included")
state, fresh = widgets.require_snapshot(settings, keys.OVERVIEW_LAST_GOOD, info=True, full=refresh)
widgets.source_banner(state)
# in KRaft, DescribeCluster names a broker at random as "controller": the quorum leader is below
active = active_controller(state.info, state.controller)
controller = (
    "" if state.info.mode is ClusterMode.KRAFT else f" · controller {active if active is not None else 'unknown'}"
)
st.caption(
    f"Cluster **{settings.name}** ({state.cluster_id or 'id unknown'}){controller} · snapshot "
    f"{datetime.fromtimestamp(state.taken_at):%H:%M:%S} · fingerprint `{state.fingerprint()}` · "
    + cluster.read_ages_text(state, time.time())
)
n = live.counts(state)
# two rows of three: a label as long as "Offline, nothing electable" fits at 1440 px (six in a row cut it)
m = [*st.columns(3), *st.columns(3)]
m[0].metric("Brokers live", f"{len(state.live_brokers)}/{len(state.brokers)}")
m[1].metric("Partitions", n.partitions)
m[2].metric("Reassigning", n.reassigning)
m[3].metric("Truly under-replicated", n.under_replicated)
health = kafka_health(state)
under, dark, due = HealthGroup.UNDER_MIN_ISR, HealthGroup.OFFLINE_NOTHING_ELECTABLE, HealthGroup.OFFLINE_ELECTION_DUE
m[4].metric(under.label, len(health.under_min_isr), help=under.meaning)
m[5].metric(
    dark.label,
    len(health.nothing_electable),
    help=dark.meaning
    + (
        f" {plural(len(health.election_due), 'more partition')} offline can elect a leader ({due.label.lower()})."
        if health.election_due
        else ""
    ),
)
# which partitions: a table per group that has some (the groups come from kafka_health, computed once),
# and the partitions with eligible leader replicas (KIP-966) when there are any
for group in (under, dark, due, HealthGroup.UNDER_REPLICATED, HealthGroup.WITH_ELR):
    if parts := health.group(group):
        with st.expander(f"{group.label}: {plural(len(parts), 'partition')}"):
            st.caption(
                group.meaning
                + (f" The first {cluster.ROWS_SHOWN:,} are listed." if len(parts) > cluster.ROWS_SHOWN else "")
            )
            st.dataframe(cluster.health_rows(state, parts), hide_index=True, width="stretch")
if state.status.elr is not SourceStatus.OK and state.status.elr is not SourceStatus.NOT_CONFIGURED:
    st.caption(f"Eligible leader replicas (DescribeTopicPartitions): {status_text(state.status.elr)}.")
if state.tiered:  # topics with remote storage (KIP-405): a move of them copies the local log only
    st.caption(tiered_note(sorted(state.tiered), limit=10))
movers.other_moves_notice(settings, state)  # reassignments this console did not start
movers.balancers_notice(settings, state)

st.subheader("What the cluster is")
info = state.info
st.markdown(f"**{summary_line(info)}**")
if info.known:
    st.caption(f"Read {datetime.fromtimestamp(info.read_at):%H:%M:%S} (read again at most once a minute).")
    if info.features_status is SourceStatus.OK and info.features:
        st.dataframe(cluster.feature_rows(info), hide_index=True, width="stretch")
    elif info.features_status is SourceStatus.OK:
        st.write("Features (DescribeFeatures): the cluster reports no feature flag.")
    else:
        st.write(f"Features (DescribeFeatures): {status_text(info.features_status)}.")
    if info.quorum is not None:
        st.write(f"Controller {quorum_text(info)}, high watermark {info.quorum.high_watermark}.")
        st.dataframe(cluster.quorum_rows(info), hide_index=True, width="stretch", placeholder="—")
    elif info.mode is ClusterMode.ZOOKEEPER:
        st.write("Controller quorum: not available on this cluster (ZooKeeper mode has no KRaft quorum).")
    else:
        st.write(f"Controller quorum (DescribeQuorum): {status_text(info.quorum_status)}.")
    st.caption("What the console switches on from what the cluster says it supports:")
    st.table(widgets.markdown_cells(cluster.capability_rows(info)), hide_index=True)  # "why" wraps

st.subheader("Brokers")
rows = live.broker_rows(state)
st.dataframe(rows, hide_index=True, width="stretch", placeholder="—", column_config={"bytes": None})
st.caption(" ".join(f"**{k}**: {v}" for k, v in live.BROKER_HELP.items()))
st.altair_chart(charts.broker_bytes(rows), width="stretch")
dirs = cluster.log_dir_rows(state)
if dirs:
    with st.expander(f"Log dirs ({len(dirs)})"):
        st.dataframe(dirs, hide_index=True, width="stretch")


# Cordons (KIP-1066): a cordoned broker (or log dir) receives no new replica; the page collects the
# choice and the service sends it (operator role, audited).
supported = cordons_supported(state.info)
if supported is False:
    st.caption(f"Cordoned brokers and log dirs: not available on this cluster ({cordons_text(info)}).")
elif supported is None:
    st.caption(f"Cordoned brokers and log dirs: not known ({cordons_text(info)}).")
else:
    st.caption(
        "A cordoned broker (every log dir cordoned) receives no new replica: Kafka places no new partition "
        "on it and the console's generators never pick it; a reassignment onto it is flagged at review."
    )
    st.markdown(cluster.cordoned_now(state, supported))
    me = widgets.identity()
    if not me.can("cordon"):
        st.caption(me.why_not("cordon"))
    else:
        registered = [b for b in state.brokers if b.registered]
        c1, c2 = st.columns(2)
        # the picker names brokers only: a picker keeps the labels it first drew, so a cordon state in
        # them went on saying "not cordoned" after a cordon; the caption under it is drawn every run
        chosen = c1.selectbox("Broker", [int(b.id) for b in registered], key="overview.cordon_broker")
        target = state.broker(BrokerId(chosen)) if chosen is not None else None
        if target is not None:
            c1.caption(f"Broker {chosen} now: {cluster.cordon_words(target, True)}.")
        where = c2.selectbox(
            "Log dir",
            ["the whole broker", *(d.path for d in (target.log_dirs if target is not None else ()))],
            key="overview.cordon_dir",
        )
        log_dir = None if where == "the whole broker" else where
        what = f"log dir {log_dir} of broker {chosen}" if log_dir else f"broker {chosen}"
        b1, b2 = st.columns(2)
        act = None
        if b1.button(f"Cordon {what}", icon=":material/block:", key="overview.cordon"):
            act = cordon_service.CORDON
        if b2.button(f"Uncordon {what}", icon=":material/check_circle:", key="overview.uncordon"):
            act = cordon_service.UNCORDON
        if act is not None and chosen is not None:
            try:
                done = cordon_service.change(deps.store(), deps.gateway(settings), me, act, chosen, log_dir)
            except ConsoleError as e:
                st.error(f"{e.message} {e.hint}")
            else:  # read the cluster again now (a request was sent): the tables above show the change at once
                st.session_state[keys.OVERVIEW_CORDONED] = (done.confirmed, done.summary())
                st.rerun()
        if said := st.session_state.pop(keys.OVERVIEW_CORDONED, None):
            (st.success if said[0] else st.warning)(said[1])

# Fenced brokers that hold nothing (KIP-1073): shut down for good without a decommission flow; the
# page offers the unregister, the service checks and sends it (operator role, audited).
if idle := decommission_service.idle_fenced(state):
    st.warning(
        f"Broker {ids_text(idle)} is registered but fenced and holds no replica: once it is shut down for good, "
        "unregister it (UnregisterBroker) so the cluster forgets it."
    )
    who = widgets.identity()
    if who.can("unregister"):
        u1, u2, u3 = st.columns(3)
        gone = u1.selectbox("Fenced broker", list(idle), key="overview.unregister_broker")
        sure = u2.checkbox("It is shut down for good", key="overview.unregister_sure")
        if u3.button(f"Unregister broker {gone}", disabled=not sure, key="overview.unregister") and gone is not None:
            try:
                said = decommission_service.unregister_idle(
                    deps.store(), deps.gateway(settings), who, settings.name, gone
                )
            except ConsoleError as e:
                st.error(f"{e.message} {e.hint}")
            else:
                st.session_state[keys.OVERVIEW_UNREGISTERED] = said
                st.rerun()
    else:
        st.caption(who.why_not("unregister"))

if unregistered := st.session_state.pop(keys.OVERVIEW_UNREGISTERED, None):  # said after the page read it again
    st.success(unregistered)

st.subheader("Replication throttles set now")
left = leftover_throttles(state)
kept = cluster_default_kept(state, left)
if swept := st.session_state.pop(keys.OVERVIEW_SWEPT, None):  # said once, after the page read the cluster again
    report, asked = swept
    if report.removed:
        st.success(
            f"Removed {plural(len(report.removed), 'throttle setting')} (read back from the brokers):  \n"
            + throttles.removed_text(report.removed)
        )
    for lo in report.still_set:
        st.warning(f"Still set after the sweep: {lo.where}: {lo.key}.")
    for lo in report.unconfirmed:
        st.warning(f"Sent, but not confirmed (could not be read back): {lo.where}: {lo.key}.")
    if not (report.removed or report.still_set or report.unconfirmed):
        st.info(
            f"Nothing removed: the {plural(asked, 'setting')} shown {'was' if asked == 1 else 'were'} gone already."
        )
rows = throttles.throttle_table(state, left, kept)
if rows:  # a replica list can be long: an HTML table wraps it, a data grid cuts it
    st.table(widgets.markdown_cells(rows), hide_index=True)
else:
    st.write("No replication throttle is set.")
if kept:
    st.caption(
        "The cluster default ("
        + ", ".join(f"{lo.key} = {live.throttle_value_text(lo.key, lo.value)}" for lo in kept)
        + ") applies to every broker without its own rate. Someone set it on purpose, so it is not swept "
        "here; `python -m console throttle --sweep --include-cluster-default` removes it."
    )


def _sweep_closed() -> None:
    st.session_state.pop(keys.OVERVIEW_SWEEP_ASKED, None)


@st.dialog("Remove throttles nothing needs", width="large", on_dismiss=_sweep_closed)
def sweep_dialog(leftovers: list[Leftover]) -> None:
    """What the sweep removes, listed, then removed on one more click; the page says what was removed."""
    st.markdown(
        f"These {plural(len(leftovers), 'throttle setting')} are set, but nothing in flight needs them "
        "(they slow down any replica that falls out of sync). Remove them:"
    )
    st.table(widgets.markdown_cells(throttles.setting_rows(leftovers)), hide_index=True)
    if st.button(f"Remove {plural(len(leftovers), 'throttle setting')}", type="primary", key=keys.OVERVIEW_SWEEP):
        try:
            report = run_service.sweep(deps.store(), deps.gateway(settings), widgets.identity(), leftovers)
        except ConsoleError as e:
            st.error(f"{e.message} {e.hint}")
            return
        st.session_state[keys.OVERVIEW_SWEPT] = (report, len(leftovers))
        _sweep_closed()
        st.rerun()  # the dialog closes; the page reads the cluster again (a request was sent) and says it


if left:
    st.warning(
        f"{plural(len(left), 'throttle setting')} that nothing in flight needs (marked left over above): they slow "
        "down any replica that falls out of sync."
    )
    me = widgets.identity()
    if not me.can("throttle"):
        st.caption(me.why_not("throttle"))
    elif st.button(f"Remove the {plural(len(left), 'left-over setting')}…", icon=":material/cleaning_services:"):
        st.session_state[keys.OVERVIEW_SWEEP_ASKED] = left  # the list shown is the list removed
if (asked := st.session_state.get(keys.OVERVIEW_SWEEP_ASKED)) is not None:
    sweep_dialog(asked)  # open until removed or dismissed (every run of the page opens it again)

st.subheader("Findings")
if state.findings:
    widgets.findings_table(state.findings)
else:
    st.write(
        "The Admin API and ZooKeeper agree; nothing to report."
        if state.status.zookeeper is SourceStatus.OK
        else "Nothing to report."
    )
