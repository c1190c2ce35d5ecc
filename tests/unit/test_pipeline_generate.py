"""The generate job on Spark gives the in-process generator's plans and reports, cluster by
cluster (and topic by topic), on a fleet of random clusters in one job: brokers down, partitions
in flight, racks or none, clusters where the goal cannot be reached or does not fit."""

from __future__ import annotations

import json
import random
from dataclasses import replace
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from console.core.errors import ConfigError, GoalImpossible
from console.core.model import ClusterState
from console.moves.impact import Pricing
from console.moves.impact_columns import impact
from console.pipeline.fleet import UnitStatus
from console.pipeline.jobs import generate_job
from console.pipeline.snapshots import canonical, cluster_dir
from console.pipeline.spark import SparkSettings
from console.plans.diff import diff
from console.plans.generate import generate
from console.plans.generators.options import GenerateOptions, Goal, Metric
from console.plans.plan import parse_plan
from console.plans.quality import merge_reports
from tests.unit.strategies import Shape, cluster
from tests.unit.timeline import T0, write_states

SPARK = SparkSettings(master="local[2]")
CLUSTERS = 8


def fleet_cluster(seed: int) -> ClusterState:
    rnd = random.Random(seed)
    racks = 0 if seed == 0 else rnd.randint(2, 3)  # cluster 0 has no racks: draining a rack does not fit it
    brokers = 3 if seed == 1 else rnd.randint(4, 9)  # cluster 1: draining a rack leaves fewer brokers than RF
    state = cluster(
        Shape(
            brokers=brokers,
            racks=racks,
            down=rnd.randint(0, 1),
            partitions=rnd.randint(8, 60),
            rf=3 if seed == 1 else rnd.randint(1, 3),
            in_flight=rnd.choice([0.0, 0.2]),
            seed=seed,
        )
    )
    return canonical(replace(state, cluster_id=f"cl-{seed}", name=f"cluster {seed}", taken_at=T0 + seed))


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, ClusterState], Path]:
    root = tmp_path_factory.mktemp("generate")
    states = {f"cl-{i}": fleet_cluster(i) for i in range(CLUSTERS)}
    older = [replace(s, taken_at=s.taken_at - 3600, partitions=s.partitions[:1]) for s in states.values()]
    write_states(root / "snapshots", older + list(states.values()))  # the last snapshot is planned on
    return states, root


def in_process(state: ClusterState, options: GenerateOptions) -> tuple[UnitStatus, str | None, dict[str, Any] | None]:
    try:
        made = generate(state, options)
    except GoalImpossible:
        return UnitStatus.IMPOSSIBLE, None, None
    except ConfigError:
        return UnitStatus.UNUSABLE, None, None
    cost = impact(diff(state, made.plan), Pricing(zones=options.zones)).summary()  # a cluster's plan carries its cost
    return (
        UnitStatus.PLANNED if len(made.plan) else UnitStatus.MET,
        made.plan.to_json() if len(made.plan) else None,
        made.report.with_impact(cost).to_dict(),
    )


def without_time(report: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in report.items() if k != "seconds"}


def read_out(out: Path, cluster: str) -> tuple[str | None, dict[str, Any] | None]:
    name = cluster_dir(cluster)
    plan, report = out / "plans" / f"{name}.json", out / "reports" / f"{name}.json"
    return (plan.read_text() if plan.exists() else None, json.loads(report.read_text()) if report.exists() else None)


@pytest.mark.parametrize(
    "options",
    [
        GenerateOptions(Goal.DECOMMISSION, racks=("r1",)),
        GenerateOptions(Goal.REBALANCE, metric=Metric.COUNT, exclude_topics="t3"),
        GenerateOptions(Goal.REBALANCE, metric=Metric.BYTES),
        GenerateOptions(Goal.FIX_RACKS),
    ],
    ids=lambda o: o.describe(),
)
def test_each_cluster_gets_the_in_process_plan_and_report(fleet, tmp_path, options) -> None:
    states, root = fleet
    out = tmp_path / "out"
    result = generate_job(str(root / "snapshots"), options, str(out), SPARK)
    summary = pd.read_parquet(out / "summary").set_index("cluster")
    assert sorted(summary.index) == sorted(states)
    statuses = set()
    for key, state in states.items():
        status, plan, report = in_process(state, options)
        statuses.add(status)
        assert summary.loc[key, "status"] == status.value, (key, summary.loc[key, "message"])
        got_plan, got_report = read_out(out, key)
        assert got_plan == plan, key
        assert (got_report and without_time(got_report)) == (report and without_time(report)), key
        if report is not None:
            assert summary.loc[key, "moved_replicas"] == report["moved_replicas"]
            assert summary.loc[key, "plan_file"] == (f"plans/{cluster_dir(key)}.json" if plan else None)
            assert pd.Timestamp(summary.loc[key, "snapshot_at"]).timestamp() == pytest.approx(state.taken_at)
        else:
            assert summary.loc[key, "message"] and summary.loc[key, "hint"] is not None
    failed = sum(1 for s in statuses if s.failed)
    assert result.failed == sum(1 for k in states if UnitStatus(summary.loc[k, "status"]).failed)
    if options.racks:
        # the fleet request fits some clusters and not others, and each is said so
        assert summary.loc["cl-0", "status"] == "unusable" and "No broker on rack r1" in summary.loc["cl-0", "message"]
        assert summary.loc["cl-1", "status"] == "impossible"
        assert UnitStatus.PLANNED in statuses and failed
    brokers = pd.read_parquet(out / "brokers")
    for key in summary.index[summary.status.isin(["planned", "met"])]:
        _, report = read_out(out, key)
        assert report is not None
        mine = brokers[brokers.cluster == key].sort_values("broker")
        assert mine.replicas_after.tolist() == [
            b["replicas"] for b in sorted(report["brokers_after"], key=lambda b: b["broker"])
        ]
    manifest = json.loads((out / "_generate.json").read_text())
    assert manifest["inputs"]["goal"] == options.describe()


def test_per_topic_each_topic_is_planned_on_its_own_and_joined(fleet, tmp_path) -> None:
    states, root = fleet
    out = tmp_path / "out"
    options = GenerateOptions(Goal.REBALANCE, metric=Metric.COUNT, exclude_topics="t0")
    generate_job(str(root / "snapshots"), options, str(out), SPARK, clusters=["cl-2", "cl-3"], per_topic=True)
    units = pd.read_parquet(out / "units")
    assert sorted(units.cluster.unique()) == ["cl-2", "cl-3"]
    for key in ("cl-2", "cl-3"):
        state = states[key]
        entries, reports = [], []
        for topic in [t for t in state.topics if t != "t0"]:
            alone = replace(state, partitions=tuple(p for p in state.partitions if p.topic == topic))
            made = generate(alone, replace(options, topics=(topic,)))
            entries += made.plan.entries
            reports.append((topic, made.report))
        got_plan, got_report = read_out(out, key)
        want = (
            ""
            if not entries
            else parse_plan(
                json.dumps(
                    {
                        "version": 1,
                        "partitions": [
                            {"topic": e.topic, "partition": e.partition, "replicas": list(e.replicas)} for e in entries
                        ],
                    }
                )
            ).to_json()
        )
        assert (got_plan or "") == want, key
        merged = merge_reports(options.describe() + " per topic", reports).to_dict()
        assert got_report is not None and without_time(got_report) == without_time(merged)
        mine = units[units.cluster == key]
        assert sorted(mine.topic) == sorted(t for t in state.topics if t != "t0")
        assert set(mine.status) <= {"planned", "met"}


def test_bad_input_is_refused_before_spark_and_nothing_is_written(fleet, tmp_path) -> None:
    _, root = fleet
    out = tmp_path / "out"
    for options, said in (
        (GenerateOptions(Goal.REBALANCE, exclude_topics="("), "not a regular expression"),
        (GenerateOptions(Goal.REPLICATION_FACTOR, replication_factor=2), "Name the topics"),
        (GenerateOptions(Goal.FIX_RACKS, racks=("r1",)), "decommission goal only"),
    ):
        with pytest.raises(ConfigError, match=said):
            generate_job(str(root / "snapshots"), options, str(out), SPARK)
    with pytest.raises(ConfigError, match="not in the history"):
        generate_job(str(root / "snapshots"), GenerateOptions(Goal.FIX_RACKS), str(out), SPARK, clusters=["nope"])
    with pytest.raises(ConfigError, match=r"does not exist|No snapshot"):
        generate_job(str(tmp_path / "nowhere"), GenerateOptions(Goal.FIX_RACKS), str(out), SPARK)
    assert not out.exists() or not [p for p in out.iterdir() if not p.name.startswith(".")]


def test_the_cli_runs_the_job_and_says_which_clusters_could_not_be_planned(fleet, tmp_path, capsys) -> None:
    from console.cli import main

    _, root = fleet
    out = tmp_path / "out"
    base = ["pipeline", "generate", "--master", "local[2]", "--snapshots", str(root / "snapshots"), "--out", str(out)]
    # a rack drained across the fleet: cl-0 has no racks and cl-1 too few brokers, so exit 1
    assert main([*base, "--decommission-rack", "r1", "--throttle", "1000"]) == 1
    err = capsys.readouterr().err
    assert "cl-0: unusable; No broker on rack r1" in err and "cl-1: impossible;" in err, err
    assert "2 of 8 cluster(s) not fully planned" in err
    assert "cl-2: planned; decommission rack r1 (" in err and "Copying takes about" in err
    assert "plans: 6 file(s)" in err and "summary: 8 row(s)" in err
    # every cluster planned: exit 0
    assert main([*base, "--rebalance", "leaders", "--cluster", "cl-2", "--cluster", "cl-3"]) == 0
    assert sorted(pd.read_parquet(out / "summary").cluster) == ["cl-2", "cl-3"]
    # input that cannot be used: exit 2, the tables of the last run untouched
    assert main([*base, "--rebalance", "count", "--exclude-topics", "("]) == 2
    assert main([*base, "--decommission-rack", " , "]) == 2
    assert main([*base, "--fix-racks", "--at", "yesterday"]) == 2
    assert "not a regular expression" in capsys.readouterr().err
    assert sorted(pd.read_parquet(out / "summary").cluster) == ["cl-2", "cl-3"]


def test_a_python_worker_that_fails_is_named_with_what_to_install() -> None:
    from pyspark.errors import PythonException

    from console.core.errors import SparkJobFailed
    from console.pipeline.spark import job_failed

    said = job_failed(
        "Planning",
        PythonException(
            "An exception was thrown from the Python worker. Please see the stack trace below.\nTraceback (most recent "
            "call last):\n  File \"x.py\", line 1, in <module>\nModuleNotFoundError: No module named 'msgspec'\n"
        ),
    )
    assert isinstance(said, SparkJobFailed)
    assert said.message == "Planning failed in a Spark Python worker: ModuleNotFoundError: No module named 'msgspec'"
    assert "PYSPARK_PYTHON" in said.hint


def test_per_topic_a_topic_a_cluster_lacks_is_said_as_for_the_whole_cluster(fleet, tmp_path) -> None:
    _states, root = fleet
    out = tmp_path / "out"
    options = GenerateOptions(Goal.REBALANCE, metric=Metric.COUNT, topics=("t1", "nope"))
    result = generate_job(
        str(root / "snapshots"), options, str(out), SPARK, clusters=["cl-2"], per_topic=True, throttle=1000
    )
    summary = pd.read_parquet(out / "summary").iloc[0]
    assert summary.status == "partial" and summary.units == 2 and summary.units_failed == 1
    assert "Not planned: topic nope: No topic nope in this cluster." in summary.message
    units = pd.read_parquet(out / "units").set_index("topic")
    assert units.loc["nope", "status"] == "unusable" and units.loc["t1", "status"] in ("planned", "met")
    assert result.failed == 1 and any("No ETA for plans made topic by topic" in x for x in result.summary)
    # the whole cluster planned: the same request does not fit either
    generate_job(str(root / "snapshots"), options, str(out), SPARK, clusters=["cl-2"])
    assert pd.read_parquet(out / "summary").iloc[0].status == "unusable"
