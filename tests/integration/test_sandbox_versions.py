"""The sandbox on a Kafka 4 release other than the default (KRaft; the module's own cluster,
``kafka4``): the release the brokers report, the SASL listener and its ACLs (StandardAuthorizer),
racks, two log dirs per broker, log4j2 configured, the demo data and the official tools of the same
release, and nothing left running after ``down``."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from confluent_kafka import KafkaError, KafkaException
from confluent_kafka.admin import AdminClient, NewTopic

from console.access.settings import ConnectionSettings
from console.core.model import SourceStatus
from console.present.text import list_text
from console.sandbox import cluster
from console.sandbox.cluster import Sandbox
from console.sandbox.demo import DEMO_REASSIGN_TOPIC, DEMO_TOPICS, create_topics, produce, start_demo_reassignment
from console.sandbox.versions import Mode
from console.state.reader import ClusterReader
from tests.integration.helpers import make_topic
from tests.support import OTHER_KAFKA4

KAFKA = OTHER_KAFKA4
REASSIGN = "org.apache.kafka.tools.reassign.ReassignPartitionsCommand"


def settings(sb: Sandbox, user: str) -> ConnectionSettings:
    return ConnectionSettings(sb.sasl_properties(user), name=user, timeout_s=5.0)


def tool(sb: Sandbox, main: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(sb.tool_argv(main, *args), capture_output=True, text=True, timeout=120)


def test_the_brokers_report_the_release_asked_for(kafka4: Sandbox) -> None:
    from kafka.admin import KafkaAdminClient

    assert (kafka4.kafka_version, kafka4.mode, kafka4.zookeeper) == (KAFKA, Mode.KRAFT, None)
    assert kafka4.info()["kafka_version"] == KAFKA and kafka4.info()["mode"] == "kraft"
    kp = KafkaAdminClient(bootstrap_servers=kafka4.bootstrap_servers.split(","))
    try:
        # ApiVersions: the API ranges are 4.3's, and metadata.version is finalized at the newest level
        assert {kp.get_broker_version_data(b["id"]).broker_version for b in kafka4.brokers} == {(4, 3)}
        features = kp.describe_features()
    finally:
        kp.close()
    mv = features["metadata.version"]
    assert mv["finalized"][1] == mv["supported"][1]
    described = tool(
        kafka4, "org.apache.kafka.tools.FeatureCommand", "--bootstrap-server", kafka4.bootstrap_servers, "describe"
    )
    assert described.returncode == 0, described.stderr
    line = next(ln for ln in described.stdout.splitlines() if "metadata.version" in ln)
    assert "FinalizedVersionLevel: 4.3-IV" in line
    for b in kafka4.brokers:
        log = Path(kafka4.data_dir, "logs", f"broker-{b['id']}-server.log").read_text()
        assert f"Kafka version: {KAFKA}" in log


def test_the_sasl_listener_lets_the_sandbox_users_in_and_the_acls_deny_what_they_should(kafka4: Sandbox) -> None:
    make_topic(kafka4.bootstrap_servers, "k4-auth", 2, 2, 20)
    with ClusterReader(settings(kafka4, "viewer")) as reader:
        state = reader.snapshot()
    assert (state.status.metadata, state.status.reassignments, state.status.log_dirs, state.status.configs) == (
        SourceStatus.OK,
    ) * 4
    assert state.partition("k4-auth", 1) is not None and not state.findings

    with ClusterReader(settings(kafka4, "nobody")) as reader:
        state = reader.snapshot()
    assert state.status.metadata is SourceStatus.OK and len(state.brokers) == 3 and not state.partitions
    assert state.status.reassignments is SourceStatus.UNAUTHORIZED
    assert state.status.configs is SourceStatus.UNAUTHORIZED
    assert {"reassignments-unreadable", "configs-unreadable", "topics-hidden"} <= {f.code for f in state.findings}

    def create(user: str, name: str) -> None:
        admin = AdminClient({**kafka4.sasl_properties(user), "log_level": "0"})
        for fut in admin.create_topics([NewTopic(name, 1, 1)], operation_timeout=30).values():
            fut.result()

    with pytest.raises(KafkaException) as denied:
        create("viewer", "k4-by-viewer")
    assert denied.value.args[0].code() in (
        KafkaError.TOPIC_AUTHORIZATION_FAILED,
        KafkaError.CLUSTER_AUTHORIZATION_FAILED,
    )
    create("admin", "k4-by-admin")  # a super user

    wrong = {**kafka4.sasl_properties("viewer"), "sasl.password": "not-the-password"}
    with ClusterReader(ConnectionSettings(wrong, name="intruder", timeout_s=5.0)) as reader:
        assert reader.snapshot().status.metadata is not SourceStatus.OK


def test_brokers_on_three_racks_with_two_log_dirs_each(kafka4: Sandbox) -> None:
    from kafka.admin import KafkaAdminClient

    with ClusterReader(settings(kafka4, "admin")) as reader:
        state = reader.snapshot()
    assert [(b.id, b.rack) for b in state.brokers] == [(0, "rack-a"), (1, "rack-b"), (2, "rack-c")]
    kp = KafkaAdminClient(bootstrap_servers=kafka4.bootstrap_servers.split(","))
    try:
        for b in kafka4.brokers:
            dirs = kp.describe_log_dirs(brokers=[b["id"]])
            text = repr(dirs)
            for d in ("d1", "d2"):
                assert str(Path(kafka4.data_dir, f"broker-{b['id']}", d)) in text
    finally:
        kp.close()


def test_the_demo_data_and_reassignment_and_the_official_tools_of_the_same_release(kafka4: Sandbox) -> None:
    bs = kafka4.bootstrap_servers
    # the topic the demo moves big enough to stay in flight (throttled) while the tools look at it
    small = tuple(
        t.__class__(t.name, t.partitions, t.replication, 2.0 if t.name == DEMO_REASSIGN_TOPIC else 0.25)
        for t in DEMO_TOPICS
    )
    create_topics(bs, small, log=print)
    produce(bs, small, log=print)
    targets = start_demo_reassignment(bs, [0, 1, 2], log=print)
    listed = tool(kafka4, REASSIGN, "--bootstrap-server", bs, "--list")
    assert listed.returncode == 0, listed.stderr
    assert f"{DEMO_REASSIGN_TOPIC}-0: replicas: " in listed.stdout
    assert sum(ln.startswith(f"{DEMO_REASSIGN_TOPIC}-") for ln in listed.stdout.splitlines()) == len(targets)
    with ClusterReader(settings(kafka4, "admin")) as reader:
        state = reader.snapshot()
    assert list_text(state).splitlines() == [ln for ln in listed.stdout.strip().splitlines() if ln.strip()]
    # Kafka 4's --bootstrap-controller (KIP-919) lists the same through the controllers
    assert kafka4.controller_bootstrap_servers is not None
    via_controllers = tool(kafka4, REASSIGN, "--bootstrap-controller", kafka4.controller_bootstrap_servers, "--list")
    assert via_controllers.returncode == 0, via_controllers.stderr
    assert via_controllers.stdout == listed.stdout
    for ran in (listed, via_controllers):
        assert "No configuration found" not in ran.stderr and "StatusLogger" not in ran.stderr


def test_log4j2_is_configured_for_every_process(kafka4: Sandbox) -> None:
    logs = sorted(Path(kafka4.data_dir, "logs").iterdir())
    names = {p.name for p in logs}
    assert {f"broker-{b['id']}-server.log" for b in kafka4.brokers} <= names
    for path in logs:
        text = path.read_text(errors="replace")
        assert "No configuration found" not in text and "StatusLogger" not in text, path.name
        assert "SLF4J: " not in text, path.name  # Kafka's slf4j logging bound to log4j2


def test_down_leaves_no_process(kafka4: Sandbox) -> None:
    pids = [p.pid for p in kafka4.procs]
    assert pids and all(cluster.pid_alive(pid) for pid in pids)
    assert cluster.down(Path(kafka4.data_dir), log=print)
    assert not any(cluster.pid_alive(pid) for pid in pids)
    assert cluster.status(Path(kafka4.data_dir)) is None
    assert not any(cluster.port_open(int(str(b["port"]))) for b in kafka4.brokers)
