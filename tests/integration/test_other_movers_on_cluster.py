"""Another mover on the real sandbox: a throttled move started with the official tool
(ReassignPartitionsCommand, the sandbox's own jars) makes the console's submit refuse with the
partition named (exit 1, nothing sent, the refusal audited); with --allow-other-moves it proceeds,
the run completes, and its audit entry records the override. The sandbox is left as it was found:
the other move cancelled, its throttles removed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from console import cli
from console.sandbox.cluster import Sandbox
from console.services.guard import REFUSED
from console.state.reader import ClusterReader
from console.storage.store import Store
from tests.integration.helpers import in_flight, make_topic, no_throttles_left
from tests.support import connection_args, official, settings_for, wait_for, write_plan

THEIRS = "om-theirs"
MINE = "om-mine"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = cli.main(list(argv))
    out = capsys.readouterr()
    return code, out.out + out.err


def test_a_move_started_with_the_official_tool_makes_submit_refuse_unless_allowed(
    sandbox: Sandbox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    bs = sandbox.bootstrap_servers
    monkeypatch.setenv("CONSOLE_DATA_DIR", str(tmp_path))
    make_topic(bs, THEIRS, 1, 1, 4_000, assignment=[[0]])  # 4 MB: minutes at 20 kB/s
    make_topic(bs, MINE, 1, 1, 10, assignment=[[1]])
    theirs = write_plan(tmp_path / "theirs.json", [(THEIRS, 0, [2])])
    started = official(sandbox, "--execute", "--reassignment-json-file", str(theirs), "--throttle", "20000")
    assert started.returncode == 0, started.stdout + started.stderr
    try:
        wait_for(lambda: (THEIRS, 0) in in_flight(bs, THEIRS), timeout=30, what="the official tool's move")
        mine = write_plan(tmp_path / "mine.json", [(MINE, 0, [2])])
        submit = ["submit", *connection_args(sandbox), "--reassignment-json-file", str(mine), "--yes"]
        code, said = run(capsys, *submit)
        assert code == 1, said
        assert (
            "Another mover is reassigning on this cluster: 1 partition in flight that this console did not start: "
            in said
        )
        assert f"{THEIRS}-0 (adding 2; removing 0;" in said and "--allow-other-moves" in said
        assert "Kafka does not say when a reassignment started" in said
        assert (MINE, 0) not in in_flight(bs, MINE)  # nothing was sent
        store = Store()
        refused = store.audit.entries(action="submit")[-1]
        assert refused.outcome == REFUSED and json.loads(refused.request)["other_partitions"] == [f"{THEIRS}-0"]
        assert store.runs.list() == []

        code, said = run(capsys, *submit, "--allow-other-moves", "--no-elect-leaders")
        assert code == 0, said
        assert (
            f"Allowed (--allow-other-moves): 1 partition in flight that this console did not start: {THEIRS}-0" in said
        )
        (run_record,) = store.runs.list()
        assert run_record.state.value == "completed"
        entry = next(e for e in store.audit.entries(action="submit") if e.outcome == "run recorded")
        request = json.loads(entry.request)
        assert request["run"] == run_record.id and request["allow_other_moves"] is True
        assert request["other_moves"] == 1 and request["other_partitions"] == [f"{THEIRS}-0"]
        with ClusterReader(settings_for(sandbox)) as reader:
            assert reader.snapshot().partition(MINE, 0).replicas == (2,)
        store.close()
    finally:
        cancelled = official(sandbox, "--cancel", "--reassignment-json-file", str(theirs))
        assert cancelled.returncode == 0, cancelled.stdout + cancelled.stderr
        wait_for(lambda: not in_flight(bs, THEIRS), timeout=60, what="the official move cancelled")
        # a cancel by the official tool removes its throttles too (no --preserve-throttles)
        with ClusterReader(settings_for(sandbox)) as reader:
            assert no_throttles_left(reader.snapshot())
