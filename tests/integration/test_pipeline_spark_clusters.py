"""The history, generate and review jobs on real Spark services, not only local: a standalone
master and worker (the generate job, whose planners run in Python workers on its executors, with the
console's code shipped to them) and a Spark Connect server (all three) started from the PySpark
distribution on loopback give the same tables (plans, findings and rollback) as ``local[2]``; a
master or Connect server that does not answer is exit 2 with a message."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from console.cli import main as cli
from console.pipeline.jobs import history_job
from console.pipeline.spark import SparkSettings
from tests.sparkcluster import connect_server, free_port, standalone
from tests.unit.timeline import timeline, write_states

ROOT = Path(__file__).resolve().parents[2]
TABLES = ("moves", "copy_rates", "broker_load", "partition_counts", "incidents", "topic_rates")


def pipeline(job: str, snapshots: Path, out: Path, *args: str) -> subprocess.CompletedProcess[str]:
    # executors of a standalone cluster run the driver's PYSPARK_PYTHON (the generate job's planners)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "SPARK_LOCAL_IP": "127.0.0.1", "PYSPARK_PYTHON": sys.executable}
    return subprocess.run(
        [sys.executable, "-m", "console", "pipeline", job, "--snapshots", str(snapshots), "--out", str(out), *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def history(snapshots: Path, out: Path, *where: str) -> subprocess.CompletedProcess[str]:
    return pipeline("history", snapshots, out, "--stuck-after", "30", *where)


GOAL = ("--decommission", "2", "--per-topic")
PLAN = {
    "version": 1,
    "partitions": [
        {"topic": "a", "partition": 0, "replicas": [4]},  # a move
        {"topic": "f", "partition": 0, "replicas": [1, 9]},  # onto a broker that does not exist: an error
        {"topic": "zz", "partition": 0, "replicas": [1]},  # a partition the snapshot does not know
    ],
}
REVIEWED = ("partitions", "brokers", "flows", "findings")


def review_args(out: Path) -> tuple[str, ...]:
    """The review job's arguments but where it runs (the plan written beside ``out``)."""
    plan = out.parent / f"{out.name}-plan.json"
    plan.write_text(json.dumps(PLAN))
    return ("--reassignment-json-file", str(plan), "--throttle", "1000")


def review(snapshots: Path, out: Path, *where: str) -> subprocess.CompletedProcess[str]:
    return pipeline("review", snapshots, out, *review_args(out), *where)


def reviewed(out: Path) -> dict[str, pd.DataFrame]:
    """What the review job wrote: its tables, and each rollback file as one row."""
    files = {p.name: p.read_text() for p in sorted(out.glob("rollback-*.json"))}
    return {t: pd.read_parquet(out / t) for t in REVIEWED} | {
        "rollback": pd.DataFrame({"file": list(files), "json": list(files.values())})
    }


@pytest.fixture(scope="module")
def snapshots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_states(tmp_path_factory.mktemp("spark-snapshots"), timeline())


@pytest.fixture(scope="module")
def local(snapshots: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, pd.DataFrame]:
    """The tables from local[2], in this process (the test session's Spark session: the command
    line's jobs run in it too, no second JVM started)."""
    out = tmp_path_factory.mktemp("local-tables")
    history_job(str(snapshots), str(out), SparkSettings(master="local[2]"), stuck_after_s=30)

    def job(name: str, to: Path, *args: str) -> None:
        assert (
            cli(["pipeline", name, "--snapshots", str(snapshots), "--out", str(to), "--master", "local[2]", *args]) == 0
        )

    job("generate", out / "generated", *GOAL)
    job("review", out / "reviewed", *review_args(out / "reviewed"))
    return (
        {t: pd.read_parquet(out / t) for t in TABLES}
        | planned(out / "generated")
        | {f"review {t}": df for t, df in reviewed(out / "reviewed").items()}
    )


def planned(out: Path) -> dict[str, pd.DataFrame]:
    """What the generate job wrote, less the seconds it took."""
    plans = {p.name: p.read_text() for p in sorted((out / "plans").glob("*.json"))}
    return {
        "summary": pd.read_parquet(out / "summary").drop(columns=["message"]),
        "units": pd.read_parquet(out / "units").drop(columns=["seconds", "message"]),
        "plans": pd.DataFrame({"file": list(plans), "plan": list(plans.values())}),
    }


@pytest.mark.parametrize(
    "service, flag, every_job",
    # the history job is built-in functions only (no Python worker): run where its API may differ
    # (Connect). The generate job's planners prove on the standalone cluster what its review would
    # too (Python workers on its executors running the shipped console); both run on Connect
    [(standalone, "--master", False), (connect_server, "--remote", True)],
    ids=["standalone master and worker", "Spark Connect server"],
)
def test_the_jobs_on_a_real_spark_service(snapshots, local, tmp_path, service, flag, every_job) -> None:
    with service(tmp_path / "spark") as address:
        ran = history(snapshots, tmp_path / "tables", flag, address) if every_job else None
        generated = pipeline("generate", snapshots, tmp_path / "generated", flag, address, *GOAL)
        checked = review(snapshots, tmp_path / "reviewed", flag, address) if every_job else None
    assert f"Starting Spark ({address})" in generated.stderr
    assert len(local["moves"]) == 6
    if ran is not None:
        assert ran.returncode == 0, ran.stderr
        for t in TABLES:
            pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "tables" / t), local[t], check_dtype=False)
    # the planners ran in the service's Python workers and made the same plans
    assert generated.returncode == 0, generated.stderr
    for t, df in planned(tmp_path / "generated").items():
        pd.testing.assert_frame_equal(df, local[t], check_dtype=False)
    assert len(local["units"]) >= 2 and len(local["plans"]) == 1
    # the review's rules ran in the service's Python workers: the same findings, diff and rollback
    if checked is not None:
        assert checked.returncode == 0, checked.stderr
        for t, df in reviewed(tmp_path / "reviewed").items():
            pd.testing.assert_frame_equal(df, local[f"review {t}"], check_dtype=False)
    codes = set(local["review findings"]["code"])
    assert {"unknown-broker", "unknown-topic"} <= codes, codes
    assert len(local["review rollback"]) == 1 and '"topic":"a"' in local["review rollback"]["json"][0]


@pytest.mark.parametrize(
    "flag, scheme, what", [("--master", "spark", "Spark master"), ("--remote", "sc", "Spark Connect server")]
)
def test_a_spark_that_does_not_answer_is_named(snapshots, tmp_path, flag, scheme, what) -> None:
    url = f"{scheme}://127.0.0.1:{free_port()}"
    ran = history(snapshots, tmp_path / "tables", flag, url)
    assert ran.returncode == 2
    assert f"Error: The {what} at {url} does not answer" in ran.stderr and flag in ran.stderr
    assert not (tmp_path / "tables").exists() or not any((tmp_path / "tables").iterdir()), "nothing written"
