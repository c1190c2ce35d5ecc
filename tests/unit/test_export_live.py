from dataclasses import replace

from console.adapters.records import BrokerLogDirs
from console.core.format import page, table_text
from console.core.model import BrokerId, LogDir, PartitionHealth, ReplicaLog
from console.present import live
from console.present.text import list_json, list_text, state_text
from console.state.document import state_json
from console.state.merge import merge
from tests.unit.builders import api, cluster_info


def snapshot():
    a = api(
        {("t", 0): ([4, 5, 6, 1, 2, 3], [1, 2, 3], 1), ("t", 1): ([1, 2, 3], [1, 2, 3], 2), ("a", 0): ([1, 2], [1], 1)},
        lpr={("t", 0): ([4, 5, 6, 1, 2, 3], [4, 5, 6], [1, 2, 3])},
        nbrokers=7,
    )
    return merge(a, None)


def test_list_text_is_the_official_shape():
    assert list_text(snapshot()) == (
        "Current partition reassignments:\nt-0: replicas: 4,5,6,1,2,3. adding: 4,5,6. removing: 1,2,3."
    )
    empty = merge(api({("t", 0): ([1], [1], 1)}, lpr={}), None)
    assert list_text(empty) == "No partition reassignments found."


def test_list_json_shape():
    (entry,) = list_json(snapshot())["partitions"]
    assert list(entry) == [
        "topic",
        "partition",
        "replicas",
        "adding_replicas",
        "removing_replicas",
        "isr",
        "leader",
        "source",
    ]
    assert entry["source"] == "api"


def test_state_json_counts():
    j = state_json(snapshot())
    assert j["counts"] == {
        "partitions": 3,
        "reassigning": 1,
        "under_replicated": 1,
        "under_min_isr": 0,
        "offline": 0,
        "offline_nothing_electable": 0,
        "leaderless_electable": 0,
        "with_elr": 0,
    }


def test_filters_and_pages():
    s = snapshot()
    assert [p.name for p in live.select(s, live.LiveFilter())] == ["t-0"]
    everything = live.LiveFilter(in_flight_only=False)
    assert len(live.select(s, everything)) == 3
    urp = live.LiveFilter(health=(PartitionHealth.UNDER_REPLICATED,), in_flight_only=False)
    assert [p.name for p in live.select(s, urp)] == ["a-0"]
    assert [p.name for p in live.select(s, live.LiveFilter(brokers=(5,), in_flight_only=False))] == ["t-0"]
    rows, pages = page(list(range(101)), 3, 50)
    assert list(rows) == [100] and pages == 3
    assert page([], 5, 50) == ([], 1)


def test_counts_and_cells():
    s = snapshot()
    c = live.counts(s)
    assert (c.reassigning, c.under_replicated, c.adding_replicas, c.adding_copied) == (1, 1, 3, 0)
    cells = live.replica_cells(s, s.in_flight)
    roles = {(c["broker"], c["role"]) for c in cells}
    assert ("4", "adding") in roles and ("2", "removing") in roles
    # broker 1 leads and is being removed: it stays visibly the leader, with a removing mark
    (leader,) = [c for c in cells if c["broker"] == "1"]
    assert (leader["role"], leader["label"]) == ("leader (removing)", "L−")
    assert len(live.broker_rows(s)) == 7


def test_partition_rows_progress():
    from dataclasses import replace

    s = snapshot()
    p = replace(s.in_flight[0], logs=(ReplicaLog(1, "/d", 1000), ReplicaLog(4, "/d", 500)))
    (row,) = live.partition_rows(s, [p])
    assert row["R"] == "4,5,6,1,2,3" and row["AR"] == "4,5,6" and row["RR"] == "1,2,3"
    # log dirs were read: 5 and 6 have no log yet (0 copied); the row shows the least advanced
    assert row["progress"] == 0.0
    assert row["adding detail"].startswith("4: 50.0% (500 B/1.0 KB)")
    assert row["left to copy"] == "2.5 KB"  # 500 + 1000 + 1000 bytes


def test_state_text_names_brokers_in_flight_and_counts():
    # a ZooKeeper-mode cluster: its controller is the one DescribeCluster names (broker 1)
    text = state_text(replace(snapshot(), info=cluster_info(None, "3.9")))
    assert "7 brokers" in text and "3 partitions, 1 reassigning, 1 truly under-replicated" in text
    in_flight = text.split("In flight:\n", 1)[1].splitlines()
    assert in_flight[0].split() == [
        "partition",
        "R",
        "I",
        "AR",
        "RR",
        "leader",
        "source",
        "adding",
        "detail",
        "left",
        "to",
        "copy",
        "leader",
        "throttle",
        "follower",
        "throttle",
    ]
    assert in_flight[1].split()[:5] == ["t-0", "4,5,6,1,2,3", "1,2,3", "4,5,6", "1,2,3"]
    assert "1: none" in in_flight[1] and "4: none; 5: none; 6: none" in in_flight[1]  # nothing throttled
    assert "Sources: metadata ok, reassignments ok, log dirs ok" in text
    brokers = text.split("Brokers:\n", 1)[1].splitlines()
    # live, fenced, eligible, cordoned, controller in words
    assert brokers[1].split()[3:6] == ["yes", "unknown", "yes"]
    assert brokers[1].split()[-4:-3] == ["yes"] and "not available on this cluster" in brokers[1]


def test_table_text_aligns_columns():
    assert table_text([{"a": 1, "b": "xyz"}, {"a": 22, "b": None}], ["a", "b"]).splitlines() == [
        "a   b",
        "1   xyz",
        "22",
    ]


def test_a_broker_whose_log_dirs_did_not_answer_has_unknown_bytes_not_zero():
    # seen on Overview: a broker just restarted showed "0 B" on disk while it held 3 replicas
    logs = tuple(
        BrokerLogDirs(BrokerId(b), (LogDir("/d", None, 10**9, 10**9),), (("t", 0, "/d", 500, False),)) for b in (0, 1)
    )  # broker 2 did not answer DescribeLogDirs
    state = merge(api({("t", 0): ([0, 1, 2], [0, 1, 2], 0)}, lpr={}, log_dirs=logs), None)
    rows = {r["broker"]: r for r in live.broker_rows(state)}
    assert (rows[0]["on disk"], rows[2]["on disk"], rows[2]["bytes"]) == ("500 B", "unknown", None)
