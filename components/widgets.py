"""Shared widgets: the cluster picker, the snapshot loader with its last-good fallback."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import streamlit as st

from components import deps, keys, session
from console.access.auth import NEEDS, NEEDS_ONE_OF, Identity, load_users
from console.access.settings import ConnectionSettings
from console.core.errors import ConfigError, ConsoleError
from console.core.format import human_bytes, human_rate, parse_rate
from console.core.model import ClusterState, Finding, SourceStatus, cluster_key
from console.services import sessions as session_service
from console.services.unthrottled import unthrottled_problem

if TYPE_CHECKING:
    from console.plans.quality import Report


T = TypeVar("T")

# Sessions watching the same cluster share a snapshot this young (one read, one copy in memory).
SHARED_SNAPSHOT_AGE_S = 1.5


def shared_age(interval_s: float) -> float:
    """How old a shared snapshot may be for a page refreshing every ``interval_s``: up to a second
    less than the interval, so that however many sessions refresh, the cluster is read about once
    an interval, and each session's next refresh (even a little early) still finds a newer one."""
    return max(SHARED_SNAPSHOT_AGE_S, interval_s - 1.0)


def current_cluster() -> ConnectionSettings | None:
    known = deps.clusters()
    name = st.session_state.get(keys.CLUSTER)
    if name in known:
        return known[name]
    return next(iter(known.values()), None)


def require_cluster() -> ConnectionSettings:
    """The chosen cluster; when none is configured, say how to add one and stop the page."""
    settings = current_cluster()
    if settings is None:
        no_cluster()
        st.stop()
    return settings


def require_snapshot(
    settings: ConnectionSettings, last_good_key: str, info: bool = False, full: bool = False
) -> tuple[ClusterState, bool]:
    """``load_snapshot``, stopping the page when there is nothing to show (the error is on screen)."""
    state, fresh = load_snapshot(settings, last_good_key, info=info, full=full)
    if state is None:
        st.stop()
    return state, fresh


def no_cluster() -> None:
    st.info(
        "No cluster configured. Start the local sandbox (`make demo`, or "
        "`python -m console sandbox up --demo-reassignment`), set CONSOLE_BOOTSTRAP_SERVERS, "
        "or add a `[clusters.<name>]` table to .streamlit/secrets.toml."
    )


_NAMED: set[tuple[str, str, str]] = set()
"""(store, cluster key, name) this server process wrote already (once each)."""


def remember_name(state: ClusterState, name: str) -> None:
    """The name this cluster is configured under, for the audit log and the runs list (which key
    clusters by id): written once per server process and store."""
    store = deps.store()
    seen = (store.location, cluster_key(state, name), name)
    if seen not in _NAMED:
        store.clusters.remember(seen[1], name)
        _NAMED.add(seen)


def load_snapshot(
    settings: ConnectionSettings,
    last_good_key: str,
    max_age_s: float = SHARED_SNAPSHOT_AGE_S,
    info: bool = False,
    full: bool = False,
) -> tuple[ClusterState | None, bool]:
    """A fresh snapshot (one another session read at most ``max_age_s`` ago is shared), or the last
    good one when the cluster stops answering. ``full``: every size and topic config read now (else
    those of the partitions not in flight may be carried over from the reader's last full read).

    Returns (state, fresh). ``fresh`` is False when the state shown is the last good picture.
    """
    try:
        state = deps.reader(settings).snapshot(max_age_s=max_age_s, info=info, full=full)
    except ConfigError as e:  # settings the clients refuse: say which, never crash the page
        st.error(f"**{e.message}** {e.hint}")
        return None, False
    usable = state.status.metadata is SourceStatus.OK or state.status.zookeeper is SourceStatus.OK
    if usable:
        st.session_state[last_good_key] = state
        remember_name(state, settings.name)
        return state, True
    last = st.session_state.get(last_good_key)
    reason = "; ".join(f.message for f in state.findings) or "no answer"
    if last is not None:
        age = time.time() - last.taken_at
        st.error(
            f"**The cluster is not answering** ({reason}). Showing the last good picture, taken "
            f"{datetime.fromtimestamp(last.taken_at):%H:%M:%S} ({age:.0f} s ago)."
        )
        return last, False
    st.error(f"**The cluster is not answering** ({reason}). Check the connection settings and that the brokers run.")
    return None, False


def source_banner(state: ClusterState) -> None:
    """Say which parts of the picture are missing and why."""
    status = state.status
    missing = [
        (name, value)
        for name, value in (
            ("Metadata", status.metadata),
            ("ListPartitionReassignments", status.reassignments),
            ("DescribeLogDirs (sizes, progress)", status.log_dirs),
            ("DescribeConfigs (throttles)", status.configs),
            ("ZooKeeper", status.zookeeper),
        )
        if value not in (SourceStatus.OK, SourceStatus.NOT_CONFIGURED)
    ]
    if missing:
        st.warning(
            "Part of the picture is unknown: "
            + ", ".join(f"{n} ({v.value})" for n, v in missing)
            + ". The rest below is current."
        )


def zookeeper_watch(settings: ConnectionSettings, key: str) -> None:
    """Rerun the page as soon as a ZooKeeper watch fires (a reassignment starts or ends, a broker
    comes or goes, the controller moves) instead of waiting for the next refresh."""
    if not settings.zookeeper:
        return

    @st.fragment(run_every=timedelta(seconds=1))
    def _watch() -> None:
        generation = deps.reader(settings).zookeeper_generation
        seen = st.session_state.get(key)
        st.session_state[key] = generation
        if seen is not None and generation != seen and not st.session_state.get(keys.DIALOG_OPEN):
            st.rerun()

    _watch()


def identity() -> Identity:
    """Who is acting and what they may do on the cluster shown (``components.signin``)."""
    from components import signin

    return signin.identity(current_cluster())


def refusal(me: Identity, action: str) -> str:
    """Why ``me`` may not ``action``, and whom to sign in as in the sidebar instead."""
    roles = NEEDS_ONE_OF.get(action) or (NEEDS[action],)
    whom = " or ".join(f"{'an' if r[0] in 'aeiou' else 'a'} {r}" for r in roles)
    return f"{me.why_not(action)} Sign in as {whom} in the sidebar."


def acting(action: str) -> Identity:
    """Who acts (:func:`identity`); when they may not ``action``, a caption says why (:func:`refusal`)."""
    me = identity()
    if not me.can(action):
        st.caption(refusal(me, action))
    return me


def permitted(action: str) -> Identity | None:
    """Who acts, when they may ``action``; else None, and why not is shown as an error (a dialog's
    first check)."""
    me = identity()
    if not me.can(action):
        st.error(me.why_not(action))
        return None
    return me


def sign_in_box() -> None:
    """The sidebar's sign-in (users file) or who is signed in."""
    from components import signin

    me = signin.identity(current_cluster(), speak=True)
    if me.source in ("users file", "oidc", "proxy"):
        st.caption(signin.signed_in_caption(me))
        signin.provider_box(me)
        if me.source == "users file":
            session.keep_cookie()
            if st.button("Sign out", key="auth.sign_out", help="Signs you out in every tab of this browser."):
                problem = session.sign_out()
                if problem:
                    st.error(problem)
                else:
                    st.rerun()
        return
    session.forget_cookie()
    offered = signin.provider_box(me)
    if me.source == "nobody configured users":
        if not offered:
            st.caption("Read only: no users are configured (see docs/GUIDE.md, Users and roles).")
        return
    said = st.empty()  # a refusal above the box: below it, it is under the sidebar's fold at 900 px
    with st.form("sign_in"):
        name = st.text_input("User", key="auth.user")
        password = st.text_input("Password", type="password", key="auth.password")
        if st.form_submit_button("Sign in"):
            try:
                users = load_users()
                signed = session.sign_in(users, name, password) if users else None
            except ConsoleError as e:
                said.error(f"{e.message} {e.hint}")
                return
            if isinstance(signed, session_service.SignedIn):
                st.rerun()
            said.error(signed.message() if signed is not None else "Unknown user or wrong password.")


TIME_WIDTH = 160
"""Pixels: a grid column that holds a time (``2026-11-28 16:06:32``) in full; a grid sizes a column
once, to what it first held."""

STATE_WIDTH = 100
"""Pixels: a grid column that holds a run's or a wave's state (``completed``, ``abandoned``) in full."""

FINDINGS_IN_FULL = 50
"""Up to this many findings are listed in an HTML table, every message in full; more in a data grid
(which cuts a long message to its column's width; a click on a cell shows all of it)."""


def findings_table(findings: Sequence[Finding], limit: int | None = None) -> None:
    """Findings by code with what to do in full, once per code (an HTML table: its text wraps, a
    data grid cuts it), then each finding (errors first; severity, code, where, message), the first
    ``limit`` of them."""
    from console.present.findings import finding_codes, finding_rows

    st.table(markdown_cells(finding_codes(findings)), hide_index=True)
    rows = [{k: v for k, v in r.items() if k != "hint"} for r in finding_rows(findings[:limit])]
    if len(rows) <= FINDINGS_IN_FULL:
        st.table(markdown_cells(rows), hide_index=True)
    else:
        st.dataframe(
            rows,
            hide_index=True,
            width="stretch",
            placeholder="—",
            column_config={"message": st.column_config.TextColumn("message", width="large")},
        )


def markdown_cells(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows for ``st.table``, which reads every cell as Markdown: each text cell as plain text (what
    a name or a hint happens to contain makes no emphasis, link, math or HTML)."""
    return [{k: plain(v) if isinstance(v, str) else v for k, v in r.items()} for r in rows]


_INLINE = "\\`*_{}[]<>|~$"
"""What makes emphasis, code, a link, math, HTML or a table cell's end in Markdown."""
_BLOCK = _INLINE + "()#+-.!"
"""With what makes a heading, a list or a numbered item where a line starts."""


def plain(text: str, *, lines: bool = False) -> str:
    """``text`` for a Markdown table cell or line, shown as it is: the characters that would make
    emphasis, code, a link, math, HTML or a cell's end escaped (spaces, dots and dashes left alone);
    with ``lines``, also what would make a heading or a list of it (text that starts a line)."""
    special = _BLOCK if lines else _INLINE
    return "".join("\\" + c if c in special else c for c in text)


def generation_report(report: Report, key: str) -> None:
    """A generated plan's quality report: what it moves against the least possible, the balance
    before and after (a chart per measure), and its findings."""
    from console.present import charts

    ratio = report.ratio_replicas
    m = st.columns(4)
    m[0].metric(
        "Replicas moved",
        f"{report.moved_replicas:,}",
        help=f"Replicas copied to a new broker. Least possible: {report.lower_bound_replicas:,}."
        + (f" Replicas removed (nothing copied): {report.removed_replicas:,}." if report.removed_replicas else ""),
    )
    m[1].metric(
        "Data moved", human_bytes(report.moved_bytes), help=f"Least possible: {human_bytes(report.lower_bound_bytes)}"
    )
    m[2].metric(
        "Moved / least possible",
        "—" if ratio is None else f"{ratio:.2f}",
        help="1.00: the plan moves no more replicas than any plan reaching the same balance must.",
    )
    m[3].metric(
        "Rack violations",
        f"{report.rack_violations_after:,}",
        delta=report.rack_violations_after - report.rack_violations_before or None,
        delta_color="inverse",
    )
    (st.success if report.reached else st.warning)(report.headline())
    if report.impact is not None:
        st.caption(f"**Impact:** {report.impact.headline}.")
    measure = (
        st.segmented_control("Balance of", ["replicas", "leaders", "bytes"], default="replicas", key=f"{key}.measure")
        or "replicas"
    )
    st.altair_chart(charts.broker_before_after(report.chart_rows(), measure), width="stretch")
    c1, c2 = st.columns([2, 3])
    c1.dataframe(report.summary_rows(), hide_index=True, width="stretch")
    c2.dataframe(report.spread_rows(), hide_index=True, width="stretch")
    with st.expander("Per broker"):
        st.dataframe(
            report.broker_rows(), hide_index=True, width="stretch", column_config={"Δ replicas": None, "Δ bytes": None}
        )
    if report.findings:
        findings_table(report.findings)


DEFAULT_RATE = "10 MB/s"
"""What a page's throttle input holds until someone types another."""


def rate_input(
    label: str, key: str, default: str = DEFAULT_RATE, zero: str | None = None, container: Any = None
) -> int | None:
    """A throttle typed as a person says it (``20 KB/s``, ``1.5 MB/s``; a number alone is bytes/s,
    as in the CLI and Kafka's tools), in bytes/s, with what it was read as below it; every page's
    throttle input is this one (decimal units: :data:`console.core.format.UNITS`). ``zero``: what 0
    means (None: 0 is refused). Returns None, the problem said, when the text is not a rate."""
    where = container if container is not None else st
    text = where.text_input(
        label,
        value=default,
        key=key,
        max_chars=40,
        help="e.g. 20 KB/s or 1.5 MB/s (1 KB = 1000 bytes); a number alone is bytes/s, as in Kafka's tools",
    )
    try:
        rate = parse_rate(text)
    except ValueError as e:
        where.error(str(e))
        return None
    if rate == 0 and zero is None:
        where.error("A throttle of 0 stops every copy: give a rate, e.g. 10 MB/s.")
        return None
    where.caption(f"= {human_rate(rate)} per broker ({rate:,} bytes/s)" if rate else f"= {zero}")
    return rate


def unthrottled_confirmed(rate: int | None, ceiling: int, key: str, container: Any = None) -> bool | None:
    """Above the cluster's throttle ceiling (``ceiling``: its ``max_throttle``) a throttle is
    effectively none: the service's words as a warning and a box to tick before it is sent. None
    when ``rate`` is at or under the ceiling (nothing to confirm); else whether the box is ticked."""
    problem = unthrottled_problem(rate, ceiling)
    if problem is None:
        return None
    where = container if container is not None else st
    where.warning(problem, icon=":material/warning:")
    return bool(
        where.checkbox(
            "Send it effectively unthrottled",
            key=key,
            help="The copies may take every byte the broker links carry, starving clients. The audit log "
            "records that you asked for it.",
        )
    )


@dataclass(frozen=True)
class Page(Generic[T]):
    number: int
    """From 1."""
    rows: list[T]


def page_of(rows: Sequence[T], size: int, what: str, key: str) -> Page[T]:
    """The page of ``rows`` (``size`` a page) chosen in a "Page (of N; ``what``)" box, shown only
    when there is more than one page."""
    pages = max(1, -(-len(rows) // size))
    number = int(st.number_input(f"Page (of {pages}; {what})", 1, pages, 1, key=key)) if pages > 1 else 1
    return Page(number, list(rows[(number - 1) * size : number * size]))


def acted(action: Callable[[], object]) -> bool:
    """Run a service's ``action`` for a click: True when it went through; its refusal or failure
    (a ``ConsoleError``) shown as it is, what and what to do, and False."""
    try:
        action()
    except ConsoleError as e:
        st.error(f"{e.message} {e.hint}")
        return False
    return True
