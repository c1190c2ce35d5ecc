"""The calibration the console's ETAs read: the history job's ``copy_rates`` table, with pyarrow
(never a Spark job in the web process). A missing or unreadable table means no calibration: the
ETAs then go by the throttle, as without history."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.dataset as ds

from console.core.calibration import BrokerRate, Calibration
from console.core.model import BrokerId
from console.pipeline.datasets import read_manifest

COPY_RATES = "copy_rates"
TOPIC_RATES = "topic_rates"


def load_calibration(tables: str | Path, cluster: str) -> Calibration | None:
    """Per destination broker of ``cluster``, what the last history job into ``tables`` learned."""
    root = Path(tables)
    manifest = read_manifest(root, "history")
    if manifest is None or not (root / COPY_RATES).is_dir():
        return None
    try:
        table = ds.dataset(root / COPY_RATES, format="parquet").to_table(
            columns=[
                "cluster",
                "broker",
                "source_broker",
                "moves",
                "throughput_median_bps",
                "throttle_ratio_median",
                "throttled_moves",
            ],
            filter=(ds.field("cluster") == cluster) & ds.field("source_broker").is_null(),
        )
    except (OSError, pa.ArrowException):
        return None
    brokers = {}
    for r in table.to_pylist():
        if r["throughput_median_bps"] is None or not r["moves"]:
            continue
        b = BrokerId(int(r["broker"]))
        brokers[b] = BrokerRate(
            b,
            int(r["moves"]),
            float(r["throughput_median_bps"]),
            None if r["throttle_ratio_median"] is None else float(r["throttle_ratio_median"]),
            int(r["throttled_moves"] or 0),
        )
    return Calibration(cluster, brokers, float(manifest.get("finished_at", 0.0)))


def load_topic_rates(tables: str | Path, cluster: str) -> dict[str, float]:
    """Each topic's produce rate (bytes/s) that the last history job into ``tables`` learned for
    ``cluster``; empty without one (every rate then unknown)."""
    root = Path(tables)
    if read_manifest(root, "history") is None or not (root / TOPIC_RATES).is_dir():
        return {}
    try:
        table = ds.dataset(root / TOPIC_RATES, format="parquet").to_table(
            columns=["topic", "produce_bps"], filter=ds.field("cluster") == cluster
        )
    except (OSError, pa.ArrowException):
        return {}
    return {r["topic"]: float(r["produce_bps"]) for r in table.to_pylist() if r["produce_bps"] is not None}
