"""The generate job's work: the plan generators (:mod:`console.plans.generate`) run on every
cluster of the history, or on every topic of every cluster, in parallel on Spark's executors.

A *unit* is one cluster (or one topic of a cluster): Spark groups the replica rows of the chosen
snapshot by unit and hands each group to a :class:`Planner` as an Arrow table, which rebuilds the
unit's :class:`ClusterState` exactly as the in-process core would see it and runs the in-process
generator on it. This is the one place the pipeline runs Python on the executors: no built-in
function plans a reassignment. What comes back per unit is one row (:data:`UNIT_SCHEMA`): its
status, the plan and the report as JSON. :func:`cluster_result` then joins a cluster's units into
one plan and one report.

Per topic, "even" means even within each topic: each topic's partitions are spread over the
brokers on their own (the plan a topic-by-topic rebalance would make); the cluster's plan is the
union of its topics' plans and its report the sum of theirs (:func:`console.plans.quality.merge_reports`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from enum import Enum
from time import perf_counter
from typing import Any

import pyarrow as pa

from console.core.errors import ConfigError, GoalImpossible
from console.moves.waves import WaveLimits
from console.pipeline.snapshots import StoredSnapshot, state_from_rows
from console.plans.generate import generate
from console.plans.generators.options import GenerateOptions, chosen_topics
from console.plans.plan import Plan, parse_plan
from console.plans.quality import Report, merge_reports


class UnitStatus(str, Enum):
    PLANNED = "planned"
    """A plan that changes something."""
    MET = "met"
    """The goal holds already: nothing to do."""
    PARTIAL = "partial"
    """(A cluster planned per topic) some topics planned, some could not be."""
    IMPOSSIBLE = "impossible"
    """The goal cannot be reached (e.g. draining below the replication factor)."""
    UNUSABLE = "unusable"
    """The request does not fit this cluster (a broker, topic or rack it does not have)."""

    @property
    def failed(self) -> bool:
        return self in (UnitStatus.PARTIAL, UnitStatus.IMPOSSIBLE, UnitStatus.UNUSABLE)


UNIT_SCHEMA = pa.schema(
    [
        ("cluster", pa.string()),
        ("topic", pa.string()),
        ("status", pa.string()),
        ("message", pa.string()),
        ("hint", pa.string()),
        ("partitions", pa.int64()),
        ("plan", pa.string()),
        ("report", pa.string()),
        ("seconds", pa.float64()),
    ]
)
"""What :class:`Planner` returns per unit (``topic`` is null when the unit is the whole cluster)."""

UNITS_TABLE = pa.schema(
    [UNIT_SCHEMA.field(c) for c in ("cluster", "topic", "status", "message", "hint", "partitions", "seconds")]
)
"""The ``units`` table: the units without their plans and reports (those go to files)."""

_DDL = {pa.string(): "string", pa.int64(): "long", pa.float64(): "double"}


def spark_schema(schema: pa.Schema) -> str:
    """``schema`` as the DDL string Spark's Arrow functions take."""
    return ", ".join(f"{f.name} {_DDL[f.type]}" for f in schema)


@dataclass(frozen=True)
class Planner:
    """The function Spark runs per unit (picklable: module-level, plain fields)."""

    options: GenerateOptions
    snapshots: dict[str, StoredSnapshot]
    per_topic: bool = False
    throttle: int | None = None
    limits: WaveLimits = WaveLimits()

    def wants(self, topic: str) -> bool:
        """Per topic: whether ``topic`` is one of the goal's (the chosen topics, not excluded)."""
        return bool(chosen_topics(self.options, (topic,)))

    def function(self) -> Callable[[tuple[Any, ...], pa.Table], pa.Table]:
        """What ``applyInArrow`` runs per group: a plain (key, rows) function, as Spark reads its
        arguments and type hints (a bound method or a ``partial`` is refused)."""
        planner = self

        def plan_group(key: tuple[Any, ...], rows: pa.Table) -> pa.Table:
            return _plan_group(planner, key, rows)

        return plan_group

    def plan(self, cluster: str, topic: str | None, rows: pa.Table) -> dict[str, Any]:
        """One unit's row: the generator on the snapshot the rows hold."""
        from console.moves.impact import Pricing
        from console.moves.impact_columns import impact
        from console.moves.waves import plan_estimate, tiered_copied
        from console.plans.diff import diff

        started = perf_counter()
        snap = self.snapshots[cluster]
        state = state_from_rows(snap.taken_ms, snap.header, rows)
        row: dict[str, Any] = {"cluster": cluster, "topic": topic, "partitions": len(state.partitions)}
        options = replace(self.options, topics=(topic,)) if topic is not None else self.options
        try:
            made = generate(state, options)
        except GoalImpossible as e:
            return {
                **row,
                "status": UnitStatus.IMPOSSIBLE.value,
                "message": e.message,
                "hint": e.hint,
                "seconds": perf_counter() - started,
            }
        except ConfigError as e:
            return {
                **row,
                "status": UnitStatus.UNUSABLE.value,
                "message": e.message,
                "hint": e.hint,
                "seconds": perf_counter() - started,
            }
        report = made.report
        if topic is None:  # a cluster's plan: its cost (a topic's is merged with the others' reports)
            report = report.with_impact(impact(diff(state, made.plan), Pricing(zones=self.options.zones)).summary())
        if self.throttle and topic is None:
            report = report.with_estimate(
                plan_estimate(state, made.plan, self.throttle, self.limits),
                self.throttle,
                tiered_copied(state, made.plan),
            )
        status = UnitStatus.PLANNED if len(made.plan) else UnitStatus.MET
        return {
            **row,
            "status": status.value,
            "message": report.headline(),
            "hint": "",
            "plan": made.plan.to_json() if len(made.plan) else None,
            "report": json.dumps(report.to_dict()),
            "seconds": perf_counter() - started,
        }


def _plan_group(planner: Planner, key: tuple[Any, ...], rows: pa.Table) -> pa.Table:
    cluster, topic = key[0].as_py(), key[1].as_py() or None
    if topic is not None and not planner.wants(topic):
        return UNIT_SCHEMA.empty_table()
    return pa.Table.from_pylist([planner.plan(cluster, topic, rows)], schema=UNIT_SCHEMA)


@dataclass(frozen=True)
class ClusterResult:
    """A cluster's units joined: one status, one plan (maybe empty), one report (None when no
    unit could be planned), and the units (rows of :data:`UNIT_SCHEMA`), those that failed apart."""

    cluster: str
    status: UnitStatus
    plan: Plan
    report: Report | None
    units: tuple[dict[str, Any], ...]
    failed: tuple[dict[str, Any], ...]


def cluster_result(
    cluster: str, goal: str, units: Sequence[dict[str, Any]], topics: Sequence[str] = ()
) -> ClusterResult:
    """One cluster's rows of :data:`UNIT_SCHEMA` as one result. Planned per topic, ``topics`` are
    the topics asked for: one the cluster does not have is a unit that does not fit, as it is when
    the whole cluster is planned."""
    have = {u["topic"] for u in units}
    units = list(units) + [
        {
            "cluster": cluster,
            "topic": t,
            "status": UnitStatus.UNUSABLE.value,
            "message": f"No topic {t} in this cluster.",
            "hint": "Check the topic names (python -m console state).",
            "partitions": 0,
            "plan": None,
            "report": None,
            "seconds": 0.0,
        }
        for t in topics
        if t not in have
    ]
    done = (UnitStatus.PLANNED.value, UnitStatus.MET.value)
    ok = [u for u in units if u["status"] in done]
    failed = tuple(u for u in units if u["status"] not in done)
    entries = [e for u in ok if u["plan"] for e in parse_plan(u["plan"]).entries]
    reports = [(u["topic"] or "", Report.from_dict(json.loads(u["report"]))) for u in ok]
    if len(reports) == 1 and units[0]["topic"] is None:
        report: Report | None = reports[0][1]
    else:
        report = merge_reports(goal, reports) if reports else None
    if failed and ok:
        status = UnitStatus.PARTIAL
    elif failed:
        kinds = {u["status"] for u in failed}
        status = UnitStatus.IMPOSSIBLE if UnitStatus.IMPOSSIBLE.value in kinds else UnitStatus.UNUSABLE
    else:
        status = UnitStatus.PLANNED if entries else UnitStatus.MET
    return ClusterResult(cluster, status, Plan.of(entries), report, tuple(units), failed)


SUMMARY_SCHEMA = pa.schema(
    [
        ("cluster", pa.string()),
        ("snapshot_at", pa.timestamp("ms", tz="UTC")),
        ("goal", pa.string()),
        ("status", pa.string()),
        ("units", pa.int64()),
        ("units_failed", pa.int64()),
        ("partitions_changed", pa.int64()),
        ("moved_replicas", pa.int64()),
        ("moved_bytes", pa.int64()),
        ("lower_bound_replicas", pa.int64()),
        ("lower_bound_bytes", pa.int64()),
        ("ratio_replicas", pa.float64()),
        ("ratio_bytes", pa.float64()),
        ("leaders_moved", pa.int64()),
        ("removed_replicas", pa.int64()),
        ("reached", pa.bool_()),
        ("rack_violations_before", pa.int64()),
        ("rack_violations_after", pa.int64()),
        ("replicas_spread_after", pa.int64()),
        ("bytes_max_over_min_after", pa.float64()),
        ("eta_seconds", pa.float64()),
        ("plan_file", pa.string()),
        ("message", pa.string()),
        ("hint", pa.string()),
    ]
)
"""The fleet summary: one row per cluster."""

_REPORTED = (
    "partitions_changed",
    "moved_replicas",
    "moved_bytes",
    "lower_bound_replicas",
    "lower_bound_bytes",
    "ratio_replicas",
    "ratio_bytes",
    "leaders_moved",
    "removed_replicas",
    "reached",
    "rack_violations_before",
    "rack_violations_after",
    "eta_seconds",
)


def summary_row(result: ClusterResult, snapshot: StoredSnapshot, goal: str, plan_file: str | None) -> dict[str, Any]:
    row: dict[str, Any] = {
        "cluster": result.cluster,
        "snapshot_at": snapshot.taken_ms,
        "goal": goal,
        "status": result.status.value,
        "units": len(result.units),
        "units_failed": len(result.failed),
        "plan_file": plan_file,
    }
    r = result.report
    if r is not None:
        row.update({k: getattr(r, k) for k in _REPORTED})
        after = r.spreads["after"]
        row["replicas_spread_after"] = int(after["replicas"].max - after["replicas"].min)
        row["bytes_max_over_min_after"] = after["bytes"].max / after["bytes"].min if after["bytes"].min > 0 else None
        row["message"] = r.headline()
    elif not result.failed:
        row["message"] = "Nothing to plan: no partition of the chosen topics in this cluster's snapshot."
    if result.failed:
        first = result.failed[0]
        where = f"topic {first['topic']}: " if first["topic"] else ""
        more = f" (and {len(result.failed) - 1} more topic(s); see the units table)" if len(result.failed) > 1 else ""
        said = f"{where}{first['message']}{more}"
        row["message"] = f"{row['message']} Not planned: {said}" if r is not None else said
        row["hint"] = first["hint"]
    return row


def broker_rows(result: ClusterResult) -> list[dict[str, Any]]:
    """Per broker of a planned cluster: replicas, preferred leaders and bytes before and after."""
    if result.report is None:
        return []
    after = {b.broker: b for b in result.report.brokers_after}
    return [
        {
            "cluster": result.cluster,
            "broker": b.broker,
            "rack": b.rack,
            **{
                f"{m}_{when}": getattr(x, m)
                for m in ("replicas", "leaders", "bytes")
                for when, x in (("before", b), ("after", after.get(b.broker, b)))
            },
        }
        for b in result.report.brokers_before
    ]


BROKER_SCHEMA = pa.schema(
    [("cluster", pa.string()), ("broker", pa.int64()), ("rack", pa.string())]
    + [(f"{m}_{when}", pa.int64()) for m in ("replicas", "leaders", "bytes") for when in ("before", "after")]
)

FINDING_SCHEMA = pa.schema(
    [
        ("cluster", pa.string()),
        ("topic", pa.string()),
        ("code", pa.string()),
        ("severity", pa.string()),
        ("message", pa.string()),
        ("hint", pa.string()),
    ]
)


def finding_rows(result: ClusterResult) -> list[dict[str, Any]]:
    """What the generators said of a cluster (the report's findings, each with its topic when planned per topic)."""
    if result.report is None:
        return []
    return [
        {
            "cluster": result.cluster,
            "topic": f.topic,
            "code": f.code,
            "severity": f.severity.value,
            "message": f.message,
            "hint": f.hint,
        }
        for f in result.report.findings
    ]
