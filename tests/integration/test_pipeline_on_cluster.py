"""The pipeline on the real sandbox: ``collect`` runs while the official tool moves a partition
under a throttle and cancels another; ``pipeline history`` finds both moves; the calibration it
leaves predicts a second identical move within ±25 %."""

from __future__ import annotations

import contextlib
import io
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from console.cli import main as cli
from console.core.model import BrokerId
from console.moves.progress import estimate_run, estimate_seconds
from console.moves.waves import plan_waves
from console.pipeline.calibration import load_calibration
from console.pipeline.datasets import parquet_files
from console.plans.plan import Plan, PlanEntry
from console.state.reader import ClusterReader
from tests.integration.helpers import in_flight, make_topic
from tests.support import connection_args, official, settings_for, wait_for

ROOT = Path(__file__).resolve().parents[2]
TOPIC = "pipeline-moves"
KB_PER_PARTITION = 8000
THROTTLE = 1_000_000


def console(*args: str, **kw: object) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen(
        [sys.executable, "-m", "console", *args],
        cwd=ROOT,
        env=env,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        **kw,
    )  # type: ignore[call-overload]


def move(sandbox, tmp_path: Path, partition: int, to: int, throttle: int, name: str) -> Path:
    plan = Plan.of([PlanEntry(TOPIC, partition, (BrokerId(to),))])
    path = tmp_path / f"{name}.json"
    path.write_text(plan.to_json())
    ran = official(sandbox, "--execute", "--reassignment-json-file", str(path), "--throttle", str(throttle))
    assert ran.returncode == 0, ran.stdout + ran.stderr
    return path


def snapshots_kept(snaps: Path) -> int:
    """How many snapshots the collector has written under ``snaps`` (one header file each)."""
    return sum(1 for _ in parquet_files(snaps / "headers"))


def until_done(sandbox, path: Path) -> float:
    """Seconds until the move in ``path`` completed; the official --verify then lifts its throttles."""
    start = time.monotonic()
    wait_for(lambda: not in_flight(sandbox.bootstrap_servers, TOPIC), timeout=120, every=0.25, what="the move")
    took = time.monotonic() - start
    official(sandbox, "--verify", "--reassignment-json-file", str(path))
    return took


@pytest.fixture(scope="module")
def collected(sandbox, tmp_path_factory: pytest.TempPathFactory):
    tmp = tmp_path_factory.mktemp("pipeline")
    bs = sandbox.bootstrap_servers
    make_topic(bs, TOPIC, 3, 1, KB_PER_PARTITION, assignment=[[0], [0], [0]])
    snaps = tmp / "snapshots"
    collector = console("collect", *connection_args(sandbox), "--out", str(snaps), "--every", "1")
    try:
        wait_for(
            lambda: any(parquet_files(snaps / "headers")) if snaps.exists() else False,
            timeout=60,
            what="the first snapshot",
        )
        done = move(sandbox, tmp, 0, 1, THROTTLE, "first")
        took = until_done(sandbox, done)
        cancelled = move(sandbox, tmp, 1, 2, 100_000, "cancelled")
        kept = snapshots_kept(snaps)
        wait_for(lambda: snapshots_kept(snaps) >= kept + 4, what="four snapshots of the move in flight")
        ran = official(sandbox, "--cancel", "--reassignment-json-file", str(cancelled))
        assert ran.returncode == 0, ran.stdout + ran.stderr
        wait_for(lambda: not in_flight(bs, TOPIC), timeout=60, what="the cancel")
        kept = snapshots_kept(snaps)
        wait_for(lambda: snapshots_kept(snaps) >= kept + 2, what="two snapshots after the cancel")
    finally:
        collector.send_signal(signal.SIGTERM)
        _, err = collector.communicate(timeout=30)
    assert collector.returncode == 0, err
    assert "Kept" in err and "per snapshot beyond reading the cluster" in err
    with ClusterReader(settings_for(sandbox)) as reader:
        state = reader.snapshot()
    said = io.StringIO()  # the command line's job, in the test session's Spark (no second JVM started)
    with contextlib.redirect_stderr(said):
        code = cli(
            ["pipeline", "history", "--snapshots", str(snaps), "--out", str(tmp / "tables"), "--master", "local[2]"]
        )
    err = said.getvalue()
    assert code == 0, err
    assert "history: done in" in err and "moves:" in err
    moves = pd.read_parquet(tmp / "tables" / "moves")
    return state, moves, took, tmp / "tables", tmp


def test_history_finds_the_throttled_move_with_its_bytes_outcome_and_rate(collected) -> None:
    state, moves, took, _, _ = collected
    mine = moves[moves.topic == TOPIC]
    first = mine[mine.partition == 0]
    assert len(first) == 1, mine
    m = first.iloc[0]
    size = state.partition(TOPIC, 0).size_on(BrokerId(1))
    assert (m.broker, m.source_broker, m.outcome, m.cluster) == (1, 0, "completed", state.cluster_id)
    assert abs(m.bytes - size) <= 0.05 * size, (m.bytes, size)
    assert m.throttle_bps == THROTTLE
    assert 0.5 * THROTTLE <= m.rate_bps <= 1.25 * THROTTLE, m.rate_bps
    assert abs(m.seconds - took) <= 3, (m.seconds, took)


def test_the_cancelled_move_shows_cancelled(collected) -> None:
    _, moves, _, _, _ = collected
    cancelled = moves[(moves.topic == TOPIC) & (moves.partition == 1)]
    assert list(cancelled.outcome) == ["cancelled"] and list(cancelled.broker) == [2]


def test_the_calibrated_eta_of_a_second_identical_move(collected, sandbox) -> None:
    state, _, _, tables, tmp = collected
    calibration = load_calibration(tables, state.cluster_id)
    assert calibration is not None and BrokerId(1) in calibration.brokers
    plan = Plan.of([PlanEntry(TOPIC, 2, (BrokerId(1),))])
    waves = plan_waves(state, plan)
    est = estimate_run(state, waves, THROTTLE, calibration)
    assert est is not None and est.calibrated and est.basis.endswith("to broker 1")
    actual = until_done(sandbox, move(sandbox, tmp, 2, 1, THROTTLE, "second"))
    print(
        f"second move: calibrated ETA {est.seconds:.1f} s, throttle-only {estimate_seconds(state, waves, THROTTLE):.1f} s, "
        f"took {actual:.1f} s"
    )
    assert abs(est.seconds - actual) <= 0.25 * actual, (est.seconds, actual)


def test_the_servers_background_collector_appends_snapshots_until_stopped(sandbox, tmp_path) -> None:
    from console.pipeline.collect import BackgroundCollector

    with ClusterReader(settings_for(sandbox)) as reader:
        collector = BackgroundCollector(reader, tmp_path, every_s=1.0).start()
        try:
            wait_for(lambda: collector.kept >= 2, timeout=60, what="two snapshots collected")
        finally:
            collector.stop()
        kept = collector.kept
        # stopped: its thread ends (stop() waits for it a while; a loaded machine may take longer),
        # and it kept nothing after stop() returned
        wait_for(lambda: not collector._thread.is_alive(), timeout=60, what="the collector's thread ended")
        assert collector.kept == kept and collector.problem is None
        assert len(list(parquet_files(tmp_path / "headers"))) == kept
