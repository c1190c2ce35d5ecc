"""On the real sandbox: reassignments started with the official tool's throttle
(ReassignPartitionsCommand --execute --throttle) cancelled by the console leave that tool's
throttle configs; the cancel lists them as left by another tool with the command that removes
them, and ``cancel --clear-throttles`` removes them, read back (issue 42)."""

from __future__ import annotations

from pathlib import Path

import pytest

from console import cli
from console.core.limits import FOLLOWER_LIST, FOLLOWER_RATE, LEADER_LIST, LEADER_RATE
from console.sandbox.cluster import Sandbox
from console.state.reader import ClusterReader
from tests.integration.helpers import in_flight, make_topic
from tests.support import connection_args, official, settings_for, wait_for, write_plan

TOPIC = "i42-official"


def throttles_on(sandbox: Sandbox) -> set[tuple[str, str]]:
    with ClusterReader(settings_for(sandbox)) as reader:
        state = reader.snapshot()
    got = {(f"topic {t}", k) for t, keys in state.throttles.topic_map().items() if t == TOPIC for k in keys}
    return got | {(f"broker {b}", k) for b, keys in state.throttles.broker_map().items() for k in keys}


def start(sandbox: Sandbox, tmp_path: Path) -> Path:
    plan = write_plan(tmp_path / "theirs.json", [(TOPIC, 0, [2]), (TOPIC, 1, [2])])
    started = official(sandbox, "--execute", "--reassignment-json-file", str(plan), "--throttle", "1000")
    assert started.returncode == 0, started.stdout + started.stderr
    wait_for(lambda: len(in_flight(sandbox.bootstrap_servers, TOPIC)) == 2, timeout=30, what="the official moves")
    return plan


def test_a_cancel_of_the_official_tools_moves_offers_its_throttles_and_clears_them(
    sandbox: Sandbox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("CONSOLE_DATA_DIR", str(tmp_path))
    make_topic(sandbox.bootstrap_servers, TOPIC, 2, 1, 2_000, assignment=[[0], [1]])  # minutes at 1 kB/s
    theirs = {(f"topic {TOPIC}", LEADER_LIST), (f"topic {TOPIC}", FOLLOWER_LIST)} | {
        (f"broker {b}", k) for b in (0, 1, 2) for k in (LEADER_RATE, FOLLOWER_RATE)
    }
    cancel = ["cancel", *connection_args(sandbox), "--topic", TOPIC, "--include-others", "--yes", "--wait", "60"]
    plan = start(sandbox, tmp_path)
    try:
        assert theirs <= throttles_on(sandbox)
        code = cli.main(cancel)
        err = capsys.readouterr().err
        assert code == 0, err
        assert "Throttles left by another tool (the official tool's --cancel would clear them), on topic " in err
        assert f"  topic {TOPIC}: {FOLLOWER_LIST} (0:2, 1:2)" in err
        command = f"python -m console throttle --sweep --topic {TOPIC} --broker 0 --broker 1 --broker 2"
        assert f"Remove them: {command}" in err
        assert theirs <= throttles_on(sandbox), "said, not removed"

        start(sandbox, tmp_path)
        code = cli.main([*cancel, "--clear-throttles"])
        err = capsys.readouterr().err
        assert code == 0, err
        assert err.count("Removed (read back from the brokers): ") == len(theirs), err
        assert not theirs & throttles_on(sandbox)
    finally:
        if in_flight(sandbox.bootstrap_servers, TOPIC):
            official(sandbox, "--cancel", "--reassignment-json-file", str(plan))
        wait_for(lambda: not in_flight(sandbox.bootstrap_servers, TOPIC), timeout=60, what="nothing in flight")
        official(sandbox, "--cancel", "--reassignment-json-file", str(plan))  # clears what is left of its throttles
