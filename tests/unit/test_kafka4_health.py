"""Kafka 4's health groups named, not only counted (KIP-966): which partitions are under min ISR but
electable, offline with nothing electable or with an election due, truly under-replicated, with
eligible leader replicas; in ``state --json`` (``health_lists``), in ``state``'s text, and as the
rows of Overview's tables. Offline means no leader, everywhere. And eligible leader replicas where
Live shows them: its table's ELR and last known ELR cells, the roles of the broker × partition picture."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from console.core.health import HealthGroup, kafka_health
from console.core.model import BrokerId, PartitionHealth, ReplicaRole, Severity
from console.plans.plan import Plan, PlanEntry
from console.plans.rules.codes import BROKER_NOT_ELIGIBLE
from console.plans.validate import not_eligible_why, validate
from console.present import cluster, live
from console.present.text import NAMED, health_lines, state_text
from console.state.document import load_state, state_json
from tests.fakes.cluster import FakeCluster

pytestmark = pytest.mark.unit


def outage() -> FakeCluster:
    """Kafka 4, min ISR 2 on ``t``: broker 2 stopped leaves t-0 and t-1 under min ISR with 2 as
    their eligible leader replica (fenced); broker 0 stopped leaves u-0 (min ISR 1, on 0 alone)
    with nothing electable."""
    fake = FakeCluster.of(4, {"t": [[1, 2], [3, 2], [1, 3]], "u": [[0]]}, size=10**6)
    fake.kafka4 = True
    fake.min_isr = {"t": 2, "u": 1}
    fake.stop_broker(2)
    fake.stop_broker(0)
    return fake


def test_state_json_names_the_partitions_of_each_group_keyed_as_its_counts() -> None:
    doc = json.loads(json.dumps(state_json(outage().snapshot())))
    assert doc["health_lists"] == {
        "under_min_isr": ["t-0", "t-1"],
        "offline_nothing_electable": ["u-0"],
        "leaderless_electable": [],
        "under_replicated": ["t-0", "t-1", "u-0"],
        "with_elr": ["t-0", "t-1", "u-0"],
    }
    counts = doc["counts"]
    assert {k: counts[k] for k in doc["health_lists"]} == {k: len(v) for k, v in doc["health_lists"].items()}
    assert counts["offline"] == 1  # no leader: u-0, whose health says so
    assert [p["health"] for p in doc["partitions"] if p["topic"] == "u"] == [PartitionHealth.OFFLINE.value]
    load_state(json.dumps(doc))  # a document with the lists still reads back


def test_an_offline_partition_that_can_elect_is_listed_as_an_election_due() -> None:
    fake = outage()
    fake.live.add(BrokerId(0))  # unfenced again, not yet leader: 0 is an eligible leader replica
    lists = state_json(fake.snapshot())["health_lists"]
    assert (lists["offline_nothing_electable"], lists["leaderless_electable"]) == ([], ["u-0"])


def test_state_text_says_offline_means_no_leader_and_names_the_first_few_of_each_group() -> None:
    text = state_text(outage().snapshot())
    assert "3 truly under-replicated, 1 offline (no leader)." in text
    assert "Under min ISR: 2 partitions (t-0, t-1)." in text
    assert "Offline, nothing electable: 1 partition (u-0)." in text
    assert "With eligible leader replicas: 3 partitions (t-0, t-1, u-0)." in text
    assert "Offline, election due" not in text  # no line for an empty group


def test_a_long_group_is_named_by_its_first_partitions() -> None:
    n = NAMED + 3
    fake = FakeCluster.of(3, {"t": [[1, 2]] * n}, size=10)
    fake.kafka4 = True
    fake.min_isr = {"t": 2}
    fake.stop_broker(2)
    line = next(x for x in health_lines(fake.snapshot()) if x.startswith(HealthGroup.UNDER_MIN_ISR.label))
    shown = ", ".join(f"t-{i}" for i in range(NAMED))
    assert line == f"Under min ISR: {n} partitions ({shown} …)."


def test_overview_rows_say_r_isr_elr_min_isr_and_leader_and_stop_at_the_limit() -> None:
    fake = outage()
    fake.parts[("t", 1)].last_known_elr = [BrokerId(3)]
    state = fake.snapshot()
    h = kafka_health(state)
    rows = cluster.health_rows(state, h.under_min_isr)
    assert rows == [
        {
            "partition": "t-0",
            "R": "1,2",
            "ISR": "1",
            "ELR": "2",
            "last known ELR": "—",
            "min ISR": "2",
            "leader": "1",
        },
        {
            "partition": "t-1",
            "R": "3,2",
            "ISR": "3",
            "ELR": "2",
            "last known ELR": "3",
            "min ISR": "2",
            "leader": "3",
        },
    ]
    dark = cluster.health_rows(state, h.nothing_electable)
    assert [(r["partition"], r["ISR"], r["ELR"], r["leader"]) for r in dark] == [("u-0", "—", "0", "none")]
    assert [r["partition"] for r in cluster.health_rows(state, h.under_min_isr, limit=1)] == ["t-0"]
    unknown = replace(state, min_insync=())
    assert cluster.health_rows(unknown, kafka_health(unknown).with_elr)[0]["min ISR"] == "unknown"


# -- Live's table and the broker × partition picture ------------------------------------------------
def elr_cluster() -> FakeCluster:
    """t-0 on 1,2,3 with 1 in sync and leading, 2 an eligible leader replica, 3 a last known one; t-1 healthy."""
    fake = FakeCluster.of(4, {"t": [[1, 2, 3], [0, 1]]}, size=10**6)
    fake.kafka4 = True
    fake.min_isr = {"t": 2}
    p = fake.parts[("t", 0)]
    p.isr, p.elr, p.last_known_elr = [BrokerId(1)], [BrokerId(2)], [BrokerId(3)]
    return fake


def test_live_rows_carry_the_elr_and_last_known_elr_of_each_partition() -> None:
    state = elr_cluster().snapshot()
    rows = {r["partition"]: r for r in live.partition_rows(state, state.partitions)}
    assert {k: rows["t-0"][k] for k in ("R", "I", "ELR", "last known ELR", "leader")} == {
        "R": "1,2,3",
        "I": "1",
        "ELR": "2",
        "last known ELR": "3",
        "leader": "1",
    }
    assert (rows["t-1"]["ELR"], rows["t-1"]["last known ELR"]) == ("", "")  # none: empty cells


def test_the_picture_draws_eligible_and_last_known_elr_replicas_by_their_role() -> None:
    state = elr_cluster().snapshot()
    p = state.partition("t", 0)
    assert p is not None
    assert [p.role(BrokerId(b)) for b in (1, 2, 3, 0)] == [
        ReplicaRole.LEADER,
        ReplicaRole.ELIGIBLE,
        ReplicaRole.LAST_KNOWN_ELR,
        None,
    ]
    cells = {(c["partition"], c["broker"]): c for c in live.replica_cells(state, state.partitions)}
    assert {b: cells[("t-0", b)]["role"] for b in ("1", "2", "3")} == {
        "1": "leader",
        "2": "eligible (ELR)",
        "3": "last known ELR",
    }
    assert (cells[("t-0", "2")]["in sync"], cells[("t-0", "3")]["in sync"]) == ("no", "no")
    assert cells[("t-1", "1")]["role"] == ReplicaRole.IN_SYNC.value
    assert ("t-0", "0") not in cells  # no replica, no cell
    # a replica back in the ISR is in sync, whatever ELR it was in
    back = replace(p, isr=(BrokerId(1), BrokerId(2)))
    assert back.role(BrokerId(2)) is ReplicaRole.IN_SYNC
    # the picture's spec carries the roles it colours
    spec = live.live_page(state, live.LiveFilter(in_flight_only=False), 1, 50).chart
    assert {"eligible (ELR)", "last known ELR"} <= {c["role"] for c in next(iter(spec["datasets"].values()))}


# -- a fenced destination is said to be fenced ---------------------------------------------------------
def test_a_plan_adding_a_replica_on_a_fenced_broker_says_fenced_not_not_live() -> None:
    fake = FakeCluster.of(4, {"t": [[0, 1]], "u": [[3]]}, size=10)
    fake.kafka4 = True
    fake.stop_broker(2)  # Kafka 4: still registered, fenced
    state = fake.snapshot()
    found = validate(state, Plan.of([PlanEntry("t", 0, (BrokerId(0), BrokerId(2)))]))
    hit = [f for f in found if f.code == BROKER_NOT_ELIGIBLE]
    assert [f.message for f in hit] == [
        "t-0: broker 2 is fenced (registered but fenced: it takes no replicas); the controller refuses adding a "
        "replica there (or the reassignment would stall)."
    ]
    assert "not live" not in hit[0].message and hit[0].severity is Severity.ERROR
    # a broker the cluster no longer registers (before Kafka 4, a stopped broker leaves): not live
    old = FakeCluster.of(4, {"t": [[0, 1]], "u": [[2]]}, size=10)
    old.stop_broker(2)
    gone = validate(old.snapshot(), Plan.of([PlanEntry("t", 0, (BrokerId(0), BrokerId(2)))]))
    assert [f.message for f in gone if f.code == BROKER_NOT_ELIGIBLE] == [
        "t-0: broker 2 is not live; the controller refuses adding a replica there (or the reassignment would stall)."
    ]
    assert not_eligible_why(replace(state.broker_index[BrokerId(2)], fenced=None, registered=False)) == "is not live"
