"""The history job on real Spark services, not only local: a standalone master and worker and a
Spark Connect server started from the PySpark distribution on loopback give the same tables as
``local[2]``; a master or Connect server that does not answer is exit 2 with a message."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from console.pipeline.jobs import history_job
from console.pipeline.spark import SparkSettings
from tests.sparkcluster import connect_server, free_port, standalone
from tests.unit.timeline import timeline, write_states

ROOT = Path(__file__).resolve().parents[2]
TABLES = ("moves", "copy_rates", "broker_load", "partition_counts", "incidents")


def history(snapshots: Path, out: Path, *where: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "SPARK_LOCAL_IP": "127.0.0.1"}
    return subprocess.run([sys.executable, "-m", "console", "pipeline", "history", "--snapshots", str(snapshots),
                           "--out", str(out), "--stuck-after", "30", *where], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=600)


@pytest.fixture(scope="module")
def snapshots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_states(tmp_path_factory.mktemp("spark-snapshots"), timeline())


@pytest.fixture(scope="module")
def local(snapshots: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, pd.DataFrame]:
    """The tables from local[2], in this process (the test session's Spark session)."""
    out = tmp_path_factory.mktemp("local-tables")
    history_job(str(snapshots), str(out), SparkSettings(master="local[2]"), stuck_after_s=30)
    return {t: pd.read_parquet(out / t) for t in TABLES}


@pytest.mark.parametrize("service, flag", [(standalone, "--master"), (connect_server, "--remote")],
                         ids=["standalone master and worker", "Spark Connect server"])
def test_history_on_a_real_spark_service(snapshots, local, tmp_path, service, flag) -> None:
    with service(tmp_path / "spark") as address:
        ran = history(snapshots, tmp_path / "tables", flag, address)
    assert ran.returncode == 0, ran.stderr
    assert f"Starting Spark ({address})" in ran.stderr
    for t in TABLES:
        pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "tables" / t), local[t], check_dtype=False)
    assert len(local["moves"]) == 6


@pytest.mark.parametrize("flag, scheme, what", [("--master", "spark", "Spark master"),
                                                 ("--remote", "sc", "Spark Connect server")])
def test_a_spark_that_does_not_answer_is_named(snapshots, tmp_path, flag, scheme, what) -> None:
    url = f"{scheme}://127.0.0.1:{free_port()}"
    ran = history(snapshots, tmp_path / "tables", flag, url)
    assert ran.returncode == 2
    assert f"Error: The {what} at {url} does not answer" in ran.stderr and flag in ran.stderr
    assert not (tmp_path / "tables").exists() or not any((tmp_path / "tables").iterdir()), "nothing written"
