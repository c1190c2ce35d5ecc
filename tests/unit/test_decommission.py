"""The decommission flow over the fake cluster: every step (cordon, drain plan, review, run,
verify, shut down, unregister), each audited; resumed from the store after a restart; stopped with
a clear message where it cannot go on; refused for a viewer; on a cluster without cordons and in
ZooKeeper mode."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from console.access.auth import Identity
from console.core.errors import ConfigError, IllegalTransition, NotPermitted
from console.core.limits import CORDONED_LOG_DIRS
from console.core.model import BrokerId, ClusterInfo, ClusterMode
from console.core.states import DecommissionStep, RunState
from console.runs.executor import Executor
from console.services import decommission as flow_service
from console.services import runs as run_service
from console.services.guard import REFUSED
from console.storage.decommissions import Decommission
from console.storage.store import Store
from tests.fakes.cluster import FakeCluster

pytestmark = [pytest.mark.unit, pytest.mark.usefixtures("no_sleep")]
ANN = Identity.cli("ann")
VIC = Identity("vic")
Step = DecommissionStep


def kraft(level: int = 33) -> FakeCluster:
    """Kafka 4 (KRaft, cordons from level 30): brokers 0..3, broker 3 holds replicas of t."""
    fake = FakeCluster.of(4, {"t": [[0, 3], [3, 1], [2, 3], [1, 2]]}, size=10_000, copy_rate=10**9)
    fake.kafka4 = True
    return fake.at_level(level)


def submit_and_drive(store: Store, fake: FakeCluster, flow: Decommission) -> int:
    """What Review (or ``submit --plan-id``) does with the flow's drain plan, then the run driven to its end."""
    assert flow.plan_id is not None
    saved = store.plans.load(flow.plan_id)
    assert saved is not None
    run_id = run_service.start_run(
        store, fake, fake.snapshot(), run_service.RunRequest(ANN, saved.plan, "drain", plan_id=flow.plan_id), users=None
    )
    run = Executor(store, fake, "ann").drive(run_id, every=0, progress=lambda _s: fake.advance(1), timeout=30)
    assert run.state is RunState.COMPLETED
    return run_id


def test_a_decommission_from_cordon_to_unregister_resumes_from_the_store(tmp_path: Path) -> None:
    fake = kraft()
    store = Store(tmp_path / "console.db")
    flow = flow_service.start(store, fake, ANN, fake.name, (3,))
    assert flow.step is Step.REVIEW and flow.blocked is None and flow.plan_id is not None
    assert fake.broker_configs[BrokerId(3)][CORDONED_LOG_DIRS] == "*"
    saved = store.plans.load(flow.plan_id)
    assert saved is not None and {e.key for e in saved.plan.entries} == {("t", 0), ("t", 1), ("t", 2)}
    assert all(3 not in e.replicas for e in saved.plan.entries)
    assert "Review" in flow_service.describe(flow)
    # nothing submitted yet: the flow waits for the review
    assert flow_service.advance(store, fake, ANN, fake.name, flow.id).step is Step.REVIEW
    run_id = submit_and_drive(store, fake, flow)
    store.close()

    again = Store(tmp_path / "console.db")  # a restart: the flow resumes from the store
    flow = flow_service.advance(again, fake, ANN, fake.name, flow.id)
    assert (flow.step, flow.run_id) == (Step.SHUT_DOWN, run_id)
    assert flow.blocked is not None and "Broker 3 is still running" in flow.blocked
    with pytest.raises(IllegalTransition, match="not ready to unregister"):
        flow_service.unregister(again, fake, ANN, flow.id)
    assert not fake.calls_to("unregister_broker")

    fake.stop_broker(3)  # the operator shuts it down on its host: registered, fenced
    flow = flow_service.advance(again, fake, ANN, fake.name, flow.id)
    assert flow.step is Step.UNREGISTER and flow.blocked is None
    flow = flow_service.unregister(again, fake, ANN, flow.id)
    assert flow.step is Step.DONE and BrokerId(3) not in fake.racks
    assert fake.snapshot().broker(BrokerId(3)) is None
    steps = [
        (e.action, e.outcome)
        for e in again.audit.entries()
        if e.action in ("decommission", "unregister-broker", "cordon")
    ]
    assert steps[0] == ("decommission", "started")
    assert ("decommission", "review") in steps and ("decommission", "drain") in steps
    assert ("decommission", "blocked") in steps and ("unregister-broker", "unregistered") in steps
    assert steps[-1] == ("decommission", "done")
    assert any(a == "cordon" for a, _ in steps)
    assert len(flow.notes) >= 5


def test_a_partition_that_cannot_leave_stops_the_flow_with_its_name(tmp_path: Path) -> None:
    fake = kraft()
    fake.alter_reassignments({("t", 1): (BrokerId(3), BrokerId(0))})  # in flight: cannot be moved now
    fake.copy_rate = 0
    store = Store(tmp_path / "console.db")
    flow = flow_service.start(store, fake, ANN, fake.name, (3,))
    assert flow.step is Step.PLAN and flow.blocked is not None
    assert "cannot move now" in flow.blocked and flow.plan_id is None


def test_a_drain_run_that_ends_without_completing_sends_the_flow_back_to_planning(tmp_path: Path) -> None:
    fake = kraft()
    store = Store(tmp_path / "console.db")
    flow = flow_service.start(store, fake, ANN, fake.name, (3,))
    assert flow.plan_id is not None
    saved = store.plans.load(flow.plan_id)
    assert saved is not None
    run_id = run_service.start_run(
        store, fake, fake.snapshot(), run_service.RunRequest(ANN, saved.plan, "drain"), users=None
    )
    run_service.abandon(store, fake, ANN, run_id, cancel_reassignments=True)
    flow = flow_service.advance(store, fake, ANN, fake.name, flow.id)
    assert flow.step is Step.PLAN and flow.blocked is not None and f"Drain run {run_id} ended abandoned" in flow.blocked
    # continuing generates a new drain plan from what is left
    flow = flow_service.advance(store, fake, ANN, fake.name, flow.id)
    assert flow.step is Step.REVIEW and flow.plan_id != saved.summary.id


def test_replicas_that_come_back_are_drained_again(tmp_path: Path) -> None:
    fake = kraft()
    store = Store(tmp_path / "console.db")
    flow = flow_service.start(store, fake, ANN, fake.name, (3,))
    submit_and_drive(store, fake, flow)
    fake.create_topic("late", [[3, 0]])  # someone placed a replica there meanwhile
    flow = flow_service.advance(store, fake, ANN, fake.name, flow.id)
    assert flow.step is Step.PLAN and flow.blocked is not None and "late-0" in flow.blocked


def test_without_cordons_the_flow_says_so_and_drains_anyway(tmp_path: Path) -> None:
    fake = kraft(level=29)  # 4.2: no cordons
    store = Store(tmp_path / "console.db")
    flow = flow_service.start(store, fake, ANN, fake.name, (3,))
    assert flow.step is Step.REVIEW and not fake.broker_configs.get(BrokerId(3))
    assert any("Cordons are not available on this cluster" in n for n in flow.notes)


def test_in_zookeeper_mode_a_stopped_broker_needs_no_unregister(tmp_path: Path) -> None:
    fake = FakeCluster.of(4, {"t": [[0, 3], [1, 2]]}, size=10_000, copy_rate=10**9, has_zookeeper=True)
    fake.info = ClusterInfo(read_at=fake.clock, mode=ClusterMode.ZOOKEEPER)
    store = Store(tmp_path / "console.db")
    flow = flow_service.start(store, fake, ANN, fake.name, (3,))
    submit_and_drive(store, fake, flow)
    fake.stop_broker(3)
    flow = flow_service.advance(store, fake, ANN, fake.name, flow.id)
    assert flow.step is Step.DONE and not fake.calls_to("unregister_broker")


def test_on_kraft_before_kafka_4_a_stopped_broker_is_unregistered_though_metadata_no_longer_lists_it(
    tmp_path: Path,
) -> None:
    fake = kraft(level=21)  # 3.9: no fenced brokers in DescribeCluster, no cordons
    fake.kafka4 = False
    store = Store(tmp_path / "console.db")
    flow = flow_service.start(store, fake, ANN, fake.name, (3,))
    submit_and_drive(store, fake, flow)
    fake.stop_broker(3)
    assert fake.snapshot().broker(BrokerId(3)) is None  # gone from Metadata; the controller still holds it
    flow = flow_service.advance(store, fake, ANN, fake.name, flow.id)
    assert flow.step is Step.UNREGISTER
    flow = flow_service.unregister(store, fake, ANN, flow.id)
    assert flow.step is Step.DONE and len(fake.calls_to("unregister_broker")) == 1 and BrokerId(3) not in fake.racks
    assert flow.notes[-1].startswith("Unregistered broker 3")


def test_a_broker_unregistered_elsewhere_meanwhile_is_said_so_not_unregistered(tmp_path: Path) -> None:
    fake = kraft(level=21)  # 3.9 KRaft
    fake.kafka4 = False
    store = Store(tmp_path / "console.db")
    flow = flow_service.start(store, fake, ANN, fake.name, (3,))
    submit_and_drive(store, fake, flow)
    fake.stop_broker(3)
    flow = flow_service.advance(store, fake, ANN, fake.name, flow.id)
    del fake.racks[BrokerId(3)]  # someone ran kafka-cluster unregister meanwhile
    flow = flow_service.unregister(store, fake, ANN, flow.id)
    assert flow.step is Step.DONE and flow.notes[-1] == "Broker 3 was not registered any more: nothing to unregister."
    assert [e.outcome for e in store.audit.entries() if e.action == "unregister-broker"] == [
        "sending",
        "not registered",
    ]


def test_a_viewer_may_neither_advance_nor_unregister_and_is_audited(tmp_path: Path) -> None:
    fake = kraft()
    store = Store(tmp_path / "console.db")
    flow = flow_service.start(store, fake, ANN, fake.name, (3,))
    for call in (
        lambda: flow_service.advance(store, fake, VIC, fake.name, flow.id),
        lambda: flow_service.unregister(store, fake, VIC, flow.id),
        lambda: flow_service.abandon(store, VIC, flow.id),
    ):
        with pytest.raises(NotPermitted):
            call()
    refused = [e.action for e in store.audit.entries() if e.outcome == REFUSED]
    assert refused == ["decommission", "unregister", "decommission"]
    assert store.decommissions.get(flow.id) == flow


@pytest.mark.parametrize(
    ("brokers", "says"),
    [((9,), "unknown to the cluster"), ((0, 1, 2, 3), "leaves the cluster none"), ((), "Name the brokers")],
)
def test_bad_broker_choices_are_refused_and_nothing_is_stored(
    tmp_path: Path, brokers: tuple[int, ...], says: str
) -> None:
    fake = kraft()
    store = Store(tmp_path / "console.db")
    with pytest.raises(ConfigError, match=says):
        flow_service.start(store, fake, ANN, fake.name, brokers)
    assert store.decommissions.list() == [] and not fake.broker_configs


def test_a_drain_that_cannot_fit_is_refused_before_anything_is_cordoned(tmp_path: Path) -> None:
    """On the default three-broker demo the flow cordoned the broker, then stopped at the drain plan
    (no room for replication factor 3 on two brokers): say so first, and cordon nothing."""
    fake = FakeCluster.of(3, {"t": [[0, 1, 2], [1, 2, 0]]}, size=10_000, copy_rate=10**9)
    fake.kafka4 = True
    fake.at_level(33)
    store = Store(tmp_path / "console.db")
    with pytest.raises(ConfigError) as e:
        flow_service.start(store, fake, ANN, fake.name, (2,))
    assert e.value.message.startswith("The drain cannot fit: Draining 2 would leave 2 eligible brokers, fewer than")
    assert "Nothing was cordoned." in e.value.message
    assert store.decommissions.list() == [] and not fake.broker_configs and not fake.calls_to("alter_configs")


def test_one_open_flow_per_broker(tmp_path: Path) -> None:
    fake = kraft()
    store = Store(tmp_path / "console.db")
    first = flow_service.start(store, fake, ANN, fake.name, (3,))
    assert flow_service.start(store, fake, ANN, fake.name, (3,)).id == first.id  # the same brokers: resumed
    with pytest.raises(IllegalTransition, match="in decommission"):
        flow_service.start(store, fake, ANN, fake.name, (2, 3))
    flow_service.abandon(store, ANN, first.id, "changed our mind")
    assert flow_service.start(store, fake, ANN, fake.name, (2, 3)).id != first.id


def test_a_fenced_broker_holding_nothing_is_offered_and_unregistered_outside_a_flow(tmp_path: Path) -> None:
    fake = kraft()
    store = Store(tmp_path / "console.db")
    fake.stop_broker(2)  # holds replicas of t: fenced, but not idle
    assert flow_service.idle_fenced(fake.snapshot()) == ()
    with pytest.raises(IllegalTransition, match="still have a replica on broker 2"):
        flow_service.unregister_idle(store, fake, ANN, fake.name, 2)
    fake.racks[BrokerId(4)] = "r4"
    fake.live.add(BrokerId(4))  # a new broker, empty and running
    with pytest.raises(IllegalTransition, match="Broker 4 is still running"):
        flow_service.unregister_idle(store, fake, ANN, fake.name, 4)
    with pytest.raises(NotPermitted):
        flow_service.unregister_idle(store, fake, VIC, fake.name, 2)
    assert not fake.calls_to("unregister_broker")
    with fake_empty(fake, BrokerId(2)):
        assert flow_service.idle_fenced(fake.snapshot()) == (BrokerId(2),)
        said = flow_service.unregister_idle(store, fake, ANN, fake.name, 2)
    assert said == "Unregistered broker 2: the controller no longer knows it." and BrokerId(2) not in fake.racks
    sent = [(e.outcome, e.action) for e in store.audit.entries() if e.action == "unregister-broker"]
    assert sent == [("sending", "unregister-broker"), ("unregistered", "unregister-broker")]


@contextmanager
def fake_empty(fake: FakeCluster, broker: BrokerId) -> Iterator[None]:
    """The broker's replicas gone (moved off earlier, as a drain would)."""
    for p in fake.parts.values():
        if broker in p.replicas:
            p.replicas = [b for b in p.replicas if b != broker]
            p.isr = [b for b in p.isr if b != broker]
    yield
