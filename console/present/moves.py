"""View models of the pipeline's history tables (pure pandas): past moves, copy rates and
incidents in units a person reads, for the History page, the CLI and notebooks."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from console.core.format import human_bytes, human_duration, human_rate, timestamp

OUTCOME_COLORS = {"completed": "#2da44e", "in_flight": "#1f6feb", "stuck": "#e5534b", "cancelled": "#b0b7c3"}


def _rate(v: Any) -> str:
    return human_rate(float(v)) if pd.notna(v) else "—"


def _bytes(v: Any) -> str:
    return human_bytes(int(v)) if pd.notna(v) else "—"


def _duration(v: Any) -> str:
    return human_duration(float(v)) if pd.notna(v) else "—"


def _time(v: Any) -> str | None:
    """A moment of the history's tables (a UTC timestamp) as the pages print times
    (:func:`console.core.format.timestamp`: local, no offset); None when unknown."""
    return timestamp(pd.Timestamp(v).timestamp()) if pd.notna(v) else None


def _label(m: pd.DataFrame) -> pd.Series:
    """``orders-3 → 4``: the partition and where its replica went."""
    return m["topic"] + "-" + m["partition"].astype(str) + " → " + m["broker"].astype(str)


def move_rows(moves: pd.DataFrame) -> pd.DataFrame:
    """One row per move, newest first: what moved where, how it ended, how big, how fast."""
    if moves.empty:
        return pd.DataFrame(columns=["move", "outcome", "started", "took", "size", "rate", "throttle", "from"])
    m = moves.sort_values("started_at", ascending=False)
    return pd.DataFrame(
        {
            "move": _label(m),
            "outcome": m["outcome"],
            "started": m["started_at"].map(_time),
            "took": m["seconds"].map(_duration),
            "size": m["bytes"].map(_bytes),
            "rate": m["rate_bps"].map(_rate),
            "throttle": m["throttle_bps"].map(_rate),
            "from": m["source_broker"].map(lambda b: "—" if pd.isna(b) else str(int(b))),
        }
    )


def timeline_rows(moves: pd.DataFrame, limit: int = 300) -> pd.DataFrame:
    """The ``limit`` most recent moves as bars: start, end (last seen while in flight), a label, hover text."""
    cols = ["move", "start", "end", "outcome", "size", "rate", "took"]
    if moves.empty:
        return pd.DataFrame(columns=cols)
    m = moves.sort_values("started_at", ascending=False).head(limit)
    return pd.DataFrame(
        {
            "move": _label(m),
            "start": m["started_at"],
            "end": m["ended_at"].fillna(m["last_seen_at"]),
            "outcome": m["outcome"],
            "size": m["bytes"].map(_bytes),
            "rate": m["rate_bps"].map(_rate),
            "took": m["seconds"].map(_duration),
        }
    )[cols]


def copy_rate_rows(copy_rates: pd.DataFrame) -> pd.DataFrame:
    """Per destination broker (and per leader → destination pair): moves and rates in B/s units."""
    cols = [
        "to broker",
        "from broker",
        "moves",
        "copied",
        "median rate",
        "p10",
        "p90",
        "broker throughput",
        "of the throttle",
    ]
    if copy_rates.empty:
        return pd.DataFrame(columns=cols)
    c = copy_rates.sort_values(["broker", "source_broker"], na_position="first")
    return pd.DataFrame(
        {
            "to broker": c["broker"].astype(int),
            "from broker": c["source_broker"].map(lambda b: "any" if pd.isna(b) else str(int(b))),
            "moves": c["moves"].astype(int),
            "copied": c["bytes"].map(_bytes),
            "median rate": c["rate_median_bps"].map(_rate),
            "p10": c["rate_p10_bps"].map(_rate),
            "p90": c["rate_p90_bps"].map(_rate),
            "broker throughput": c["throughput_median_bps"].map(_rate),
            "of the throttle": c["throttle_ratio_median"].map(lambda r: "—" if pd.isna(r) else f"{r:.0%}"),
        }
    )[cols]


def incident_rows(incidents: pd.DataFrame) -> pd.DataFrame:
    """Periods with truly under-replicated partitions or with reassignments, newest first."""
    cols = ["what", "started", "ended", "lasted", "peak partitions"]
    if incidents.empty:
        return pd.DataFrame(columns=cols)
    i = incidents.sort_values("started_at", ascending=False)
    return pd.DataFrame(
        {
            "what": i["kind"].map({"under_replicated": "truly under-replicated", "reassigning": "reassigning"}),
            "started": i["started_at"].map(_time),
            "ended": i["ended_at"].map(_time),
            "lasted": i["seconds"].map(_duration) + i["ended_at"].map(lambda t: " (still going)" if pd.isna(t) else ""),
            "peak partitions": i["peak_partitions"].astype(int),
        }
    )[cols]


def produce_rate_rows(rates: Mapping[str, float], limit: int = 100) -> pd.DataFrame:
    """Each topic's produce rate the history learned (its leaders' growth between snapshots), the
    most produced-to first, at most ``limit``: what a plan's steady cross-zone traffic is priced at."""
    top = sorted(rates.items(), key=lambda kv: (-kv[1], kv[0]))[:limit]
    return pd.DataFrame(
        {
            "topic": [t for t, _ in top],
            "produce rate": [human_rate(v) for _, v in top],
            "a day": [human_bytes(v * 86_400) for _, v in top],
        }
    )
