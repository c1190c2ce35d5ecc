"""Plans against the real cluster, with the official ReassignPartitionsCommand and the controller
itself as oracles."""

from __future__ import annotations

import random
import re

import pytest

from console import cli
from console.core.model import BrokerId
from console.plans.plan import Plan, PlanEntry, parse_plan, rollback
from console.plans.validate import errors, validate
from console.state.reader import ClusterReader
from tests.integration.helpers import make_topic, settle, submit
from tests.support import connection_args, official, settings_for, wait_for


def ids(*b: int) -> tuple[BrokerId, ...]:
    return tuple(BrokerId(x) for x in b)


@pytest.mark.parametrize("cluster", ["sandbox", "zk_sandbox"], ids=["kafka 4.4", "kafka 3.9 zookeeper"])
def test_official_tool_accepts_the_export_and_prints_the_same_rollback(cluster, request, tmp_path, capsys):
    # Byte for byte what the official --execute prints as "Current partition replica assignment": on
    # 4.4 each replica's real log dir (KAFKA-19582, Kafka 4.2), on 3.9 "any" everywhere.
    sb = request.getfixturevalue(cluster)
    bs = sb.bootstrap_servers
    make_topic(bs, "pl-oracle", 3, 2, 20, assignment=[[0, 1], [1, 2], [2, 0]])
    with ClusterReader(settings_for(sb)) as reader:
        state = reader.snapshot(info=True)
        plan = Plan.of(
            [
                PlanEntry("pl-oracle", 0, ids(2, 1)),
                PlanEntry("pl-oracle", 2, ids(1, 0)),
                PlanEntry("pl-oracle", 1, ids(1, 2)),
            ]
        )
        assert not errors(validate(state, plan))
        path = tmp_path / "plan.json"
        path.write_text(plan.to_json())
        # `python -m console rollback`, with a snapshot of its own
        capsys.readouterr()  # what came before (the sandbox starting)
        assert cli.main(["rollback", *connection_args(sb), "--reassignment-json-file", str(path)]) == 0
        said = capsys.readouterr().out.strip()
        ran = official(sb, "--execute", "--reassignment-json-file", str(path))
        assert ran.returncode == 0, ran.stdout + ran.stderr
        printed = re.search(r"Current partition replica assignment\s*\n\s*\n(\{.*\})\s*\n", ran.stdout).group(1)
        back = rollback(state, plan)
        assert printed == back.to_json()
        assert said == printed
        dirs = {d for e in back.entries for d in e.log_dirs or ("any",)}
        if cluster == "sandbox":  # every replica's own dir, under the sandbox's data dir
            assert all(d.startswith(str(sb.data_dir)) and d.endswith(("/d1", "/d2")) for d in dirs), dirs
            assert all(
                d == state.partition(*e.key).log_dir_on(b)
                for e in back.entries
                for b, d in zip(e.replicas, e.log_dirs, strict=True)
            )
        else:
            assert dirs == {"any"}
        settle(reader)
        # and the official tool's own output reads back as the same plan
        assert parse_plan(printed) == back


def test_the_rollback_submitted_by_the_console_puts_each_replica_back_in_its_dir(sandbox, tmp_path, monkeypatch):
    # Kafka 4.4: the rollback names each replica's dir, and the console carries dirs out (AlterReplicaLogDirs)
    monkeypatch.setenv("CONSOLE_DATA_DIR", str(tmp_path))
    bs = sandbox.bootstrap_servers
    make_topic(bs, "pl-back-dirs", 2, 2, 20, assignment=[[0, 1], [1, 2]])

    def submit_file(plan: Plan, name: str) -> None:
        path = tmp_path / name
        path.write_text(plan.to_json())
        assert cli.main(["submit", "--bootstrap-server", bs, "--reassignment-json-file", str(path), "--yes"]) == 0

    with ClusterReader(settings_for(sandbox, zookeeper=False)) as reader:
        first = reader.snapshot(info=True)
        # broker 0's replica of partition 0 first goes into the dir it is not in: not where Kafka put it
        p0 = first.partition("pl-back-dirs", 0)
        other = next(d.path for d in first.broker(BrokerId(0)).log_dirs if d.path != p0.log_dir_on(BrokerId(0)))
        submit_file(Plan.of([PlanEntry("pl-back-dirs", 0, ids(0, 1), (other, "any"))]), "dir.json")
        settle(reader)
        before = wait_for(
            lambda: (
                (s := reader.snapshot(info=True)).partition("pl-back-dirs", 0).log_dir_on(BrokerId(0)) == other
                and not any(log.is_future for log in s.partition("pl-back-dirs", 0).logs)
                and s
            ),
            what="the replica in the other dir",
        )
        plan = Plan.of([PlanEntry("pl-back-dirs", 0, ids(2, 1)), PlanEntry("pl-back-dirs", 1, ids(0, 2))])
        back = rollback(before, plan)
        assert [e.log_dirs for e in back.entries] == [
            tuple(before.partition(*e.key).log_dir_on(b) for b in e.replicas) for e in back.entries
        ]
        submit_file(plan, "plan.json")
        settle(reader)
        submit_file(back, "back.json")
        settle(reader)
        after = wait_for(
            lambda: (s := reader.snapshot()).partition("pl-back-dirs", 0).log_dir_on(BrokerId(0)) is not None and s,
            what="the replica back on broker 0",
        )
        for e in back.entries:
            was, now = before.partition(*e.key), after.partition(*e.key)
            assert now.replicas == was.replicas
            assert [now.log_dir_on(b) for b in now.replicas] == [was.log_dir_on(b) for b in was.replicas], e.key


@pytest.mark.parametrize(
    "replicas",
    [(), (1, 1), (-1, 1), (9, 1)],
    ids=["empty list", "duplicate ids", "negative id", "adding on a broker not alive"],
)
def test_what_the_controller_rejects_is_caught_by_validation_first(sandbox, replicas):
    bs = sandbox.bootstrap_servers
    if "pl-reject" not in ClusterReader(settings_for(sandbox, zookeeper=False)).snapshot().topics:
        make_topic(bs, "pl-reject", 1, 2, 1, assignment=[[0, 1]])
    plan = Plan.of([PlanEntry("pl-reject", 0, ids(*replicas))])
    with ClusterReader(settings_for(sandbox, zookeeper=False)) as reader:
        found = errors(validate(reader.snapshot(), plan))
    assert found, "validation must refuse what the controller refuses"
    if not replicas:  # kafka-python refuses an empty list before sending (None means cancel)
        with pytest.raises(ValueError, match="non-empty"):
            submit(bs, plan)
        return
    ((_, err),) = submit(bs, plan).items()
    assert err is not None and getattr(err, "errno", None) == 39, err  # INVALID_REPLICA_ASSIGNMENT


def test_every_plan_without_errors_is_accepted_by_the_controller(sandbox):
    bs = sandbox.bootstrap_servers
    make_topic(bs, "pl-accept", 6, 2, 5, assignment=[[0, 1], [1, 2], [2, 0], [0, 2], [1, 0], [2, 1]])
    rnd = random.Random(7)
    with ClusterReader(settings_for(sandbox)) as reader:
        for _ in range(3):
            entries = [PlanEntry("pl-accept", p, ids(*rnd.sample([0, 1, 2], rnd.randint(1, 3)))) for p in range(6)]
            plan = Plan.of(entries)
            state = reader.snapshot()
            findings = validate(state, plan)
            if errors(findings):
                continue
            outcome = submit(bs, plan)
            assert all(e is None for e in outcome.values()), outcome
            settle(reader)
            after = reader.snapshot()
            assert all(after.partition(*e.key).replicas == e.replicas for e in plan.entries)
        # back to RF 2 everywhere for whoever comes next
        back = Plan.of(PlanEntry("pl-accept", p, ids(p % 3, (p + 1) % 3)) for p in range(6))
        assert not errors(validate(reader.snapshot(), back))
        assert all(e is None for e in submit(bs, back).values())
        settle(reader)
