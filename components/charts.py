"""Pure chart builders: rows in, ``alt.Chart`` out (no Streamlit here)."""

from __future__ import annotations

from typing import Any, Sequence

import altair as alt
import pandas as pd

ROLE_COLORS = {
    "leader": "#1f6feb",
    "in sync": "#8cc4ff",
    "out of sync": "#e5534b",
    "adding": "#f0a020",
    "removing": "#b0b7c3",
}


def replica_grid(cells: Sequence[dict[str, Any]], partitions: Sequence[str]) -> alt.LayerChart:
    """Broker × partition: each cell is a replica coloured by its role, adding ones with % copied."""
    df = pd.DataFrame(list(cells), columns=["partition", "broker", "role", "label", "in_isr"])
    brokers = sorted(df["broker"].unique(), key=lambda b: int(b)) if len(df) else []
    base = alt.Chart(df).encode(
        x=alt.X("broker:N", sort=brokers, title="broker", axis=alt.Axis(orient="top", labelAngle=0)),
        y=alt.Y("partition:N", sort=list(partitions), title=None),
    )
    rect = base.mark_rect(stroke="white", strokeWidth=2).encode(
        color=alt.Color("role:N", scale=alt.Scale(domain=list(ROLE_COLORS), range=list(ROLE_COLORS.values())),
                        legend=alt.Legend(orient="bottom", title=None)),
        tooltip=["partition", "broker", "role", "label", "in_isr"],
    )
    text = base.mark_text(fontSize=11, color="#1b1f24").encode(text="label:N")
    return (rect + text).properties(height=alt.Step(24))


def broker_bytes(rows: Sequence[dict[str, Any]]) -> alt.Chart:
    """Bytes and replicas per broker, coloured by rack; brokers that are down stand out."""
    df = pd.DataFrame(list(rows))
    if df.empty:
        df = pd.DataFrame(columns=["broker", "bytes", "rack", "live", "replicas"])
    df["MB"] = df["bytes"].fillna(0).astype(float) / 1e6
    df["broker"] = df["broker"].astype(str)
    df["status"] = df["live"].map({True: "live", False: "down"})
    return (
        alt.Chart(df)
        .mark_bar()
        .encode(
            x=alt.X("broker:N", title="broker", axis=alt.Axis(labelAngle=0)),
            y=alt.Y("MB:Q", title="MB on disk"),
            color=alt.Color("rack:N", title="rack"),
            opacity=alt.Opacity("status:N", scale=alt.Scale(domain=["live", "down"], range=[1.0, 0.35]), legend=None),
            tooltip=["broker", "rack", "status", "replicas", "leaders", alt.Tooltip("MB:Q", format=".1f")],
        )
        .properties(height=220)
    )
