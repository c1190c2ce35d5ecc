"""The replication-factor guard (KIP-860) on real controllers. On the session's Kafka 4.4 sandbox:
an RF change sent guarded through the adapter is refused per partition while a move beside it is
taken; a run of a plan with a move and an RF change sends the move guarded and the RF change in a
request of its own, and both complete; a partition changing its RF in flight counts as the RF it is
heading for. On Kafka 3.9 (the session's ZooKeeper sandbox: no AlterPartitionReassignments v1) the
same guarded request goes as before, unguarded. Each test leaves nothing in flight and no throttle."""

from __future__ import annotations

from typing import Any

from console.access.auth import Identity
from console.core.cluster_info import capabilities
from console.core.health import kafka_health
from console.core.model import BrokerId, Severity
from console.moves.rf_guard import split_by_rf
from console.plans.plan import Plan, PlanEntry
from console.plans.rules.codes import RF_BELOW_MIN_ISR
from console.plans.validate import validate
from console.runs.executor import Executor
from console.services import runs as run_service
from console.state.reader import ClusterReader
from console.storage.store import Store
from tests.integration.helpers import (
    BROKERS,
    clear_throttles,
    make_topic,
    reassign,
    set_broker_rates,
    set_min_isr,
    settle,
    throttle_topic_all,
)
from tests.support import settings_for, wait_for


def ids(*b: int) -> tuple[BrokerId, ...]:
    return tuple(BrokerId(x) for x in b)


def test_kafka_44_refuses_a_guarded_rf_change_per_partition_and_a_run_sends_moves_guarded(sandbox, tmp_path):
    bs = sandbox.bootstrap_servers
    make_topic(bs, "rfg-44", 3, 2, 20, assignment=[[0, 1], [1, 2], [2, 0]])
    with ClusterReader(settings_for(sandbox)) as reader:
        assert {c.name: c.on for c in capabilities(reader.snapshot(info=True).info)}["Replication-factor guard"]
        out = reader.kafka.alter_reassignments(
            {("rfg-44", 0): ids(0, 1, 2), ("rfg-44", 1): ids(2, 1)}, allow_rf_change=False
        )
        refused = out[("rfg-44", 0)]
        assert (refused.accepted, refused.code) == (False, "INVALID_REPLICATION_FACTOR")
        assert "The replication factor is changed from 2 to 3" in str(refused.message)  # the controller's words
        assert out[("rfg-44", 1)].accepted
        settle(reader)
        state = reader.snapshot()
        assert state.partition("rfg-44", 0).replicas == (0, 1)
        assert state.partition("rfg-44", 1).replicas == (2, 1)

        # the write path: a run moving one partition (RF kept) and adding a replica to another
        gateway = reader.gateway()
        sent: list[tuple[dict[Any, Any], bool]] = []
        real = gateway.alter_reassignments

        def recording(targets: Any, *, allow_rf_change: bool = True) -> Any:
            sent.append((dict(targets), allow_rf_change))
            return real(targets, allow_rf_change=allow_rf_change)

        gateway.alter_reassignments = recording
        executor = Executor(Store(tmp_path / "c.db"), gateway, "ann")
        plan = Plan.of([PlanEntry("rfg-44", 0, ids(0, 1, 2)), PlanEntry("rfg-44", 2, ids(2, 1))])
        run_id = run_service.start_run(
            executor.store,
            gateway,
            reader.snapshot(),
            run_service.RunRequest(Identity.cli("ann"), plan, "rf"),
            users=None,
        )
        run = executor.drive(run_id, every=0.5, timeout=120)
        assert run.state == "completed", run.state
        assert sent == [({("rfg-44", 2): ids(2, 1)}, False), ({("rfg-44", 0): ids(0, 1, 2)}, True)]
        assert all(o.accepted for o in executor.store.runs.outcomes(run_id, 1))
        state = reader.snapshot()
        assert state.partition("rfg-44", 0).replicas == (0, 1, 2)
        assert state.partition("rfg-44", 2).replicas == (2, 1)


def test_kafka_44_counts_an_rf_change_in_flight_as_the_rf_it_is_heading_for(sandbox):
    """(0,1) → (0,1,2) in flight: the controller holds the partition to 3 (R − RR), not to its
    original 2, so a guarded (0,1) is refused; the console calls (0,1) an RF change too."""
    bs = sandbox.bootstrap_servers
    key = ("rfg-flight", 0)
    make_topic(bs, "rfg-flight", 1, 2, 200, assignment=[[0, 1]])
    set_broker_rates(bs, BROKERS, 2000)
    throttle_topic_all(bs, "rfg-flight")
    try:
        reassign(bs, {key: [0, 1, 2]})
        with ClusterReader(settings_for(sandbox)) as reader:
            state = wait_for(lambda: (s := reader.snapshot()).partition(*key).reassigning and s, what="in flight")
            _, unguarded = split_by_rf({key: ids(0, 1)}, state.partition_index)
            assert key in unguarded
            out = reader.kafka.alter_reassignments({key: ids(0, 1)}, allow_rf_change=False)
            assert out[key].code == "INVALID_REPLICATION_FACTOR"
            assert "The replication factor is changed from 3 to 2" in str(out[key].message)
            assert reader.snapshot().partition(*key).adding == (2,)
            reassign(bs, {key: None})
            settle(reader)
    finally:
        clear_throttles(bs, BROKERS, ["rfg-flight"])


def test_kafka_39_has_no_guard_and_a_guarded_request_goes_as_before(zk_sandbox):
    bs = zk_sandbox.bootstrap_servers
    make_topic(bs, "rfg-39", 1, 2, 20, assignment=[[0, 1]])
    with ClusterReader(settings_for(zk_sandbox)) as reader:
        guard = {c.name: c for c in capabilities(reader.snapshot(info=True).info)}["Replication-factor guard"]
        assert not guard.on and "only up to v0" in guard.why
        out = reader.kafka.alter_reassignments({("rfg-39", 0): ids(0, 1, 2)}, allow_rf_change=False)
        assert out[("rfg-39", 0)].accepted  # unguarded, as before KIP-860
        settle(reader)
        assert reader.snapshot().partition("rfg-39", 0).replicas == (0, 1, 2)


def test_kafka_44_completes_a_move_to_fewer_replicas_than_min_isr_which_review_refuses(sandbox, tmp_path):
    """What Kafka does with a target below ``min.insync.replicas``: its controller completes the
    move (the KIP-966 guard on completion was not merged), and the partition then refuses acks=all
    writes. So the console's own check is what stops it: an error at review."""
    bs = sandbox.bootstrap_servers
    make_topic(bs, "below-min-isr", 1, 2, 20, assignment=[[0, 1]])
    set_min_isr(bs, "below-min-isr", 2)
    with ClusterReader(settings_for(sandbox)) as reader:
        state = wait_for(
            lambda: (s := reader.snapshot()).min_insync_index.get("below-min-isr") == 2 and s,
            what="min ISR 2 read",
        )
        plan = Plan.of([PlanEntry("below-min-isr", 0, ids(0))])
        found = validate(state, plan)
        assert [f.code for f in found if f.severity is Severity.ERROR] == [RF_BELOW_MIN_ISR]
        reassign(bs, {("below-min-isr", 0): [0]})  # as another tool would send it
        after = wait_for(
            lambda: (
                (p := reader.snapshot().partition("below-min-isr", 0)).replicas == ids(0) and not p.reassigning and p
            ),
            timeout=60,
            what="the move completed",
        )
        assert after.isr == ids(0)
        health = kafka_health(reader.snapshot())
        assert "below-min-isr-0" in {p.name for p in health.under_min_isr}
