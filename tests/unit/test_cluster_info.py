"""What the cluster is: kafka-python's answers parsed into records, the release and mode judged from
them, the capabilities switched on from what the cluster says, the snapshot document round trip."""

from __future__ import annotations

import json
from dataclasses import replace
from types import SimpleNamespace

from console.adapters.kafka.info import _versions, api_ranges, features_of, quorum_of
from console.adapters.kafka.steer import Unanswering
from console.core.cluster_info import (
    ago_text,
    capabilities,
    decide_mode,
    metadata_version,
    metadata_version_name,
    release,
    release_number_of,
    rollback_names_dirs,
    summary_line,
)
from console.core.model import (
    ApiRange,
    BrokerId,
    ClusterInfo,
    ClusterMode,
    Feature,
    Quorum,
    QuorumMember,
    SourceStatus,
)
from console.present.cluster import capability_rows, feature_rows, quorum_rows
from console.present.live import broker_rows
from console.present.text import state_text
from console.state.document import load_state, state_json
from tests.unit.builders import snapshot

OK, UNSUPPORTED = SourceStatus.OK, SourceStatus.UNSUPPORTED

# what kafka-python 3.0.12 answered on the 4.4.0 KRaft sandbox (describe_features, describe_metadata_quorum)
FEATURES_44 = {
    "group.version": {"supported": (0, 1), "finalized": (1, 1), "finalized_epoch": 71},
    "kraft.version": {"supported": (0, 1)},
    "metadata.version": {"supported": (7, 33), "finalized": (33, 33), "finalized_epoch": 71},
    "transaction.version": {"supported": (0, 2), "finalized": (2, 2), "finalized_epoch": 71},
    "eligible.leader.replicas.version": {"supported": (0, 1), "finalized": (1, 1), "finalized_epoch": 71},
}
QUORUM_44 = {
    "topics": [
        {
            "topic_name": "__cluster_metadata",
            "partitions": [
                {
                    "partition_index": 0,
                    "leader_id": 1,
                    "leader_epoch": 3,
                    "high_watermark": 72,
                    "current_voters": [
                        {
                            "replica_id": 2,
                            "log_end_offset": 70,
                            "last_fetch_timestamp": 9_000,
                            "last_caught_up_timestamp": 8_000,
                        },
                        {
                            "replica_id": 1,
                            "log_end_offset": 72,
                            "last_fetch_timestamp": 10_000,
                            "last_caught_up_timestamp": 10_000,
                        },
                        {
                            "replica_id": 0,
                            "log_end_offset": 72,
                            "last_fetch_timestamp": -1,
                            "last_caught_up_timestamp": -1,
                        },
                    ],
                    "observers": [{"replica_id": 3, "log_end_offset": 60, "last_fetch_timestamp": 9_500}],
                    "error": None,
                }
            ],
        }
    ],
    "nodes": [],
}


def kraft_44() -> ClusterInfo:
    features = features_of(FEATURES_44)
    quorum = quorum_of(QUORUM_44)
    return ClusterInfo(
        read_at=12.0,
        api_version="4.3",
        mode=decide_mode(OK, features, False),
        features=features,
        quorum=quorum,
        apis=(ApiRange(45, 0, 1), ApiRange(75, 0, 0)),
        versions_status=OK,
        features_status=OK,
        quorum_status=OK,
    )


def zookeeper_39(zookeeper: bool = True) -> ClusterInfo:
    return ClusterInfo(
        read_at=12.0,
        api_version="3.9",
        mode=decide_mode(UNSUPPORTED, (), zookeeper),
        zookeeper_configured=zookeeper,
        versions_status=OK,
        features_status=OK,
        quorum_status=UNSUPPORTED,
    )


def test_features_are_parsed_by_name_a_feature_at_level_0_is_not_finalized() -> None:
    features = features_of(FEATURES_44)
    assert [f.name for f in features] == sorted(FEATURES_44)
    assert Feature("metadata.version", 33, 7, 33) in features
    assert Feature("kraft.version", None, 0, 1) in features
    assert features_of({}) == ()


def test_the_quorum_gives_each_members_lag_behind_the_leader_and_when_it_was_last_heard_from() -> None:
    q = quorum_of(QUORUM_44)
    assert (q.leader, q.epoch, q.high_watermark) == (1, 3, 72)
    assert q.voters == (
        QuorumMember(0, 72, 0, None, None),
        QuorumMember(1, 72, 0, 10_000, 10_000),
        QuorumMember(2, 70, 2, 9_000, 8_000),
    )
    assert q.observers == (QuorumMember(3, 60, 12, 9_500, None),)
    no_leader = json.loads(json.dumps(QUORUM_44))
    no_leader["topics"][0]["partitions"][0]["leader_id"] = -1
    assert all(m.lag is None for m in quorum_of(no_leader).voters)


def test_the_api_ranges_are_what_every_broker_answers() -> None:
    assert api_ranges([{75: (0, 0), 55: (0, 2), 1: (4, 17)}, {55: (1, 1), 1: (4, 16)}]) == (
        ApiRange(1, 4, 16),
        ApiRange(55, 1, 1),
    )
    assert api_ranges([]) == ()


def test_versions_skip_fenced_brokers_and_take_the_oldest_release() -> None:
    data = {
        0: SimpleNamespace(broker_version=(4, 3), api_versions={75: (0, 0)}),
        1: SimpleNamespace(broker_version=(3, 9), api_versions={}),
    }
    client = SimpleNamespace(
        describe_cluster=lambda: {"brokers": [{"broker_id": 0}, {"broker_id": 1}, {"broker_id": 2, "is_fenced": True}]},
        get_broker_version_data=lambda b: data[b],
    )
    assert _versions(client, Unanswering()) == ("3.9", ())


def test_versions_pass_over_a_broker_that_timed_out_lately_and_mark_one_that_times_out() -> None:
    from kafka.errors import KafkaTimeoutError

    asked: list[int] = []

    def version_data(b: int) -> SimpleNamespace:
        asked.append(b)
        if b == 1:  # paused: its socket is open, nothing answers
            raise KafkaTimeoutError("no answer")
        return SimpleNamespace(broker_version=(4, 3), api_versions={})

    client = SimpleNamespace(
        describe_cluster=lambda: {"brokers": [{"broker_id": 0}, {"broker_id": 1}, {"broker_id": 2}]},
        get_broker_version_data=version_data,
    )
    hung = Unanswering()
    assert _versions(client, hung) == ("4.3", ()) and asked == [0, 1, 2]
    assert hung.avoided() == {1}
    asked.clear()
    assert _versions(client, hung) == ("4.3", ()) and asked == [0, 2]  # not waited on again
    every = Unanswering()
    for b in (0, 1, 2):
        every.mark(b)
    asked.clear()
    assert _versions(client, every) == ("4.3", ()) and asked == [0, 1, 2]  # none left to prefer: ask all


class MetadataRequest:
    """Named as kafka-python's: the request its refresh sends."""


class _Manager:
    """A kafka-python client manager over brokers 0, 1, 2 whose least loaded node is ``first``;
    the brokers of ``hung`` time out (paused: sockets open, nothing answers)."""

    def __init__(self, first: int, hung: set[int]) -> None:
        self.first, self.hung, self.sent_to = first, hung, list[int]()
        self.cluster = SimpleNamespace(brokers=lambda: [SimpleNamespace(node_id=b) for b in (0, 1, 2)])

    def least_loaded_node(self) -> int:
        return self.first

    def send(self, request: object, node_id: int | None = None, request_timeout_ms: int | None = None) -> str:
        from kafka.errors import KafkaTimeoutError

        assert node_id is not None
        self.sent_to.append(node_id)
        if node_id in self.hung:
            # as the library does on a timeout: it refreshes its metadata from a broker it names
            self.refreshed_from = (
                next(b for b in (0, 1, 2) if b not in self.hung and b != node_id) if len(self.hung) < 3 else None
            )
            if self.refreshed_from is not None:
                self.send(MetadataRequest(), node_id=self.refreshed_from)
            raise KafkaTimeoutError(f"{request}: no answer from {node_id}")
        return f"{request} answered by {node_id}"


def _quorum_read(manager: _Manager, what: str = "DescribeQuorum") -> tuple[object, frozenset[int]]:
    from console.access.settings import ConnectionSettings
    from console.adapters.kafka.base import Client
    from console.core.errors import ConsoleError

    kafka = Client(ConnectionSettings({"bootstrap.servers": "127.0.0.1:1"}, name="x", timeout_s=1.0))
    kafka._kp = SimpleNamespace(_manager=manager, close=lambda: None)
    try:
        got: object = kafka._kp_read(what, lambda c: c._manager.send(what), answered_by_broker=what != "DescribeQuorum")
    except ConsoleError as e:
        got = e
    return got, kafka.unanswering.avoided()


def test_a_quorum_read_that_met_a_paused_broker_asks_another_and_passes_the_paused_one_over() -> None:
    # Found by the paused-voter test on the sandbox: DescribeQuorum sent to the paused follower was
    # not asked again, so the read said the quorum did not answer while its leader was well.
    manager = _Manager(first=1, hung={1})
    got, avoided = _quorum_read(manager)
    assert got in ("DescribeQuorum answered by 0", "DescribeQuorum answered by 2") and avoided == {1}
    # sent to 1, the library's metadata refresh from 0, then the read again to a broker not 1
    assert manager.sent_to[:2] == [1, 0] and len(manager.sent_to) == 3


def test_the_librarys_own_request_to_a_named_broker_is_not_blamed_for_the_timeout() -> None:
    # Found on the sandbox: the metadata refresh kafka-python sends to a broker it names when a
    # request times out was taken for where the read went, so a well broker was passed over.
    manager = _Manager(first=1, hung={1})
    got, avoided = _quorum_read(manager, "DescribeFeatures")
    assert manager.refreshed_from == 0 and avoided == {1}
    assert got in ("DescribeFeatures answered by 0", "DescribeFeatures answered by 2")


def test_a_quorum_without_a_leader_times_out_everywhere_and_blames_no_broker() -> None:
    from console.core.errors import ConsoleError

    manager = _Manager(first=1, hung={0, 1, 2})
    got, avoided = _quorum_read(manager)
    assert isinstance(got, ConsoleError) and avoided == frozenset() and len(manager.sent_to) == 2


def test_the_release_comes_from_the_newest_metadata_version_the_brokers_support() -> None:
    info = kraft_44()
    # kafka-python infers 4.3 from the API ranges; metadata.version 33 is 4.4-IV2: the brokers run 4.4
    assert (release(info), metadata_version(info), info.mode) == ("4.4", "4.4-IV2", ClusterMode.KRAFT)
    upgraded_not_finalized = replace(info, features=(Feature("metadata.version", 30, 7, 33),))
    assert (release(upgraded_not_finalized), metadata_version(upgraded_not_finalized)) == ("4.4", "4.3-IV0")
    newer = replace(info, features=(Feature("metadata.version", 34, 7, 34),))
    assert release(newer) == "newer than 4.4" and metadata_version_name(34).startswith("level 34")
    zk = zookeeper_39()
    assert (release(zk), metadata_version(zk), zk.mode) == ("3.9", None, ClusterMode.ZOOKEEPER)


def test_the_mode_is_decided_from_what_the_cluster_says() -> None:
    finalized = (Feature("metadata.version", 21, 1, 21),)
    assert decide_mode(OK, (), False) is ClusterMode.KRAFT
    assert decide_mode(SourceStatus.UNAUTHORIZED, finalized, False) is ClusterMode.KRAFT
    assert decide_mode(UNSUPPORTED, (), False) is ClusterMode.ZOOKEEPER
    assert decide_mode(SourceStatus.UNAVAILABLE, (), True) is ClusterMode.ZOOKEEPER
    assert decide_mode(SourceStatus.UNAVAILABLE, (), False) is ClusterMode.UNKNOWN


def test_capabilities_on_kafka_44_kraft() -> None:
    caps = {c.name: c for c in capabilities(kraft_44())}
    assert caps["Eligible leader replicas"].on and "is 1 on this cluster" in caps["Eligible leader replicas"].why
    assert caps["Cordoned log dirs"].on and "4.4-IV2, 4.3-IV0 or later" in caps["Cordoned log dirs"].why
    assert caps["DescribeTopicPartitions"].on
    assert caps["Replication-factor guard"].on and "v1 (KIP-860)" in caps["Replication-factor guard"].why
    assert (
        caps["Rollback with log dirs"].on
        and "Kafka 4.4: each replica's current log dir" in caps["Rollback with log dirs"].why
    )
    assert caps["Controller quorum view"].on
    assert not caps["ZooKeeper view"].on and "KRaft" in caps["ZooKeeper view"].why


def test_capabilities_are_off_with_the_reason_the_cluster_gives() -> None:
    elr_off = replace(
        kraft_44(),
        features=(Feature("eligible.leader.replicas.version", None, 0, 1), Feature("metadata.version", 25, 7, 25)),
        apis=(),
    )
    caps = {c.name: c for c in capabilities(elr_off)}
    assert caps["Eligible leader replicas"] == replace(
        caps["Eligible leader replicas"], on=False, why="eligible.leader.replicas.version is 0 on this cluster"
    )
    assert not caps["Cordoned log dirs"].on and "4.0-IV3, below 4.3-IV0" in caps["Cordoned log dirs"].why
    assert not caps["DescribeTopicPartitions"].on

    zk = {c.name: c for c in capabilities(zookeeper_39())}
    assert not zk["Eligible leader replicas"].on and "reports no" in zk["Eligible leader replicas"].why
    assert not zk["Cordoned log dirs"].on and "not finalized" in zk["Cordoned log dirs"].why
    assert zk["Controller quorum view"].why == "DescribeQuorum: not available on this cluster"
    assert zk["ZooKeeper view"].on and zk["ZooKeeper view"].why == "ZooKeeper configured"
    assert not zk["Rollback with log dirs"].on and "before 4.2" in zk["Rollback with log dirs"].why
    assert not {c.name: c for c in capabilities(zookeeper_39(zookeeper=False))}["ZooKeeper view"].on

    unread = {c.name: c for c in capabilities(ClusterInfo())}
    assert not any(c.on for c in unread.values())
    assert "not read" in unread["Eligible leader replicas"].why


def test_the_official_rollback_names_log_dirs_from_kafka_4_2_on() -> None:
    def on(level: int | None, api: str | None = None, status: SourceStatus = OK) -> bool | None:
        features = () if level is None else (Feature("metadata.version", level, 7, level),)
        return rollback_names_dirs(ClusterInfo(1.0, api, features=features, features_status=status))

    # from the newest metadata.version the brokers support: 4.1-IV1, 4.2-IV0, 4.4-IV2, newer than known
    assert [on(27), on(28), on(33), on(40)] == [False, True, True, True]
    # else from the API ranges (ZooKeeper mode has no metadata.version; features not read)
    assert [on(None, "3.9"), on(None, "4.2"), on(None, "4.3", SourceStatus.UNAUTHORIZED)] == [False, True, True]
    assert on(None) is None and rollback_names_dirs(ClusterInfo()) is None  # not said, not read
    assert [release_number_of(t) for t in ("4.4", "3.9.1", "4", "x.y")] == [(4, 4), (3, 9), None, None]


def test_one_line_of_what_the_cluster_is() -> None:
    assert summary_line(kraft_44()) == (
        "Kafka 4.4 · KRaft · metadata.version 4.4-IV2 · quorum leader 1 (epoch 3) of voters 0,1,2, 1 observers"
    )
    assert summary_line(zookeeper_39()) == "Kafka 3.9 · ZooKeeper · no controller quorum (ZooKeeper mode)"
    assert summary_line(ClusterInfo()) == "Kafka version, mode and features not read"


def test_overview_rows() -> None:
    info = kraft_44()
    rows = {r["feature"]: r for r in feature_rows(info)}
    assert rows["metadata.version"] == {
        "feature": "metadata.version",
        "finalized": "4.4-IV2",
        "supported": "3.3-IV3 – 4.4-IV2",
    }
    assert rows["kraft.version"]["finalized"] == "0 (not finalized)"
    q = quorum_rows(info)
    assert [(r["node"], r["role"], r["lag"]) for r in q] == [
        (0, "voter", 0),
        (1, "leader", 0),
        (2, "voter", 2),
        (3, "observer", 12),
    ]
    assert (q[1]["last fetch"], q[0]["last fetch"]) == ("2 s ago", "never")
    assert ago_text(0, 600.0) == "10 min ago"
    assert [r["on"] for r in capability_rows(info)] == ["on", "on", "on", "on", "on", "on", "off"]


def test_the_snapshot_document_carries_it_and_reads_it_back() -> None:
    state = replace(snapshot({("t", 0): [0, 1]}, nbrokers=2), info=kraft_44())
    doc = state_json(state)
    assert doc["cluster"]["version"] == "4.4" and doc["cluster"]["metadata_version"] == "4.4-IV2"
    assert doc["cluster"]["mode"] == "kraft" and doc["cluster"]["quorum"]["leader"] == 1
    back = load_state(json.dumps(doc))
    assert back.info == state.info and back == state
    zk = replace(state, info=zookeeper_39())
    assert load_state(json.dumps(state_json(zk))).info == zk.info


def test_the_snapshot_document_lists_the_tiered_topics_and_reads_them_back() -> None:
    state = replace(snapshot({("t", 0): [0, 1], ("u", 0): [0, 1]}, nbrokers=2), tiered_topics=("u",))
    doc = state_json(state)
    assert doc["tiered_topics"] == ["u"] and "min_insync" in doc  # a field added, none removed
    assert load_state(json.dumps(doc)) == state
    del doc["tiered_topics"]  # a document written before the field
    assert load_state(json.dumps(doc)).tiered_topics == ()
    assert "Tiered storage (remote.storage.enable=true): 1 topic (u)" in state_text(state)


def test_an_older_document_without_it_reads_as_unknown() -> None:
    state = replace(snapshot({("t", 0): [0, 1]}, nbrokers=2), info=kraft_44())
    doc = state_json(state)
    del doc["cluster"]
    back = load_state(json.dumps(doc))
    assert back.info == ClusterInfo() and not back.info.known
    assert back.info.mode is ClusterMode.UNKNOWN and back.info.quorum_status is SourceStatus.NOT_CONFIGURED
    assert "Kafka version, mode and features not read." in state_text(back)


def test_state_text_prints_one_line_of_it() -> None:
    state = replace(snapshot({("t", 0): [0, 1]}, nbrokers=2), info=kraft_44())
    assert state_text(state).splitlines()[1] == (
        "Kafka 4.4 · KRaft · metadata.version 4.4-IV2 · quorum leader 1 (epoch 3) of voters 0,1,2, 1 observers."
    )


def test_a_stopped_voter_is_said_not_reachable_not_offset_minus_one_and_lag_none() -> None:
    """As the 4.4 sandbox answered with voter 2 stopped: log end offset -1, no fetch time; and a
    voter stopped a while after the leader last heard from it."""
    info = replace(
        kraft_44(),
        read_at=100.0,
        quorum=Quorum(
            0,
            5,
            80,
            (
                QuorumMember(0, 80, 0, 100_000, 100_000),
                QuorumMember(1, 80, 0, 99_500, 99_500),
                QuorumMember(2, -1, None, None, None),
                QuorumMember(3, 40, 40, 10_000, 10_000),
            ),
        ),
    )
    rows = {r["node"]: r for r in quorum_rows(info)}
    assert [rows[n]["reachable"] for n in (0, 1)] == ["leader", "yes"]
    assert rows[2]["reachable"] == "not reachable: the leader has no fetch from it"
    assert (rows[2]["log end offset"], rows[2]["lag"], rows[2]["last fetch"]) == (None, None, "never")
    assert rows[3]["reachable"] == "not reachable: no fetch for 90 s"


def test_the_controller_ticked_is_the_quorum_leader_in_kraft_never_describe_clusters_random_broker() -> None:
    """DescribeCluster names a random broker as controller on KRaft (1, then 2, then 1, while the
    quorum leader was 2): Overview and `state` show the quorum's active controller, or none."""
    base = snapshot({("t", 0): [0, 1, 2]}, nbrokers=3)
    described = replace(base, controller=BrokerId(1))
    kraft = replace(described, info=replace(kraft_44(), quorum=replace(kraft_44().quorum, leader=2)))  # type: ignore[type-var]
    assert [r["broker"] for r in broker_rows(kraft) if r["controller"]] == [2]
    assert ", controller 2," in state_text(kraft).splitlines()[0]
    unread = replace(kraft, info=replace(kraft.info, quorum=None, quorum_status=SourceStatus.UNAVAILABLE))
    assert not any(r["controller"] for r in broker_rows(unread))
    assert ", controller unknown," in state_text(unread).splitlines()[0]
    assert not any(r["controller"] for r in broker_rows(replace(described, info=ClusterInfo())))  # mode not known
    zk = replace(described, info=zookeeper_39())
    assert [r["broker"] for r in broker_rows(zk) if r["controller"]] == [1]


def test_a_quorum_record_reads_back_with_no_leader() -> None:
    info = replace(kraft_44(), quorum=Quorum(None, 4, 10, (QuorumMember(0, 10, None),)))
    state = replace(snapshot({("t", 0): [0]}, nbrokers=1), info=info)
    assert load_state(json.dumps(state_json(state))).info == info
    assert "quorum leader none (epoch 4) of voters 0" in summary_line(info)
