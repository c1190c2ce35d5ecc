"""`python -m console generate` and `--state-file`, offline: a snapshot saved as `state --json`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from console import cli
from console.plans.plan import parse_plan
from console.state.document import state_json
from tests.unit.strategies import Shape, cluster


@pytest.fixture
def state_file(tmp_path: Path) -> Path:
    path = tmp_path / "state.json"
    path.write_text(
        json.dumps(state_json(cluster(Shape(brokers=9, racks=3, down=1, partitions=90, rf=3, in_flight=0.1, seed=4))))
    )
    return path


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_generate_prints_the_plan_and_writes_the_report(state_file, tmp_path, capsys):
    report = tmp_path / "report.json"
    code, out, err = run(
        capsys,
        "generate",
        "--state-file",
        str(state_file),
        "--decommission",
        "2",
        "--throttle",
        "10000000",
        "--report-json",
        str(report),
    )
    assert code == 0, err
    plan = parse_plan(out)
    assert out.strip() == plan.to_json()  # byte for byte as the official tool prints it
    assert all(2 not in e.replicas for e in plan.entries)
    doc = json.loads(report.read_text())
    assert doc["goal"] == "decommission 2" and doc["moved_replicas"] == doc["lower_bound_replicas"] > 0
    state = cluster(Shape(brokers=9, racks=3, down=1, partitions=90, rf=3, in_flight=0.1, seed=4))
    stuck = sum(2 in p.target for p in state.partitions if p.reassigning or p.leader is None)
    assert next(b for b in doc["brokers_after"] if b["broker"] == 2)["replicas"] == stuck  # only what may not move
    assert doc["eta_seconds"] and doc["eta_throttle"] == 10_000_000
    assert "lower bound" in err and "decommission 2" in err


@pytest.mark.parametrize(
    "argv, code, words",
    [
        (["--decommission", "0,1,2,3,4,5,6"], 1, "fewer than the"),
        (["--decommission", "x"], 2, "broker ids separated by commas"),
        (["--decommission", "42"], 2, "no broker 42"),
        (["--rebalance", "count", "--topics", "nope"], 2, "No topic nope"),
        (["--replication-factor", "2"], 2, "Name the topics"),
        (["--official"], 2, "--broker-list"),
        (["--rebalance", "count", "--exclude-topics", "("], 2, "not a regular expression"),
        (["--decommission-rack", "r0,r1,r2"], 1, "leaves no eligible broker"),
        (["--decommission-rack", "rack-z"], 2, "No broker on rack rack-z"),
        (["--decommission-rack", ","], 2, "rack names separated by commas"),
    ],
)
def test_impossible_goals_exit_1_and_unusable_input_exit_2(state_file, capsys, argv, code, words):
    got, out, err = run(capsys, "generate", "--state-file", str(state_file), *argv)
    assert got == code and words in err and not out.strip()


def test_a_goal_already_met_prints_no_plan(state_file, capsys):
    code, out, err = run(
        capsys, "generate", "--state-file", str(state_file), "--fix-racks", "--topics", "t0", "--exclude-topics", "t0"
    )
    assert code == 0 and not out.strip() and "Nothing to do" in err


def test_official_takes_the_topics_to_move_file(state_file, tmp_path, capsys):
    topics = tmp_path / "topics.json"
    topics.write_text(json.dumps({"version": 1, "topics": [{"topic": "t1"}]}))
    code, out, err = run(
        capsys,
        "generate",
        "--state-file",
        str(state_file),
        "--official",
        "--broker-list",
        "0,1,2,3,4,5,6,7,8",
        "--topics-to-move-json-file",
        str(topics),
        "--seed",
        "7",
    )
    assert code == 0, err
    assert {e.topic for e in parse_plan(out).entries} == {"t1"}


def test_validate_diff_and_rollback_read_a_state_file(state_file, tmp_path, capsys):
    code, out, _ = run(capsys, "generate", "--state-file", str(state_file), "--rebalance", "count")
    assert code == 0
    plan = tmp_path / "plan.json"
    plan.write_text(out)
    code, out, err = run(
        capsys, "validate", "--state-file", str(state_file), "--reassignment-json-file", str(plan), "--json"
    )
    assert code == 0 and json.loads(out)["valid"] is True, err
    code, out, _ = run(capsys, "diff", "--state-file", str(state_file), "--reassignment-json-file", str(plan), "--json")
    assert code == 0 and json.loads(out)
    code, out, _ = run(capsys, "rollback", "--state-file", str(state_file), "--reassignment-json-file", str(plan))
    assert code == 0 and len(parse_plan(out)) == len(parse_plan(plan.read_text()))


@pytest.mark.parametrize(
    "content, words",
    [
        (b"not json", "is not JSON"),
        (b'{"version": 1, "partitions": []}', "not a snapshot"),
        (json.dumps({"format": 99, "brokers": [], "partitions": []}).encode(), "newer console"),
        (json.dumps({"brokers": [{"id": "x"}], "partitions": []}).encode(), "not a complete snapshot"),
    ],
)
def test_a_bad_state_file_is_refused_with_exit_2(tmp_path, capsys, content, words):
    bad = tmp_path / "bad.json"
    bad.write_bytes(content)
    code, out, err = run(capsys, "generate", "--state-file", str(bad), "--rebalance", "count")
    assert code == 2 and words in err and not out
    code, _, err = run(capsys, "generate", "--state-file", str(tmp_path / "missing.json"), "--rebalance", "count")
    assert code == 2 and "Cannot read the snapshot" in err
