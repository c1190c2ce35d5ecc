"""The sandbox's choice of Kafka release and mode, checked before anything starts; its KRaft plan;
the hints of a start that fails on a missing class. No process is started here."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest

from console.core.errors import SandboxError
from console.sandbox import cluster
from console.sandbox.cluster import Proc, Sandbox
from console.sandbox.config import _write_log4j, tiered_props
from console.sandbox.jars import COMPLETE, TIERED_RSM
from console.sandbox.versions import (
    DEFAULT_KAFKA,
    EARLIER_KAFKA4,
    UP_DEFAULT,
    ZOOKEEPER_KAFKA,
    Mode,
    SandboxOptions,
    parse_release,
    sandbox_options,
)


def test_nothing_asked_for_is_the_default_sandbox() -> None:
    assert sandbox_options() == UP_DEFAULT


def test_a_4x_release_runs_in_kraft_mode() -> None:
    assert sandbox_options("4.3.1") == SandboxOptions("4.3.1", Mode.KRAFT)
    assert sandbox_options("4.0.0", kraft=True) == SandboxOptions("4.0.0", Mode.KRAFT)
    assert parse_release(DEFAULT_KAFKA).major == 4


def test_the_earlier_4x_lines_tested_are_one_release_each_of_4_0_4_1_and_4_2_all_kraft() -> None:
    releases = [parse_release(v) for v in EARLIER_KAFKA4]
    assert [(r.major, r.minor) for r in releases] == [(4, 0), (4, 1), (4, 2)]
    assert all(sandbox_options(v) == SandboxOptions(v, Mode.KRAFT) for v in EARLIER_KAFKA4)
    default = parse_release(DEFAULT_KAFKA)
    assert all((r.major, r.minor) < (default.major, default.minor) for r in releases)


def test_modes_asked_for_explicitly() -> None:
    assert sandbox_options(zookeeper=True) == SandboxOptions(ZOOKEEPER_KAFKA, Mode.ZOOKEEPER)
    assert sandbox_options("3.9.0", zookeeper=True) == SandboxOptions("3.9.0", Mode.ZOOKEEPER)
    assert sandbox_options("3.9.1", kraft=True) == SandboxOptions("3.9.1", Mode.KRAFT)
    assert sandbox_options(kraft=True).mode is Mode.KRAFT


def test_zookeeper_mode_on_kafka_4_is_refused() -> None:
    with pytest.raises(SandboxError) as e:
        sandbox_options("4.3.1", zookeeper=True)
    assert e.value.message == "Kafka 4 has no ZooKeeper mode; use --kafka 3.9.1 --zookeeper"


def test_both_modes_at_once_are_refused() -> None:
    with pytest.raises(SandboxError, match="not both"):
        sandbox_options("3.9.1", zookeeper=True, kraft=True)


@pytest.mark.parametrize("text", ["3.8.1", "2.8.2", "5.0.0", "3.10.0"])
def test_unsupported_releases_are_refused_with_what_is_supported(text: str) -> None:
    with pytest.raises(SandboxError) as e:
        sandbox_options(text)
    assert e.value.message == f"Kafka {text} is not supported by the sandbox."
    assert "4.x" in e.value.hint and "3.9.x" in e.value.hint


@pytest.mark.parametrize("text", ["4.3", "latest", "4.3.1-rc0", "v4.3.1", ""])
def test_what_is_not_a_release_is_refused(text: str) -> None:
    with pytest.raises(SandboxError, match="is not a Kafka release"):
        sandbox_options(text)


def test_up_refuses_zookeeper_on_kafka_4_before_anything_starts(tmp_path: Path, monkeypatch) -> None:
    def must_not_run(*_a: object, **_k: object) -> None:
        raise AssertionError("started something")

    for name in ("ensure_classpath", "_spawn", "status", "_format_kraft"):
        monkeypatch.setattr(cluster, name, must_not_run)
    data = tmp_path / "sb"
    with pytest.raises(SandboxError, match="Kafka 4 has no ZooKeeper mode"):
        cluster.up(data, kafka_version="4.3.1", zookeeper=True, log=must_not_run)
    assert not data.exists()


def test_the_default_is_kafka_4_in_kraft_mode() -> None:
    assert SandboxOptions(DEFAULT_KAFKA, Mode.KRAFT) == UP_DEFAULT
    assert sandbox_options("3.9.1") == SandboxOptions("3.9.1", Mode.KRAFT)


@pytest.mark.parametrize(
    ("flags", "said"),
    [
        (["--kafka", "4.3.1", "--zookeeper"], "Kafka 4 has no ZooKeeper mode; use --kafka 3.9.1 --zookeeper"),
        (["--zookeeper", "--kraft"], "not both"),
        (["--kafka", "3.8.1"], "is not supported by the sandbox"),
    ],
)
def test_sandbox_up_refuses_what_cannot_be_before_anything_starts(
    flags: list[str], said: str, tmp_path: Path, monkeypatch, capsys
) -> None:
    from console import cli

    def must_not_run(*_a: object, **_k: object) -> None:
        raise AssertionError("started something")

    for name in ("up", "ensure_classpath", "_spawn", "status", "_format_kraft"):
        monkeypatch.setattr(cluster, name, must_not_run)
    assert cli.main(["sandbox", "up", "--data-dir", str(tmp_path / "sb"), *flags]) == 2
    assert said in capsys.readouterr().err
    assert not (tmp_path / "sb").exists()


def test_sandbox_up_passes_the_release_and_mode_asked_for(tmp_path: Path, monkeypatch, capsys) -> None:
    from console import cli

    asked: dict[str, object] = {}

    def up(data_dir: Path | None, **kw: object) -> Sandbox:
        asked.update(kw)
        raise SandboxError("stop here")

    monkeypatch.setattr(cluster, "up", up)
    assert cli.main(["sandbox", "up", "--kafka", "3.9.1", "--zookeeper", "--brokers", "6"]) == 1
    assert asked == {"kafka_version": "3.9.1", "zookeeper": True, "kraft": False, "brokers": 6, "tiered_storage": False}
    assert cli.main(["sandbox", "up", "--kafka", "4.3.1", "--tiered-storage"]) == 1
    assert asked["tiered_storage"] is True and asked["kafka_version"] == "4.3.1"


def _jvm(tmp_path: Path, version: str) -> cluster._Jvm:
    (tmp_path / "config").mkdir(exist_ok=True)
    return cluster._Jvm("/jars/*", tmp_path, parse_release(version))


def _props(path: Path) -> dict[str, str]:
    return dict(line.split("=", 1) for line in path.read_text().splitlines())


def test_a_six_broker_kraft_plan_keeps_a_quorum_of_three_on_three_racks(tmp_path: Path) -> None:
    sb = cluster._plan_kraft(_jvm(tmp_path, "4.3.1"), 6)
    assert (sb.mode, sb.kafka_version, sb.zookeeper) == (Mode.KRAFT, "4.3.1", None)
    assert [b["rack"] for b in sb.brokers] == ["rack-a", "rack-b", "rack-c"] * 2
    assert [p.controller for p in sb.procs] == [True] * 3 + [False] * 3
    props = [_props(tmp_path / "config" / f"broker-{i}.properties") for i in range(6)]
    assert [p["process.roles"] for p in props] == ["broker,controller"] * 3 + ["broker"] * 3
    assert len({p["controller.quorum.voters"] for p in props}) == 1
    assert props[0]["controller.quorum.voters"].count("@") == 3
    assert sb.controller_bootstrap_servers is not None and sb.controller_bootstrap_servers.count(",") == 2
    for i, p in enumerate(props):
        assert p["authorizer.class.name"] == "org.apache.kafka.metadata.authorizer.StandardAuthorizer"
        assert p["super.users"] == "User:ANONYMOUS;User:admin"
        assert p["log.dirs"] == f"{tmp_path}/broker-{i}/d1,{tmp_path}/broker-{i}/d2"
        assert ("CONTROLLER://" in p["listeners"]) == (i < 3)
        assert "SASL_PLAINTEXT://" in p["listeners"] and "CONTROLLER" not in p["advertised.listeners"]
    assert sb.sasl_bootstrap_servers is not None and sb.sasl_bootstrap_servers.count(",") == 5


def test_each_release_logs_through_its_own_log4j(tmp_path: Path) -> None:
    kafka4 = cluster._java(_jvm(tmp_path, "4.3.1"), "tools", "Main")
    kafka3 = cluster._java(_jvm(tmp_path, "3.9.1"), "tools", "Main")
    assert f"-Dlog4j2.configurationFile={tmp_path}/config/log4j2.properties" in kafka4
    assert not any(a.startswith("-Dlog4j.configuration=") for a in kafka4)
    assert f"-Dlog4j.configuration=file:{tmp_path}/config/log4j.properties" in kafka3
    _write_log4j(tmp_path)
    assert "${sys:sandbox.name}-server.log" in (tmp_path / "config" / "log4j2.properties").read_text()


def test_the_printed_json_gains_the_release_and_mode_and_old_state_files_load(tmp_path: Path) -> None:
    sb = cluster._plan_kraft(_jvm(tmp_path, "4.3.1"), 3)
    info = sb.info()
    assert (info["kafka_version"], info["mode"]) == ("4.3.1", "kraft")
    assert {"bootstrap_servers", "zookeeper", "brokers", "kafka_classpath", "data_dir", "sasl"} <= set(info)
    assert json.loads(json.dumps(info))["mode"] == "kraft"
    sb.save()
    assert Sandbox.load(tmp_path) == sb
    old = json.loads((tmp_path / cluster.STATE_FILE).read_text())  # a state file from before releases were chosen
    del old["kafka_version"], old["controller_bootstrap_servers"]
    for p in old["procs"]:
        del p["controller"]
    old["mode"] = "zookeeper"
    del old["tiered_storage"]
    (tmp_path / cluster.STATE_FILE).write_text(json.dumps(old))
    loaded = Sandbox.load(tmp_path)
    assert loaded is not None and (loaded.kafka_version, loaded.mode) == ("3.9.1", Mode.ZOOKEEPER)


# -- hints of a start that fails on a missing class ---------------------------------------------
def _failed_start(tmp_path: Path, version: str | None, jars: list[str], present: list[str], log: str) -> SandboxError:
    libs = tmp_path / "kafka-x" / "libs"
    libs.mkdir(parents=True)
    if version is not None:
        (libs / COMPLETE).write_text(json.dumps({"kafka_version": version, "jars": jars}))
    for jar in present:
        (libs / jar).write_bytes(b"PK")
    out = tmp_path / "broker-0.out"
    out.write_text(log)
    return cluster._start_failure(Proc("broker-0", ["java", "-cp", f"{libs}/*", "kafka.Kafka"], str(out), 1))


def test_a_jar_lost_from_the_cache_is_fetched_again(tmp_path: Path) -> None:
    e = _failed_start(
        tmp_path,
        "4.3.1",
        ["kafka_2.13-4.3.1.jar", "kafka-raft-4.3.1.jar"],
        ["kafka_2.13-4.3.1.jar"],
        "Exception in thread main java.lang.NoClassDefFoundError: org/apache/kafka/raft/RaftManager\n",
    )
    assert (
        e.message
        == "broker-0: org.apache.kafka.raft.RaftManager is missing: the cached Kafka classpath lost kafka-raft-4.3.1.jar."
    )
    assert e.hint.startswith(f"Delete {tmp_path / 'kafka-x'} and run again")


def test_zookeeper_classes_on_kafka_4_are_not_fetched_again(tmp_path: Path) -> None:
    e = _failed_start(
        tmp_path,
        "4.3.1",
        ["kafka_2.13-4.3.1.jar"],
        ["kafka_2.13-4.3.1.jar"],
        "java.lang.NoClassDefFoundError: com/codahale/metrics/Reservoir\n",
    )
    assert "Kafka 4.3.1 has no ZooKeeper" in e.message
    assert "Delete" not in e.hint and "--kafka 3.9.1 --zookeeper" in e.hint


def test_a_class_the_release_does_not_depend_on_is_not_fetched_again(tmp_path: Path) -> None:
    e = _failed_start(
        tmp_path,
        "3.9.1",
        ["kafka_2.13-3.9.1.jar"],
        ["kafka_2.13-3.9.1.jar"],
        "Caused by: java.lang.ClassNotFoundException: org.example.Missing\n",
    )
    assert "org.example.Missing is not on the classpath of Kafka 3.9.1" in e.message
    assert "fetching the jars again would not bring it" in e.message and "Delete" not in e.hint


def test_an_unrecorded_classpath_is_fetched_again(tmp_path: Path) -> None:
    e = _failed_start(tmp_path, None, [], [], "java.lang.ClassNotFoundException: kafka.Kafka\n")
    assert "Delete" in e.hint


def test_a_cluster_id_never_starts_with_a_dash() -> None:
    """The storage tool reads "-t -xyz" as a missing value: CI met it (one id in 64)."""
    draws = iter([uuid.UUID(bytes=b"\xf8" + bytes(15)), uuid.UUID(bytes=b"\x04" + bytes(15))])
    cluster_id = cluster.new_cluster_id(lambda: next(draws))
    assert not cluster_id.startswith("-")
    assert len(cluster_id) == 22
    assert cluster_id == "BAAAAAAAAAAAAAAAAAAAAA"


def test_a_tiered_sandbox_gives_every_broker_the_local_tiered_storage_configs(tmp_path: Path) -> None:
    for plan in (cluster._plan_kraft, cluster._plan_zookeeper):
        sb = plan(_jvm(tmp_path, "3.9.1"), 3, tiered_props(tmp_path))
        for i in range(3):
            p = _props(tmp_path / "config" / f"broker-{i}.properties")
            assert p["remote.log.storage.system.enable"] == "true"
            assert p["remote.log.storage.manager.class.name"] == TIERED_RSM
            assert p["rsm.config.dir"] == f"{tmp_path}/remote"
            assert p["remote.log.metadata.manager.listener.name"] == "PLAINTEXT"
        assert not sb.tiered_storage  # set by up() once the test jar is on the classpath
    cluster._plan_kraft(_jvm(tmp_path, "4.3.1"), 3)
    assert "remote.log.storage.system.enable" not in _props(tmp_path / "config" / "broker-0.properties")


def test_configs_asked_for_are_given_to_every_broker_over_the_sandboxs_own(tmp_path: Path, monkeypatch) -> None:
    planned: list[dict[str, object]] = []
    kraft_plan = cluster._plan_kraft

    def plan(jvm: cluster._Jvm, n: int, extra: dict[str, object] | None = None) -> Sandbox:
        planned.append(dict(extra or {}))
        sb = kraft_plan(jvm, n, extra)
        raise SandboxError(f"planned {len(sb.procs)}, started nothing")

    for name, stand_in in (
        ("ensure_classpath", lambda *_a: "/jars"),
        ("_require", lambda *_a: None),
        ("_plan_kraft", plan),
    ):
        monkeypatch.setattr(cluster, name, stand_in)
    (tmp_path / "config").mkdir()
    asked = {"broker.session.timeout.ms": 45000, "replica.lag.time.max.ms": 4000}
    with pytest.raises(SandboxError, match="planned 5, started nothing"):
        cluster.up(tmp_path, brokers=5, broker_config=asked, log=lambda _m: None)
    assert planned == [asked]
    for i in range(5):
        p = _props(tmp_path / "config" / f"broker-{i}.properties")
        assert (p["broker.session.timeout.ms"], p["replica.lag.time.max.ms"]) == ("45000", "4000")
        assert p["log.segment.bytes"] == "1048576"  # the sandbox's own configs stay
