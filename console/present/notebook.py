"""How the console's records look in a notebook: a compact summary first (counts, bytes, errors and
warnings), then a table cut to :data:`ROWS` rows with the total, then the app's charts where a
picture says more. ``console/__init__.py`` registers these with IPython when a kernel imports the
package (:func:`register`), so the records themselves carry no display code.

Each ``*_parts`` function returns the HTML and the charts of one kind of record; :func:`html`
gives the HTML alone (what ``text/html`` shows, e.g. in nbconvert) and :func:`show` displays the
HTML and then each chart, drawn as SVG in the kernel (vl-convert, no network needed to see it).
"""

from __future__ import annotations

import html as _html
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from console.core.format import human_bytes, human_duration, plural, timestamp
from console.plans.columns import PAD
from console.plans.diff import ChangeKind
from console.plans.plan import Plan

if TYPE_CHECKING:
    from console.core.model import ClusterState, Finding, Findings
    from console.moves.impact import Impact
    from console.plans.diff import PlanDiff
    from console.plans.generate import Generated
    from console.plans.quality import Report
    from console.storage.runs import RunDetail

ROWS = 20
"""Rows of a table shown in a notebook (``.to_pandas()`` has them all)."""
GRID = 40
"""Partitions in flight drawn in the broker × partition picture."""

_STYLE = (
    "<style>.rc-box{font-family:system-ui,sans-serif;font-size:13px;line-height:1.4}"
    ".rc-box h4{margin:0 0 4px 0;font-size:14px}.rc-box .rc-sum{margin:0 0 6px 0}"
    ".rc-box .rc-err{color:#b42318;font-weight:600}.rc-box .rc-warn{color:#9a6700;font-weight:600}"
    ".rc-box table{border-collapse:collapse;font-size:12px}div.rc-box table th,div.rc-box table td{padding:2px 8px;"
    "border-bottom:1px solid #ddd;text-align:left}.rc-box .rc-more{color:#666;font-size:12px}</style>"
)


@dataclass(frozen=True)
class Table:
    """A table as shown: its first rows only (built for those alone), and how many there are in all."""

    caption: str
    rows: pd.DataFrame
    total: int


@dataclass
class Parts:
    """One record's display: a title, summary lines (HTML), tables and charts."""

    title: str
    summary: list[str] = field(default_factory=list)
    tables: list[Table] = field(default_factory=list)
    charts: list[Any] = field(default_factory=list)

    def table(self, caption: str, rows: pd.DataFrame, total: int | None = None) -> None:
        """Add a table: ``rows`` are its first rows, ``total`` its length (default: ``len(rows)``)."""
        self.tables.append(Table(caption, rows, len(rows) if total is None else total))

    def html(self) -> str:
        out = [_STYLE, '<div class="rc-box">', f"<h4>{_html.escape(self.title)}</h4>"]
        out += [f'<p class="rc-sum">{line}</p>' for line in self.summary]
        for t in self.tables:
            out.append(table_html(t.rows, t.caption, t.total))
        out.append("</div>")
        return "".join(out)


def esc(text: object) -> str:
    return _html.escape(str(text))


def table_html(df: pd.DataFrame, caption: str = "", total: int | None = None, rows: int = ROWS) -> str:
    """``df`` cut to ``rows`` rows, with how many there are in all (``total``, default ``len(df)``)."""
    head = f"<b>{esc(caption)}</b>" if caption else ""
    total = len(df) if total is None else total
    if df.empty:
        return f"<div>{head} <span class='rc-more'>none</span></div>"
    shown = df.head(rows).copy()
    for column in shown.columns:  # times to the second, as the app shows them
        if pd.api.types.is_datetime64_any_dtype(shown[column]):
            shown[column] = shown[column].dt.strftime("%Y-%m-%d %H:%M:%S")
    shown = shown.astype(object)
    shown = shown.where(shown.notna(), "")  # nothing rather than "None"
    more = (
        f"<div class='rc-more'>showing {len(shown):,} of {total:,} rows; .to_pandas() has them all</div>"
        if total > len(shown)
        else ""
    )
    return f"<div>{head}{shown.to_html(index=False, border=0, na_rep='')}{more}</div>"


def severity_html(findings: Iterable[Finding]) -> str:
    """``2 errors, no warnings, 3 notes``: errors and warnings stand out."""
    from console.core.model import Findings

    n = Findings(findings).counts()
    errors, warnings, infos = n["error"], n["warning"], n["info"]
    parts = [
        f"<span class='rc-err'>{plural(errors, 'error')}</span>" if errors else "no errors",
        f"<span class='rc-warn'>{plural(warnings, 'warning')}</span>" if warnings else "no warnings",
    ]
    if infos:
        parts.append(plural(infos, "note"))
    return ", ".join(parts)


# -- the records ------------------------------------------------------------------------------
def state_parts(state: ClusterState) -> Parts:
    from console.present import charts, live

    c = live.counts(state)
    live_brokers = sum(1 for b in state.brokers if b.eligible)
    size = sum(p.size or 0 for p in state.partitions)
    parts = Parts(
        f"Cluster {state.name or state.cluster_id or '?'}"
        + (f" ({state.cluster_id})" if state.cluster_id and state.name else "")
    )
    parts.summary.append(
        f"{timestamp(state.taken_at)} · {live_brokers} of {plural(len(state.brokers), 'broker')} live · "
        f"{plural(len(state.topics), 'topic')} · {c.partitions:,} partitions · "
        f"{human_bytes(size) if state.logs_known else 'sizes unknown'}"
    )
    parts.summary.append(
        f"<b>{c.reassigning:,}</b> reassigning · <b>{c.under_replicated:,}</b> truly under-replicated "
        f"(reassigning never counts: KIP-352) · <b>{c.offline:,}</b> offline"
        + (f" · {c.adding_copied}/{c.adding_replicas} adding replicas in sync" if c.adding_replicas else "")
        + (f" · {human_bytes(c.bytes_to_copy)} left to copy" if c.bytes_to_copy else "")
    )
    if state.findings:
        parts.summary.append(
            severity_html(state.findings)
            + " reading the cluster: "
            + esc("; ".join(f.message for f in state.findings[:3]))
        )
    shown = state.in_flight or state.partitions
    rows = pd.DataFrame(live.partition_rows(state, shown[:ROWS]))
    keep = [k for k in ("partition", "R", "I", "AR", "RR", "leader", "progress", "left to copy", "state") if k in rows]
    parts.table("In flight" if state.in_flight else "Partitions", rows[keep] if len(rows) else rows, len(shown))
    if state.in_flight:  # the broker × partition picture of what moves (as on the Live page)
        moving = list(state.in_flight)[:GRID]
        parts.charts.append(charts.replica_grid(live.replica_cells(state, moving), [p.name for p in moving]))
    brokers = live.broker_rows(state)
    if brokers:
        parts.charts.append(charts.broker_bytes(brokers))
    return parts


def plan_parts(plan: Plan) -> Parts:
    parts = Parts(f"Plan: {plural(len(plan), 'partition')}")
    parts.summary.append(
        f"{plural(len(plan.topics), 'topic')}: {esc(', '.join(plan.topics[:8]))}"
        + (" …" if len(plan.topics) > 8 else "")
    )
    parts.table("", Plan(plan.entries[:ROWS]).to_pandas(), len(plan))
    return parts


def diff_parts(d: PlanDiff) -> Parts:
    from console.present import charts, review

    added = int(d.columns.adding.sum())
    parts = Parts(f"Plan diff: {plural(len(d.changes), 'partition')}")
    parts.summary.append(", ".join(f"{n:,} {k}" for k, n in d.counts().items() if n) or "nothing")
    parts.summary.append(
        f"{plural(added, 'replica')} to copy, {human_bytes(d.bytes_to_copy)}"
        + (f" (+ {human_bytes(d.dir_bytes_to_copy)} between dirs)" if d.dir_bytes_to_copy else "")
        + f"; {plural(len(d.flows), 'flow')} between brokers"
    )
    # moving first, the largest copies first: ordered from the diff's columns, rows built for those shown
    c = d.columns
    copy = np.where(c.size == PAD, 0, c.size) * c.adding.sum(axis=1)
    first = np.lexsort((-copy, c.is_kind(ChangeKind.NONE)))[:ROWS]
    rows = pd.DataFrame(review.change_rows(d, review.rack_map(d.state), [d.changes[int(i)] for i in first]))
    keep = [
        k for k in ("partition", "change", "current", "target", "AR", "RR", "leader", "to copy", "note") if k in rows
    ]
    parts.table("Changes (moving first)", rows[keep] if len(rows) else rows, len(d.changes))
    parts.table("Movement between brokers", pd.DataFrame(review.flow_table(d)))
    brokers = review.broker_rows(d)
    if brokers:
        parts.charts.append(charts.broker_before_after(brokers, "replicas"))
        parts.charts.append(charts.broker_before_after(brokers, "bytes"))
    return parts


def impact_parts(im: Impact) -> Parts:
    """What a plan costs and whom it touches: the same figures as Review's panel and ``validate``."""
    from console.moves.impact import PRICING_HINT
    from console.present import charts
    from console.present import impact as shown

    parts = Parts("Impact")
    parts.summary.append(esc("This plan " + im.headline() + "."))
    parts.summary += [esc(line) for line in shown.money_lines(im)]
    parts.summary.append(esc(im.steady_text()))
    if (b := im.bottleneck) is not None:
        parts.summary.append(esc(im.bottleneck_text(b)))
    if not im.pricing.priced:
        parts.summary.append(esc(PRICING_HINT))
    parts.table("Copied between zones, once", pd.DataFrame(shown.zone_rows(im)))
    parts.table("Brokers", pd.DataFrame(shown.broker_rows(im)))
    if dirs := shown.dir_rows(im):
        parts.table("Log dirs", pd.DataFrame(dirs))
    parts.table("Topics touched, the most produced-to first", pd.DataFrame(shown.topic_rows(im)), im.topics_touched)
    if disk := shown.disk_rows(im):
        parts.charts.append(charts.disk_before_peak_after(disk))
    return parts


def findings_parts(found: Findings) -> Parts:
    from console.present.findings import finding_rows

    parts = Parts(f"Findings: {len(found):,}")
    parts.summary.append(severity_html(found))
    parts.table("", pd.DataFrame(finding_rows(sorted(found, key=lambda f: f.severity.rank)[:ROWS])), len(found))
    return parts


def report_parts(report: Report) -> Parts:
    from console.present import charts

    parts = Parts(f"Generated: {report.goal}")
    parts.summary.append(esc(report.headline()))
    if report.findings:
        parts.summary.append(
            severity_html(report.findings) + ": " + esc("; ".join(f.message for f in report.findings[:3]))
        )
    parts.table("Moved against the least possible", pd.DataFrame(report.summary_rows()))
    parts.table("Balance", pd.DataFrame(report.spread_rows()))
    rows = report.chart_rows()
    if rows:
        parts.charts.append(charts.broker_before_after(rows, "replicas"))
    return parts


def generated_parts(made: Generated) -> Parts:
    parts = report_parts(made.report)
    parts.table(
        f"The plan ({plural(len(made.plan), 'partition')})", Plan(made.plan.entries[:ROWS]).to_pandas(), len(made.plan)
    )
    return parts


def run_parts(detail: RunDetail) -> Parts:
    from console.present.history import not_in_dir_text, rejected_rows, throttle_text, wave_rows

    run = detail.run
    parts = Parts(f"Run {run.id}: {run.name}")
    parts.summary.append(
        f"<b>{esc(run.state.value)}</b> · cluster {esc(run.cluster)} · by {esc(run.author)} "
        f"{timestamp(run.created_at)} · throttle {esc(throttle_text(run.rate))} · plan {esc(run.plan_hash)}"
    )
    off = not_in_dir_text(detail.outcomes)
    parts.summary.append(
        f"{plural(len(detail.waves), 'wave')}, {len(rejected_rows(detail.outcomes))} partition(s) rejected"
        + (f", {esc(off)}" if off else "")
    )
    parts.table("Waves", pd.DataFrame(wave_rows(None, detail.waves, detail.outcomes)))
    return parts


def history_parts(view: Any) -> Parts:
    """A :class:`console.pipeline.tables.HistoryView` (the pipeline imports this package, so not by name)."""
    from console.present import charts
    from console.present.moves import move_rows, timeline_rows

    moves = view.moves
    outcomes = moves["outcome"].value_counts() if len(moves) else pd.Series(dtype=int)
    parts = Parts(f"History of {view.cluster}")
    parts.summary.append(
        f"{plural(len(moves), 'move')}: "
        + (", ".join(f"{n:,} {k}" for k, n in outcomes.items()) or "none")
        + f" · {plural(len(view.incidents), 'incident')} · tables from "
        f"{timestamp(view.finished_at) if view.finished_at else 'no job yet'}"
    )
    if len(moves):
        parts.table(
            "Moves (latest first)", move_rows(moves.sort_values("started_at", ascending=False).head(ROWS)), len(moves)
        )
        parts.charts.append(charts.move_timeline(timeline_rows(moves)))
    return parts


def job_parts(result: Any) -> Parts:
    """A :class:`console.pipeline.jobs.JobResult`."""
    parts = Parts(f"pipeline {result.job}: done in {human_duration(result.seconds)}")
    parts.summary += [esc(line) for line in result.summary]
    parts.table(f"Tables in {result.out}", pd.DataFrame([{"table": t, "rows": n} for t, n in result.tables.items()]))
    return parts


DISPLAYS: dict[tuple[str, str], Callable[[Any], Parts]] = {
    ("console.core.model", "ClusterState"): state_parts,
    ("console.core.findings", "Findings"): findings_parts,
    ("console.plans.plan", "Plan"): plan_parts,
    ("console.plans.diff", "PlanDiff"): diff_parts,
    ("console.moves.impact", "Impact"): impact_parts,
    ("console.plans.quality", "Report"): report_parts,
    ("console.plans.generate", "Generated"): generated_parts,
    ("console.storage.runs", "RunDetail"): run_parts,
    ("console.pipeline.tables", "HistoryView"): history_parts,
    ("console.pipeline.jobs", "JobResult"): job_parts,
}
"""(module, class) → its display, as IPython's formatters register types by name (no import)."""


def html(obj: Any) -> str:
    """The HTML of a record (summary and tables)."""
    return DISPLAYS[(type(obj).__module__, type(obj).__name__)](obj).html()


def show(obj: Any) -> None:
    """Display a record in the notebook: its HTML, then each of its charts."""
    import IPython.display as ipd

    display: Callable[..., Any] = ipd.display  # IPython has no type hints
    html_of: Callable[[str], Any] = ipd.HTML
    parts = DISPLAYS[(type(obj).__module__, type(obj).__name__)](obj)
    display(html_of(parts.html()))
    for chart, svg in zip(parts.charts, static_charts(parts.charts), strict=True):
        if svg is not None:
            display(svg, raw=True)
        else:
            display(chart)


def static_chart(chart: Any) -> dict[str, Any] | None:
    """``chart`` as an SVG mimebundle, drawn here with vl-convert (the ``[notebook]`` extra): it
    shows in JupyterLab, in exported HTML and offline alike. None without vl-convert (Altair's
    own renderer then draws it in the browser)."""
    return static_charts([chart])[0]


def static_charts(charts: Sequence[Any]) -> list[dict[str, Any] | None]:
    """Each chart as :func:`static_chart` draws it, the charts drawn at the same time: vl-convert
    draws outside the interpreter's lock, so two charts take about as long as the slower one."""
    try:
        import vl_convert  # noqa: F401 (only whether it is installed)
    except ImportError:
        return [None] * len(charts)
    import altair as alt

    def svg(chart: Any) -> dict[str, Any]:
        bundle = chart._repr_mimebundle_()
        out: dict[str, Any] = bundle[0] if isinstance(bundle, tuple) else bundle
        return out

    with alt.renderers.enable("svg"):  # once for all: the renderer is Altair's global setting
        if len(charts) < 2:
            return [svg(c) for c in charts]
        with ThreadPoolExecutor(len(charts)) as pool:
            return list(pool.map(svg, charts))


def register(shell: Any) -> None:
    """Make the IPython ``shell`` display the console's records with :func:`show`."""
    formatter = shell.display_formatter.ipython_display_formatter
    for module, name in DISPLAYS:
        formatter.for_type_by_name(module, name, show)
    html_formatter = shell.display_formatter.formatters["text/html"]
    for module, name in DISPLAYS:
        html_formatter.for_type_by_name(module, name, html)
