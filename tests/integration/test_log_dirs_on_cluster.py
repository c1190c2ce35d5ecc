"""A plan's log dirs carried out on the real sandboxes (two log dirs per broker), on Kafka 4.x KRaft
and on 3.9 in ZooKeeper mode: two new replicas land in the one dir named for both and a replica
moves to the other dir of its broker, as the official log-dirs tool then reports; the log-dir
throttle is set for the copy and taken off after; a dir move in flight is cancelled; draining a
whole dir leaves it empty."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from confluent_kafka.admin import AlterConfigOpType, ConfigEntry, ConfigResource, ResourceType

from console import cli
from console.core.limits import LOG_DIR_RATE
from console.core.model import BrokerId
from console.plans.logdirs import dir_moves_in_flight
from console.sandbox.cluster import Sandbox
from console.state.reader import ClusterReader
from tests.integration.helpers import admin, make_topic
from tests.support import kafka_tool, settings_for, wait_for


@pytest.fixture(params=["sandbox", "zk_sandbox"], ids=["kafka4-kraft", "kafka3.9-zookeeper"])
def cluster(request: pytest.FixtureRequest) -> Sandbox:
    sb: Sandbox = request.getfixturevalue(request.param)
    return sb


def official_dirs(sb: Sandbox, topic: str) -> dict[tuple[int, int], str]:
    """(partition, broker) → log dir, as the official ``kafka-log-dirs --describe`` reports it (no future replicas)."""
    done = kafka_tool(sb, "org.apache.kafka.tools.LogDirsCommand", "--describe", "--topic-list", topic)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    doc = json.loads(next(line for line in out.splitlines() if line.startswith("{")))
    return {
        (int(p["partition"].rsplit("-", 1)[1]), int(b["broker"])): d["logDir"]
        for b in doc["brokers"]
        for d in b["logDirs"]
        for p in d["partitions"]
        if not p["isFuture"]
    }


def test_a_plans_log_dirs_are_carried_out(cluster: Sandbox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sb, bs = cluster, cluster.bootstrap_servers
    monkeypatch.setenv("CONSOLE_DATA_DIR", str(tmp_path))
    topic = "dirs-" + sb.mode.value
    make_topic(bs, topic, 3, 2, 200, assignment=[[0, 1], [1, 2], [0, 1]])
    before = official_dirs(sb, topic)
    other = {  # each broker's dir that does not hold the replica
        (p, b): next(d for d in (f"{sb.data_dir}/broker-{b}/d1", f"{sb.data_dir}/broker-{b}/d2") if d != here)
        for (p, b), here in before.items()
    }
    # two new replicas on broker 2, both into the dir that already holds its replica of partition 1:
    # left to itself, Kafka spreads new replicas over the dirs (the "one in each dir")
    new_dir = before[(1, 2)]
    plan = tmp_path / "plan.json"
    plan.write_text(
        json.dumps(
            {
                "version": 1,
                "partitions": [
                    # partition 0: a new replica on 2, in new_dir; broker 0's replica moves to its other dir
                    {"topic": topic, "partition": 0, "replicas": [0, 2], "log_dirs": [other[(0, 0)], new_dir]},
                    # partition 1: the same replicas; broker 1's replica moves to its other dir
                    {"topic": topic, "partition": 1, "replicas": [1, 2], "log_dirs": [other[(1, 1)], "any"]},
                    # partition 2: the second new replica on 2, into the same dir
                    {"topic": topic, "partition": 2, "replicas": [0, 2], "log_dirs": ["any", new_dir]},
                ],
            }
        )
    )
    submit = ["submit", "--bootstrap-server", bs, "--reassignment-json-file", str(plan), "--yes"]
    assert cli.main([*submit, "--throttle", "50000000", "--no-elect-leaders"]) == 0
    after = wait_for(
        lambda: (d := official_dirs(sb, topic)).get((0, 2)) and d.get((2, 2)) and d,
        timeout=60,
        what="the new replicas on broker 2",
    )
    assert after[(0, 2)] == new_dir and after[(2, 2)] == new_dir  # both where asked
    assert after[(0, 0)] == other[(0, 0)] and after[(1, 1)] == other[(1, 1)]
    assert after[(1, 2)] == before[(1, 2)] and after[(2, 0)] == before[(2, 0)]  # "any": left where they were
    with ClusterReader(settings_for(sb)) as reader:
        state = reader.snapshot()
        assert not any(log.is_future for p in state.partitions if p.topic == topic for log in p.logs)
        assert all(LOG_DIR_RATE not in cfg for _, cfg in state.throttles.brokers)  # taken off after the copy


def test_a_log_dir_move_in_flight_is_cancelled(
    cluster: Sandbox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    sb, bs = cluster, cluster.bootstrap_servers
    monkeypatch.setenv("CONSOLE_DATA_DIR", str(tmp_path))
    topic = "dir-cancel-" + sb.mode.value
    make_topic(bs, topic, 1, 1, 3000, assignment=[[1]])
    here = official_dirs(sb, topic)[(0, 1)]
    there = next(d for d in (f"{sb.data_dir}/broker-1/d1", f"{sb.data_dir}/broker-1/d2") if d != here)
    set_dir_rate(bs, 1, 20_000)  # the copy takes minutes
    try:
        with ClusterReader(settings_for(sb)) as reader:
            answers = reader.kafka.alter_replica_log_dirs({(topic, 0, BrokerId(1)): there})
            assert [a.accepted for a in answers] == [True]
            wait_for(
                lambda: any(m.topic == topic for m in dir_moves_in_flight(reader.snapshot())),
                timeout=60,
                what="the future replica",
            )
            code = cli.main(
                ["cancel", "--bootstrap-server", bs, "--log-dir-moves", "--topic", topic, "--yes", "--json"]
            )
            assert code == 0
            out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
            assert [(c["broker"], c["log_dir"]) for c in out["cancelled"]] == [(1, here)]
            wait_for(
                lambda: not any(m.topic == topic for m in dir_moves_in_flight(reader.snapshot())),
                timeout=60,
                what="the future replica dropped",
            )
        assert official_dirs(sb, topic)[(0, 1)] == here
    finally:
        set_dir_rate(bs, 1, None)


def set_dir_rate(bs: str, broker: int, rate: int | None) -> None:
    """``replica.alter.log.dirs.io.max.bytes.per.second`` on ``broker`` (None: removed)."""
    op = AlterConfigOpType.SET if rate is not None else AlterConfigOpType.DELETE
    res = ConfigResource(
        ResourceType.BROKER,
        str(broker),
        incremental_configs=[ConfigEntry(LOG_DIR_RATE, None if rate is None else str(rate), incremental_operation=op)],
    )
    client = admin(bs)
    for f in client.incremental_alter_configs([res]).values():
        f.result()


def test_drain_a_log_dir_empties_it(
    cluster: Sandbox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    sb, bs = cluster, cluster.bootstrap_servers
    monkeypatch.setenv("CONSOLE_DATA_DIR", str(tmp_path))
    topic = "dir-drain-" + sb.mode.value
    make_topic(bs, topic, 4, 1, 50, assignment=[[0], [0], [0], [0]])
    where = list(official_dirs(sb, topic).values())
    full = max(set(where), key=where.count)  # the dir of broker 0 holding most of the topic
    # the whole dir, with whatever else the shared sandbox keeps there
    assert held_by(sb, 0, full)
    code = cli.main(["generate", "--bootstrap-server", bs, "--drain-log-dir", f"0:{full}"])
    assert code == 0
    plan = tmp_path / "drain.json"
    plan.write_text(capsys.readouterr().out)
    entries = json.loads(plan.read_text())["partitions"]
    assert entries and all(0 in e["replicas"] and full not in e["log_dirs"] for e in entries)
    submit = ["submit", "--bootstrap-server", bs, "--reassignment-json-file", str(plan), "--yes", "--no-elect-leaders"]
    assert cli.main(submit) == 0
    wait_for(lambda: not held_by(sb, 0, full), timeout=120, what=f"{full} empty")


def held_by(sb: Sandbox, broker: int, log_dir: str) -> list[str]:
    """The partitions (future replicas too) in ``log_dir`` of ``broker``, as the official log-dirs tool reports them."""
    done = kafka_tool(sb, "org.apache.kafka.tools.LogDirsCommand", "--describe", "--broker-list", str(broker))
    assert done.returncode == 0, done.stderr
    doc = json.loads(next(line for line in done.stdout.splitlines() if line.startswith("{")))
    return [
        p["partition"] for b in doc["brokers"] for d in b["logDirs"] if d["logDir"] == log_dir for p in d["partitions"]
    ]
