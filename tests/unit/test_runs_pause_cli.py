"""``runs --pause ID [--why]`` and ``runs --resume ID``: the Runs page's buttons from a shell, the
same service, role and audit; a run that cannot go there is refused, audited (exit 1)."""

from __future__ import annotations

import json

import pytest

from console import cli
from console.cli.exits import Exit
from console.core.states import RunState
from console.services.guard import REFUSED
from tests.unit.world import SHELL_USER, ServiceWorld

pytestmark = pytest.mark.usefixtures("no_sleep")


def test_pause_and_resume_from_the_shell_are_audited_with_who_and_why(
    cli_world: ServiceWorld, capsys: pytest.CaptureFixture[str]
) -> None:
    w = cli_world
    assert cli.main(["runs", "--pause", str(w.run_id), "--why", "broker 4 is being replaced"]) == Exit.OK
    assert w.store.runs.require(w.run_id).state is RunState.PAUSED
    assert "paused: its wave in flight finishes, the next waits for --resume" in capsys.readouterr().err
    (entry,) = [e for e in w.store.audit.entries() if e.action == "run-paused"]
    assert (entry.user, json.loads(entry.request)) == (
        SHELL_USER,
        {"run": w.run_id, "why": "broker 4 is being replaced"},
    )
    assert cli.main(["runs", "--resume", str(w.run_id)]) == Exit.OK
    assert w.store.runs.require(w.run_id).state is RunState.RUNNING
    assert cli.main(["runs", "--json"]) == Exit.OK
    (shown,) = [r for r in json.loads(capsys.readouterr().out) if r["run"] == w.run_id]
    assert shown["state"] == "running"


def test_resuming_a_run_that_is_not_paused_is_refused_and_audited(
    cli_world: ServiceWorld, capsys: pytest.CaptureFixture[str]
) -> None:
    w = cli_world
    before = {e.id for e in w.store.audit.entries()}
    assert cli.main(["runs", "--resume", str(w.run_id)]) == Exit.FAILED
    assert f"Run {w.run_id} is running: it cannot be resumed." in capsys.readouterr().err
    (entry,) = [e for e in w.store.audit.entries() if e.id not in before]
    assert (entry.action, entry.outcome) == ("resume", REFUSED)
