"""Overview says what the cluster is: version, mode, features, the controller quorum and what the
console switches on from them (on the fake cluster, told what to say)."""

from __future__ import annotations

import time

from streamlit.testing.v1 import AppTest

from console.core.model import (
    ApiRange,
    ClusterInfo,
    ClusterMode,
    Feature,
    Quorum,
    QuorumMember,
    SourceStatus,
)
from tests.app.pages import APP

OK = SourceStatus.OK


def test_overview_shows_version_mode_features_quorum_and_capabilities(fake_cluster):
    now_ms = int(time.time() * 1000)
    with fake_cluster.held() as fake:
        fake.info = ClusterInfo(
            read_at=time.time(),
            api_version="4.3",
            mode=ClusterMode.KRAFT,
            features=(
                Feature("eligible.leader.replicas.version", None, 0, 1),
                Feature("metadata.version", 33, 7, 33),
            ),
            quorum=Quorum(
                0,
                2,
                500,
                (QuorumMember(0, 500, 0, now_ms, now_ms), QuorumMember(1, 480, 20, now_ms - 3_000, now_ms - 9_000)),
            ),
            apis=(ApiRange(45, 0, 1), ApiRange(75, 0, 0)),
            versions_status=OK,
            features_status=OK,
            quorum_status=OK,
        )
    at = AppTest.from_file(APP, default_timeout=60).run()
    at.switch_page("views/overview.py").run()
    assert not at.exception
    text = " ".join(m.value for m in at.markdown)
    assert "Kafka 4.4 · KRaft · metadata.version 4.4-IV2 · quorum leader 0 (epoch 2) of voters 0,1" in text
    tables = [d.value for d in at.dataframe]
    features = next(t for t in tables if "feature" in t.columns)
    assert dict(zip(features["feature"], features["finalized"], strict=True)) == {
        "eligible.leader.replicas.version": "0 (not finalized)",
        "metadata.version": "4.4-IV2",
    }
    quorum = next(t for t in tables if "lag" in t.columns)
    assert list(zip(quorum["node"], quorum["role"], quorum["lag"], strict=True)) == [(0, "leader", 0), (1, "voter", 20)]
    assert quorum["last fetch"][1] == "3 s ago"
    caps = next(t.value for t in at.table if "capability" in t.value.columns)  # an HTML table: "why" wraps
    on = dict(zip(caps["capability"], caps["on"], strict=True))
    why = dict(zip(caps["capability"], caps["why"], strict=True))
    assert on["Eligible leader replicas"] == "off"
    assert why["Eligible leader replicas"] == "eligible.leader.replicas.version is 0 on this cluster"
    assert on["Cordoned log dirs"] == on["DescribeTopicPartitions"] == on["Replication-factor guard"] == "on"
    assert "AllowReplicationFactorChange=false" in why["Replication-factor guard"]
    brokers = next(t for t in tables if "rack" in t.columns)
    assert list(brokers["rack"]) == ["rack-a", "rack-b", "rack-c"]


def test_overview_on_a_zookeeper_cluster_says_the_quorum_is_not_available(fake_cluster):
    with fake_cluster.held() as fake:
        fake.info = ClusterInfo(
            read_at=time.time(),
            api_version="3.9",
            mode=ClusterMode.ZOOKEEPER,
            apis=(ApiRange(45, 0, 0),),
            versions_status=OK,
            features_status=OK,
            quorum_status=SourceStatus.UNSUPPORTED,
        )
    at = AppTest.from_file(APP, default_timeout=60).run()
    at.switch_page("views/overview.py").run()
    assert not at.exception and not at.error
    text = " ".join(m.value for m in at.markdown)
    assert "Kafka 3.9 · ZooKeeper · no controller quorum (ZooKeeper mode)" in text
    assert "Controller quorum: not available on this cluster" in text
    assert "the cluster reports no feature flag" in text
    caps = next(t.value for t in at.table if "capability" in t.value.columns)
    guard = caps[caps["capability"] == "Replication-factor guard"].iloc[0]
    assert guard["on"] == "off" and "only up to v0" in guard["why"]
