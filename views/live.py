"""Live: every partition in flight, its R / I / AR / RR and progress, refreshing on its own."""

from __future__ import annotations

import time
from datetime import datetime, timedelta
from typing import Any

import streamlit as st

from components import actions, deps, holds, keys, movers, widgets
from console.core.format import about_duration, human_bytes, human_duration, human_rate, ids_text, plural
from console.core.health import kafka_health
from console.core.model import ClusterState, PartitionHealth, cluster_key
from console.plans.logdirs import dir_moves_in_flight
from console.present import cluster, guardrails, history, live, review

PAGE_SIZE = 50

st.header("Live reassignments")
settings = widgets.require_cluster()
actions.pending_cancel(settings)  # a "Cancel…" click: its dialog first, before the page is drawn again
actions.pending_dir_cancel(settings)  # likewise a "Cancel log dir moves…" click

c1, c2, c3 = st.columns([2, 1, 3])
interval = c1.select_slider("Refresh every (s)", options=[2, 5, 10, 30, 60], value=5, key=keys.LIVE_INTERVAL)
paused = c2.toggle("Pause", key=keys.LIVE_PAUSED)
in_flight_only = c3.toggle("Only partitions in flight", value=True, key=keys.LIVE_IN_FLIGHT_ONLY)

# the cancel section is drawn first, before the tables are computed and drawn. When the page opens,
# what can be cancelled comes from the lean read (metadata and what is in flight: a fraction of the
# full read's time), shared by every viewer opening the page within a second and a half (or the full
# snapshot, when one that recent is there); afterwards from the snapshot the panel below shows
# (one read shared by every viewer in an interval). The dialog reads the cluster again (the lean
# read) when it opens.
opening = keys.LIVE_LAST_GOOD not in st.session_state  # the first run of the Live page in this session
shared_age = widgets.SHARED_SNAPSHOT_AGE_S if opening else widgets.shared_age(interval)
now = deps.reader(settings).snapshot(max_age_s=shared_age, lean=opening)


def _keys(names: list[str]) -> list[tuple[str, int]]:
    """Partition names ("topic-3") as keys."""
    return [(n.rsplit("-", 1)[0], int(n.rsplit("-", 1)[1])) for n in names]


def _open_cancel(in_flight: dict[str, tuple[str, int]]) -> None:
    """The "Cancel…" button's callback: the choice as the widgets hold it at the click, not as the button was last
    drawn (a box ticked just before the click reaches the server with it, before any rerun draws the
    button again)."""
    scope = st.session_state.get(keys.LIVE_CANCEL_SCOPE)
    chosen: list[tuple[str, int]] | None = None
    if scope == "Chosen partitions":
        chosen = _keys([n for n in st.session_state.get(keys.LIVE_CANCEL, []) if isinstance(n, str)])
    elif scope == "A topic":
        topic = st.session_state.get(keys.LIVE_CANCEL_TOPIC)
        chosen = [k for k in in_flight.values() if k[0] == topic]
    others = bool(st.session_state.get(keys.LIVE_CANCEL_OTHERS)) or chosen is None
    actions.freeze_cancel(settings, chosen, others)


@st.fragment(run_every=None if paused else timedelta(seconds=interval))
def held_runs(cluster: str) -> None:
    """The active runs a guardrail holds, one line each (the first few; the rest counted), with what
    can be done about each: above everything else, refreshed with the page."""
    store = deps.store()
    runs = store.runs.list(cluster, active_only=True)
    notices = guardrails.hold_notices(runs, store.holds.shown([r.id for r in runs]), time.time())
    for n in notices[: guardrails.SHOWN_AT_MOST]:
        holds.notice(settings, n, "live", link=True)
    if more := guardrails.more_text(notices):
        st.caption(more)


held_runs(cluster_key(now, settings.name))

in_flight = {p.name: p.key for p in now.in_flight}
# the on-call line and the Cancel button first, in few lines: what is moving (counts, bytes left,
# ETA, the slowest broker) is on the first screen too, before any list
st.markdown(live.in_flight_line(now))
row = st.columns([3, 4, 1.3], vertical_alignment="bottom")
scope = row[0].radio(
    "Cancel",
    ["Everything in flight", "A topic", "Chosen partitions"],
    horizontal=True,
    key=keys.LIVE_CANCEL_SCOPE,
    help="For on-call: cancel never waits for reviews or approvals. In-flight partitions go back to their "
    "original replicas; completed ones stay where they are. The dialog shows exactly what is sent.",
)
chosen: list[tuple[str, int]] | None = None
if scope == "Chosen partitions":
    # partitions chosen earlier stay chosen (and listed) when they leave the in-flight list
    picked = [n for n in st.session_state.get(keys.LIVE_CANCEL, []) if isinstance(n, str)]
    ours = deps.store().runs.active_partitions(cluster_key(now, settings.name))
    theirs = {n for n, k in in_flight.items() if k not in ours}  # marked: another mover's, said again in the dialog
    names = st.multiselect(
        "Partitions in flight",
        sorted(set(in_flight) | set(picked)),
        key=keys.LIVE_CANCEL,
        format_func=lambda n: (
            f"{n} · another mover" if n in theirs else n if n in in_flight else f"{n} · no longer in flight"
        ),
    )
    chosen = _keys(names)
elif scope == "A topic":
    topic = st.selectbox("Topic", sorted({k[0] for k in in_flight.values()}), key=keys.LIVE_CANCEL_TOPIC)
    chosen = [k for k in in_flight.values() if k[0] == topic]
row[1].checkbox(
    "Include reassignments this console did not start (always, for everything in flight)",
    disabled=scope == "Everything in flight",
    key=keys.LIVE_CANCEL_OTHERS,
)
me = widgets.acting("cancel")
# never off for "nothing in flight": this part of the page is drawn at the last full rerun, and a
# reassignment may have started since; the dialog reads the cluster when it opens and says so
row[2].button(
    "Cancel…",
    icon=":material/cancel:",
    key=keys.LIVE_CANCEL_OPEN,
    disabled=chosen == [] or not me.can("cancel"),
    on_click=_open_cancel,
    args=(in_flight,),
)
actions.last_result()
# reassignments this console did not start, with what they have left to copy (the full snapshot's
# log dirs): below the button, from the snapshot the panel below shows
other_movers = movers.other_moves_notice(
    settings, deps.reader(settings).snapshot(max_age_s=shared_age), detail_apart=True
)


def _run_notices(state: ClusterState) -> None:
    """The active runs that are stuck, or whose replicas were left out of their log dir."""
    store = deps.store()
    for run in store.runs.list(cluster_key(state, settings.name), active_only=True):
        why = store.runs.stuck(run.id)
        offline = history.not_in_dir_rows(store.runs.outcomes(run.id))
        if why:
            st.error(f"Run {run.id} ({run.name}) is **stuck**: {why}.", icon=":material/warning:")
        for row in offline:
            st.warning(
                f"Run {run.id} ({run.name}), {row['partition']}: {row['what happened']}", icon=":material/warning:"
            )
        if why or offline:
            st.page_link("views/runs.py", label=f"Open run {run.id}", query_params={"run": str(run.id)})


def _counts(n: live.LiveCounts) -> None:
    """The counts of partitions in flight, one metric each."""
    m = st.columns(5)
    m[0].metric("Reassigning partitions", n.reassigning)
    m[1].metric("Truly under-replicated", n.under_replicated, help="KIP-352: replicas still being added do not count.")
    m[2].metric(
        "Under min ISR",
        n.under_min_isr,
        help="ISR below min.insync.replicas but a replica can still lead (in sync, or an eligible leader replica "
        "on a live broker, KIP-966): writes with acks=all are refused, nothing is lost.",
    )
    m[3].metric("Adding replicas in sync", f"{n.adding_copied}/{n.adding_replicas}")
    m[4].metric(
        "Stalled, broker down",
        n.stalled,
        help="Partitions adding a replica on a broker that is down: nothing is copied to it until the broker is "
        "back or the move is cancelled.",
    )


def _dir_moves(state: ClusterState, view: live.LiveSummary) -> list[dict[str, object]]:
    """The log dir moves in flight, with their cancel button; the rows shown."""
    dir_moves = live.dir_move_rows(state, view.dir_rates, view.eta.dir_finish)
    if dir_moves:
        st.markdown(f"**Log dir moves in flight** ({len(dir_moves)}): replicas copied to another dir of their broker")
        st.dataframe(
            dir_moves,
            hide_index=True,
            width="stretch",
            column_order=[c for c in live.DIR_COLUMNS if c in dir_moves[0]],
            column_config={
                "progress": st.column_config.ProgressColumn("progress", min_value=0, max_value=100, format="%.1f%%"),
                "ETA": st.column_config.TextColumn(
                    "ETA", help="What the future replica still lacks of its source's size, at the rate observed"
                ),
            },
        )
        me = widgets.identity()
        st.button(
            "Cancel log dir moves…",
            icon=":material/cancel:",
            key=keys.LIVE_DIR_CANCEL_OPEN,
            disabled=not me.can("cancel"),
            help="Each replica stays in its current dir; the dialog lists exactly which, and asks first."
            if me.can("cancel")
            else widgets.refusal(me, "cancel"),
            on_click=actions.freeze_dir_cancel,
            args=(settings,),
        )
    return dir_moves


def _elr(state: ClusterState) -> None:
    """The partitions with eligible leader replicas (KIP-966)."""
    if with_elr := kafka_health(state).with_elr:
        st.caption(
            f"Eligible leader replicas (KIP-966) on {plural(len(with_elr), 'partition')}: "
            + "; ".join(
                f"{p.name}: ELR {ids_text(p.elr, 'none')}"
                + (f", last known {ids_text(p.last_known_elr)}" if p.last_known_elr else "")
                for p in with_elr[:8]
            )
            + (" …" if len(with_elr) > 8 else "")
            + ". They can still lead when their broker is not fenced."
        )


def _copy_figures(state: ClusterState, view: live.LiveSummary) -> None:
    """The copy rate, what is left to copy and the ETA, with what it rests on."""
    n, total, learned = view.counts, view.total, view.learned
    t = st.columns(4)
    t[0].metric(
        "Copy rate (observed)",
        total.rate_text,
        help="Growth of the adding replicas' logs (and of the replicas being copied between log dirs) over the "
        "last refreshes (up to a minute), summed.",
    )
    t[1].metric(
        "Left to copy (network + dirs)" if n.dir_moves else "Left to copy",  # the value stays short enough to read
        (human_bytes(n.bytes_to_copy) if n.bytes_to_copy is not None else "unknown")
        + (
            f" + {human_bytes(n.dir_bytes_to_copy) if n.dir_bytes_to_copy is not None else 'unknown'}"
            if n.dir_moves
            else ""
        ),
        help="Over the network: what adding replicas still lack of their leader's log. Between dirs: what "
        "replicas being copied to another log dir of their broker still lack of their source's size.",
    )
    eta = view.eta
    t[2].metric(
        "ETA (last to finish)",
        view.eta_text,
        view.ends_text(state.taken_at),
        delta_color="off",
        delta_arrow="off",
        help="Until the last copy in flight is done: per broker, what it still takes in, sends out or copies "
        "between its dirs, at the rate observed (never above its throttle), else at the rate its history "
        "shows, else at its throttle; the longest of them.",
    )
    t[3].metric(
        "Slowest broker",
        view.slowest_text,
        help="The broker the last copy waits on: what it still takes in, sends out or copies between its dirs, "
        "at the rate it goes (each broker's share in ETA details).",
    )
    if eta.bottleneck is not None or eta.stalled:
        st.caption(f"ETA rests on {eta.basis}.")
    with st.expander("ETA details"):
        st.caption(
            f"Total bytes left over the total rate observed: {total.eta_text} (too soon when one broker has more "
            "to copy than the others)."
            + (
                f" At the rates past moves showed: {about_duration(learned.seconds)}, {learned.basis}."
                if learned
                else ""
            )
        )
        if eta.groups:
            st.dataframe(
                [
                    {
                        "broker": g.broker,
                        "what": g.side.value,
                        "left": human_bytes(g.left),
                        "rate": human_rate(g.rate),
                        "from": g.basis.value,
                        "done in": human_duration(g.seconds),
                    }
                    for g in sorted(eta.groups, key=lambda g: -g.seconds)
                ],
                hide_index=True,
            )
    copying = {p.topic for p in state.in_flight} | {m.topic for m in dir_moves_in_flight(state)}
    if local_only := sorted(t for t in copying if t in state.tiered):
        st.caption(review.tiered_note(local_only))


def _partitions(state: ClusterState, view: live.LiveSummary, dir_moves: bool) -> None:
    """The partitions, filtered and a page at a time, and the replicas by broker."""
    f1, f2, f3 = st.columns(3)
    topics = f1.multiselect("Topics", state.topics, key=keys.LIVE_TOPICS)
    brokers = f2.multiselect("Brokers", [b.id for b in state.brokers], key=keys.LIVE_BROKERS)
    healths = f3.multiselect("State", [h.value for h in PartitionHealth], key=keys.LIVE_STATES)
    flt = live.LiveFilter(
        tuple(topics), tuple(int(b) for b in brokers), tuple(PartitionHealth(h) for h in healths), in_flight_only
    )
    # the page asked for (the number input below holds it), computed once and shared like the summary
    shown = deps.live_page(
        settings, state, flt, int(st.session_state.get(keys.LIVE_PAGE, 1)), PAGE_SIZE, view.rates, view.eta.finish
    )
    if not shown.matching:
        st.success(
            ("No partition reassignments found." + (" The log dir moves are above." if dir_moves else ""))
            if in_flight_only
            else "No partition matches the filters."
        )
        return
    if shown.pages > 1:
        st.number_input(f"Page (of {shown.pages}; {shown.matching} partitions)", 1, shown.pages, 1, key=keys.LIVE_PAGE)
    columns = live_columns(shown.rows[0] if shown.rows else {})
    st.dataframe(
        list(shown.rows),
        hide_index=True,
        width="stretch",
        placeholder="—",
        column_order=columns,
        column_config=table_config(),
    )
    with st.expander("All columns (replicas, ELR, each throttle, source)"):
        st.dataframe(list(shown.rows), hide_index=True, width="stretch", placeholder="—", column_config=table_config())
    st.subheader("Replicas by broker")
    st.vega_lite_chart(shown.chart, width="stretch")


@st.fragment(run_every=None if paused else timedelta(seconds=interval))
def live_panel() -> None:
    if st.session_state.get(keys.DIR_CANCEL_PENDING):
        st.rerun()  # a "Cancel log dir moves…" click reran this panel only: the whole page opens its dialog first
    # the page's first picture in a session is at most a second and a half old (an on-call engineer
    # opening it must see the moves that started seconds ago); its refreshes share one read an interval
    opening = keys.LIVE_LAST_GOOD not in st.session_state
    age = widgets.SHARED_SNAPSHOT_AGE_S if opening else widgets.shared_age(interval)
    state, fresh = widgets.load_snapshot(settings, keys.LIVE_LAST_GOOD, age)
    if state is None:
        return
    widgets.source_banner(state)
    _run_notices(state)
    now_s = time.time()
    age = now_s - state.taken_at
    st.caption(
        f"Cluster **{settings.name}** · last refreshed {datetime.fromtimestamp(state.taken_at):%H:%M:%S}"
        + (f" ({age:.0f} s ago)" if not fresh else "")
        + (
            " · paused"
            if paused
            else f" · every {interval} s" + (" and on every ZooKeeper watch" if settings.zookeeper else "")
        )
        + f" · {cluster.read_ages_text(state, now_s)}"
    )
    tracker = deps.copy_tracker(settings)
    tracker.observe(state)
    view = deps.live_summary(settings, state, tracker)  # once per snapshot, for every session showing it
    _counts(view.counts)
    _copy_figures(state, view)  # what is moving, on the first screen: before any list
    dir_moves = _dir_moves(state, view)
    _elr(state)
    _partitions(state, view, bool(dir_moves))


def live_columns(row: dict[str, object]) -> list[str]:
    """The columns that fit 1440 px (:data:`live.LIVE_COLUMNS` the rows have)."""
    return [c for c in live.LIVE_COLUMNS if c in row]


def table_config() -> dict[str, Any]:
    return {
        "progress": st.column_config.ProgressColumn(
            "progress",
            min_value=0,
            max_value=100,
            format="%.1f%%",
            help="Least-advanced adding replica: bytes copied / leader's bytes (the figure “adding detail” gives it)",
        ),
        "ELR": st.column_config.TextColumn(
            "ELR",
            help="Eligible leader replicas (KIP-966, Kafka 4): out of the ISR while it was below min ISR, "
            "still electable when their broker is not fenced",
        ),
        "last known ELR": st.column_config.TextColumn(
            "last known ELR", help="Eligible leader replicas that shut down uncleanly (KIP-966)"
        ),
        "copy rate": st.column_config.TextColumn("copy rate", help="Observed over the last refreshes"),
        "ETA": st.column_config.TextColumn(
            "ETA", help="When the slowest adding replica is copied, at the rate observed"
        ),
        "leader throttle": st.column_config.TextColumn(
            "leader throttle",
            help="leader.replication.throttled.rate on the leader's broker, when the topic's "
            "leader.replication.throttled.replicas names this replica or *",
        ),
        "follower throttle": st.column_config.TextColumn(
            "follower throttle",
            help="follower.replication.throttled.rate on each adding replica's broker, when "
            "the topic's follower.replication.throttled.replicas names it or *",
        ),
        "throttle": st.column_config.TextColumn(
            "throttle",
            help="The replication throttle in force on the leader and the adding replicas (each in the details)",
        ),
        "AR": st.column_config.TextColumn("AR", help="Adding replicas"),
        "topic": None,
    }


st.subheader("Partitions and log dirs")
live_panel()
movers.other_moves_detail(other_movers)

if not paused:
    widgets.zookeeper_watch(settings, keys.LIVE_ZK_GENERATION)
