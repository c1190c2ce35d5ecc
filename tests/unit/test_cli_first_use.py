"""What a new operator met trying the command line on the sandbox, each through ``console.cli.main``
on the fake cluster: the environment's cluster (as the pages find it), a plan file named on its own,
how a console finds a sandbox started elsewhere and what ``sandbox status`` says, cancel with
nothing in flight, cordons said in words and refused before the question, hints that name no page,
submit's progress and final output, a run named after its saved plan, leftover throttles in
``state``."""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path
from types import SimpleNamespace

import pytest

from console import cli
from console.access.auth import Identity
from console.cli import cordons as cordons_cli
from console.cli import runs as runs_cli
from console.cli.exits import Exit
from console.cli.progress import RunProgress
from console.core.limits import FOLLOWER_RATE
from console.core.model import BrokerId
from console.plans.plan import Plan, PlanEntry
from console.runs import executor as executor_module
from console.runs.steps import Step
from console.sandbox import cluster as sandbox_cluster
from console.sandbox.cluster import Sandbox
from console.sandbox.versions import Mode
from console.services import plans as plan_service
from console.state.document import state_json
from console.storage.store import Store
from tests.fakes.cluster import FakeCluster, FakeReader
from tests.integration.helpers import first_wave_sent

pytestmark = pytest.mark.usefixtures("no_sleep")


def world(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, fake: FakeCluster | None = None) -> FakeCluster:
    """A fake cluster every command reads, whichever way it is named; the console's data in ``tmp_path``."""
    fake = fake or FakeCluster.of(3, {"t": [[0, 1], [1, 2]]})
    monkeypatch.setenv("CONSOLE_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("CONSOLE_BOOTSTRAP_SERVERS", raising=False)
    monkeypatch.delenv("CONSOLE_USERS_FILE", raising=False)
    for module in (runs_cli, cordons_cli):
        monkeypatch.setattr(module, "connect", lambda args: FakeReader(fake))
    return fake


def plan_file(tmp_path: Path, plan: Plan, name: str = "plan.json") -> Path:
    path = tmp_path / name
    path.write_text(plan.to_json())
    return path


# -- 1. the environment's cluster ------------------------------------------------------------------


def read_through(monkeypatch: pytest.MonkeyPatch, fake: FakeCluster) -> list[str]:
    """The command's reader is the fake; the bootstrap servers it was built for, in order."""
    built: list[str] = []

    def reader(settings: object) -> FakeReader:
        built.append(settings.bootstrap_servers)
        return FakeReader(fake)

    monkeypatch.setattr("console.state.reader.ClusterReader", reader)
    return built


@pytest.mark.parametrize("command", ["list", "state"])
def test_list_and_state_read_the_cluster_the_environment_names_as_the_pages_do(
    command: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fake = world(monkeypatch, tmp_path)
    built = read_through(monkeypatch, fake)
    monkeypatch.setenv("CONSOLE_BOOTSTRAP_SERVERS", "env-broker:9092")
    monkeypatch.setenv("CONSOLE_CLUSTER_NAME", "staging")
    assert cli.main([command]) == Exit.OK
    out, err = capsys.readouterr()
    assert built == ["env-broker:9092"]
    assert "Cluster staging (env-broker:9092), from CONSOLE_BOOTSTRAP_SERVERS." in err
    assert out.strip()
    assert cli.main([command, "--bootstrap-server", "flag-broker:9092"]) == Exit.OK
    assert built[-1] == "flag-broker:9092"  # the flag still wins


def test_without_the_environment_the_running_sandbox_is_read_and_without_either_the_command_says_what_to_give(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fake = world(monkeypatch, tmp_path)
    built = read_through(monkeypatch, fake)
    assert cli.main(["list"]) == Exit.UNUSABLE
    err = capsys.readouterr().err
    assert "No cluster named" in err and "--bootstrap-server" in err and "CONSOLE_BOOTSTRAP_SERVERS" in err
    running = Sandbox(Mode.KRAFT, str(tmp_path / "sandbox"), "", "127.0.0.1:19092", None, [])
    monkeypatch.setattr(sandbox_cluster, "status", lambda data_dir=None: running)
    assert cli.main(["list"]) == Exit.OK
    assert built == ["127.0.0.1:19092"]
    assert "from the running sandbox" in capsys.readouterr().err


# -- 2. the plan file on its own -------------------------------------------------------------------


@pytest.mark.parametrize("command", ["validate", "diff", "rollback"])
def test_the_plan_file_may_be_named_on_its_own(
    command: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fake = world(monkeypatch, tmp_path)
    snapshot = tmp_path / "state.json"
    snapshot.write_text(json.dumps(state_json(fake.snapshot())))
    plan = plan_file(tmp_path, Plan.of([PlanEntry("t", 0, (BrokerId(2), BrokerId(1)))]))
    assert cli.main([command, str(plan), "--state-file", str(snapshot)]) == Exit.OK
    positional = capsys.readouterr().out
    assert cli.main([command, "--state-file", str(snapshot), "--reassignment-json-file", str(plan)]) == Exit.OK
    assert capsys.readouterr().out == positional


def test_without_a_plan_file_the_command_says_what_to_write(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fake = world(monkeypatch, tmp_path)
    snapshot = tmp_path / "state.json"
    snapshot.write_text(json.dumps(state_json(fake.snapshot())))
    assert cli.main(["validate", "--state-file", str(snapshot)]) == Exit.UNUSABLE
    err = capsys.readouterr().err
    assert "Error: No plan file given" in err
    assert "validate FILE, or validate --reassignment-json-file FILE" in err
    one, two = plan_file(tmp_path, Plan.of([]), "a.json"), plan_file(tmp_path, Plan.of([]), "b.json")
    assert cli.main(["validate", str(one), "--reassignment-json-file", str(two), "--state-file", str(snapshot)]) == 2
    assert "Two plan files given" in capsys.readouterr().err


# -- 3 and 4. the sandbox: how a console finds it, and the same record from up and status ----------


def test_sandbox_status_prints_the_record_up_prints_and_up_says_how_a_console_finds_a_sandbox_elsewhere(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    world(monkeypatch, tmp_path / "data")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    running = Sandbox(Mode.KRAFT, str(elsewhere), "", "127.0.0.1:19092", None, [])
    monkeypatch.setattr(sandbox_cluster, "up", lambda *a, **k: running)
    monkeypatch.setattr(sandbox_cluster, "status", lambda data_dir=None: running)
    assert cli.main(["sandbox", "up", "--data-dir", str(elsewhere)]) == Exit.OK
    out, err = capsys.readouterr()
    up = json.loads(out)
    users = str(elsewhere / "console-users.json")
    for said in (
        "CONSOLE_BOOTSTRAP_SERVERS=127.0.0.1:19092",
        "CONSOLE_CLUSTER_NAME=sandbox",
        f"CONSOLE_USERS_FILE={users}",
    ):
        assert said in err
    assert up["console_env"] == {
        "CONSOLE_BOOTSTRAP_SERVERS": "127.0.0.1:19092",
        "CONSOLE_CLUSTER_NAME": "sandbox",
        "CONSOLE_USERS_FILE": users,
    }
    assert cli.main(["sandbox", "status", "--data-dir", str(elsewhere)]) == Exit.OK
    status = json.loads(capsys.readouterr().out)
    assert status == up and status["console_users_file"] == users


# -- 5. cancel with nothing in flight ------------------------------------------------------------


def test_cancel_all_with_nothing_in_flight_says_so_first_and_only(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    world(monkeypatch, tmp_path)
    assert cli.main(["cancel", "--bootstrap-server", "fake:9092", "--all", "--yes"]) == Exit.OK
    assert capsys.readouterr().err.splitlines() == ["Nothing in flight: no reassignment to cancel."]


# -- 6 and 7. cordons: in words, and refused before the question -----------------------------------


def test_a_broker_not_cordoned_is_said_in_words(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fake = world(monkeypatch, tmp_path, FakeCluster.of(3, {"t": [[0, 1]]}).at_level(30))
    assert cli.main(["cordon", "--bootstrap-server", "fake:9092", "--broker", "2", "--yes"]) == Exit.OK
    assert capsys.readouterr().err.splitlines()[0] == "Broker 2 now: not cordoned."
    assert cli.main(["uncordon", "--bootstrap-server", "fake:9092", "--broker", "2", "--yes"]) == Exit.OK
    assert capsys.readouterr().err.splitlines()[0] == "Broker 2 now: cordoned."
    assert cli.main(["uncordon", "--bootstrap-server", "fake:9092", "--broker", "2", "--yes"]) == Exit.OK
    assert capsys.readouterr().err.splitlines() == [
        "Broker 2 now: not cordoned.",
        "Nothing to do: broker 2 is not cordoned already (cordoned.log.dirs (none)).",
    ]
    assert not fake.cordon_entries(2)


@pytest.mark.parametrize(
    ("flags", "said"),
    [
        (["--broker", "7"], "Broker 7 is not registered in this cluster (registered: 0, 1, 2); nothing was sent."),
        (["--broker", "1", "--log-dir", "/nope"], "Broker 1 has no log dir /nope (its log dirs: /data)"),
    ],
)
def test_an_unknown_broker_or_log_dir_is_refused_before_the_question(
    flags: list[str],
    said: str,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    at_a_terminal,
) -> None:
    fake = world(monkeypatch, tmp_path, FakeCluster.of(3, {"t": [[0, 1]]}).at_level(30))
    at_a_terminal("yes")
    assert cli.main(["cordon", "--bootstrap-server", "fake:9092", *flags]) == Exit.UNUSABLE
    err = capsys.readouterr().err
    assert said in err
    assert "[yes/no]" not in err  # not asked
    assert not fake.calls_to("alter_configs")


def test_a_cluster_without_cordons_is_refused_before_the_question(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str], at_a_terminal
) -> None:
    fake = world(monkeypatch, tmp_path, FakeCluster.of(3, {"t": [[0, 1]]}).at_level(29))
    at_a_terminal("yes")
    assert cli.main(["cordon", "--bootstrap-server", "fake:9092", "--broker", "1"]) == Exit.FAILED
    err = capsys.readouterr().err
    assert "does not support cordoned log dirs" in err and "[yes/no]" not in err
    assert [e.outcome for e in Store().audit.entries(action="cordon")] == ["refused"]
    assert not fake.calls_to("alter_configs")


# -- 8. hints that point at no page ----------------------------------------------------------------


def test_validate_s_hints_point_at_no_page(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fake = world(monkeypatch, tmp_path)
    snapshot = tmp_path / "state.json"
    snapshot.write_text(json.dumps(state_json(fake.snapshot())))
    plan = Plan.of(
        [
            PlanEntry("t", 0, (BrokerId(9), BrokerId(1))),  # broker 9: unknown
            PlanEntry("t", 1, (BrokerId(1), BrokerId(2)), ("/nope", "any")),  # broker 1 has no /nope
        ]
    )
    path = plan_file(tmp_path, plan)
    assert cli.main(["validate", "--reassignment-json-file", str(path), "--state-file", str(snapshot)]) == Exit.FAILED
    out, err = capsys.readouterr()
    assert "unknown-broker" in out and "unknown-log-dir" in out
    for page in ("Overview", "Live", "Review", "Drafts", "Runs page", "History page"):
        assert page not in out + err


# -- 9. submit's progress and its final output ------------------------------------------------------


def driven(monkeypatch: pytest.MonkeyPatch, fake: FakeCluster) -> None:
    """A second of the fake's time passes at each of the executor's waits between steps."""
    shim = SimpleNamespace(sleep=fake.advance, monotonic=lambda: fake.clock, perf_counter=lambda: fake.clock)
    monkeypatch.setattr(executor_module, "time", shim)


@pytest.mark.parametrize("as_json", [False, True])
def test_submit_s_progress_carries_bytes_left_rate_and_eta_and_json_only_with_the_flag(
    as_json: bool, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fake = world(monkeypatch, tmp_path, FakeCluster.of(3, {"t": [[0, 1], [1, 2]]}, size=20_000, copy_rate=10_000))
    driven(monkeypatch, fake)
    plan = plan_file(tmp_path, Plan.of([PlanEntry("t", 0, (BrokerId(2), BrokerId(1)))]))
    args = ["submit", "--bootstrap-server", "fake:9092", "--reassignment-json-file", str(plan), "--throttle", "2KB/s"]
    assert cli.main([*args, "--yes", *(["--json"] if as_json else [])]) == Exit.OK
    out, err = capsys.readouterr()
    running = [line for line in err.splitlines() if re.match(r"run 1: wave 1\b.*; ", line)]
    assert running, err
    assert running[0] == "run 1: wave 1 submitted (1 partition); 20.0 KB left, measuring the copy rate, ETA 10 s"
    assert any(
        re.search(r"; 1[0-8]\.0 KB left, copying at 2\.0 KB/s \(broker 2, the busiest\), ETA \d s$", line)
        for line in running
    ), running
    assert err.splitlines()[-1] == "run 1: run completed"
    # a line says something new: the executor's steps while nothing changed print nothing (the walk
    # of the demo saw each line four or five times, once a second, between two reads of the cluster)
    lines = [line for line in err.splitlines() if line.startswith("run 1:")]
    assert all(a != b for a, b in itertools.pairwise(lines)), lines
    if as_json:
        said = json.loads(out)
        assert said["run"] == 1 and said["state"] == "completed"
    else:
        assert out == ""


def test_a_progress_line_that_says_nothing_new_is_not_printed_again(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Walking the demo, submit printed each line four or five times in a row: the executor steps
    once a second and its progress reads the cluster as read within the last 5 s."""
    fake = world(monkeypatch, tmp_path, FakeCluster.of(3, {"t": [[0, 1], [1, 2]]}, size=20_000, copy_rate=10_000))
    store = Store()
    plan = Plan.of([PlanEntry("t", 0, (BrokerId(2), BrokerId(1)))])
    run_id = first_wave_sent(store, fake, fake.snapshot(), plan, "once", 2_000)
    shared = fake.snapshot()
    progress = RunProgress(store, lambda max_age_s=0.0: shared)  # one read for both steps, as within 5 s
    step = Step(store.runs.require(run_id), 1, "wave 1: 0 of 1 done")
    progress(step)
    progress(step)
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("run 1: wave 1: 0 of 1 done; 20.0 KB left"), lines


# -- 10. a run named after its saved plan -----------------------------------------------------------


def test_a_run_of_a_saved_plan_is_named_after_the_plan(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fake = world(monkeypatch, tmp_path)
    plan = Plan.of([PlanEntry("t", 0, (BrokerId(2), BrokerId(1)))])
    store = Store()
    plan_id = plan_service.save_plan(store, Identity.cli("ann"), fake.snapshot(), fake.name, "drain broker 0", plan)
    path = plan_file(tmp_path, plan, "exported.json")
    base = ["submit", "--bootstrap-server", "fake:9092", "--yes", "--detach"]
    assert cli.main([*base, "--reassignment-json-file", str(path), "--plan-id", str(plan_id)]) == Exit.OK
    other = plan_file(tmp_path, Plan.of([PlanEntry("t", 1, (BrokerId(0), BrokerId(2)))]), "other.json")
    assert cli.main([*base, "--reassignment-json-file", str(other)]) == Exit.OK
    assert [r.name for r in Store().runs.list()] == ["other.json", "drain broker 0"]  # newest first


# -- 11. leftover throttles in `state` -------------------------------------------------------------


def test_state_marks_leftover_throttles_as_overview_does(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fake = world(monkeypatch, tmp_path)
    fake.alter_configs({BrokerId(2): {FOLLOWER_RATE: "5000000"}}, {})  # nothing in flight needs it
    read_through(monkeypatch, fake)
    assert cli.main(["state", "--bootstrap-server", "fake:9092"]) == Exit.OK
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.startswith("broker 2") and FOLLOWER_RATE in line)
    assert "5.0 MB/s" in row and "left over: nothing in flight needs it" in row
    assert "1 throttle setting left over: `throttle --sweep` removes it." in out
