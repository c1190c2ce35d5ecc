"""Generated plans on a real 6-broker sandbox (three racks, two brokers each): each goal's plan
passes the console's validation, is accepted by the official ReassignPartitionsCommand, completes,
and the cluster then matches the report's "after"; and a decommission moves far fewer replicas
than the official tool's --generate."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from console import cli
from console.core.model import ClusterState
from console.plans.plan import parse_plan
from console.plans.validate import errors, validate
from console.sandbox.cluster import Sandbox
from console.state.reader import ClusterReader
from tests.integration.helpers import make_topic
from tests.support import connection_args, official, own_sandbox, settings_for, wait_for


@pytest.fixture(scope="module")
def six(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sandbox]:
    yield from own_sandbox(tmp_path_factory, "sandbox-six", brokers=6)


@pytest.fixture(scope="module")
def reader(six: Sandbox) -> Iterator[ClusterReader]:
    bs = six.bootstrap_servers
    make_topic(bs, "gen-even", 12, 3, 40)  # Kafka's own rack-aware placement
    make_topic(bs, "gen-skew", 8, 2, 60, assignment=[[0, 1], [1, 0], [0, 2], [2, 0], [1, 2], [2, 1], [0, 1], [1, 0]])
    make_topic(bs, "gen-racks", 4, 2, 30, assignment=[[0, 3], [1, 4], [2, 5], [3, 0]])  # both replicas on one rack
    make_topic(bs, "gen-small", 6, 2, 20)
    with ClusterReader(settings_for(six)) as r:
        yield r


def generate(six: Sandbox, tmp: Path, capsys: pytest.CaptureFixture[str], *goal: str) -> tuple[str, dict[str, Any]]:
    report = tmp / "report.json"
    code = cli.main(["generate", "--bootstrap-server", six.bootstrap_servers, "--report-json", str(report), *goal])
    out = capsys.readouterr()
    assert code == 0, out.err
    return out.out.strip(), json.loads(report.read_text())


def carry_out(six: Sandbox, reader: ClusterReader, plan_text: str, tmp: Path) -> ClusterState:
    """Validate with the console, execute with the official tool, wait, elect preferred leaders."""
    state = reader.snapshot()
    plan = parse_plan(plan_text)
    assert not errors(validate(state, plan)), [f.message for f in errors(validate(state, plan))]
    path = tmp / "plan.json"
    path.write_text(plan_text)
    ran = official(six, "--execute", "--reassignment-json-file", str(path))
    assert ran.returncode == 0, ran.stdout + ran.stderr
    wait_for(lambda: not reader.snapshot().in_flight, timeout=120, what="the reassignments to complete")
    done = official(six, "--verify", "--reassignment-json-file", str(path))  # also removes the throttles it set
    assert done.returncode == 0, done.stdout + done.stderr
    reader.gateway().elect_leaders([e.key for e in plan.entries])
    return wait_for(lambda: settled(reader, plan_text), timeout=60, what="preferred leaders to lead")


def settled(reader: ClusterReader, plan_text: str) -> ClusterState | None:
    state = reader.snapshot()
    index = state.partition_index
    ok = all(
        index[e.key].leader == e.replicas[0] and set(index[e.key].isr) == set(e.replicas)
        for e in parse_plan(plan_text).entries
    )
    return state if ok else None


def assert_matches_after(state: ClusterState, report: dict[str, Any]) -> None:
    totals = state.broker_totals
    for b in report["brokers_after"]:
        replicas, leaders, size = totals.get(b["broker"], (0, 0, 0))
        assert replicas == b["replicas"], (b, replicas)
        assert leaders == b["leaders"], (b, leaders)
        assert abs(size - b["bytes"]) <= max(0.05 * b["bytes"], 64 * 1024), (b, size)


@pytest.mark.parametrize(
    "goal",
    [
        ["--fix-racks"],
        ["--replication-factor", "3", "--topics", "gen-small"],
        ["--rebalance", "count"],
        ["--rebalance", "leaders"],
        ["--decommission", "5"],
        ["--add-brokers", "5"],
        ["--official", "--broker-list", "0,1,2,3,4,5", "--topics", "gen-skew", "--seed", "3"],
        ["--rebalance", "bytes", "--tolerance", "0.10"],
    ],
    ids=lambda g: " ".join(g[:2]).lstrip("-"),
)
def test_each_goal_is_accepted_by_the_official_tool_and_ends_as_the_report_says(six, reader, tmp_path, capsys, goal):
    plan_text, report = generate(six, tmp_path, capsys, *goal)
    before = reader.snapshot()
    if goal[0] == "--fix-racks":
        assert report["rack_violations_before"] >= 4 and report["rack_violations_after"] == 0
    if not plan_text:
        assert report["partitions_changed"] == 0
        return
    assert report["lower_bound_replicas"] <= report["moved_replicas"]
    state = carry_out(six, reader, plan_text, tmp_path)
    assert_matches_after(state, report)
    if goal[0] == "--decommission":
        assert not any(5 in p.replicas for p in state.partitions)
        assert (
            report["moved_replicas"]
            == report["lower_bound_replicas"]
            == sum(5 in p.replicas for p in before.partitions)
        )
    if goal[0] == "--replication-factor":
        assert all(len(p.replicas) == 3 for p in state.partitions if p.topic == "gen-small")


def test_a_decommission_moves_far_fewer_replicas_than_the_official_generate(six, reader, tmp_path, capsys):
    state = reader.snapshot()
    topics = [t for t in state.topics if t.startswith("gen-")]
    _plan_text, report = generate(six, tmp_path, capsys, "--decommission", "4", "--topics", ",".join(topics))
    moves = tmp_path / "topics.json"
    moves.write_text(json.dumps({"version": 1, "topics": [{"topic": t} for t in topics]}))
    ran = official(six, "--generate", "--topics-to-move-json-file", str(moves), "--broker-list", "0,1,2,3,5")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    proposed = parse_plan(re.search(r"Proposed partition reassignment configuration\s*\n(\{.*\})", ran.stdout).group(1))
    index = state.partition_index
    theirs = sum(len(set(e.replicas) - set(index[e.key].replicas)) for e in proposed.entries)
    ours = report["moved_replicas"]
    print(
        f"decommission of broker 4 on 6 brokers: console moves {ours} replicas, --generate {theirs} "
        f"({theirs / ours:.1f}x)"
    )
    assert ours == sum(4 in p.replicas for p in state.partitions if p.topic in topics)
    assert theirs >= 2 * ours


def test_a_saved_snapshot_gives_the_same_plan_as_the_live_cluster(six, reader, tmp_path, capsys):
    assert cli.main(["state", *connection_args(six), "--json"]) == 0
    saved = tmp_path / "state.json"
    saved.write_text(capsys.readouterr().out)
    from console.state.document import read_state

    live = reader.snapshot()
    offline = read_state(saved)
    assert offline.partitions == live.partitions
    # brokers alike, bar the free disk space, which moves between two reads, and, in KRaft, which
    # broker DescribeCluster names as the controller (a broker picked at random for each answer)
    assert [replace(b, log_dirs=(), is_controller=False) for b in offline.brokers] == [
        replace(b, log_dirs=(), is_controller=False) for b in live.brokers
    ]
    goal = ["--rebalance", "count", "--seed", "5"]
    assert cli.main(["generate", "--state-file", str(saved), *goal]) == 0
    from_file = capsys.readouterr().out
    assert cli.main(["generate", *connection_args(six), *goal]) == 0
    assert capsys.readouterr().out == from_file
