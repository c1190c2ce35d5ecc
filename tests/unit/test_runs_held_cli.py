"""``runs`` says why a guardrail holds a run: its state marked ``paused (guardrail)`` with the words
on a line under it, and ``runs --json``'s ``held_by`` (the guardrail, the brokers and partitions,
since when; an empty list when nothing holds the run) and ``paused_by_guardrail``."""

from __future__ import annotations

import json
import time

import pytest

from console import cli
from console.cli.exits import Exit
from console.core.states import RunState
from console.moves.guardrails import GuardrailSettings
from console.present.guardrails import when
from console.runs.executor import Executor
from tests.unit.world import ServiceWorld

pytestmark = pytest.mark.usefixtures("no_sleep")


def paused_by_a_gone_destination(w: ServiceWorld) -> float:
    """The world's run (t-0 onto broker 2) sends its wave, then broker 2 stops: a guardrail pauses
    it; when (the fake's clock)."""
    ex = Executor(w.store, w.fake, "worker", settle_s=0, poll_s=0, guardrails=GuardrailSettings())
    ex.tick(w.run_id)  # t-0 copies onto broker 2
    w.fake.stop_broker(2)
    ex.tick(w.run_id)
    ex.store.runs.release(w.run_id, ex.owner)
    assert w.store.runs.require(w.run_id).state is RunState.PAUSED
    return w.fake.clock


def test_runs_json_gives_what_holds_a_run_and_an_empty_list_otherwise(
    cli_world: ServiceWorld, capsys: pytest.CaptureFixture[str]
) -> None:
    w = cli_world
    assert cli.main(["runs", "--json"]) == Exit.OK
    (shown,) = json.loads(capsys.readouterr().out)
    assert (shown["state"], shown["held_by"], shown["paused_by_guardrail"]) == ("running", [], False)

    since = paused_by_a_gone_destination(w)
    assert cli.main(["runs", "--json"]) == Exit.OK
    (shown,) = json.loads(capsys.readouterr().out)
    assert shown["state"] == "paused" and shown["paused_by_guardrail"] is True
    assert shown["held_by"] == [
        {
            "rule": "destination_gone",
            "action": "pause",
            "text": "broker 2, a destination of the wave in flight, is offline. In flight onto it: t-0 "
            "(cannot finish while it is gone)",
            "brokers": [2],
            "partitions": ["t-0"],
            "since": since,
        }
    ]

    assert cli.main(["runs", "--resume", str(w.run_id)]) == Exit.OK  # a person goes on over it
    capsys.readouterr()
    assert cli.main(["runs", "--json"]) == Exit.OK
    (shown,) = json.loads(capsys.readouterr().out)
    assert (shown["state"], shown["held_by"], shown["paused_by_guardrail"]) == ("running", [], False)


def test_runs_text_marks_a_run_a_guardrail_paused_and_says_why_under_it(
    cli_world: ServiceWorld, capsys: pytest.CaptureFixture[str]
) -> None:
    w = cli_world
    since = paused_by_a_gone_destination(w)
    assert cli.main(["runs"]) == Exit.OK
    header, row, why = capsys.readouterr().out.splitlines()
    assert header.split()[:6] == ["run", "cluster", "name", "author", "state", "waves"]
    assert row.split()[:5] == [str(w.run_id), "fake-cluster", "r", "carol", "paused"] and "paused (guardrail)" in row
    assert why == (
        f"  Paused by a guardrail since {when(since, time.time())}: broker 2, a destination of the wave in flight, "
        "is offline. In flight onto it: t-0 (cannot finish while it is gone)."
    )

    w.fake.start_broker(2)  # back: the run still waits for a person, and says so
    ex = Executor(w.store, w.fake, "worker", settle_s=0, poll_s=0, guardrails=GuardrailSettings())
    ex.tick(w.run_id)
    ex.store.runs.release(w.run_id, ex.owner)
    assert cli.main(["runs"]) == Exit.OK
    assert capsys.readouterr().out.splitlines()[2].endswith("; what paused it has cleared since.")
