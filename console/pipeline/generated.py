"""What the generate job writes: each cluster's plan and report, the tables, and the record of what
it was asked."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from enum import Enum
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from console.pipeline.datasets import (
    Output,
)
from console.pipeline.snapshots import cluster_dir
from console.pipeline.spark import (
    SparkSettings,
)

if TYPE_CHECKING:
    from console.plans.generators.options import GenerateOptions

Report = Callable[[str], None]


def write_plans(
    output: Output,
    raw: str,
    chosen: Mapping[str, Any],
    goal: str,
    options: GenerateOptions,
    per_topic: bool,
    report: Report,
) -> list[dict[str, Any]]:
    """The planned units read back (``raw``), written as each cluster's plan and report, and the
    tables; returns the summary rows."""
    import pyarrow.parquet as pq

    from console.pipeline import fleet

    by_cluster: dict[str, list[dict[str, Any]]] = {c: [] for c in chosen}
    for u in (
        pq.read_table(raw, schema=fleet.UNIT_SCHEMA)
        .sort_by([("cluster", "ascending"), ("topic", "ascending")])
        .to_pylist()
    ):
        by_cluster[str(u["cluster"])].append(u)
    report("Writing the plans and reports")
    summary: list[dict[str, Any]] = []
    unit_rows: list[dict[str, Any]] = []
    broker_rows: list[dict[str, Any]] = []
    finding_rows: list[dict[str, Any]] = []
    for cluster, units_of in by_cluster.items():
        result = fleet.cluster_result(cluster, goal, units_of, options.topics if per_topic else ())
        name = cluster_dir(cluster)
        plan_file = None
        if len(result.plan):
            plan_file = f"plans/{name}.json"
            output.put_text("plans", f"{name}.json", result.plan.to_json())
        if result.report is not None:
            output.put_text("reports", f"{name}.json", json.dumps(result.report.to_dict(), indent=1))
        summary.append(fleet.summary_row(result, chosen[cluster], goal, plan_file))
        unit_rows += result.units
        broker_rows += fleet.broker_rows(result)
        finding_rows += fleet.finding_rows(result)
    output.put("summary", pa.Table.from_pylist(summary, schema=fleet.SUMMARY_SCHEMA))
    output.put("units", pa.Table.from_pylist(unit_rows, schema=fleet.UNITS_TABLE))
    output.put("brokers", pa.Table.from_pylist(broker_rows, schema=fleet.BROKER_SCHEMA))
    output.put("findings", pa.Table.from_pylist(finding_rows, schema=fleet.FINDING_SCHEMA))
    return summary


def commit_generate(
    output: Output,
    summary: list[dict[str, Any]],
    snapshots: str,
    goal: str,
    options: GenerateOptions,
    at: float | None,
    per_topic: bool,
    throttle: int | None,
    spark: SparkSettings,
) -> list[str]:
    """The generate job's outputs committed with what it was asked; returns its lines for the operator."""
    per_cluster = {
        r["cluster"]: {"status": r["status"], "plan": r["plan_file"], "snapshot_at": r["snapshot_at"] / 1000}
        for r in summary
    }
    output.commit(
        "generate",
        {
            "snapshots": snapshots,
            "goal": goal,
            "options": _options_doc(options),
            "at": at,
            "per_topic": per_topic,
            "throttle": throttle,
            "spark": spark.where,
            "clusters": per_cluster,
        },
    )
    lines = [f"{r['cluster']}: {r['status']}; {r['message'] or ''}".rstrip() for r in summary]
    if per_topic and throttle:
        lines.append(
            "No ETA for plans made topic by topic: review a cluster's plan for its waves and duration "
            "(pipeline review --throttle)."
        )
    return lines


def _options_doc(options: GenerateOptions) -> dict[str, object]:
    from dataclasses import asdict

    return {
        k: (v.value if isinstance(v, Enum) else list(v) if isinstance(v, tuple) else v)
        for k, v in asdict(options).items()
    }
