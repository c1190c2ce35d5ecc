"""The review job's steps (:func:`console.pipeline.jobs.review_job`): the plans read and staged,
what the job needs of each cluster's snapshot header, then the diff and its waves, the brokers and
flows, the findings, the rollback and the counts, each written to the job's output."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

import pyarrow as pa

from console.core.errors import ConfigError
from console.core.ids import BrokerId
from console.core.limits import BATCH_PLAN_LIMITS
from console.core.model import ClusterState, Finding
from console.pipeline.datasets import Output
from console.pipeline.review_waves import cut_waves
from console.pipeline.snapshots import StoredSnapshot, cluster_dir
from console.pipeline.spark import run_job

if TYPE_CHECKING:
    from collections.abc import Callable

    from pyspark.sql import DataFrame, SparkSession

    from console.moves.impact import Impact, ImpactLimits, Pricing
    from console.moves.waves import WaveLimits
    from console.pipeline.review import Inputs
    from console.plans.plan import Plan
    from console.plans.rules.batch import BrokerTable


def read_plans(plans: dict[str | None, str]) -> dict[str | None, Plan]:
    """Each plan file parsed (plans of up to tens of millions of entries); one that cannot be read
    or parsed is a :class:`ConfigError` naming it."""
    from console.plans.plan import parse_plan

    parsed = {}
    for cluster, path in plans.items():
        try:
            text = Path(path).read_bytes()
        except OSError as e:
            raise ConfigError(f"Cannot read {path}: {e.strerror or e}.", "Check the path of the plan.") from None
        parsed[cluster] = parse_plan(text, limits=BATCH_PLAN_LIMITS)
    return parsed


@dataclass(frozen=True)
class StagedPlans:
    """What the job needs of each plan, so the plans themselves can go (millions of entries)."""

    path: str
    """The plans' entries as one Parquet file (:func:`console.pipeline.review.plan_table`)."""
    size_found: dict[str, list[Finding]]
    """Each cluster's findings about its plan's size."""
    clusters: list[str]


def stage_plans(output: Output, reviewed: dict[str, Plan]) -> StagedPlans:
    from console.pipeline import review as R
    from console.plans.rules.overall import plan_size_findings

    table = pa.concat_tables([R.plan_table(c, p) for c, p in reviewed.items()])
    return StagedPlans(
        str(output.stage("staged-plan.parquet", table)),
        {c: plan_size_findings(p) for c, p in reviewed.items()},
        list(reviewed),
    )


@dataclass(frozen=True)
class ClusterFacts:
    """What the job reads of each chosen snapshot's header (its brokers and topics' settings)."""

    brokers_rows: list[dict[str, object]]
    min_isr_rows: list[dict[str, object]]
    usable: dict[str, dict[BrokerId, int | None]]
    """Each broker's usable bytes, per cluster."""
    named_dirs: list[str]
    """Clusters whose official rollback names log dirs (Kafka 4.2 and later)."""
    tiered: dict[str, frozenset[str]]
    """Each cluster's tiered topics (remote.storage.enable=true)."""
    tables: dict[str, BrokerTable]
    """Each cluster's brokers as the rules read them."""
    taken: dict[str, float]
    """When each cluster's snapshot was taken (seconds)."""
    headers: dict[str, ClusterState]
    """Each cluster's snapshot header (its brokers and log dirs, no partitions): the impact's."""


def cluster_facts(chosen: dict[str, StoredSnapshot]) -> ClusterFacts:
    from console.core.cluster_info import rollback_names_dirs
    from console.pipeline import review as R
    from console.plans.rules.batch import broker_table
    from console.state.document import state_from_doc

    facts = ClusterFacts([], [], {}, [], {}, {}, {}, {})
    for cluster, snap in chosen.items():
        state = state_from_doc(json.loads(snap.header), ())
        if rollback_names_dirs(state.info):
            facts.named_dirs.append(cluster)
        if state.tiered_topics:
            facts.tiered[cluster] = state.tiered
        facts.brokers_rows.extend(R.broker_rows(cluster, state))
        facts.tables[cluster] = broker_table(state)
        facts.usable[cluster] = {b.id: b.usable_bytes for b in state.brokers}
        facts.min_isr_rows.extend({"cluster": cluster, "topic": t, "min_isr": int(v)} for t, v in state.min_insync)
        facts.taken[cluster] = snap.taken_ms / 1000
        facts.headers[cluster] = state
    return facts


def inputs(s: SparkSession, replicas: DataFrame, facts: ClusterFacts, staged: StagedPlans) -> Inputs:
    from console.pipeline import review as R

    return R.Inputs(
        replicas=replicas,
        brokers=s.createDataFrame(facts.brokers_rows, R.BROKER_SCHEMA),
        min_isr=s.createDataFrame(facts.min_isr_rows, "cluster string, topic string, min_isr long"),
        plan=s.read.parquet(staged.path),
    )


@dataclass(frozen=True)
class Reviewed:
    """The figures the job's manifest and summary take from its tables."""

    waves: dict[str, tuple[int, float | None]]
    """Per cluster, how many waves and the ETA at the throttle."""
    counts: dict[tuple[str, str], int]
    """(cluster, kind of change) → entries."""
    severities: dict[tuple[str, str], int]
    """(cluster, severity) → findings."""
    tiered_moving: list[Any]
    impacts: dict[str, Impact]
    """Per cluster, what its plan costs and whom it touches (written as ``impact/<cluster>.json``)."""


@dataclass(frozen=True)
class ImpactSettings:
    """What the review's impact is priced and measured with (the same for every cluster of the job)."""

    pricing: Pricing | None = None
    rates: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    """Per cluster, each topic's produce rate (bytes/s) (missing: unknown)."""
    rates_tables: str | None = None
    """Else the history's tables to read them from (``topic_rates``, as the pages and the CLI do)."""
    limits: ImpactLimits | None = None
    skip: bool = False
    """No impact at all (the benchmark's "without")."""


def write_review(
    s: SparkSession,
    output: Output,
    inputs: Inputs,
    facts: ClusterFacts,
    staged: StagedPlans,
    limits: WaveLimits,
    throttle: int | None,
    report: Callable[[str], None],
    priced: ImpactSettings | None = None,
) -> Reviewed:
    """Every table of the review and the rollback files, from the diff computed once (cached)."""
    from console.pipeline import review as R

    report("Diffing the plans")
    changes = R.changes(inputs).persist()
    waves = write_diff(s, output, changes, limits, throttle, report)
    report("Brokers and flows")
    broker_table, flows = R.brokers(inputs, changes)
    broker_table = broker_table.persist()
    output.write("brokers", broker_table.select(*R.BROKER_COLUMNS))
    output.write("flows", flows)
    priced = priced or ImpactSettings()
    impacts = {}
    if not priced.skip:
        report("Impact")
        impacts = write_impact(s, output, inputs, changes, broker_table, facts, staged.clusters, priced, throttle)
    broker_table.unpersist()
    report("Findings")
    tiered = write_findings(s, output, inputs, changes, facts, staged)
    report("Rollback")
    write_rollback(output, changes, facts.named_dirs, staged.clusters)
    counts, severities = count(s, output, changes)
    changes.unpersist()
    return Reviewed(waves, counts, severities, tiered, impacts)


def write_impact(
    s: SparkSession,
    output: Output,
    inputs: Inputs,
    changes: DataFrame,
    wide: DataFrame,
    facts: ClusterFacts,
    clusters: list[str],
    priced: ImpactSettings,
    throttle: int | None,
) -> dict[str, Impact]:
    """Each cluster's impact (:mod:`console.pipeline.review_impact`), written as ``impact/<cluster>.json``
    (its figures as ``validate --json`` gives them, and its findings)."""
    from console.moves.impact import ImpactTerms
    from console.pipeline import review_impact as I
    from console.pipeline.calibration import load_topic_rates

    def rows(df: DataFrame, what: str) -> list[Any]:
        return run_job(f"Collecting {what}", lambda: df.collect())

    topics = rows(I.topic_totals(changes, I.zones_of(facts.headers, priced.pricing)), "the topics touched")
    touched = s.createDataFrame([(r["cluster"], r["topic"]) for r in topics], "cluster string, topic string")
    partitions = rows(I.topic_partitions(inputs.replicas, touched), "the topics' partitions") if topics else []
    several = {c: ids for c in clusters if (ids := I.several_dirs(facts.headers[c]))}
    freed = rows(I.freed_rows(changes, several), "the bytes freed per log dir") if several else []
    named = rows(I.named_rows(changes), "the log dirs named")
    brokers = rows(wide, "the brokers' totals")
    flows = rows(s.read.parquet(output.path("flows")), "the flows")
    out = {}
    for c in clusters:
        tables = I.ClusterTables(
            [r for r in brokers if r["cluster"] == c],
            [r for r in flows if r["cluster"] == c],
            [r for r in topics if r["cluster"] == c],
            {r["topic"]: int(r["partitions"]) for r in partitions if r["cluster"] == c},
            [r for r in freed if r["cluster"] == c],
            [r for r in named if r["cluster"] == c],
        )
        rates = priced.rates.get(c) or (load_topic_rates(priced.rates_tables, c) if priced.rates_tables else None)
        im = I.cluster_impact(facts.headers[c], tables, ImpactTerms(priced.pricing, rates, throttle, priced.limits))
        out[c] = im
        doc = im.to_dict() | {"findings": [f.to_dict() for f in im.findings]}
        output.put_text("impact", f"{cluster_dir(c)}.json", json.dumps(doc))
    return out


def write_diff(
    s: SparkSession,
    output: Output,
    changes: DataFrame,
    limits: WaveLimits,
    throttle: int | None,
    report: Callable[[str], None],
) -> dict[str, tuple[int, float | None]]:
    """The moving entries collected and cut into waves (as a run cuts them), then the diff with each
    entry's wave written as the ``partitions`` table; per cluster, how many waves and the ETA."""
    from pyspark.sql import functions as F

    from console.pipeline import review as R

    report("Collecting the moving entries")
    moving = run_job(
        "Collecting the moving entries",
        lambda: (
            changes.filter(~F.col("kind").isin("no change", "unknown partition"))
            .select(
                "cluster",
                "idx",
                "adding",
                "bytes_to_copy",
                "size",
                F.coalesce("leader_before", F.try_element_at("current", F.lit(1))).alias("source"),
                "dir_copies",
            )
            .toArrow()
        ),
    )
    report("Cutting waves")
    waves_table, summary_waves = cut_waves(moving, limits, throttle)
    del moving
    waves_df = s.read.parquet(str(output.stage("staged-waves.parquet", waves_table)))
    del waves_table
    report("Writing the diff")
    output.write(
        "partitions",
        changes.join(waves_df, ["cluster", "idx"], "left")
        .select(*R.PARTITION_COLUMNS, "wave")
        .orderBy("cluster", "idx"),
    )
    return summary_waves


def write_findings(
    s: SparkSession, output: Output, inputs: Inputs, changes: DataFrame, facts: ClusterFacts, staged: StagedPlans
) -> list[Any]:
    """The findings table: each entry's (the rules run over the diff's Arrow batches) and those
    about a whole plan or a broker (from the brokers' totals as written); the tiered topics moving."""
    from console.pipeline import spark_rules
    from console.pipeline.review_outputs import order_findings, overall_findings, tiered_moving

    broker_in = run_job(
        "Collecting the brokers",
        lambda: (
            s.read.parquet(output.path("brokers"))  # as written, not summed again
            .select("cluster", "broker", "bytes_in")
            .orderBy("cluster", "broker")
            .collect()
        ),
    )
    moving = (
        run_job("Collecting the tiered topics moving", lambda: tiered_moving(changes, facts.tiered).collect())
        if facts.tiered
        else []
    )
    overall = overall_findings(staged.clusters, facts.usable, staged.size_found, broker_in, moving)
    overall_df = s.createDataFrame(overall, spark_rules.FINDING_SCHEMA)
    output.write("findings", order_findings(spark_rules.findings(inputs, changes, facts.tables), overall_df))
    return moving


def write_rollback(output: Output, changes: DataFrame, named_dirs: list[str], clusters: list[str]) -> None:
    """One JSON line per entry, written by Spark in plan order, then joined into each cluster's
    official document file by file (a rollback of millions of entries never sits in the driver)."""
    from console.pipeline.review_outputs import rollback_lines

    lines_dir = output.path("rollback-lines")
    run_job(
        "Writing the rollback",
        lambda: (
            rollback_lines(changes, named_dirs).select("cluster", "json").write.partitionBy("cluster").text(lines_dir)
        ),
    )
    written = {unquote(d.name.split("=", 1)[1]): d for d in Path(lines_dir).glob("cluster=*")}
    for cluster in clusters:
        output.join_lines(
            written.get(cluster, Path(lines_dir) / "none"),
            f"rollback-{cluster_dir(cluster)}.json",
            '{"version":1,"partitions":[',
            ",",
            "]}",
        )


def count(
    s: SparkSession, output: Output, changes: DataFrame
) -> tuple[dict[tuple[str, str], int], dict[tuple[str, str], int]]:
    """Per cluster, the entries by kind of change and the findings (as written) by severity."""
    from pyspark.sql import functions as F

    counts = run_job(
        "Counting",
        lambda: {
            (r["cluster"], r["kind"]): r["n"]
            for r in changes.groupBy("cluster", "kind").agg(F.count(F.lit(1)).alias("n")).collect()
        },
    )
    severities = run_job(
        "Counting findings",
        lambda: {
            (r["cluster"], r["severity"]): r["n"]
            for r in s.read.parquet(output.path("findings"))
            .groupBy("cluster", "severity")
            .agg(F.count(F.lit(1)).alias("n"))
            .collect()
        },
    )
    return counts, severities
