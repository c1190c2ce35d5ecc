"""The preferred leader election a run ends with, on the real cluster: a plan that only reorders
replicas, submitted through the CLI, moves the leaders to the first replicas; with
``--no-elect-leaders`` they stay where they were (the sandbox turns automatic leader rebalancing
off, so nothing else moves them)."""

from __future__ import annotations

import json

from console import cli
from console.state.reader import ClusterReader
from console.storage.runs import ELECTION_WAVE
from console.storage.store import Store
from tests.integration.helpers import make_topic
from tests.support import settings_for, wait_for, write_plan

ASSIGNMENT = [[0, 1], [1, 2], [2, 0]]
REORDERED = [[1, 0], [2, 1], [0, 2]]


def submit_reorder(sandbox, reader: ClusterReader, tmp_path, topic: str, *options: str) -> int:
    """A topic on ASSIGNMENT whose first replicas lead, then `submit` of the plan REORDERED (CLI)."""
    make_topic(sandbox.bootstrap_servers, topic, 3, 2, 5, assignment=ASSIGNMENT)
    wait_for(
        lambda: [reader.snapshot().partition(topic, p).leader for p in range(3)] == [0, 1, 2],
        what="the first replicas leading",
    )
    plan = write_plan(tmp_path / f"{topic}.json", [(topic, p, r) for p, r in enumerate(REORDERED)])
    return cli.main(
        [
            "submit",
            "--bootstrap-server",
            sandbox.bootstrap_servers,
            "--reassignment-json-file",
            str(plan),
            "--yes",
            "--json",
            *options,
        ]
    )


def test_a_reorder_only_plan_ends_with_the_first_replicas_leading(sandbox, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("CONSOLE_DATA_DIR", str(tmp_path))
    with ClusterReader(settings_for(sandbox)) as reader:
        code = submit_reorder(sandbox, reader, tmp_path, "el-reorder")
        captured = capsys.readouterr()
        out = json.loads(captured.out.strip().splitlines()[-1])
        assert code == 0 and out["state"] == "completed" and out["elect_leaders"] is True, captured.err
        assert not out["rejected"] and not out["not_elected"]
        assert "Then a preferred leader election" in captured.err
        # read back: the replicas are reordered and the new first replicas lead
        wait_for(
            lambda: (
                [((p := reader.snapshot().partition("el-reorder", n)).replicas, p.leader) for n in range(3)]
                == [(tuple(r), r[0]) for r in REORDERED]
            ),
            timeout=30,
            what="the new first replicas leading",
        )
    store = Store()
    (run,) = store.runs.list()
    assert run.elect_leaders is True and run.state == "completed"
    assert [(o.key, o.accepted) for o in store.runs.outcomes(run.id, ELECTION_WAVE)] == [
        (("el-reorder", p), True) for p in range(3)
    ]
    entries = [(a.outcome, json.loads(a.request)["partitions"]) for a in store.audit.entries(action="elect-leaders")]
    assert entries == [
        ("sending", [["el-reorder", p, r[0]] for p, r in enumerate(REORDERED)]),
        ("accepted", [["el-reorder", p, r[0]] for p, r in enumerate(REORDERED)]),
    ]
    actions = [a.action for a in store.audit.entries()]
    assert actions.index("elect-leaders") > actions.index("wave-complete") and actions[-1] == "run-completed"
    assert cli.main(["runs", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)[0]["elect_leaders"] is True


def test_without_the_election_the_leaders_stay(sandbox, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("CONSOLE_DATA_DIR", str(tmp_path))
    with ClusterReader(settings_for(sandbox)) as reader:
        code = submit_reorder(sandbox, reader, tmp_path, "el-keep", "--no-elect-leaders")
        out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
        assert code == 0 and out["state"] == "completed" and out["elect_leaders"] is False
        wait_for(
            lambda: (
                [reader.snapshot().partition("el-keep", n).replicas for n in range(3)] == [tuple(r) for r in REORDERED]
            ),
            timeout=30,
            what="the replicas reordered",
        )
        assert [reader.snapshot().partition("el-keep", n).leader for n in range(3)] == [0, 1, 2]
    store = Store()
    (run,) = store.runs.list()
    assert run.elect_leaders is False and run.state == "completed"
    assert store.audit.entries(action="elect-leaders") == [] and store.runs.outcomes(run.id, ELECTION_WAVE) == []
