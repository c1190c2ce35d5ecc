"""Drafts: start a plan from JSON, from the current assignment or empty; edit it; save it for review."""

from __future__ import annotations

from datetime import datetime
from typing import TypedDict

import streamlit as st

from components import autosave, decommission, deps, keys, plan_input, widgets
from console.core.errors import ConfigError, ConsoleError, PlanFormatError
from console.core.format import human_bytes, plural
from console.core.limits import MAX_PLAN_UPLOAD_MB
from console.core.model import BrokerId, cluster_key
from console.moves.impact_columns import impact
from console.moves.waves import plan_estimate, tiered_copied
from console.plans import drafting as drafts
from console.plans.diff import diff
from console.plans.generate import generate
from console.plans.generators.options import ZONE_GOALS, GenerateOptions, Goal, Metric, topics_matching
from console.plans.plan import Plan
from console.plans.validate import validate
from console.present.cluster import dir_totals, log_dir_label
from console.present.drafts import unknown_lines
from console.services import plans as plan_service

PAGE_SIZE = 100

# One row of the targets grid. The editable cells come back None when the operator clears them.
EditorRow = TypedDict(
    "EditorRow", {"topic": str, "partition": int, "current": str, "target": str | None, "log dirs": str | None}
)

st.header("Drafts")
settings = widgets.require_cluster()
state, _ = widgets.require_snapshot(settings, keys.DRAFTS_LAST_GOOD, info=True)  # the rollback names dirs from 4.2 on
me = widgets.identity()
owner = autosave.sync(me, cluster_key(state, settings.name))  # before the draft is read: it may come back
if problem := st.session_state.get(keys.DRAFT_AUTOSAVE_ERROR):
    st.warning(problem)
if owner is None:
    st.caption(
        "Not autosaved: "
        + (
            "no users are configured"
            if me.source == "nobody configured users"
            else "sign in (sidebar) to keep your draft across reloads and tabs"
        )
        + "; this draft lives in this tab only."
    )
elif restored_at := st.session_state.get(keys.DRAFT_RESTORED):
    st.caption(
        f"Autosaved as you edit. Your draft for this cluster was brought back (last saved "
        f"{datetime.fromtimestamp(restored_at):%Y-%m-%d %H:%M:%S})."
    )
else:
    st.caption("Autosaved as you edit, for you on this cluster (with its last undo steps).")

draft: Plan | None = st.session_state.get(keys.DRAFT)
history: list[Plan | None] = st.session_state.setdefault(keys.DRAFT_HISTORY, [])


def commit(new: Plan) -> None:
    history.append(st.session_state.get(keys.DRAFT))
    st.session_state[keys.DRAFT] = new
    autosave.pushed(owner)
    st.rerun()


def untie() -> None:
    """The draft is no longer the one saved as a plan: "Saved as plan N." goes and the name is to
    be given again, so that its next save makes a new plan."""
    st.session_state.pop(keys.DRAFT_SAVED, None)
    st.session_state[keys.DRAFT_NAME] = ""


def start(new: Plan) -> None:
    """A new draft (loaded, from the assignment, empty, generated): tied to no saved plan."""
    untie()
    commit(new)


with st.expander("Decommission brokers: cordon, drain, verify, unregister", expanded=False):
    decommission.panel(settings, state)

with st.expander("Start a new draft", expanded=draft is None):
    source = st.segmented_control(
        "Start from", ["Current assignment", "JSON", "Empty"], default="Current assignment", key=keys.DRAFT_SOURCE
    )
    if source == "Current assignment":
        topics = st.multiselect("Topics", state.topics, key=keys.DRAFT_TOPICS)
        if st.button("Start draft", disabled=not topics, type="primary"):
            start(drafts.from_assignment(state, topics=topics))
    elif source == "JSON":
        upload = st.file_uploader(
            "Reassignment JSON (as kafka-reassign-partitions.sh reads it)",
            type=["json"],
            max_upload_size=MAX_PLAN_UPLOAD_MB,
        )
        # a form: the pasted text goes with the click (a button disabled until the box lost focus took two)
        with st.form("drafts.paste", border=False):
            pasted = plan_input.paste_box()
            load = st.form_submit_button("Load", type="primary")
        given = plan_input.handed_in(upload, pasted, keys.DRAFT_BOXES)
        if load and given is None:
            st.warning("Choose a file or paste a plan first.")
        elif load and given is not None:
            try:
                loaded = plan_input.read_plan(given.data, state)
            except PlanFormatError as e:
                plan_input.show_plan_error(e, given.box)
            else:
                start(loaded.with_basis(state))
    elif st.button("Start an empty draft"):
        start(Plan(()))

GOALS = {
    "Decommission": Goal.DECOMMISSION,
    "Add brokers": Goal.ADD_BROKERS,
    "Rebalance": Goal.REBALANCE,
    "Replication factor": Goal.REPLICATION_FACTOR,
    "Fix racks": Goal.FIX_RACKS,
    "Drain a log dir": Goal.DRAIN_LOG_DIR,
    "Official --generate": Goal.OFFICIAL,
}
MB = 1000 * 1000  # decimal, as every size and rate (console.core.format.UNITS)
NO_ZONE_PREFERENCE, WEIGHTED = "No preference", "Least, weighted"
ZONE_CHOICES: dict[str, float | None] = {
    NO_ZONE_PREFERENCE: None,
    "Least, as a tie-breaker (same balance)": 0.0,
    WEIGHTED: None,  # the weight typed beside it
}
totals = state.broker_totals


def broker_label(b: int) -> str:
    """A broker as the pickers show it: id, rack, load, and whether it can receive replicas."""
    info = state.broker(BrokerId(b))
    replicas, _leaders, size = totals.get(BrokerId(b), (0, 0, 0))
    return f"{b} · {info.rack if info and info.rack else 'no rack'} · {replicas:,} replicas · {human_bytes(size)}" + (
        "" if info is not None and info.eligible else " · down"
    )


with st.expander("Generate a plan", expanded=draft is None):
    st.caption(
        "Make a plan for a goal, moving as little data as it can: only live brokers receive replicas, "
        "partitions being reassigned are left alone, racks stay spread. The report says how close to the "
        "least possible it is."
    )
    label = st.segmented_control("Goal", list(GOALS), default="Decommission", key=keys.GEN_GOAL) or "Decommission"
    goal = GOALS[label]
    ids = sorted(int(b.id) for b in state.brokers)
    live = [b for b in ids if (info := state.broker(BrokerId(b))) is not None and info.eligible]
    dir_broker: int | None = None
    if goal is Goal.DRAIN_LOG_DIR:  # outside the form: the dirs offered follow the broker picked
        with_dirs = [b for b in ids if (info := state.broker(BrokerId(b))) is not None and info.log_dirs]
        if not with_dirs:
            st.info("No broker reports its log dirs in this snapshot (DescribeLogDirs): there is no dir to drain.")
        dir_broker = st.selectbox(
            "Broker whose log dir to empty", with_dirs, format_func=broker_label, key="drafts.generate.dir_broker"
        )
    with st.form(f"generate.{goal.value}"):
        chosen: list[int] = []
        metric, rf, max_moves, max_mb = Metric.COUNT, None, 0, 0
        goal_topics: list[str] = []
        log_dir: str | None = None
        if goal is Goal.DECOMMISSION:
            chosen = st.multiselect("Brokers to drain", ids, format_func=broker_label, key="drafts.generate.drain")
        elif goal is Goal.ADD_BROKERS:
            chosen = st.multiselect("New brokers to fill", live, format_func=broker_label, key="drafts.generate.fill")
        elif goal is Goal.REBALANCE:
            picked = st.radio(
                "Even out",
                ["count", "bytes", "leaders"],
                horizontal=True,
                captions=["replicas per broker", "bytes per broker", "preferred leaders (no data moves)"],
            )
            metric = Metric(picked or "count")
        elif goal is Goal.REPLICATION_FACTOR:
            goal_topics = st.multiselect("Topics to change", state.topics, key="drafts.generate.rf_topics")
            rf = int(
                st.number_input(
                    "New replication factor", 1, max(1, len(live)), min(3, max(1, len(live))), key="drafts.generate.rf"
                )
            )
        elif goal is Goal.DRAIN_LOG_DIR:
            owner_of_dir = state.broker(BrokerId(dir_broker)) if dir_broker is not None else None
            if owner_of_dir is not None:
                held = dir_totals(state)
                labels = {d.path: log_dir_label(owner_of_dir, d.path, held) for d in owner_of_dir.log_dirs}
                log_dir = st.selectbox(
                    "Log dir to empty", list(labels), format_func=labels.__getitem__, key="drafts.generate.log_dir"
                )
                chosen = [int(owner_of_dir.id)]
            st.caption(
                "Its replicas go to the broker's other dirs while they have room (biggest first, into the dir "
                "with the most room), the rest to other brokers; never into a cordoned or offline dir."
            )
        elif goal is Goal.OFFICIAL:
            goal_topics = st.multiselect("Topics to move", state.topics)
            chosen = st.multiselect("Broker list", ids, default=live, format_func=broker_label)
        topics_too = goal not in (Goal.REPLICATION_FACTOR, Goal.OFFICIAL)  # those name their topics above
        if topics_too:
            o1, o2 = st.columns(2)
            only = o1.multiselect("Only topics (none: all)", state.topics)
            only_matching = o2.text_input(
                "…or only topics matching",
                placeholder="regular expression, e.g. orders-.*",
                key="drafts.generate.pattern",
            )
        else:
            only, only_matching = [], ""
        cols = st.columns(2)
        exclude_topics = cols[-2].text_input("Leave alone topics matching", placeholder="regular expression, e.g. __.*")
        exclude_brokers = cols[-1].multiselect("Never move replicas to", ids, format_func=broker_label)
        if goal in (Goal.REBALANCE, Goal.ADD_BROKERS):
            b1, b2 = st.columns(2)
            max_moves = int(b1.number_input("At most this many replica moves (0: no limit)", 0, 10_000_000, 0))
            max_mb = int(b2.number_input("At most this much data, MB (0: no limit; 1 MB = 1000 KB)", 0, 10**9, 0))
        zone_weight: float | None = None
        if goal in ZONE_GOALS:
            z1, z2 = st.columns(2)
            zone_choice = z1.selectbox(
                "Bytes across zones",
                list(ZONE_CHOICES),
                key="drafts.generate.zones",
                help="A copy comes from the partition's leader: one into another zone is paid per byte. Racks are "
                "zones unless [pricing.zones] in the settings maps them. The tie-breaker keeps the balance the goal "
                "reaches; the weight trades balance for fewer bytes across zones.",
            )
            weight = float(
                z2.number_input(
                    "Weight: a byte across zones counts as this many bytes of load",
                    0.0,
                    1000.0,
                    1.0,
                    key="drafts.generate.zone_weight",
                )
            )
            zone_weight = weight if zone_choice == WEIGHTED else ZONE_CHOICES[zone_choice or NO_ZONE_PREFERENCE]
        t1, t2 = st.columns(2)
        throttle = widgets.rate_input(
            "Estimate at a throttle of (10 MB/s, or a number in bytes/s)", keys.GEN_RATE, container=t1
        )
        seed = int(t2.number_input("Seed (tie-breaks; the official tool's random start)", 0, 2**31 - 1, 0))
        asked = st.form_submit_button("Generate", type="primary", icon=":material/auto_fix_high:")
    if asked:
        pricing, limits, _problems = deps.impact_settings(settings)
        with st.status(f"Generating: {label.lower()}…", expanded=True) as status:
            st.write(f"Looking at {plural(len(state.partitions), 'partition')} on {plural(len(ids), 'broker')}…")
            try:
                picked_topics = tuple(
                    dict.fromkeys(
                        [
                            *(goal_topics or only),
                            *(topics_matching(state.topics, only_matching.strip()) if only_matching.strip() else ()),
                        ]
                    )
                )
                if only_matching.strip() and not picked_topics:
                    raise ConfigError(f"No topic matches {only_matching.strip()!r}.", "Check the pattern.")
                options = GenerateOptions(
                    goal,
                    tuple(chosen),
                    metric,
                    rf,
                    picked_topics,
                    exclude_topics.strip() or None,
                    tuple(exclude_brokers),
                    max_moves or None,
                    max_mb * MB or None,
                    seed,
                    log_dir=log_dir,
                    zone_weight=zone_weight,
                    zones=pricing.zones if pricing is not None else (),
                )
                made = generate(state, options)
                st.write(f"Planned {plural(len(made.plan), 'partition')}; estimating the duration…")
                if throttle is None:
                    raise ConfigError("The throttle to estimate at is not a rate.", "Write e.g. 10 MB/s or 500 KB/s.")
                report = made.report.with_estimate(
                    plan_estimate(state, made.plan, throttle), throttle, tiered_copied(state, made.plan)
                ).with_impact(
                    impact(
                        diff(state, made.plan), pricing, deps.topic_rates(state, settings), throttle, limits
                    ).summary()
                )
            except ConsoleError as e:
                status.update(label="No plan", state="error", expanded=True)
                st.session_state[keys.GEN_RESULT] = None
                autosave.keep_generated(owner, None, None)
                failed: ConsoleError | None = e
            else:
                failed = None
                status.update(
                    label=f"Generated in {report.seconds:.2f} s: {report.goal}", state="complete", expanded=False
                )
                st.session_state[keys.GEN_RESULT] = (made.plan, report)
                st.session_state[keys.GEN_SAVED] = None
                # the name offered follows this plan's goal (the box kept the first goal's name)
                st.session_state[keys.GEN_NAME] = f"{report.goal} · {datetime.now():%Y-%m-%d %H:%M}"
                autosave.keep_generated(owner, made.plan, report)
        if failed is not None:  # outside the status box, which folds: the reason and what to do stay in view
            st.error(f"**No plan:** {failed.message}\n\n{failed.hint}")
    result = st.session_state.get(keys.GEN_RESULT)
    if result is None:  # a reload: the last generated plan and its report, kept for the signed-in
        result = autosave.restore_generated(owner)
    if result is not None:
        generated, report = result
        widgets.generation_report(report, "drafts.generate")
        if not len(generated):
            st.info("Nothing to do: the goal is met already.")
        else:
            g1, g2 = st.columns([3, 1], vertical_alignment="bottom")
            if keys.GEN_NAME not in st.session_state:  # a report brought back after a reload
                st.session_state[keys.GEN_NAME] = f"{report.goal} · {datetime.now():%Y-%m-%d %H:%M}"
            name = g1.text_input("Save as", key=keys.GEN_NAME)
            may_save = me.can("save plans")
            if g2.button(
                "Open in Review",
                type="primary",
                icon=":material/fact_check:",
                disabled=not may_save,
                help=None if may_save else me.why_not("save plans"),
            ):
                try:
                    plan_id = plan_service.save_plan(  # a new plan: another of that name is not replaced
                        deps.store(),
                        me,
                        state,
                        settings.name,
                        name,
                        generated,
                        report,
                        draft_of=None,
                        pricing=deps.impact_settings(settings)[0],
                    )
                except ConsoleError as e:
                    st.error(f"{e.message} {e.hint}")
                else:
                    st.switch_page("views/review.py", query_params={"plan": str(plan_id)})
            e1, e2 = st.columns(2)
            if e1.button("Edit it as a draft", icon=":material/edit:"):
                start(generated.with_basis(state))
            e2.download_button(
                "Plan JSON",
                generated.to_json(),
                file_name="generated-plan.json",
                mime="application/json",
                icon=":material/download:",
            )

if draft is None:
    if st.session_state.get(keys.GEN_RESULT) is None:
        st.info(
            "Start a draft above (from topics of the current assignment, from a JSON file, or empty), or generate one."
        )
    st.stop()

top = st.columns([1, 1, 1, 1])
top[0].metric("Partitions in the draft", f"{len(draft):,}")
top[1].metric("Topics", len(draft.topics))
if top[2].button("Undo", disabled=not history, icon=":material/undo:"):
    st.session_state[keys.DRAFT] = history.pop()
    autosave.undone(owner)
    st.rerun()
if top[3].button("Discard draft", icon=":material/delete:"):
    history.clear()
    st.session_state[keys.DRAFT] = None
    untie()
    autosave.discarded(owner)
    st.rerun()

# Names the cluster does not know, said at once (the Review page lists every finding). Checked again
# only when the draft or the cluster's assignment and brokers change.
checked = st.session_state.get(keys.DRAFT_CHECK)
if checked is None or checked[0] is not draft or checked[1] != state.check_basis:
    checked = (draft, state.check_basis, unknown_lines(validate(state, draft), state, draft))
    st.session_state[keys.DRAFT_CHECK] = checked
if checked[2]:
    st.warning(
        "**Entries name what the cluster does not know** (Review will refuse them):  \n" + "  \n".join(checked[2]),
        icon=":material/help:",
    )

with st.expander("Bulk edits", expanded=True):
    scope_topics = st.multiselect("Apply to topics (none: the whole draft)", draft.topics, key=keys.DRAFT_FILTER)
    scope = None if not scope_topics else [e.key for e in draft.entries if e.topic in scope_topics]
    brokers = [b.id for b in state.brokers]
    c1, c2, c3 = st.columns(3)
    with c1.form("replace"):
        old = st.selectbox("Replace broker", brokers, key="drafts.replace_old")
        new = st.selectbox("by broker", brokers, index=min(1, len(brokers) - 1), key="drafts.replace_new")
        if st.form_submit_button("Replace") and old is not None and new is not None:
            commit(drafts.replace_broker(draft, BrokerId(old), BrokerId(new), scope))
    with c2.form("first"):
        first = st.selectbox("Make broker the preferred leader", brokers, key="drafts.first")
        if st.form_submit_button("Move to first") and first is not None:
            commit(drafts.move_to_first(draft, BrokerId(first), scope))
    with c3.form("rf"):
        topic = st.selectbox("Set the replication factor of", draft.topics, key="drafts.rf_topic")
        rf = st.number_input("to", 1, max(1, len(brokers)), 3 if len(brokers) >= 3 else 1, key="drafts.rf")
        if st.form_submit_button("Set") and topic is not None:
            try:
                commit(drafts.set_replication_factor(draft, state, topic, int(rf)))
            except PlanFormatError as e:
                st.error(e.message)

st.subheader("Edit targets")
shown = [e for e in draft.entries if not scope_topics or e.topic in scope_topics]
page = widgets.page_of(shown, PAGE_SIZE, f"{len(shown):,} partitions", keys.DRAFT_PAGE)
current = state.partition_index
rows: list[EditorRow] = [
    {
        "topic": e.topic,
        "partition": e.partition,
        "current": ",".join(str(b) for b in current[e.key].original) if e.key in current else "(unknown)",
        "target": ",".join(str(b) for b in e.replicas),
        "log dirs": ",".join(e.log_dirs) if e.log_dirs else "any",
    }
    for e in page.rows
]
edited = st.data_editor(
    rows,
    hide_index=True,
    width="stretch",
    disabled=["topic", "partition", "current"],
    key=f"drafts.editor.{len(history)}.{page.number}",
)
if not isinstance(edited, list):  # a DataFrame, depending on the Streamlit version
    edited = edited.to_dict("records")
changes = [(before, after) for before, after in zip(rows, edited, strict=False) if before != after]
if changes:
    new_plan, problems = draft, []
    for before, after in changes:
        try:
            replicas = drafts.parse_ids(after["target"] or "")
            log_dirs = after["log dirs"] or ""
            dirs = None if log_dirs.strip() in ("", "any") else tuple(d.strip() for d in log_dirs.split(","))
            new_plan = drafts.set_entry(new_plan, before["topic"], before["partition"], replicas, dirs)
        except PlanFormatError as e:
            problems.append(f"{before['topic']}-{before['partition']}: {'; '.join(e.problems)}")
    if problems:
        st.error("Not applied: " + " · ".join(problems))
    else:
        commit(new_plan)

st.subheader("Save for review")
may_save = me.can("save plans")
with st.form("save"):
    name = st.text_input("Name", key=keys.DRAFT_NAME, placeholder="e.g. drain broker 2")
    if st.form_submit_button(
        "Save draft", type="primary", disabled=not may_save, help=None if may_save else me.why_not("save plans")
    ):
        try:  # another plan of that name is never replaced: only the plan this draft was saved as
            st.session_state[keys.DRAFT_SAVED] = plan_service.save_plan(
                deps.store(),
                me,
                state,
                settings.name,
                name,
                draft,
                draft_of=st.session_state.get(keys.DRAFT_SAVED),
                pricing=deps.impact_settings(settings)[0],
            )
        except ConsoleError as e:
            st.error(f"{e.message} {e.hint}")
if not may_save:
    st.caption(
        me.why_not("save plans") + " Sign in as an operator or approver in the sidebar, or hand the draft on as JSON."
    )
    st.download_button(
        "Draft JSON", draft.to_json, file_name="draft.json", mime="application/json", icon=":material/download:"
    )
saved_id = st.session_state.get(keys.DRAFT_SAVED)
if saved_id:
    st.success(f"Saved as plan {saved_id}.")
    st.page_link(
        "views/review.py", label="Review it", icon=":material/fact_check:", query_params={"plan": str(saved_id)}
    )
