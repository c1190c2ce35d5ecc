"""Pure chart builders: rows in, ``alt.Chart`` out (no Streamlit here)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import altair as alt
import pandas as pd

from console.core.format import human_bytes, plural

MB = 1000 * 1000
"""The MB of the charts' axes: the decimal MB ``human_bytes`` prints, so an axis and a table agree."""

ROLE_COLORS = {
    "leader": "#1f6feb",
    "leader (removing)": "#7a8fb8",
    "in sync": "#8cc4ff",
    "out of sync": "#e5534b",
    "eligible (ELR)": "#c58af9",
    "last known ELR": "#8a5cc2",
    "adding": "#f0a020",
    "removing": "#b0b7c3",
}

CATEGORY_COLORS = ("#1f6feb", "#2a9d8f", "#8250df", "#6e7781", "#54aeff", "#7d8c3c", "#a0785a", "#b392f0")
"""Colours for categories that carry no judgement (racks, brokers): distinct, calm, and no red or
orange (the default palette's third colour is a bright red, which reads as an alarm); cycled past
the eighth."""

NAME_CHARS = 40
"""Characters of a partition's or a move's name on an axis; a longer one is cut in its middle."""


def _short_axis(**kw: Any) -> alt.Axis:
    """An axis of short labels (broker ids, numbers): drawn whole, never measured to be cut
    (measuring each label is most of what drawing a chart to SVG costs in a notebook)."""
    return alt.Axis(labelLimit=0, labelAngle=0, **kw)


def _names_axis(**kw: Any) -> alt.Axis:
    """An axis of names (``topic-7``): cut in the middle to :data:`NAME_CHARS` characters, so the
    partition number at the end stays readable (Vega's own cut, by pixels, takes it off the end)."""
    return alt.Axis(labelLimit=0, labelExpr=f"truncate(datum.label, {NAME_CHARS}, 'center')", **kw)


def _broker_by_partition(df: pd.DataFrame, partitions: Sequence[str], x_title: str | None) -> alt.Chart:
    """A grid's axes: brokers across the top in id order, partitions down in the order given."""
    brokers = sorted(df["broker"].unique(), key=lambda b: int(b)) if len(df) else []
    return alt.Chart(df).encode(
        x=alt.X("broker:N", sort=brokers, title=x_title, axis=_short_axis(orient="top")),
        y=alt.Y("partition:N", sort=list(partitions), title=None, axis=_names_axis()),
    )


def replica_grid(cells: Sequence[dict[str, Any]], partitions: Sequence[str]) -> alt.LayerChart:
    """Broker × partition: each cell is a replica coloured by its role, adding ones with % copied."""
    df = pd.DataFrame(list(cells), columns=["partition", "broker", "role", "label", "in sync"])
    base = _broker_by_partition(df, partitions, "broker")
    # `mark_*` are typed as returning Any in altair's stubs: the annotations give the chain its type back.
    rect: alt.Chart = base.mark_rect(stroke="white", strokeWidth=2)
    rect = rect.encode(
        color=alt.Color(
            "role:N",
            scale=alt.Scale(domain=list(ROLE_COLORS), range=list(ROLE_COLORS.values())),
            legend=alt.Legend(orient="bottom", title=None, labelLimit=0),
        ),
        tooltip=["partition", "broker", "role", "label", alt.Tooltip("in sync:N", title="in sync")],
    )
    text: alt.Chart = base.mark_text(fontSize=11, color="#1b1f24")
    text = text.encode(text="label:N")
    # `rect + text`, spelt so the type is LayerChart (`+` may also return a FacetChart; not without facets).
    return alt.LayerChart(layer=[rect, text]).properties(height=alt.Step(24))


def broker_bytes(rows: Sequence[dict[str, Any]]) -> alt.Chart:
    """Bytes and replicas per broker, coloured by rack; brokers that are down stand out."""
    df = pd.DataFrame(list(rows))
    if df.empty:
        df = pd.DataFrame(columns=["broker", "bytes", "rack", "live", "replicas", "leaders", "on disk"])
    df["MB"] = pd.to_numeric(df["bytes"], errors="coerce").fillna(0.0) / MB
    df["broker"] = df["broker"].astype(str)
    df["status"] = df["live"].map({True: "live", False: "down"})
    bars: alt.Chart = alt.Chart(df).mark_bar()
    return bars.encode(
        x=alt.X("broker:N", title="broker", axis=_short_axis()),
        y=alt.Y("MB:Q", title="MB on disk", axis=_short_axis()),
        color=alt.Color("rack:N", title="rack", scale=alt.Scale(range=list(CATEGORY_COLORS))),
        opacity=alt.Opacity("status:N", scale=alt.Scale(domain=["live", "down"], range=[1.0, 0.35]), legend=None),
        tooltip=["broker", "rack", "status", "replicas", "leaders", alt.Tooltip("on disk:N", title="on disk")],
    ).properties(height=220)


def broker_before_after(rows: Sequence[dict[str, Any]], metric: str) -> alt.Chart:
    """Per broker, ``metric`` before and after the plan (``replicas``, ``leaders`` or ``bytes``)."""
    records = []
    for r in rows:
        for when in ("before", "after"):
            value = float(r[f"{metric} {when}"])
            records.append(
                {
                    "broker": str(r["broker"]),
                    "rack": r["rack"],
                    "when": when,
                    "value": value / MB if metric == "bytes" else value,
                    "shown": human_bytes(value) if metric == "bytes" else f"{value:,.0f}",
                }
            )
    df = pd.DataFrame(records, columns=["broker", "rack", "when", "value", "shown"])
    title = "MB" if metric == "bytes" else metric
    bars: alt.Chart = alt.Chart(df).mark_bar()
    return bars.encode(
        x=alt.X("broker:N", title="broker", axis=_short_axis()),
        xOffset=alt.XOffset("when:N", sort=["before", "after"]),
        y=alt.Y("value:Q", title=title, axis=_short_axis()),
        color=alt.Color(
            "when:N",
            sort=["before", "after"],
            scale=alt.Scale(range=["#b0b7c3", "#1f6feb"]),
            legend=alt.Legend(orient="top", title=None),
        ),
        tooltip=["broker", "rack", "when", alt.Tooltip("shown:N", title=metric)],
    ).properties(height=240)


def disk_before_peak_after(rows: Sequence[dict[str, Any]]) -> alt.Chart:
    """Per broker the plan changes: its disk before, at the peak (current + adding, before removing)
    and after (:func:`console.present.impact.disk_rows`)."""
    stages = ["before", "peak", "after"]
    df = pd.DataFrame(list(rows), columns=["broker", "stage", "bytes", "size"])
    df["MB"] = pd.to_numeric(df["bytes"], errors="coerce").fillna(0.0) / MB
    bars: alt.Chart = alt.Chart(df).mark_bar()
    return bars.encode(
        x=alt.X("broker:N", title="broker", axis=_short_axis()),
        xOffset=alt.XOffset("stage:N", sort=stages),
        y=alt.Y("MB:Q", title="MB on disk", axis=_short_axis()),
        color=alt.Color(
            "stage:N",
            sort=stages,
            scale=alt.Scale(domain=stages, range=["#b0b7c3", "#f0a020", "#1f6feb"]),
            legend=alt.Legend(orient="top", title=None),
        ),
        tooltip=["broker", "stage", alt.Tooltip("size:N", title="on disk")],
    ).properties(height=220)


def movement_sankey(flows: Sequence[dict[str, Any]]) -> Any:
    """Who sends how much to whom: leaders on the left, new replicas on the right (Plotly: Altair has no Sankey)."""
    import plotly.graph_objects as go

    sources = sorted({f["from"] for f in flows})
    dests = sorted({f["to"] for f in flows})
    labels = [f"broker {b} (sends)" for b in sources] + [f"broker {b} (receives)" for b in dests]
    fig = go.Figure(
        go.Sankey(
            node={"label": labels, "pad": 12, "thickness": 14},
            link={
                "source": [sources.index(f["from"]) for f in flows],
                "target": [len(sources) + dests.index(f["to"]) for f in flows],
                "value": [max(f["bytes"], 1) for f in flows],
                "customdata": [f"{plural(f['replicas'], 'replica')}, {human_bytes(f['bytes'])}" for f in flows],
                "hovertemplate": "%{source.label} → %{target.label}: %{customdata}<extra></extra>",
            },
        )
    )
    fig.update_layout(height=max(260, 28 * max(len(sources), len(dests))), margin={"l": 10, "r": 10, "t": 10, "b": 10})
    return fig


def plan_grid(cells: Sequence[dict[str, Any]], partitions: Sequence[str]) -> alt.FacetChart:
    """Broker × partition, before and after, side by side: kept, leaving, arriving, and the leader."""
    colors = {"leader": "#1f6feb", "kept": "#8cc4ff", "leaving": "#b0b7c3", "arriving": "#f0a020"}
    df = pd.DataFrame(list(cells), columns=["partition", "broker", "when", "role", "label"])
    base = _broker_by_partition(df, partitions, None)
    rect: alt.Chart = base.mark_rect(stroke="white", strokeWidth=2)
    rect = rect.encode(
        color=alt.Color(
            "role:N",
            scale=alt.Scale(domain=list(colors), range=list(colors.values())),
            legend=alt.Legend(orient="bottom", title=None),
        ),
        tooltip=["partition", "broker", "when", "role"],
    )
    text: alt.Chart = base.mark_text(fontSize=11)
    text = text.encode(text="label:N")
    return (
        alt.LayerChart(layer=[rect, text])
        .properties(height=alt.Step(22), width=alt.Step(34))
        .facet(column=alt.Column("when:N", sort=["before", "after"], title=None))
    )


def _unit(largest: float) -> tuple[float, str]:
    """The decimal unit (divisor, name) an axis of byte values up to ``largest`` reads best in (as ``human_bytes``)."""
    for div, name in ((1000**3, "GB"), (1000**2, "MB"), (1000, "KB")):
        if largest >= div:
            return float(div), name
    return 1.0, "B"


def move_timeline(rows: pd.DataFrame) -> alt.Chart:
    """One bar per replica move, from its start to its end (or last sighting), coloured by outcome."""
    from console.present.moves import OUTCOME_COLORS

    order = list(rows["move"]) if len(rows) else []
    bars: alt.Chart = alt.Chart(rows).mark_bar(cornerRadius=2)
    return bars.encode(
        x=alt.X("start:T", title=None),
        x2="end:T",
        y=alt.Y("move:N", sort=order, title=None, axis=_names_axis()),
        color=alt.Color(
            "outcome:N",
            scale=alt.Scale(domain=list(OUTCOME_COLORS), range=list(OUTCOME_COLORS.values())),
            legend=alt.Legend(orient="top", title=None),
        ),
        tooltip=["move:N", "outcome:N", alt.Tooltip("start:T", format="%H:%M:%S"), "took:N", "size:N", "rate:N"],
    ).properties(height=alt.Step(20))


def copy_rate_over_time(moves: pd.DataFrame) -> alt.Chart:
    """Each move's copy rate when it ended (or was last seen), per destination broker."""
    df = (
        moves[moves["rate_bps"].notna()].copy()
        if len(moves)
        else pd.DataFrame(columns=["ended_at", "last_seen_at", "rate_bps", "broker", "topic", "partition", "outcome"])
    )
    div, unit = _unit(float(df["rate_bps"].max()) if len(df) else 0.0)
    df["when"] = df["ended_at"].fillna(df["last_seen_at"])
    df["rate"] = df["rate_bps"].astype(float) / div
    df["broker"] = df["broker"].astype(str)
    df["move"] = df["topic"].astype(str) + "-" + df["partition"].astype(str)
    points: alt.Chart = alt.Chart(df).mark_point(filled=True, size=60)
    return points.encode(
        x=alt.X("when:T", title=None),
        y=alt.Y("rate:Q", title=f"copy rate ({unit}/s)", scale=alt.Scale(zero=True)),
        color=alt.Color("broker:N", title="to broker", scale=alt.Scale(range=list(CATEGORY_COLORS))),
        tooltip=["move:N", "broker:N", "outcome:N", alt.Tooltip("rate:Q", format=",.1f", title=f"{unit}/s")],
    ).properties(height=220)


def broker_load_over_time(load: pd.DataFrame, measure: str) -> alt.Chart:
    """Per broker over time: ``replicas``, ``leaders`` or ``bytes`` (in MB)."""
    df = load.copy() if len(load) else pd.DataFrame(columns=["taken_at", "broker", measure])
    div, unit = _unit(float(df[measure].max()) if len(df) else 0.0) if measure == "bytes" else (1.0, measure)
    df["value"] = df[measure].astype(float) / div
    df["broker"] = df["broker"].astype(str)
    lines: alt.Chart = alt.Chart(df).mark_line(interpolate="step-after")
    return lines.encode(
        x=alt.X("taken_at:T", title=None),
        y=alt.Y("value:Q", title=unit),
        color=alt.Color("broker:N", title="broker", scale=alt.Scale(range=list(CATEGORY_COLORS))),
        tooltip=[
            "broker:N",
            alt.Tooltip("taken_at:T", format="%H:%M:%S"),
            alt.Tooltip("value:Q", format=",.1f", title=unit),
        ],
    ).properties(height=220)


def urp_vs_reassigning(counts: pd.DataFrame) -> alt.Chart:
    """Truly under-replicated (KIP-352) and reassigning partitions over time."""
    names = {"under_replicated": "truly under-replicated", "reassigning": "reassigning"}
    df = (
        counts[["taken_at", *names]].melt(id_vars=["taken_at"], var_name="what", value_name="count")
        if len(counts)
        else pd.DataFrame(columns=["taken_at", "what", "count"])
    )
    df["what"] = df["what"].map(names)
    lines: alt.Chart = alt.Chart(df).mark_line(interpolate="step-after")
    return lines.encode(
        x=alt.X("taken_at:T", title=None),
        y=alt.Y("count:Q", title="partitions"),
        color=alt.Color(
            "what:N",
            scale=alt.Scale(domain=list(names.values()), range=["#e5534b", "#f0a020"]),
            legend=alt.Legend(orient="top", title=None),
        ),
        tooltip=["what:N", alt.Tooltip("taken_at:T", format="%H:%M:%S"), alt.Tooltip("count:Q", title="partitions")],
    ).properties(height=200)
