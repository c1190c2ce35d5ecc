"""The history job's tables as the History page and notebooks read them (pyarrow and pandas; no
Spark): one cluster, one time range, filters pushed down to the Parquet files."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.dataset as ds

from console.core.errors import ConfigError
from console.pipeline.datasets import read_manifest

TABLES = ("moves", "copy_rates", "broker_load", "partition_counts", "incidents")
_TIME = {"moves": "started_at", "broker_load": "taken_at", "partition_counts": "taken_at", "incidents": "started_at"}
"""The column a time range applies to (copy rates cover the whole history)."""
_SPANS = ("moves", "incidents")
"""Tables of periods: in a range when they overlap it."""


def _scalar(t: pd.Timestamp) -> pa.Scalar:
    return pa.scalar(t.tz_localize("UTC") if t.tzinfo is None else t, pa.timestamp("us", "UTC"))


@dataclass(frozen=True)
class HistoryView:
    """One cluster's history tables over a time range, and what the last job said about itself."""

    cluster: str
    manifest: dict[str, Any]
    moves: pd.DataFrame
    copy_rates: pd.DataFrame
    broker_load: pd.DataFrame
    partition_counts: pd.DataFrame
    incidents: pd.DataFrame

    @property
    def finished_at(self) -> float:
        return float(self.manifest.get("finished_at", 0.0))

    TABLES = ("moves", "copy_rates", "broker_load", "partition_counts", "incidents")

    def to_pandas(self, table: str = "moves") -> pd.DataFrame:
        """One of :data:`TABLES` (a copy: slice it freely)."""
        if table not in self.TABLES:
            raise ConfigError(f"No history table {table!r}.", f"Pick one of {', '.join(self.TABLES)}.")
        frame: pd.DataFrame = getattr(self, table).copy()
        return frame

    def __repr__(self) -> str:
        return (
            f"<HistoryView {self.cluster}: {len(self.moves):,} moves, {len(self.copy_rates):,} copy-rate rows, "
            f"{len(self.incidents):,} incidents>"
        )


def clusters_in(tables: str | Path) -> list[str]:
    """The clusters the last history job found (from its partition counts)."""
    path = Path(tables) / "partition_counts"
    if not path.is_dir():
        return []
    try:
        column = ds.dataset(path, format="parquet").to_table(columns=["cluster"]).column("cluster")
    except (OSError, pa.ArrowException):
        return []
    return sorted({str(c) for c in column.unique().to_pylist() if c is not None})


def load_history(
    tables: str | Path, cluster: str, since: pd.Timestamp | None = None, until: pd.Timestamp | None = None
) -> HistoryView | None:
    """The tables of ``cluster`` in ``[since, until]``; None when no history job has written any.
    A table that cannot be read raises :class:`ConfigError` naming it."""
    root = Path(tables)
    manifest = read_manifest(root, "history")
    if manifest is None:
        return None
    frames: dict[str, pd.DataFrame] = {}
    for name in TABLES:
        where = ds.field("cluster") == cluster
        column = _TIME.get(name)
        if column and since is not None:
            t = _scalar(since)
            if name in _SPANS:  # a move or incident that overlaps the range
                where = where & (
                    (ds.field("ended_at") >= t) | (ds.field("ended_at").is_null() & (ds.field("last_seen_at") >= t))
                )
            else:
                where = where & (ds.field(column) >= t)
        if column and until is not None:
            where = where & (ds.field(column) <= _scalar(until))
        try:
            frames[name] = ds.dataset(root / name, format="parquet").to_table(filter=where).to_pandas()
        except (OSError, pa.ArrowException) as e:
            raise ConfigError(
                f"The history table {root / name} cannot be read ({e}).",
                "Run the history job again: python -m console pipeline history",
            ) from None
    return HistoryView(cluster, manifest, **frames)
