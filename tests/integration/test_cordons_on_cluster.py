"""Cordons (KIP-1066) on the real Kafka 4.4 sandbox (two log dirs per broker): a broker cordoned
through the CLI is reported by ``state --json`` exactly as DescribeConfigs and DescribeLogDirs say,
every generator goal leaves it out, a plan onto it is flagged (and ``submit`` refuses it, sending
nothing, overridden or not: Kafka 4.4's controller would refuse it per partition), and uncordoning restores it.
On Kafka 4.3.1 (a cluster of the module's own) the controller completes such a move, and a replica
asked into a cordoned dir is refused that dir by its broker (said so) and placed in its other dir. The shared sandbox is left as it was found: broker 2
uncordoned, the test's topic deleted."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka.admin import ConfigResource, ResourceType

from console import cli
from console.cli.exits import Exit
from console.core.errors import GoalImpossible
from console.core.limits import CORDONED_LOG_DIRS
from console.core.model import BrokerId, ClusterState, cordon_list
from console.plans.generate import generate
from console.plans.generators.options import GenerateOptions, Goal, Metric
from console.plans.plan import parse_plan
from console.plans.rules.codes import CORDONED_REFUSED
from console.plans.validate import validate
from console.sandbox.cluster import Sandbox
from console.state.reader import ClusterReader
from tests.integration.helpers import admin, make_topic
from tests.support import connection_args, settings_for, wait_for

TOPIC = "cordon-t"
CORDONED = 2


def raw_cordon(sb: Sandbox, broker: int) -> tuple[tuple[str, ...], dict[str, bool]]:
    """What the brokers say without the console: ``cordoned.log.dirs`` (DescribeConfigs) and each
    log dir's IsCordoned (DescribeLogDirs v5)."""
    from kafka.admin import KafkaAdminClient

    a = admin(sb.bootstrap_servers)  # kept alive until the future resolves
    ((_, fut),) = a.describe_configs([ConfigResource(ResourceType.BROKER, str(broker))]).items()
    value = fut.result(timeout=15)[CORDONED_LOG_DIRS].value
    kp = KafkaAdminClient(bootstrap_servers=sb.bootstrap_servers)
    try:
        dirs = {d["log_dir"]: d["is_cordoned"] for x in kp.describe_log_dirs(brokers=[broker]) for d in x["log_dirs"]}
    finally:
        kp.close()
    return cordon_list(value), dirs


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def state_doc(sb: Sandbox, capsys: pytest.CaptureFixture[str]) -> dict[int, dict[str, Any]]:
    code, out, err = run(capsys, "state", *connection_args(sb), "--json")
    assert code == 0, err
    return {b["id"]: b for b in json.loads(out)["brokers"]}


@pytest.fixture
def cordon_world(sandbox: Sandbox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Sandbox]:
    """The session's sandbox with a small topic on brokers 0 and 1 only (so a balance would fill
    broker 2); afterwards broker 2 uncordoned and the topic gone, whatever happened."""
    monkeypatch.setenv("CONSOLE_DATA_DIR", str(tmp_path))
    bs = sandbox.bootstrap_servers
    make_topic(bs, TOPIC, 6, 1, 10, assignment=[[0], [1], [0], [1], [0], [0]])
    try:
        yield sandbox
    finally:
        cli.main(["uncordon", *connection_args(sandbox), "--broker", str(CORDONED), "--yes"])
        client = admin(bs)  # kept alive until the futures resolve
        for f in client.delete_topics([TOPIC], operation_timeout=30).values():
            f.result(timeout=60)


def test_a_cordoned_broker_is_reported_left_out_flagged_and_uncordoned(
    cordon_world: Sandbox, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    sb = cordon_world
    code, out, err = run(capsys, "cordon", *connection_args(sb), "--broker", str(CORDONED), "--yes", "--json")
    assert code == 0, err
    assert json.loads(out)["reported"] == ["*"]

    # state --json says what the brokers say
    config, dirs = raw_cordon(sb, CORDONED)
    assert config == ("*",) and len(dirs) == 2 and all(dirs.values())
    brokers = state_doc(sb, capsys)
    two = brokers[CORDONED]
    assert two["cordoned"] is True and tuple(two["cordoned_log_dirs"]) == config
    assert {d["path"]: (d["cordoned"], d["is_cordoned"]) for d in two["log_dirs"]} == {
        p: (f, f) for p, f in dirs.items()
    }
    assert brokers[0]["cordoned"] is False and brokers[1]["cordoned"] is False

    # every goal leaves broker 2 out, and says so
    with ClusterReader(settings_for(sb)) as reader:

        def sees_it() -> ClusterState | None:
            s = reader.snapshot(info=True)
            b = s.broker(BrokerId(CORDONED))
            return s if b is not None and b.cordoned else None

        state = wait_for(sees_it, what="the snapshot to see the cordon")
        topics = (TOPIC,)
        goals = [
            GenerateOptions(Goal.DECOMMISSION, (0,), topics=topics),
            GenerateOptions(Goal.REBALANCE, metric=Metric.COUNT, topics=topics),
            GenerateOptions(Goal.REBALANCE, metric=Metric.BYTES, topics=topics),
            GenerateOptions(Goal.REBALANCE, metric=Metric.LEADERS, topics=topics),
            GenerateOptions(Goal.REPLICATION_FACTOR, replication_factor=2, topics=topics),
            GenerateOptions(Goal.FIX_RACKS, topics=topics),
            GenerateOptions(Goal.OFFICIAL, brokers=(0, 1, 2), topics=topics),
        ]
        for options in goals:
            made = generate(state, options)
            for e in made.plan.entries:
                assert CORDONED not in e.replicas, (options.goal, e)
            assert f"Broker {CORDONED} is cordoned: never a destination." in [f.message for f in made.report.findings]
        with pytest.raises(GoalImpossible, match=f"Broker {CORDONED} is cordoned"):
            generate(state, GenerateOptions(Goal.ADD_BROKERS, (CORDONED,), topics=topics))

        # a plan onto it is flagged, and submit refuses it without sending anything
        plan = tmp_path / "onto-2.json"
        plan.write_text(json.dumps({"version": 1, "partitions": [{"topic": TOPIC, "partition": 0, "replicas": [2]}]}))
        # Kafka 4.4's controller refuses a move onto a broker whose every dir is cordoned: an error
        # no override lets through (before, the override was offered and the controller refused it)
        found = [f for f in validate(state, parse_plan(plan.read_text())) if f.code == CORDONED_REFUSED]
        assert [(f.topic, f.partition, f.severity.value) for f in found] == [(TOPIC, 0, "error")]
        code, out, err = run(capsys, "validate", *connection_args(sb), "--reassignment-json-file", str(plan))
        assert code == 1 and CORDONED_REFUSED in out + err
        submit = ["submit", *connection_args(sb), "--reassignment-json-file", str(plan), "--yes", "--detach"]
        for override in ((), ("--allow-cordoned",)):
            code, out, err = run(capsys, *submit, *override)
            assert code == 1 and "nothing was sent" in err and "uncordon" in out + err, out + err
        assert not [p for p in reader.snapshot().in_flight if p.topic == TOPIC]  # nothing was sent
        assert reader.snapshot().partition(TOPIC, 0).replicas == (0,)

    # uncordon restores it
    code, _, err = run(capsys, "uncordon", *connection_args(sb), "--broker", str(CORDONED), "--yes")
    assert code == 0, err
    config, dirs = raw_cordon(sb, CORDONED)
    assert config == () and not any(dirs.values())
    back = state_doc(sb, capsys)[CORDONED]
    assert back["cordoned"] is False and back["cordoned_log_dirs"] == []


def test_on_kafka_4_3_a_move_onto_a_cordoned_broker_completes_and_a_cordoned_dir_is_passed_over(
    kafka4: Sandbox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    sb, bs = kafka4, kafka4.bootstrap_servers
    monkeypatch.setenv("CONSOLE_DATA_DIR", str(tmp_path))
    assert sb.kafka_version.startswith("4.3")
    make_topic(bs, "c43", 2, 1, 10, assignment=[[0], [1]])
    code, _, err = run(capsys, "cordon", *connection_args(sb), "--broker", str(CORDONED), "--yes")
    assert code == 0, err
    plan = tmp_path / "onto-2.json"
    plan.write_text(json.dumps({"version": 1, "partitions": [{"topic": "c43", "partition": 0, "replicas": [2]}]}))
    submit = ["submit", *connection_args(sb), "--reassignment-json-file", str(plan), "--yes", "--no-elect-leaders"]
    code, _, err = run(capsys, *submit)
    assert code == 1 and "--allow-cordoned" in err  # the console's own check first
    code, _, err = run(capsys, *submit, "--allow-cordoned")
    assert code == 0, err
    with ClusterReader(settings_for(sb)) as reader:
        wait_for(
            lambda: (p := reader.snapshot().partition("c43", 0)).replicas == (CORDONED,) and not p.reassigning,
            timeout=60,
            what="the move onto the cordoned broker completed",
        )
        # one dir cordoned and named for a new replica: the broker puts it in its other dir
        code, _, err = run(capsys, "uncordon", *connection_args(sb), "--broker", str(CORDONED), "--yes")
        assert code == 0, err
        d1, d2 = (f"{sb.data_dir}/broker-{CORDONED}/d{i}" for i in (1, 2))
        code, _, err = run(capsys, "cordon", *connection_args(sb), "--broker", str(CORDONED), "--log-dir", d2, "--yes")
        assert code == 0, err
        plan.write_text(
            json.dumps(
                {"version": 1, "partitions": [{"topic": "c43", "partition": 1, "replicas": [2], "log_dirs": [d2]}]}
            )
        )
        code, _, err = run(capsys, *submit, "--allow-cordoned")
        # the broker refuses the cordoned dir, and the console says so: the replica is in its other dir
        assert (
            code == Exit.PARTLY
            and f"Log dir not taken: c43-1 on broker 2 into {d2}: INVALID_REPLICATION_ASSIGNMENT" in err
        )
        moved = wait_for(
            lambda: (p := reader.snapshot().partition("c43", 1)).replicas == (CORDONED,) and not p.reassigning and p,
            timeout=60,
            what="the second move completed",
        )
        assert [log.log_dir for log in moved.logs if log.broker == CORDONED] == [d1]
