"""Errors by meaning, as the command line's exit codes say them (console/cli/exits.py): input or
settings that cannot be used exit 2 (``ConfigError``); a cluster that could not be read
(``ClusterUnavailable``) and a change of state the console refuses (``IllegalTransition``) exit 1
(issue: both were ``ConfigError``, exit 2, "unusable input")."""

from __future__ import annotations

from pathlib import Path

import pytest

from console import cli
from console.access.auth import Identity
from console.cli import cordons as cordons_cli
from console.cli import runs as runs_cli
from console.cli.exits import Exit, exit_for
from console.core.errors import (
    ClusterUnavailable,
    ConfigError,
    IllegalTransition,
    JobAlreadyRunning,
    RunOverlap,
    StoreError,
    StoreWriteClash,
)
from console.core.model import BrokerId
from console.plans.plan import Plan, PlanEntry
from console.services import runs as run_service
from console.storage.store import Store
from tests.fakes.cluster import FakeCluster, FakeReader

pytestmark = pytest.mark.usefixtures("no_sleep")


def test_each_meaning_has_its_exit_code() -> None:
    assert exit_for(ConfigError("bad")) is Exit.UNUSABLE
    assert exit_for(ClusterUnavailable("down")) is Exit.FAILED
    assert exit_for(IllegalTransition("no")) is Exit.FAILED


def test_each_kind_of_clash_is_an_error_of_its_own() -> None:
    """A run overlap is a refusal (1: it lasts until that run ends); a write clash in the store and a
    job already running did nothing and may go through again (4); only the clash is a store error."""
    assert exit_for(RunOverlap("Run #1 is already moving t-0.")) is Exit.FAILED
    assert exit_for(StoreWriteClash("Another console process wrote the same record.")) is Exit.AGAIN
    assert exit_for(JobAlreadyRunning("The history job is running already.")) is Exit.AGAIN
    assert isinstance(StoreWriteClash("x"), StoreError)
    assert not isinstance(RunOverlap("x"), StoreError) and not isinstance(JobAlreadyRunning("x"), StoreError)


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> FakeCluster:
    f = FakeCluster.of(3, {"t": [[0, 1], [1, 2]]}, size=1_000, copy_rate=10**6, log_dirs=("/k/d1", "/k/d2")).at_level(
        33
    )
    monkeypatch.setenv("CONSOLE_DATA_DIR", str(tmp_path))
    monkeypatch.setattr(runs_cli, "connect", lambda args: FakeReader(f))
    monkeypatch.setattr(cordons_cli, "connect", lambda args: FakeReader(f))
    return f


def finished_run(fake: FakeCluster) -> int:
    """A run abandoned at once: no longer active."""
    store = Store()
    plan = Plan.of([PlanEntry("t", 0, (BrokerId(0), BrokerId(2)))])
    run_id = run_service.start_run(
        store, fake, fake.snapshot(), run_service.RunRequest(Identity.cli("ann"), plan, "done"), users=None
    )
    run_service.abandon(store, fake, Identity.cli("ann"), run_id)
    return run_id


def test_changing_the_throttle_of_a_run_that_ended_is_a_refused_transition(
    fake: FakeCluster, capsys: pytest.CaptureFixture[str]
) -> None:
    run_id = finished_run(fake)
    args = ["throttle", "--bootstrap-server", "fake:9092", "--run", str(run_id), "--rate", "10MB/s"]
    assert cli.main(args) == Exit.FAILED
    assert f"Run {run_id} is abandoned: its throttle cannot change." in capsys.readouterr().err


def test_abandoning_a_run_that_ended_is_a_refused_transition(
    fake: FakeCluster, capsys: pytest.CaptureFixture[str]
) -> None:
    run_id = finished_run(fake)
    assert cli.main(["runs", "--abandon", str(run_id), "--bootstrap-server", "fake:9092"]) == Exit.FAILED
    assert "there is nothing to abandon" in capsys.readouterr().err


def test_a_run_not_in_the_store_is_unusable_input(fake: FakeCluster, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["throttle", "--bootstrap-server", "fake:9092", "--run", "99", "--rate", "10MB/s"]
    assert cli.main(args) == Exit.UNUSABLE
    assert "Run 99 is not in the store." in capsys.readouterr().err


def test_a_cordon_whose_current_setting_cannot_be_read_is_a_cluster_unavailable(
    fake: FakeCluster, capsys: pytest.CaptureFixture[str]
) -> None:
    fake.fail_next("snapshot:configs", ClusterUnavailable("timed out"), times=5)
    fake.fail_next("describe_configs", ClusterUnavailable("timed out"), times=5)
    code = cli.main(["cordon", "--bootstrap-server", "fake:9092", "--broker", "1", "--log-dir", "/k/d1", "--yes"])
    err = capsys.readouterr().err
    assert code == Exit.FAILED, err
    assert "could not be read; nothing was sent." in err
    assert not fake.calls_to("alter_configs")


def test_submitting_partitions_another_active_run_moves_is_refused_as_an_overlap(
    fake: FakeCluster, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plan = Plan.of([PlanEntry("t", 0, (BrokerId(0), BrokerId(2)))])
    first = run_service.start_run(
        Store(), fake, fake.snapshot(), run_service.RunRequest(Identity.cli("ann"), plan, "first"), users=None
    )
    path = tmp_path / "plan.json"
    path.write_text(plan.to_json())
    args = ["submit", "--bootstrap-server", "fake:9092", "--reassignment-json-file", str(path), "--yes"]
    assert cli.main(args) == Exit.FAILED
    err = capsys.readouterr().err
    assert f"Run #{first} (first, by ann) is already moving t-0." in err
    assert "Wait until that run ends (or cancel it), then review the plan again." in err
    assert [r.id for r in Store().runs.list()] == [first]
    assert not fake.calls_to("alter_reassignments")
