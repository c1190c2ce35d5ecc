"""The history job on a small scripted timeline, on Spark ``local[2]``: every move found with its
outcome, bytes, rate and throttle; copy rates, broker load, partition counts and incidents; and a
job that fails leaves the previous tables as they were."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from console.core.errors import ConfigError
from console.pipeline.calibration import load_topic_rates
from console.pipeline.datasets import read_manifest
from console.pipeline.jobs import JobResult, history_job
from console.pipeline.spark import SparkSettings
from tests.unit.timeline import EVERY, T0, part, snap, timeline, write_states


@pytest.fixture(scope="module")
def snapshots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_states(tmp_path_factory.mktemp("snapshots"), timeline())


@pytest.fixture(scope="module")
def history(
    snapshots: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[JobResult, dict[str, pd.DataFrame]]]:
    out = tmp_path_factory.mktemp("tables")
    stages: list[str] = []
    result = history_job(
        str(snapshots), str(out), SparkSettings(master="local[2]"), stuck_after_s=30, report=stages.append
    )
    assert stages[0].startswith("Checking") and "Finding moves" in stages
    tables = {t: pd.read_parquet(out / t) for t in result.tables}
    yield result, tables


def _time(tick: int) -> pd.Timestamp:
    return pd.Timestamp(T0 + EVERY * tick, unit="s", tz="UTC")


def _move(tables: dict[str, pd.DataFrame], topic: str, **match: Any) -> pd.DataFrame:
    m = tables["moves"]
    rows = m[m.topic == topic]
    for k, v in match.items():
        rows = rows[rows[k] == v]
    return rows


def test_a_completed_move_has_its_broker_bytes_duration_rate_and_throttle(history: Any) -> None:
    _, tables = history
    a = _move(tables, "a").iloc[0]
    assert (a.broker, a.source_broker, a.rack, a.outcome) == (3, 1, "r1", "completed")
    assert a.started_at == _time(2) and a.ended_at == _time(6) and a.last_seen_at == _time(5)
    assert a.bytes == 1000 and a.seconds == 40.0 and a.samples == 4
    assert a.rate_bps == pytest.approx(25.0)  # 750 B over 30 s between the first and last sample
    assert a.throttle_bps == 100


def test_cancelled_stuck_and_in_flight_moves(history: Any) -> None:
    _, tables = history
    b, c, d = (_move(tables, t).iloc[0] for t in "bcd")
    assert (b.outcome, b.ended_at, b.broker) == ("cancelled", _time(4), 4)
    assert (c.outcome, pd.isna(c.ended_at), c.last_seen_at) == ("stuck", True, _time(11))
    assert (d.outcome, d.bytes, d.samples) == ("in_flight", 300, 3)
    assert pd.isna(b.throttle_bps), "b's replicas are not in the topic's throttled lists"


def test_a_replica_moving_to_the_same_broker_twice_is_two_moves(history: Any) -> None:
    _, tables = history
    e = _move(tables, "e")
    assert list(e.outcome) == ["completed", "completed"]
    assert list(e.started_at) == [_time(1), _time(6)] and list(e.ended_at) == [_time(3), _time(8)]


def test_copy_rates_per_broker_and_per_pair(history: Any) -> None:
    _, tables = history
    rates = tables["copy_rates"]
    to3 = rates[(rates.broker == 3) & rates.source_broker.isna()].iloc[0]
    assert (to3.moves, to3.bytes) == (1, 1000)
    assert to3.rate_median_bps == pytest.approx(25.0) and to3.throttle_ratio_median == pytest.approx(0.25)
    pair = rates[(rates.broker == 3) & (rates.source_broker == 1)].iloc[0]
    assert pair.moves == 1
    assert set(rates.broker) == {2, 3}, "only completed moves teach a rate"


def test_broker_load_partition_counts_and_incidents(history: Any) -> None:
    result, tables = history
    load = tables["broker_load"]
    at4 = load[(load.taken_at == _time(4)) & (load.broker == 3)].iloc[0]
    assert (at4.replicas, at4.adding, at4.bytes) == (1, 1, 500)
    counts = tables["partition_counts"]
    assert len(counts) == 12 and counts.taken_at.is_monotonic_increasing
    assert list(counts.under_replicated[:8]) == [0, 0, 0, 0, 0, 1, 1, 1]
    inc = tables["incidents"]
    urp = inc[inc.kind == "under_replicated"].iloc[0]
    assert (urp.started_at, urp.ended_at, urp.peak_partitions, urp.snapshots) == (_time(5), _time(8), 1, 3)
    moving = inc[inc.kind == "reassigning"]
    assert len(moving) == 1 and moving.iloc[0].started_at == _time(1) and pd.isna(moving.iloc[0].ended_at)
    assert result.tables == {t: len(df) for t, df in tables.items()}
    assert "1 cluster(s); 6 move(s)" in result.summary[0]


def test_the_manifest_says_what_ran(history: Any) -> None:
    result, _ = history
    manifest = read_manifest(result.out, "history")
    assert manifest is not None and manifest["tables"]["moves"] == 6 and manifest["inputs"]["stuck_after_s"] == 30


def test_a_failed_job_leaves_the_previous_tables(
    history: Any, snapshots: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    result, _ = history
    from console.core.errors import SparkJobFailed
    from console.pipeline import history as H

    before = sorted(p.name for p in result.out.iterdir())

    def broken(*_: Any) -> Any:
        raise SparkJobFailed("broker load failed")

    monkeypatch.setattr(H, "broker_load", broken)
    with pytest.raises(ConfigError, match="broker load failed"):
        history_job(str(snapshots), str(result.out), SparkSettings(master="local[2]"))
    assert sorted(p.name for p in result.out.iterdir()) == before, "nothing half-written, no temporary left"
    assert len(pd.read_parquet(result.out / "moves")) == 6


def test_compacting_keeps_every_row_and_the_same_history(history: Any, snapshots: Path, tmp_path: Path) -> None:
    import shutil

    from console.pipeline.datasets import check_snapshots, parquet_files
    from console.pipeline.jobs import compact_job

    _, tables = history
    copy = tmp_path / "snapshots"
    shutil.copytree(snapshots, copy)
    assert len(list(parquet_files(copy))) == 24
    done = compact_job(str(copy), SparkSettings(master="local[2]"), before="2026-09-21")
    assert done.tables == {} and done.summary == ["Nothing to compact."], "the day given is not compacted yet"
    done = compact_job(str(copy), SparkSettings(master="local[2]"))
    assert done.tables == {"replicas": 1, "headers": 1}
    assert 2 <= len(list(parquet_files(copy))) <= 7, "a file per topic at most, one for the headers"
    assert compact_job(str(copy), SparkSettings(master="local[2]")).summary == ["Nothing to compact."]
    check_snapshots(str(copy))
    again = history_job(str(copy), str(tmp_path / "tables"), SparkSettings(master="local[2]"), stuck_after_s=30)
    for name, df in tables.items():
        pd.testing.assert_frame_equal(pd.read_parquet(again.out / name), df, check_dtype=False)


def test_the_calibration_the_etas_read(history: Any) -> None:
    from console.pipeline.calibration import load_calibration

    result, _ = history
    cal = load_calibration(result.out, "c1")
    assert cal is not None and set(cal.brokers) == {2, 3}
    to3 = cal.brokers[3]
    assert (to3.moves, to3.throttled_moves) == (1, 1)
    assert to3.throughput_bps == pytest.approx(25.0) and to3.rate(200) == pytest.approx(50.0)
    assert load_calibration(result.out, "another cluster") == type(cal)("another cluster", {}, cal.made_at)
    assert load_calibration(result.out / "nowhere", "c1") is None


def _unreduced_shuffles(plan: Any) -> list[str]:
    """The shuffles of a physical plan (a py4j ``SparkPlan``) fed by a scan of the replica rows with
    nothing on the way that keeps only a small share of them: a filter on ``adding``, a broadcast
    semi join, or a partial hash aggregation."""

    def children(node: Any) -> list[Any]:
        kids = node.children()
        return [kids.apply(i) for i in range(kids.size())]

    def feeds_raw_rows(node: Any) -> bool:
        name, text = node.nodeName(), node.simpleString(1000)
        if name == "Exchange":
            return False  # a shuffle below: judged on its own
        if name == "HashAggregate" or (name == "Filter" and "adding" in text):
            return False
        if name == "BroadcastHashJoin" and "LeftSemi" in text:
            return feeds_raw_rows(children(node)[1])  # the scan streams through; the broadcast side is built
        if name.startswith("Scan parquet") or name.startswith("FileScan"):
            return "replicas" in text
        return any(feeds_raw_rows(c) for c in children(node))

    found: list[str] = []

    def walk(node: Any) -> None:
        hashed = node.nodeName() == "Exchange" and "hashpartitioning" in node.simpleString(1000)
        if hashed and feeds_raw_rows(children(node)[0]):
            found.append(node.simpleString(200))
        for c in children(node):
            walk(c)

    walk(plan)
    return found


def test_no_replica_row_is_shuffled_but_the_ones_moves_are_made_of(snapshots: Path) -> None:
    """The job's cost on a day of a large cluster: the replica rows (tens of millions) are scanned;
    only the adding replicas and throttled leaders, partial aggregates and a broadcast lookup's
    matches go through a shuffle (planned without size guesses: no automatic broadcast, no
    adaptive re-planning)."""
    from console.pipeline import history as H
    from console.pipeline.datasets import read_snapshots
    from console.pipeline.spark import session

    s = session(SparkSettings(master="local[2]"))
    data = read_snapshots(s, str(snapshots))
    saved = {k: s.conf.get(k) for k in ("spark.sql.autoBroadcastJoinThreshold", "spark.sql.adaptive.enabled")}
    s.conf.set("spark.sql.autoBroadcastJoinThreshold", "-1")
    s.conf.set("spark.sql.adaptive.enabled", "false")
    try:
        adding = H.moving(data.replicas, data.headers)
        for name, df in (
            ("moving", adding),
            ("moves", H.moves(data.replicas, data.headers, adding=adding.persist())),
            ("broker_load", H.broker_load(data.replicas)),
        ):
            assert _unreduced_shuffles(df._jdf.queryExecution().executedPlan()) == [], name
        adding.unpersist()
    finally:
        for k, v in saved.items():
            s.conf.set(k, v)


def test_spark_jobs_carry_the_step_the_console_was_on(snapshots: Path) -> None:
    """What the web UI and the event log call a job: the step (``run_job``'s ``what``), restored after."""
    from console.pipeline.spark import run_job, session

    sc = session(SparkSettings(master="local[2]")).sparkContext
    seen = run_job(
        "Outer step",
        lambda: (
            sc.getLocalProperty("spark.job.description"),
            run_job("Inner step", lambda: sc.getLocalProperty("spark.job.description")),
            sc.getLocalProperty("spark.job.description"),
        ),
    )
    assert seen == ("Outer step", "Inner step", "Outer step")
    assert sc.getLocalProperty("spark.job.description") is None


def test_topic_rates_are_the_growth_of_the_leaders_logs_without_retention_drops(tmp_path: Path) -> None:
    """g-0 grows 300 B in 10 s, drops (retention deleted a segment), grows 600 B in 10 s: 45 B/s;
    g-1 does not grow; its leader moves to 2 at the third snapshot with the same log."""
    sizes = [100, 400, 100, 700]
    states = [
        snap(
            T0 + EVERY * i,
            [
                part("g", 0, [1, 2], [1, 2], 1, sizes={1: sizes[i], 2: sizes[i]}),
                part("g", 1, [1, 2], [1, 2], 1 if i < 2 else 2, sizes={1: 50, 2: 50}),
            ],
        )
        for i in range(4)
    ]
    out = tmp_path / "tables"
    history_job(str(write_states(tmp_path / "snapshots", states)), str(out), SparkSettings(master="local[2]"))
    rates = pd.read_parquet(out / "topic_rates")
    g = rates[rates.topic == "g"].iloc[0]
    assert (g.cluster, g.partitions, g.seconds) == ("c1", 2, 20.0)
    assert g.produce_bps == pytest.approx(45.0)
    assert load_topic_rates(out, "c1") == {"g": pytest.approx(45.0)} and load_topic_rates(out, "other") == {}
