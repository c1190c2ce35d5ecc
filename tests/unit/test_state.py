"""The merge of the Admin API and ZooKeeper views, and the findings where they disagree."""

from console.adapters.records import ApiView, ZkView
from console.core.model import Severity, Source, SourceStatus
from console.state import merge as S
from tests.unit.builders import api, ids, zk

T = ("t", 0)


def codes(st):
    return [f.code for f in st.findings]


def test_agreeing_views_give_no_findings_and_api_reassignment():
    a = api({T: ([4, 1, 2], [1, 2], 1)}, lpr={T: ([4, 1, 2], [4], [2])}, nbrokers=5)
    z = zk({"t": {0: ([4, 1, 2], [4], [2], [1, 2], 1)}}, nbrokers=5)
    s = S.merge(a, z, taken_at=1.0)
    assert codes(s) == []
    p = s.partition("t", 0)
    assert (p.replicas, p.adding, p.removing, p.source) == (ids(4, 1, 2), ids(4), ids(2), Source.API)
    assert p.original == ids(1, 2) and p.target == ids(4, 1)
    assert s.in_flight == (p,)


def test_lpr_replicas_win_over_lagging_metadata():
    a = api({T: ([1, 2], [1, 2], 1)}, lpr={T: ([3, 1, 2], [3], [2])})
    s = S.merge(a, None)
    assert s.partition("t", 0).replicas == ids(3, 1, 2)


def test_api_and_zk_disagree_on_adding():
    a = api({T: ([4, 1, 2], [1, 2], 1)}, lpr={T: ([4, 1, 2], [4], [2])}, nbrokers=5)
    z = zk({"t": {0: ([4, 1, 2], [], [], [1, 2], 1)}}, nbrokers=5)
    s = S.merge(a, z)
    assert S.REASSIGNMENT_MISMATCH in codes(s)
    f = next(f for f in s.findings if f.code == S.REASSIGNMENT_MISMATCH)
    assert (f.topic, f.partition, f.severity) == ("t", 0, Severity.WARNING)


def test_legacy_znode_entry_not_listed_by_controller():
    a = api({T: ([1, 2], [1, 2], 1)}, lpr={})
    z = zk({"t": {0: ([1, 2], [], [], [1, 2], 1)}}, legacy={T: [2, 1]})
    s = S.merge(a, z)
    assert S.LEGACY_NOT_LISTED in codes(s)
    assert not s.in_flight


def test_legacy_submission_shows_source_legacy():
    a = api({T: ([3, 1, 2], [1, 2], 1)}, lpr={T: ([3, 1, 2], [3], [2])}, nbrokers=4)
    z = zk({"t": {0: ([3, 1, 2], [3], [2], [1, 2], 1)}}, legacy={T: [3, 1]}, nbrokers=4)
    s = S.merge(a, z)
    assert s.partition("t", 0).source is Source.LEGACY
    assert codes(s) == []


def test_broker_in_one_view_only():
    a = api({T: ([0, 1], [0, 1], 0)}, lpr={}, nbrokers=3)
    z = zk({"t": {0: ([0, 1], [], [], [0, 1], 0)}}, nbrokers=2)
    s = S.merge(a, z)
    assert S.BROKER_ONLY_IN_API in codes(s)
    assert s.broker(2).in_api and not s.broker(2).in_zookeeper and s.broker(2).live


def test_controller_mismatch():
    a = api({T: ([0], [0], 0)}, lpr={}, controller=0)
    z = zk({"t": {0: ([0], [], [], [0], 0)}}, controller=1)
    assert S.CONTROLLER_MISMATCH in codes(S.merge(a, z))


def test_topic_only_in_one_view_and_replicas_mismatch():
    a = api({T: ([0, 1], [0, 1], 0), ("u", 0): ([0], [0], 0)}, lpr={})
    z = zk({"t": {0: ([0, 2], [], [], [0], 0)}})
    c = codes(S.merge(a, z))
    assert S.TOPIC_ONLY_IN_API in c and S.REPLICAS_MISMATCH in c


def test_api_down_falls_back_to_zookeeper():
    down = ApiView(
        metadata_status=SourceStatus.UNAVAILABLE,
        reassignments_status=SourceStatus.UNAVAILABLE,
        log_dirs_status=SourceStatus.UNAVAILABLE,
        configs_status=SourceStatus.UNAVAILABLE,
    )
    z = zk({"t": {0: ([4, 1, 2], [4], [2], [1, 2], 1)}}, nbrokers=5)
    s = S.merge(down, z)
    p = s.partition("t", 0)
    assert (p.adding, p.removing, p.source, p.leader) == (ids(4), ids(2), Source.ZOOKEEPER, 1)
    assert s.broker(4).live and s.status.metadata is SourceStatus.UNAVAILABLE


def test_zookeeper_down_keeps_api_view():
    a = api({T: ([4, 1, 2], [1, 2], 1)}, lpr={T: ([4, 1, 2], [4], [2])}, nbrokers=5)
    s = S.merge(a, ZkView(status=SourceStatus.UNAVAILABLE))
    assert s.partition("t", 0).source is Source.API
    assert s.status.zookeeper is SourceStatus.UNAVAILABLE
    assert not any(f.code.startswith(("broker-only", "topic-only")) for f in s.findings)


def test_dead_broker_not_live_and_adding_on_it_stalls():
    # broker 3 is down: it is only referenced by the partition's replicas
    a = api({T: ([3, 1, 2], [1, 2], 1)}, lpr={T: ([3, 1, 2], [3], [2])}, nbrokers=3)
    s = S.merge(a, None)
    b3 = s.broker(3)
    assert not b3.live and not b3.eligible
    c = codes(s)
    assert S.ADDING_ON_INELIGIBLE in c and S.REPLICA_ON_UNKNOWN_BROKER in c


def test_throttles_api_over_zookeeper():
    a = api({T: ([0], [0], 0)}, lpr={}, broker_throttles={"0": {"leader.replication.throttled.rate": "100"}})
    z = zk(
        {"t": {0: ([0], [], [], [0], 0)}},
        broker_throttles={
            "0": {"leader.replication.throttled.rate": "5"},
            "<default>": {"follower.replication.throttled.rate": "7"},
        },
    )
    thr = S.merge(a, z).throttles.broker_map()
    assert thr["0"]["leader.replication.throttled.rate"] == "100"
    assert thr["<default>"]["follower.replication.throttled.rate"] == "7"


def test_fingerprint_changes_with_assignment_only():
    a1 = api({T: ([0, 1], [0, 1], 0)}, lpr={})
    a2 = api({T: ([0, 1], [0], 0)}, lpr={})
    a3 = api({T: ([1, 0], [0, 1], 0)}, lpr={})

    def f(a):
        return S.merge(a, None).fingerprint()

    assert f(a1) == f(a2) != f(a3)


def test_replica_rows_flatten_every_replica():
    a = api({T: ([4, 1, 2], [1, 2], 1)}, lpr={T: ([4, 1, 2], [4], [2])}, nbrokers=5)
    from console.pipeline.snapshots import replica_rows

    rows = list(replica_rows(S.merge(a, None, name="c")))
    assert [(r["broker"], r["adding"], r["removing"], r["is_leader"]) for r in rows] == [
        (4, True, False, False),
        (1, False, False, True),
        (2, False, True, False),
    ]


def test_tiered_topics_from_describe_configs_else_from_zookeepers_overrides():
    z = zk({"t": {0: ([0], [], [], [0], 0)}, "u": {0: ([0], [], [], [0], 0)}}, tiered_topics=frozenset({"u"}))
    a = api({T: ([0], [0], 0), ("u", 0): ([0], [0], 0)}, lpr={}, tiered_topics=frozenset({"t", "u"}))
    assert S.merge(a, z).tiered_topics == ("t", "u")  # the effective value DescribeConfigs gives
    unread = ApiView(configs_status=SourceStatus.UNAUTHORIZED, reassignments={})
    assert S.merge(unread, z).tiered_topics == ("u",)  # the topic overrides in ZooKeeper
    assert S.merge(a, None).tiered == frozenset({"t", "u"})
    assert S.merge(api({T: ([0], [0], 0)}, lpr={}), None).tiered_topics == ()
