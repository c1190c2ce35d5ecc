"""What the cluster is, read from real clusters: Kafka 4.4.0 in KRaft mode (this module's own) and the
session's sandbox (3.9 in ZooKeeper mode, where DescribeQuorum is not available)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from console.access.settings import ConnectionSettings
from console.core.cluster_info import capabilities, metadata_version, release, summary_line
from console.core.model import ClusterMode, SourceStatus
from console.sandbox import cluster
from console.sandbox.cluster import Sandbox
from console.sandbox.versions import Mode
from console.state.document import load_state
from console.state.reader import ClusterReader
from tests.support import SANDBOXES, log

KAFKA = "4.4.0"


@pytest.fixture(scope="module")
def kafka44(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sandbox]:
    data = tmp_path_factory.mktemp("sandbox-kafka44")
    with cluster.running(data, kafka_version=KAFKA, log=log) as sb:
        SANDBOXES.append(sb)
        yield sb
        SANDBOXES.remove(sb)


def test_kafka_44_kraft_version_mode_features_and_quorum(kafka44: Sandbox) -> None:
    with ClusterReader(ConnectionSettings({"bootstrap.servers": kafka44.bootstrap_servers}, name="k44")) as reader:
        plain = reader.snapshot()
        assert not plain.info.known, "a snapshot not asking for it does not read it"
        state = reader.snapshot(info=True)
        again = reader.snapshot()
    info = state.info
    assert (info.versions_status, info.features_status, info.quorum_status) == (SourceStatus.OK,) * 3
    assert again.info == info, "kept for the next snapshots"
    # kafka-python infers 4.3 from the API ranges; the supported metadata.version says 4.4
    assert (release(info), info.api_version, metadata_version(info)) == ("4.4", "4.3", "4.4-IV2")
    assert info.mode is ClusterMode.KRAFT
    names = {f.name: f for f in info.features}
    assert {"metadata.version", "kraft.version", "eligible.leader.replicas.version", "transaction.version"} <= set(
        names
    )
    assert names["eligible.leader.replicas.version"].level == 1
    assert names["kraft.version"].level == 0  # a static quorum (controller.quorum.voters)
    q = info.quorum
    assert q is not None and q.leader in {0, 1, 2} and q.epoch >= 1 and q.high_watermark > 0
    assert [v.id for v in q.voters] == [0, 1, 2]
    leader = next(v for v in q.voters if v.id == q.leader)
    assert leader.lag == 0 and leader.last_fetch_ms is not None
    assert all(v.lag is not None and v.lag >= 0 for v in q.voters)
    assert all(abs(time.time() - v.last_fetch_ms / 1000) < 60 for v in q.voters if v.last_fetch_ms is not None)
    on = {c.name: c.on for c in capabilities(info)}
    assert on["Eligible leader replicas"] and on["Cordoned log dirs"] and on["DescribeTopicPartitions"]
    assert not on["ZooKeeper view"]
    assert summary_line(info).startswith("Kafka 4.4 · KRaft · metadata.version 4.4-IV2 · quorum leader ")


def test_state_prints_it_and_its_document_reads_back(kafka44: Sandbox, tmp_path: Path) -> None:
    argv = [sys.executable, "-m", "console", "state", "--bootstrap-server", kafka44.bootstrap_servers]
    text = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=True).stdout
    assert text.splitlines()[1].startswith("Kafka 4.4 · KRaft · metadata.version 4.4-IV2 · quorum leader ")
    doc = subprocess.run([*argv, "--json"], capture_output=True, text=True, timeout=120, check=True).stdout
    assert json.loads(doc)["cluster"]["version"] == "4.4"
    (tmp_path / "s.json").write_text(doc)
    back = load_state((tmp_path / "s.json").read_bytes())
    assert back.info.mode is ClusterMode.KRAFT and back.info.quorum is not None


def test_the_session_sandbox(sandbox: Sandbox) -> None:
    zk = sandbox.mode is Mode.ZOOKEEPER
    settings = ConnectionSettings({"bootstrap.servers": sandbox.bootstrap_servers}, zookeeper=sandbox.zookeeper)
    with ClusterReader(settings) as reader:
        info = reader.snapshot(info=True).info
    assert release(info) == ".".join(sandbox.kafka_version.split(".")[:2])
    if zk:  # 3.9 in ZooKeeper mode: no quorum, said as not available; no metadata.version finalized
        assert info.mode is ClusterMode.ZOOKEEPER
        assert info.quorum is None and info.quorum_status is SourceStatus.UNSUPPORTED
        assert info.features_status is SourceStatus.OK and metadata_version(info) is None
        caps = {c.name: c for c in capabilities(info)}
        assert caps["Controller quorum view"].why == "DescribeQuorum: not available on this cluster"
        assert caps["ZooKeeper view"].on and not caps["Eligible leader replicas"].on
        assert summary_line(info).endswith("ZooKeeper · no controller quorum (ZooKeeper mode)")
    else:
        assert info.mode is ClusterMode.KRAFT and info.quorum is not None
