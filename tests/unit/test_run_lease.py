"""One driver per run on a shared store: the lease's check before every request (a driver that lost
its lease sends nothing), the take-over resuming from the intent log with nothing sent twice, and
the hand-over in the audit log. On the in-memory fake cluster; two processes on PostgreSQL and a
real cluster in tests/integration/test_run_handover.py."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from console.access.auth import Identity
from console.core.errors import ConsoleError, LeaseLost
from console.core.limits import LEADER_RATE
from console.core.model import BrokerId
from console.core.states import RunState
from console.moves.waves import WaveLimits
from console.plans.plan import Plan, PlanEntry
from console.runs.executor import Executor
from console.services import runs as run_service
from console.storage.store import Store
from tests.fakes.cluster import FakeCluster
from tests.unit.builders import ids

pytestmark = pytest.mark.usefixtures("no_sleep")
RATE = 1000


def world(store: Store) -> tuple[FakeCluster, int]:
    fake = FakeCluster.of(4, {"t": [(0, 1), (1, 2)]}, size=4000, copy_rate=10 * RATE)
    plan = Plan.of([PlanEntry("t", 0, ids(2, 3)), PlanEntry("t", 1, ids(3, 0))])
    run_id = run_service.start_run(store, fake, fake.snapshot(), run_service.RunRequest(Identity.cli("ann"), plan, "r", run_service.RunSettings(rate=RATE, limits=WaveLimits(moves_per_broker=1))), users=None)  # fmt: skip
    return fake, run_id


def drive(ex: Executor, fake: FakeCluster, run_id: int) -> RunState:
    for _ in range(200):
        try:
            step = ex.tick(run_id)
        except ConsoleError:
            step = None
        run = ex.store.runs.require(run_id)
        if run.state.terminal:
            return run.state
        if step is not None and step.did.startswith("driven by another"):
            raise AssertionError(step.did)
        fake.advance(1.0)
    raise AssertionError("the run did not end")


def expire(store: Store, run_id: int) -> None:
    """The lease's holder was silent past its lease (paused, killed, cut off)."""
    store.db.execute("UPDATE runs SET lease_until = 0 WHERE id = ?", (run_id,))


def during_next(fake: FakeCluster, method: str, then: Callable[[], None]) -> None:
    """``then()`` runs inside the next read ``method`` of the cluster (the driver paused there)."""
    read = getattr(fake, method)

    def paused(*args: object, **kwargs: object) -> object:
        setattr(fake, method, read)
        then()
        return read(*args, **kwargs)

    setattr(fake, method, paused)


def writes(fake: FakeCluster) -> list[str]:
    return [c.method for c in fake.calls if c.method in ("alter_reassignments", "alter_configs")]


def test_a_driver_that_lost_its_lease_mid_step_sends_nothing_and_the_new_driver_sends_each_request_once(store):
    fake, run_id = world(store)
    ann, bob = Executor(store, fake, "ann", settle_s=0, poll_s=0), Executor(store, fake, "bob", settle_s=0, poll_s=0)
    fake.calls.clear()

    def taken_over() -> None:  # ann is paused past her lease here; bob takes the run over and drives a step
        expire(store, run_id)
        assert bob.tick(run_id).did != "" and store.runs.take(run_id, bob.owner, 30).holder is None

    during_next(fake, "describe_configs", taken_over)  # ann read the run and the cluster, about to throttle
    with pytest.raises(LeaseLost, match="lost its lease"):
        ann.tick(run_id)
    by_bob = writes(fake)
    assert by_bob and by_bob[0] == "alter_configs"  # bob throttled and submitted wave 1; ann sent nothing
    assert ann.tick(run_id).did.startswith("driven by another worker")
    assert drive(bob, fake, run_id) is RunState.COMPLETED
    sends = [c for c in fake.calls if c.method == "alter_reassignments"]
    assert [sorted(c.args[0]) for c in sends] == [[("t", 0)], [("t", 1)]]  # each wave sent once
    assert all(not c for c in fake.broker_configs.values()) and not any(
        LEADER_RATE in c for c in fake.broker_configs.values()
    )
    (handover,) = [e for e in store.audit.entries() if e.action == "run-handover"]
    assert json.loads(handover.request) == {"run": run_id, "from": ann.owner, "to": bob.owner}
    failed = [e for e in store.audit.entries() if e.outcome == "failed"]
    assert all("lost its lease" in (e.response or "") for e in failed)


def test_a_worker_that_stops_hands_its_run_over_at_once_and_the_audit_log_names_both(store):
    fake, run_id = world(store)
    ann, bob = Executor(store, fake, "ann", settle_s=0, poll_s=0), Executor(store, fake, "bob", settle_s=0, poll_s=0)
    ann.tick(run_id)
    assert bob.tick(run_id).did.startswith("driven by another worker")  # ann holds the lease
    store.runs.release(run_id, ann.owner)  # ann's worker stopped (and said so)
    assert drive(bob, fake, run_id) is RunState.COMPLETED
    handovers = [json.loads(e.request) for e in store.audit.entries() if e.action == "run-handover"]
    assert handovers == [{"run": run_id, "from": ann.owner, "to": bob.owner}]
    assert len([c for c in fake.calls if c.method == "alter_reassignments"]) == 2


def test_the_lease_is_renewed_before_each_request_and_only_by_its_holder(store):
    fake, run_id = world(store)
    ann = Executor(store, fake, "ann", settle_s=0, poll_s=0)
    lease = store.runs.take(run_id, ann.owner, 0.0)
    assert lease.holder is None and lease.took_from is None
    assert store.runs.renew(run_id, ann.owner, 30.0)  # past its time but nobody took it: still hers
    assert store.runs.take(run_id, "bob", 30.0).holder == ann.owner
    expire(store, run_id)
    assert store.runs.take(run_id, "bob", 30.0) == type(lease)(None, ann.owner)
    assert not store.runs.renew(run_id, ann.owner, 30.0)
    ann.driving = run_id
    with pytest.raises(LeaseLost):
        ann.cluster.alter_configs({BrokerId(0): {LEADER_RATE: "1"}}, {})
    ann.driving = None
    assert not fake.calls_to("alter_configs")
