"""Kafka 4's safety rules over the fake cluster and the pure core: eligible leader replicas (KIP-966)
in the health counts and the cancel projection, fenced brokers (KIP-1073) in the merge, the plan
checks and the stuck diagnosis, and a min ISR change seen during a run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from console.access.auth import Identity
from console.access.settings import ConnectionSettings
from console.adapters.kafka import KafkaGateway
from console.adapters.kafka.wire import out_of_isr_topics
from console.adapters.records import BrokerInfo, Elr, PartitionMeta, Reassignment
from console.core.health import kafka_health, project_cancel
from console.core.model import BrokerId, PartitionHealth, ReplicaRole, Severity
from console.moves.cancel import CancelVerdict, plan_cancel, recheck
from console.moves.progress import waiting_on
from console.plans.plan import Plan, PlanEntry
from console.plans.rules.codes import SOURCE_ON_FENCED
from console.plans.validate import validate
from console.present import history
from console.runs.executor import Executor
from console.services import runs as run_service
from console.state.document import state_from_doc, state_json
from console.state.merge import REPLICA_ON_FENCED_BROKER, merge
from console.storage.store import Store
from tests.fakes.cluster import FakeCluster
from tests.unit.builders import api, ids

pytestmark = pytest.mark.unit
ANN = Identity.cli("ann")


def kafka4(topics: dict[str, list[list[int]]], min_isr: dict[str, int], brokers: int = 4) -> FakeCluster:
    fake = FakeCluster.of(brokers, topics, size=10**6, copy_rate=1)
    fake.kafka4 = True
    fake.min_isr = dict(min_isr)
    return fake


def test_a_replica_leaving_an_isr_below_min_isr_is_an_eligible_leader_replica_on_a_fenced_broker() -> None:
    fake = kafka4({"t": [[1, 2], [0, 3]]}, {"t": 2})
    fake.stop_broker(2)
    state = fake.snapshot()
    p = state.partition("t", 0)
    assert (p.isr, p.elr) == (ids(1), ids(2)) and p.role(BrokerId(2)) is ReplicaRole.ELIGIBLE
    b2 = state.broker(BrokerId(2))
    assert b2 is not None and b2.registered and b2.fenced is True and not b2.live and not b2.eligible
    health = kafka_health(state)
    assert [q.key for q in health.under_min_isr] == [("t", 0)] and not health.offline_count
    assert [q.key for q in health.with_elr] == [("t", 0)]
    fake.start_broker(2)  # back in the ISR: Kafka clears the ELR
    back = fake.snapshot().partition("t", 0)
    assert back.isr == ids(1, 2) and not back.elr


def test_offline_is_no_leader_split_into_nothing_electable_and_an_election_due() -> None:
    fake = kafka4({"t": [[1, 2]]}, {"t": 2})
    fake.stop_broker(2)
    fake.stop_broker(1)  # ISR empty; 1 joins the ELR, on a fenced broker: nothing electable
    state = fake.snapshot()
    h = kafka_health(state)
    assert [p.key for p in h.nothing_electable] == [("t", 0)] and not h.election_due
    assert h.offline_count == 1 and state.partition("t", 0).health is PartitionHealth.OFFLINE  # type: ignore[union-attr]
    fake.live.add(BrokerId(1))  # unfenced again, not yet leader: electable
    again = fake.snapshot()
    h2 = kafka_health(again)
    assert [p.key for p in h2.election_due] == [("t", 0)] and not h2.nothing_electable
    assert h2.offline_count == 1 and again.partition("t", 0).health is PartitionHealth.OFFLINE  # type: ignore[union-attr]
    # one word, one meaning: the document's "offline" counts the partitions whose health is "offline"
    doc = state_json(again)
    assert doc["counts"]["offline"] == sum(p["health"] == "offline" for p in doc["partitions"]) == 1
    assert (doc["counts"]["offline_nothing_electable"], doc["counts"]["leaderless_electable"]) == (0, 1)


@pytest.mark.parametrize(
    ("min_isr", "stop", "risk"),
    [
        (1, [], ""),  # originals 1,2 in sync
        (2, [2], "fewer than min.insync.replicas=2"),  # only 1 could lead after the revert
        (1, [2], ""),  # 1 alone meets min ISR 1
        (1, [1, 2], "without a leader"),  # 1 and 2 fenced: nothing electable
    ],
)
def test_the_cancel_projection_counts_in_sync_and_unfenced_eligible_originals(
    min_isr: int, stop: list[int], risk: str
) -> None:
    fake = kafka4({"t": [[1, 2]]}, {"t": min_isr})
    fake.alter_reassignments({("t", 0): (BrokerId(0), BrokerId(1))})  # adding 0, removing 2
    for b in stop:
        fake.stop_broker(b)
    state = fake.snapshot()
    plan = plan_cancel(state, [("t", 0)], include_others=True)
    assert (risk in plan.risks.get(("t", 0), "")) and bool(plan.at_risk) == bool(risk)
    if risk:
        assert any(risk in line for line in plan.explain())
        verdict = recheck(plan, state).verdicts[("t", 0)]
        assert verdict[0] is CancelVerdict.AT_RISK and risk in verdict[1]
        assert [p.key for p in recheck(plan, state, force_at_risk=True).send] == [("t", 0)]


def test_an_eligible_leader_replica_on_a_live_broker_saves_the_cancel() -> None:
    fake = kafka4({"t": [[1, 2]]}, {"t": 2})
    fake.alter_reassignments({("t", 0): (BrokerId(0), BrokerId(1))})
    fake.stop_broker(2)
    state = fake.snapshot()
    assert "fewer than" in project_cancel(state, state.partition("t", 0)).why()
    fake.live.add(BrokerId(2))  # unfenced again, still in the ELR (not yet caught up)
    again = fake.snapshot()
    p = again.partition("t", 0)
    assert p.elr == ids(2) and 2 not in p.isr
    assert not project_cancel(again, p).at_risk


def test_fenced_brokers_from_describe_cluster_are_registered_fenced_and_named() -> None:
    view = api(
        {("t", 0): ([0, 2], [0], 0), ("t", 1): ([1, 2], [1], 1)},
        nbrokers=2,
        registered=(
            BrokerInfo(BrokerId(0), "h", 1, None, False),
            BrokerInfo(BrokerId(1), "h", 2, None, False),
            BrokerInfo(BrokerId(2), "h", 3, None, True),
        ),
        elr={("t", 0): Elr(ids(2), ()), ("t", 1): Elr((), ids(2))},
    )
    state = merge(view, None)
    b2 = state.broker(BrokerId(2))
    assert b2 is not None and b2.registered and b2.fenced is True and not b2.live
    assert state.broker(BrokerId(0)).fenced is False  # type: ignore[union-attr]
    found = [f for f in state.findings if f.code == REPLICA_ON_FENCED_BROKER]
    assert len(found) == 1 and "holds 2 replicas" in found[0].message
    assert state.partition("t", 0).elr == ids(2) and state.partition("t", 1).last_known_elr == ids(2)
    assert state.partition("t", 1).role(BrokerId(2)) is ReplicaRole.LAST_KNOWN_ELR
    # without DescribeCluster's fenced flag (before Kafka 4.0) nothing is said
    old = merge(api({("t", 0): ([0, 1], [0, 1], 0)}, nbrokers=2), None)
    assert {b.fenced for b in old.brokers} == {None}


def test_the_state_document_carries_elr_and_kafka4_counts_and_reads_them_back() -> None:
    fake = kafka4({"t": [[1, 2]]}, {"t": 2})
    fake.stop_broker(2)
    doc = state_json(fake.snapshot())
    p = doc["partitions"][0]
    assert (p["elr"], p["last_known_elr"]) == ([2], [])
    assert doc["counts"]["under_min_isr"] == 1 and doc["counts"]["with_elr"] == 1
    assert next(b for b in doc["brokers"] if b["id"] == 2)["fenced"] is True
    assert state_from_doc(doc).partition("t", 0).elr == ids(2)  # type: ignore[union-attr]


def test_only_topics_with_a_replica_out_of_the_isr_are_asked_for_their_elr() -> None:
    parts = {
        ("ok", 0): PartitionMeta(ids(0, 1), ids(0, 1), BrokerId(0)),
        ("moving", 0): PartitionMeta(ids(0, 1, 2), ids(0, 1), BrokerId(0)),  # 2 is being added
        ("short", 0): PartitionMeta(ids(0, 1), ids(0), BrokerId(0)),
        ("dark", 0): PartitionMeta(ids(0), (), None),
    }
    lpr = {("moving", 0): Reassignment(ids(0, 1, 2), ids(2), ())}
    assert out_of_isr_topics(parts, lpr) == ("dark", "short")
    assert out_of_isr_topics(parts, None) == ("dark", "moving", "short")


class PagedClient:
    """kafka-python's ``describe_topic_partitions`` answering in pages of one partition."""

    def __init__(self) -> None:
        self.cursors: list[Any] = []

    def describe_topic_partitions(self, topics: list[str], response_partition_limit: int, cursor: Any) -> Any:
        self.cursors.append(cursor)
        page = [("a", 0, [2], None), ("a", 1, None, None), ("b", 0, None, [1])]
        i = (
            0
            if cursor is None
            else next(
                n for n, (t, p, *_) in enumerate(page) if (t, p) == (cursor["topic_name"], cursor["partition_index"])
            )
        )
        t, p, elr, lk = page[i]
        nxt = page[i + 1] if i + 1 < len(page) else None
        return {
            "topics": [
                {
                    "error_code": 0,
                    "name": t,
                    "partitions": [{"partition_index": p, "eligible_leader_replicas": elr, "last_known_elr": lk}],
                }
            ],
            "next_cursor": None if nxt is None else {"topic_name": nxt[0], "partition_index": nxt[1]},
        }


def test_describe_elr_follows_the_cursor_and_keeps_only_partitions_with_some(monkeypatch: pytest.MonkeyPatch) -> None:
    kafka = KafkaGateway(ConnectionSettings({"bootstrap.servers": "127.0.0.1:1"}, name="x", timeout_s=1.0))
    client = PagedClient()
    monkeypatch.setattr(kafka.client, "kafka_python", lambda: client)
    out = kafka.reads.describe_elr(["b", "a"], page=1)
    assert out == {("a", 0): Elr(ids(2), ()), ("b", 0): Elr((), ids(1))}
    assert len(client.cursors) == 3 and client.cursors[0] is None


def test_a_plan_moving_a_replica_off_a_fenced_broker_is_warned() -> None:
    fake = kafka4({"t": [[1, 2]]}, {})
    fake.stop_broker(2)
    state = fake.snapshot()
    found = validate(state, Plan.of([PlanEntry("t", 0, (BrokerId(1), BrokerId(3)))]))
    hit = [f for f in found if f.code == SOURCE_ON_FENCED]
    assert len(hit) == 1 and hit[0].severity is Severity.WARNING and "broker 2" in hit[0].message
    assert "leader, broker 1" in hit[0].message


def test_the_stuck_diagnosis_names_a_fenced_broker_and_a_target_below_min_isr() -> None:
    fake = kafka4({"t": [[1, 2, 3], [0, 1]]}, {"t": 2})
    fake.alter_reassignments({("t", 0): (BrokerId(0),), ("t", 1): (BrokerId(0), BrokerId(2))})
    fake.stop_broker(2)
    why = waiting_on(fake.snapshot(), [("t", 0), ("t", 1)])
    assert any("broker 2 is down (fenced)" in w for w in why)
    assert any("fewer than min.insync.replicas (t-0: 1 < 2)" in w for w in why)


def test_a_min_isr_change_seen_during_a_run_is_audited_as_a_warning(tmp_path: Path) -> None:
    fake = kafka4({"t": [[0], [1]]}, {"t": 1})
    store = Store(tmp_path / "console.db")
    plan = Plan.of([PlanEntry("t", 0, (BrokerId(2),))])
    run_id = run_service.start_run(
        store, fake, fake.snapshot(), run_service.RunRequest(ANN, plan, "watch min isr"), users=None
    )
    ex = Executor(store, fake, "ann")
    ex.tick(run_id)
    ex.tick(run_id)
    fake.min_isr["t"] = 2
    ex.tick(run_id)
    ex.tick(run_id)
    entries = [e for e in store.audit.entries() if e.action == "min-isr-changed"]
    assert len(entries) == 1 and entries[0].outcome == "warning"
    assert "clears the topic's eligible leader replicas" in str(entries[0].response)
    # the run's page says it (not only the audit log)
    (said,) = history.min_isr_warnings(store.audit.entries(), run_id)
    assert said.endswith(
        "min.insync.replicas changed (t 1 → 2). Changing min.insync.replicas clears the topic's eligible leader "
        "replicas (KIP-966): a partition below min ISR may now have fewer replicas it can elect."
    )
    assert history.min_isr_warnings(store.audit.entries(), run_id + 1) == []
