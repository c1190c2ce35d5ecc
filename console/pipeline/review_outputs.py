"""The Spark review's outputs besides the per-entry findings: the findings in order, the
whole-plan ones as rows, the tiered topics moving, and the rollback lines."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from console.core.ids import BrokerId
from console.core.model import Finding, Severity
from console.plans.diff import ChangeKind
from console.plans.plan import ANY
from console.plans.rules.overall import space_findings, tiered_findings

FINDING_COLUMNS = ["cluster", "rank", "code", "severity", "topic", "partition", "broker", "message", "hint"]
_RANK = {s: s.rank for s in Severity}


def _current_dir(broker: Column) -> Column:
    """The dir of this partition's (non-future) log on ``broker`` when it reported one, else null."""
    here = F.filter("dirs", lambda d: (d["broker"] == broker) & (d["log_dir"] != ""))
    return F.try_element_at(here, F.lit(1))["log_dir"]


def order_findings(per_entry: DataFrame, overall: DataFrame) -> DataFrame:
    """Errors first, then by plan entry (whole-plan and broker findings first), then check and cell."""
    ranked = per_entry.unionByName(overall).withColumn(
        "rank", F.row_number().over(Window.partitionBy("cluster").orderBy("sev", "idx", "check", "cell"))
    )
    return ranked.select(*FINDING_COLUMNS).orderBy("cluster", "rank")


def overall_rows(cluster: str, found: list[Any]) -> list[dict[str, Any]]:
    """Whole-plan and broker findings (built in the driver from small tables) as finding rows."""
    out = []
    for number, severity in enumerate(Severity):
        these = [f for f in found if f.severity is severity]
        for j, f in enumerate(these):
            out.append(
                {
                    "cluster": cluster,
                    "idx": -1,
                    "check": 100 + number,
                    "cell": j,
                    "sev": _RANK[severity],
                    "code": f.code,
                    "severity": f.severity.value,
                    "topic": f.topic,
                    "partition": f.partition,
                    "broker": None if f.broker is None else int(f.broker),
                    "message": f.message,
                    "hint": f.hint,
                }
            )
    return out


def overall_findings(
    clusters: Iterable[str],
    usable: Mapping[str, Mapping[BrokerId, int | None]],
    size_found: Mapping[str, list[Finding]],
    broker_in: Iterable[Any],
    tiered: Iterable[Any],
) -> list[dict[str, Any]]:
    """The findings about each cluster's whole plan or a broker, as finding rows, from the totals
    Spark computed: each broker's bytes in (``broker_in``: cluster, broker, bytes_in), each tiered
    topic moving (``tiered``: cluster, topic, partitions, bytes), and the plan's size findings."""
    broker_in, tiered = list(broker_in), list(tiered)
    out = []
    for cluster in clusters:
        found = space_findings(
            usable.get(cluster, {}),
            [(BrokerId(int(r["broker"])), int(r["bytes_in"])) for r in broker_in if r["cluster"] == cluster],
        )
        found += size_found[cluster]
        found += tiered_findings(
            [(r["topic"], int(r["partitions"]), int(r["bytes"])) for r in tiered if r["cluster"] == cluster]
        )
        out += overall_rows(cluster, found)
    return out


def tiered_moving(ch: DataFrame, tiered: Mapping[str, Iterable[str]]) -> DataFrame:
    """Per cluster and tiered topic (``tiered``: cluster → its topics with ``remote.storage.enable=true``)
    that the plan adds replicas of: how many partitions and the bytes to copy (the local log only),
    for :func:`console.plans.rules.overall.tiered_findings`."""
    wanted = F.lit(False)
    for cluster in tiered:
        wanted = wanted | ((F.col("cluster") == cluster) & F.col("topic").isin(sorted(tiered[cluster])))
    return (
        ch.filter((F.size("adding") > 0) & wanted)
        .groupBy("cluster", "topic")
        .agg(F.count(F.lit(1)).alias("partitions"), F.sum("bytes_to_copy").alias("bytes"))
    )


def rollback_lines(ch: DataFrame, named_dirs: Iterable[str] = ()) -> DataFrame:
    """Per known entry in plan order, its rollback entry as the official JSON writes it
    (:func:`console.plans.plan.rollback`): for the clusters in ``named_dirs`` (those whose release
    is 4.2 or later, :func:`console.core.cluster_info.rollback_names_dirs`), each original replica's
    current log dir, ``"any"`` where its broker reported none; ``"any"`` everywhere else."""
    known = ch.filter(F.col("kind") != ChangeKind.UNKNOWN.value)
    clusters = sorted(set(named_dirs))
    names = F.col("cluster").isin(clusters) if clusters else F.lit(False)
    entry = F.to_json(
        F.struct(
            F.col("topic"),
            F.col("partition"),
            F.col("current").alias("replicas"),
            F.transform("current", lambda b: F.coalesce(F.when(names, _current_dir(b)), F.lit(ANY))).alias("log_dirs"),
        )
    )
    return known.select("cluster", "idx", entry.alias("json")).orderBy("cluster", "idx")
