"""Review: what a plan would do against the live cluster, what is wrong with it, and the way back."""

from __future__ import annotations

import json
from datetime import datetime
from functools import partial
from typing import NamedTuple

import streamlit as st

from components import actions, deps, keys, plan_input, widgets
from components.impact import impact_panel, typed_throttle
from console.access.auth import Identity
from console.core.errors import ConsoleError, PlanFormatError
from console.core.format import human_bytes, plural
from console.core.limits import MAX_PLAN_UPLOAD_MB, MOVES_PER_BROKER, PARTITIONS_PER_WAVE, REQUEST_LIMIT
from console.core.model import ClusterState, Finding, Severity, cluster_key
from console.moves.impact import Impact
from console.moves.impact_columns import impact
from console.moves.progress import estimate_run
from console.moves.waves import WaveLimits, plan_waves
from console.plans.diff import PlanDiff, diff
from console.plans.plan import Plan, plan_hash, rollback
from console.plans.quality import Report
from console.plans.rebase import RebaseOptions, Since, rebase, report_rows
from console.plans.rules.codes import STALE, UNKNOWN_PARTITION, UNKNOWN_TOPIC
from console.plans.validate import counts, overridable_only, validate, with_overall
from console.present import charts, review
from console.present.estimate import estimate_text
from console.services import plans as plan_service
from console.services import runs as run_service

PAGE_SIZE = 50
SHOWN_FINDINGS = 2_000


class ReviewBundle(NamedTuple):
    plan: Plan
    diff: PlanDiff
    findings: list[Finding]
    rollback_json: str
    state: ClusterState
    """The snapshot the plan was checked against."""
    report: Report | None
    """The quality report of a generated plan."""
    impact: Impact
    """What it costs and whom it touches (its findings are among ``findings``)."""


st.header("Review a plan")
settings = widgets.require_cluster()
state, _ = widgets.require_snapshot(settings, keys.REVIEW_LAST_GOOD, info=True)  # the rollback names dirs from 4.2 on
store = deps.store()

cluster = cluster_key(state, settings.name)
saved = store.plans.list(cluster)
by_id = {s.id: s for s in saved}
wanted = st.query_params.get("plan")
options: list[int | None] = [s.id for s in saved] + [None]
default = options.index(int(wanted)) if wanted and wanted.isdigit() and int(wanted) in by_id else 0
choice = st.selectbox(
    "Plan",
    options,
    index=default,
    format_func=lambda i: "Upload a plan file…" if i is None else review.plan_choice(by_id[i]),
)

plan_id: int | None = None
source: tuple[object, ...] | None = None  # identifies the plan without reading it
given: plan_input.HandedIn | None = None
if choice is None:
    st.query_params.pop("plan", None)
    upload = st.file_uploader("Reassignment JSON", type=["json"], max_upload_size=MAX_PLAN_UPLOAD_MB)
    given = plan_input.handed_in(upload, plan_input.paste_box(key=keys.REVIEW_PASTE), keys.REVIEW_BOXES)
    source = given.source if given is not None else None
else:
    st.query_params["plan"] = str(choice)
    plan_id, source = choice, ("store", choice, by_id[choice].updated_at)
if source is None:
    st.info("Pick a saved plan (drafts are saved from the Drafts page), upload a JSON file or paste one.")
    st.stop()
if plan_id is not None and (parent_id := by_id[plan_id].parent_id) is not None:
    st.caption(
        f"Rebased from plan [#{parent_id}](?plan={parent_id})"
        + (f" · {by_id[parent_id].name}" if parent_id in by_id else " (since deleted)")
        + ": the same targets, brought up to date against the cluster."
    )


def check(state: ClusterState) -> ReviewBundle | None:
    """Read the plan, then diff, validate and roll back: once per (plan, snapshot)."""
    report = None
    try:
        if given is not None:  # no saved plan chosen: a file uploaded or a plan pasted
            plan = plan_input.read_plan(given.data, state)
        elif plan_id is None:  # neither (the page stopped before)
            return None
        else:
            loaded = store.plans.load(plan_id)
            if loaded is None:
                st.error(f"Plan {plan_id} is no longer in the store.")
                return None
            plan = loaded.plan
            report = Report.from_dict(json.loads(loaded.report_json)) if loaded.report_json else None
    except PlanFormatError as e:
        plan_input.show_plan_error(e, given.box if given is not None else plan_input.Box.UPLOAD)
        return None
    with st.spinner(f"Checking {plural(len(plan), 'partition')} against the cluster…"):
        d = diff(state, plan, elect=None)  # leaders after: with the closing election a run has by default
        pricing, limits, _ = deps.impact_settings(settings)
        im = impact(d, pricing, deps.topic_rates(state, settings), None, limits)
        found = with_overall(validate(state, plan, d), im.findings)
        return ReviewBundle(plan, d, found, rollback(state, plan).to_json(), state, report, im)


# A review keeps the snapshot it was checked against while the cluster's assignment, brokers and
# min ISR stay the same (a 100k-partition plan is not re-checked on every rerun); it is checked
# again when they change, or on request (fresh replica sizes).
cached = st.session_state.get(keys.REVIEW_CACHE)
again = cached is not None and cached[0] == source and st.session_state.pop(keys.REVIEW_AGAIN, False)
if cached is None or cached[0] != source or cached[1].state.check_basis != state.check_basis or again:
    bundle = check(state)
    if bundle is None:
        st.stop()
    cached = (source, bundle)
    st.session_state[keys.REVIEW_CACHE] = cached
plan, d, findings, rollback_json, state, generated, plan_impact = cached[1]
c1, c2 = st.columns([5, 1], vertical_alignment="center")
c1.caption(
    f"Checked against the cluster as it was at {datetime.fromtimestamp(state.taken_at):%H:%M:%S}; "
    "checked again by itself when the assignment, the brokers or min ISR change."
)
if c2.button("Check again", icon=":material/refresh:", help="Check against the cluster now (fresh sizes too)."):
    st.session_state[keys.REVIEW_AGAIN] = True
    st.rerun()
racks = review.rack_map(state)
summary = d.summary()
n = counts(findings)

m = st.columns(6)
m[0].metric("Partitions", f"{summary['partitions']:,}")
m[1].metric("Moving", f"{summary['moving']:,}")
m[2].metric(
    "Replicas + / −",
    f"{summary['replicas_added']:,} / {summary['replicas_removed']:,}",
    help="Replicas added (AR) / removed (RR)",
)
m[3].metric(
    "Leaders changing",
    f"{summary['leaders_changing']:,}",
    help="Including the preferred leader election the run ends with (on by default: the plan changes "
    "some first replica; it can be turned off when submitting)."
    if d.elect
    else "Where the controller puts leaders: no preferred leader election (no first replica changes).",
)
# one short value (a metric cuts a long one: "0 B + 4.…"); the copy between log dirs on its own line below
m[4].metric(
    "Bytes to copy",
    human_bytes(d.bytes_to_copy + d.dir_bytes_to_copy) + ("" if d.sizes_known else " +?"),
    help="Over the network: what adding replicas copy from their leader. Between dirs: what brokers copy "
    "from one of their log dirs to another (a replica asked into another dir of its broker), on their own "
    "disks, at the log-dir throttle.",
)
m[5].metric("Errors / warnings", f"{n['error']:,} / {n['warning']:,}")
if d.dir_bytes_to_copy:
    st.caption(
        f"Bytes to copy: {human_bytes(d.bytes_to_copy)} over the network from leaders, "
        f"{human_bytes(d.dir_bytes_to_copy)} between the log dirs of a broker (on its own disks)."
    )
if local_only := review.local_copy_topics(findings, d, state.tiered):
    st.info(review.tiered_note(local_only), icon=":material/cloud:")
# a plan that is running or has run: its findings are against the cluster the run changed
runs_of_plan = store.runs.of_plan(cluster, plan_hash(plan))
if ran := review.ran_text(runs_of_plan):
    st.info(ran, icon=":material/directions_run:")
    st.page_link(
        "views/runs.py",
        label=f"Open run #{runs_of_plan[0].id}",
        icon=":material/directions_run:",
        query_params={"run": str(runs_of_plan[0].id)},
    )
generator_said = review.generator_warning(generated) if generated is not None else None
if n["error"] and overridable_only(findings):
    st.error(
        f"**{plural(n['error'], 'error')}**: the plan sends replicas to cordoned brokers or log dirs. Kafka's "
        "controller would take it; the console does not, unless an operator overrides it when submitting (audited)."
    )
elif n["error"]:
    st.error(
        f"**{plural(n['error'], 'error')}**: this plan must not be submitted "
        + ("again " if runs_of_plan else "")
        + f"as it is. {'It is' if n['error'] == 1 else 'They are'} listed first below."
    )
elif n["warning"]:
    st.warning(f"No errors; {plural(n['warning'], 'warning')} to acknowledge before submitting.")
else:
    st.success("No errors and no warnings." if generator_said is None else "No errors and no warnings in the review.")
if generator_said is not None:  # the generator's own warning, said as such beside the review's verdict
    st.warning(
        "**The generator warned** when it made this plan (against the cluster as it was then; see How it was "
        f"generated, below): {widgets.plain(generator_said)}",
        icon=":material/auto_fix_high:",
    )

st.subheader("Findings")
shown = findings
if (
    n["info"]
    and st.toggle(f"Show the {n['info']:,} info findings too (no change, reorder only, …)", key=keys.REVIEW_SHOW_INFO)
    is False
):
    shown = [f for f in findings if f.severity is not Severity.INFO]
if shown:  # by code, then errors first: only the rows shown become table rows
    widgets.findings_table(shown, SHOWN_FINDINGS)
    if len(shown) > SHOWN_FINDINGS:
        st.caption(
            f"The first {SHOWN_FINDINGS:,} of {len(shown):,} findings (errors first); "
            "`python -m console validate --json` lists them all."
        )
else:
    st.write("No errors or warnings." if findings else "None.")

# timed at the throttle under Submit…: what it holds, before its first drawing too (its default)
rate_typed = st.session_state.get(keys.REVIEW_RATE, widgets.DEFAULT_RATE if widgets.identity().can("submit") else None)
impact_panel(plan_impact.at(typed_throttle(rate_typed)), deps.impact_settings(settings)[2])

# A saved plan drafted against an older snapshot: say what changed since, offer it up to date.
changed_codes = {STALE, UNKNOWN_TOPIC, UNKNOWN_PARTITION}
if plan_id is not None and plan.basis and any(f.code in changed_codes for f in findings):
    since = rebase(state, plan)
    if since.changed or any(f.code == STALE for f in findings):
        st.subheader("Bring up to date")
        st.markdown(
            f"Since this plan was drafted: **{since.counts_text()}**. Bringing it up to date keeps every "
            "target and takes the replicas as they are now as its new basis, in a new saved plan linked "
            "to this one (this one stays as it is)."
        )
        o1, o2 = st.columns(2)
        done, gone = since.counts[Since.COMPLETED], since.counts[Since.GONE]
        drop_completed = o1.checkbox(
            f"Drop the {plural(done, 'partition')} already at their target",
            value=False,
            disabled=not done,
            key=keys.REVIEW_DROP_COMPLETED,
        )
        drop_gone = o2.checkbox(
            f"Drop the {plural(gone, 'partition')} that {'is' if gone == 1 else 'are'} gone",
            value=bool(gone),
            disabled=not gone,
            key=keys.REVIEW_DROP_GONE,
            help="Kept, they stay errors (unknown topic or partition).",
        )
        chosen = RebaseOptions(drop_completed=drop_completed, drop_gone=drop_gone)
        up = rebase(state, plan, chosen) if drop_completed or drop_gone else since
        st.dataframe(report_rows(up, only_changed=True, limit=SHOWN_FINDINGS), hide_index=True, width="stretch")
        st.caption(
            f"The new plan: {plural(len(up.plan), 'partition')} ({len(up.dropped):,} dropped), "
            f"{up.left_to_do:,} of them to change."
        )
        rebaser = widgets.acting("rebase")
        if st.button(
            "Save as a new plan, up to date",
            icon=":material/update:",
            disabled=not up.plan.entries or not rebaser.can("rebase"),
        ):
            try:
                new_id = plan_service.save_rebased_plan(store, rebaser, state, settings.name, plan_id, chosen)
            except ConsoleError as e:
                st.error(f"{e.message} {e.hint}")
            else:
                st.session_state[keys.REVIEW_REBASED] = (plan_id, new_id)
        rebased = st.session_state.get(keys.REVIEW_REBASED)
        if rebased is not None and rebased[0] == plan_id:
            st.success(f"Saved as plan #{rebased[1]}.")
            st.page_link(
                "views/review.py",
                label=f"Review plan #{rebased[1]}",
                icon=":material/fact_check:",
                query_params={"plan": str(rebased[1])},
            )

if generated is not None:
    st.subheader("How it was generated")
    st.caption("The generator's report, against the cluster as it was when the plan was made.")
    widgets.generation_report(generated, "review.generated")

st.subheader("What it does")
view = st.segmented_control(
    "Show",
    ["Brokers", "Movement", "Replicas before/after", "Partitions", "Racks"],
    default="Brokers",
    key=keys.REVIEW_VIEW,
)
moving = d.changed
if view == "Brokers":
    metric = (
        st.segmented_control("Metric", ["replicas", "leaders", "bytes"], default="replicas", key=keys.REVIEW_METRIC)
        or "replicas"
    )
    brows = review.broker_rows(d)
    st.altair_chart(charts.broker_before_after(brows, metric), width="stretch")
    st.dataframe(
        brows,
        hide_index=True,
        width="stretch",
        placeholder="—",
        column_config=dict.fromkeys(review.NUMERIC_BROKER_COLUMNS),
    )
elif view == "Movement":
    flows = review.flow_rows(d)
    if flows:
        st.plotly_chart(charts.movement_sankey(flows), width="stretch")
        st.dataframe(review.flow_table(d), hide_index=True, width="stretch")
    else:
        st.write("No replica is copied: nothing moves between brokers.")
elif view in ("Replicas before/after", "Partitions"):
    page = widgets.page_of(moving, PAGE_SIZE, f"{len(moving):,} partitions change", keys.REVIEW_PAGE).rows
    if not page:
        st.write("No partition changes.")
    elif view == "Partitions":
        st.dataframe(
            review.change_rows(d, racks, page), hide_index=True, width="stretch", column_config={"bytes to copy": None}
        )
    else:
        names = [c.name for c in page]
        st.altair_chart(charts.plan_grid(review.plan_cells(page), names))
elif view == "Racks":
    st.dataframe(review.rack_rows(d), hide_index=True, width="stretch")


def _save_closed() -> None:
    st.session_state.pop(keys.DIALOG_OPEN, None)


@st.dialog("Save as plan", on_dismiss=_save_closed)
def save_dialog(plan: Plan, checked: ClusterState) -> None:
    """Save the uploaded or pasted plan under a name (never over another saved plan of that name),
    with the replicas it was checked against as its basis; the page then shows the saved plan."""
    saver = widgets.identity()
    name = st.text_input("Name", key=keys.REVIEW_SAVE_NAME, placeholder="e.g. drain broker 2", max_chars=200)
    st.caption(
        "Saved as a plan of this cluster, to review, approve and submit as any other. A name another saved plan "
        "has is refused: that plan is not replaced."
    )
    if st.button("Save", type="primary", icon=":material/save:", key="review.save_send"):
        try:
            new_id = plan_service.save_plan(
                store,
                saver,
                checked,
                settings.name,
                name,
                plan.with_basis(checked),
                draft_of=None,
                pricing=deps.impact_settings(settings)[0],
            )
        except ConsoleError as e:
            st.error(f"{e.message} {e.hint}")
            return
        st.session_state[keys.REVIEW_SAVED] = new_id
        st.session_state.pop(keys.REVIEW_SAVE_NAME, None)
        _save_closed()
        st.query_params["plan"] = str(new_id)
        st.rerun()  # the dialog closes; the page shows the saved plan


def offer_save(me: Identity) -> None:
    """ "Save as plan…" for an uploaded or pasted plan, to whoever may save plans."""
    if not me.can("save plans"):
        return
    if st.button(
        "Save as plan…",
        icon=":material/save:",
        help="Save it as a plan of this cluster: someone else can then approve it (the two-person rule), "
        "and it is submitted as the saved plan.",
    ):
        actions.open_dialog(save_dialog, plan, state)


st.subheader("Submit")
me = widgets.identity()
if plan_id is not None and st.session_state.get(keys.REVIEW_SAVED) == plan_id:
    st.session_state.pop(keys.REVIEW_SAVED)
    st.success(f"Saved as plan #{plan_id} ({by_id[plan_id].name}).", icon=":material/save:")
if plan_id is not None:
    digest = plan_hash(plan)
    authors = store.plans.authors(plan_id)
    approved = [
        (a.approver, a.at) for a in store.plans.approvals(plan_id) if a.plan_hash == digest and a.cluster == cluster
    ]
    if approved:
        st.caption("Approved by " + ", ".join(f"{a} ({datetime.fromtimestamp(t):%Y-%m-%d %H:%M})" for a, t in approved))
    if (
        me.can("approve")
        and me.name not in authors
        and me.name not in {a for a, _ in approved}
        and st.button("Approve this plan", icon=":material/verified:")
        and widgets.acted(partial(run_service.approve, store, me, cluster, plan_id))
    ):
        st.rerun()
    if me.can("approve") and me.name in authors:
        st.caption(f"You authored a version of this plan ({', '.join(sorted(authors))}): someone else approves it.")
blocked = actions.two_person_problem(plan_id, plan, cluster)
allow_cordoned = False
if n["error"] and overridable_only(findings) and me.can("submit"):
    # the one error an operator may override: replicas sent to cordoned brokers or log dirs (KIP-1066)
    allow_cordoned = st.checkbox(
        "Submit onto cordoned brokers anyway",
        key=keys.REVIEW_ALLOW_CORDONED,
        help="Kafka 4.3's controller accepts and completes a reassignment onto a cordoned broker (Kafka 4.4's "
        "refuses one onto a broker whose every dir is cordoned, per partition); the console refuses it unless "
        "told. The run's audit entry records this override and the replicas it lets through.",
    )
submittable = not (n["error"] and not allow_cordoned) and me.can("submit") and not blocked
if n["error"] and not allow_cordoned:
    st.write(
        "A plan with errors cannot be submitted."
        + (
            " Its only errors are cordoned destinations: tick the box above to submit it anyway."
            if overridable_only(findings) and me.can("submit")
            else ""
        )
    )
elif not me.can("submit"):
    st.caption(widgets.refusal(me, "submit"))
elif blocked:
    st.warning(blocked)
if plan_id is None:
    offer_save(me)  # the way on for a plan handed in here: saved, someone else can approve it
if submittable:
    s1, s2, s3 = st.columns(3)
    rate = widgets.rate_input(
        "Throttle (10 MB/s, or a number in bytes/s; 0: none)", keys.REVIEW_RATE, zero="not throttled", container=s1
    )
    moves = s2.number_input("Adding replicas per broker per wave", 1, 100, MOVES_PER_BROKER, key=keys.REVIEW_MOVES)
    per_wave = s3.number_input("Partitions per wave", 1, REQUEST_LIMIT, PARTITIONS_PER_WAVE, key=keys.REVIEW_PER_WAVE)
    # the estimate before Submit…: the one the dialog and the run use, for the inputs above
    if rate is not None:
        asked = (id(cached[1]), state.taken_at, rate, int(moves), int(per_wave))
        shown_estimate = st.session_state.get(keys.REVIEW_ESTIMATE)
        if shown_estimate is None or shown_estimate[0] != asked:
            limits_now = WaveLimits(int(moves), int(per_wave))
            planned = plan_waves(state, plan, limits_now)
            line = estimate_text(
                sum(map(len, planned)),
                len(planned),
                d.bytes_to_copy,
                d.dir_bytes_to_copy,
                rate or None,
                estimate_run(state, planned, rate or None, deps.calibration(state, settings)),
            )
            shown_estimate = (asked, line)
            st.session_state[keys.REVIEW_ESTIMATE] = shown_estimate
        st.info(f"**Estimate**: {shown_estimate[1]}.", icon=":material/timer:")
    unthrottled = widgets.unthrottled_confirmed(rate or None, settings.max_throttle, keys.REVIEW_UNTHROTTLED)
    if st.button(
        "Submit…", type="primary", icon=":material/play_arrow:", disabled=rate is None or unthrottled is False
    ):
        st.session_state.pop(keys.SUBMIT_STARTED, None)  # a new submission
        actions.open_dialog(
            actions.submit_dialog,
            settings,
            plan,
            by_id[plan_id].name
            if plan_id is not None
            else ("pasted plan" if given and given.box is plan_input.Box.PASTE else "uploaded plan"),
            state,
            n["warning"],
            rate or None,
            WaveLimits(int(moves), int(per_wave)),
            plan_id,
            d.elect,
            allow_cordoned,
            bool(unthrottled),
        )

st.subheader("Downloads")
c1, c2 = st.columns(2)
name = f"plan-{plan_id}" if plan_id else "plan"
c1.download_button(
    "Plan JSON", plan.to_json(), file_name=f"{name}.json", mime="application/json", icon=":material/download:"
)
c2.download_button(
    "Rollback JSON",
    rollback_json,
    file_name=f"{name}-rollback.json",
    mime="application/json",
    icon=":material/undo:",
    help="The current assignment of the plan's partitions (originals for "
    "partitions in flight): submit it to undo the plan.",
)

if plan_id is not None:
    st.subheader("Review session")
    st.markdown(f"Everyone with this link sees the same plan: [`?plan={plan_id}`](?plan={plan_id})")
    for note in store.plans.notes(plan_id):
        with st.container(border=True):  # what the console recorded, then the note as plain text (never Markdown)
            st.text(f"{note.author} · {datetime.fromtimestamp(note.at):%Y-%m-%d %H:%M}")
            st.text(note.note)
    noter = widgets.identity()
    with st.form("note", clear_on_submit=True):
        # one box per person: a note typed and not added is not left to whoever signs in next here
        # (a new widget, so the browser drops what was typed in the other)
        text = st.text_area("Add a note", key=keys.review_note(noter.name), disabled=not noter.can("add notes"))
        if not noter.can("add notes"):
            st.caption(widgets.refusal(noter, "add notes"))
        if st.form_submit_button("Add note", disabled=not noter.can("add notes")) and widgets.acted(
            partial(plan_service.add_note, store, noter, plan_id, text)
        ):
            st.rerun()
