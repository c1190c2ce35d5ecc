"""A cancel sent without waiting (``wait_s=0``, as the cancel dialog sends it) and then followed by
its caller: the answer comes back at once, each partition turns cancelled as it leaves the
in-flight list, and the clean-up after the run among them happens once they left."""

from __future__ import annotations

import time
from pathlib import Path

from console.access.auth import Identity
from console.core.model import BrokerId
from console.core.states import RunState
from console.moves.cancel import CancelVerdict, plan_cancel
from console.plans.plan import Plan, PlanEntry
from console.runs.executor import Executor
from console.services import cancel as cancel_service
from console.services import runs as run_service
from console.storage.store import Store
from tests.fakes.cluster import FakeCluster

ANN, BOB = Identity.cli("ann"), Identity.cli("bob")


def test_a_cancel_sent_without_waiting_is_followed_until_its_partitions_left(tmp_path: Path) -> None:
    fake = FakeCluster.of(3, {"t": [[0], [1]]}, size=10**6, copy_rate=1)
    fake.cancel_lag_s = 2.0  # the controller lets the partitions go 2 s after it accepted the cancel
    store = Store(tmp_path / "console.db")
    plan = Plan.of([PlanEntry("t", 0, (BrokerId(2),)), PlanEntry("t", 1, (BrokerId(2),))])
    run_id = run_service.start_run(
        store, fake, fake.snapshot(), run_service.RunRequest(ANN, plan, "to cancel"), users=None
    )
    first = Executor(store, fake, "ann")
    assert first.tick(run_id).did.startswith("wave 1 submitted")
    store.runs.release(run_id, first.owner)  # no worker holds it: the clean-up is the cancel's
    ours = store.runs.active_partitions(fake.cluster_id)

    t0 = time.monotonic()
    seen = plan_cancel(fake.snapshot(), None, ours)
    fake.calls.clear()
    report = cancel_service.cancel_seen(store, fake, BOB, fake.cluster_id, seen, ours, wait_s=0)
    assert time.monotonic() - t0 < 1.0
    # the recheck reads only what a cancel needs (the live reader skips log dirs and configs)
    assert [c.args for c in fake.calls if c.method == "snapshot"] == [(0.0, "lean")]
    assert report.result is not None and not report.settled
    assert [v for _, v, _ in report.verdicts] == [CancelVerdict.ACCEPTED] * 2
    assert not fake.calls_to("list_reassignments"), "nothing waited for"
    assert store.runs.require(run_id).state is RunState.RUNNING
    assert [(a.action, a.outcome) for a in store.audit.entries() if a.action.startswith("cancel")] == [
        ("cancel", "sending"),
        ("cancel", "accepted"),
    ]

    fake.advance(1)
    report = report.leaving(fake.list_reassignments())
    assert report.result is not None and report.result.still_in_flight == (("t", 0), ("t", 1))
    assert report.count(CancelVerdict.ACCEPTED) == 2

    fake.advance(1.5)
    report = report.leaving(fake.list_reassignments())
    assert not report.settled and [v for _, v, _ in report.verdicts] == [CancelVerdict.UNCONFIRMED] * 2
    report = cancel_service.look_back(fake, report)  # every broker asked what it shows
    assert report.settled and [v for _, v, _ in report.verdicts] == [CancelVerdict.CANCELLED] * 2
    assert report.summary().startswith("2 partitions cancelled")
    assert "every broker shows all 2 partitions as the controller has it" in report.summary()
    assert report.leaving([("t", 0)]) == report, "a partition that left stays left"

    assert report.result is not None
    cancel_service.finish_cancel(store, fake, BOB, fake.cluster_id, report.result, ours)
    assert store.runs.require(run_id).state is RunState.CANCELLED
    done = [a for a in store.audit.entries() if a.action == "cancel-complete"]
    sending = next(a for a in store.audit.entries() if (a.action, a.outcome) == ("cancel", "sending"))
    assert [(a.outcome, a.ref) for a in done] == [
        ("left the in-flight list; every broker shows the original replicas", sending.id)
    ]


def test_a_cancel_that_waits_still_follows_and_cleans_up_itself(tmp_path: Path) -> None:
    """``wait_s`` > 0 (the CLI, the abandon dialog): the same following and clean-up, done by cancel itself."""
    fake = FakeCluster.of(3, {"t": [[0]]}, size=10**6, copy_rate=1)
    store = Store(tmp_path / "console.db")
    run_id = run_service.start_run(
        store,
        fake,
        fake.snapshot(),
        run_service.RunRequest(ANN, Plan.of([PlanEntry("t", 0, (BrokerId(2),))]), "to cancel"),
        users=None,
    )
    first = Executor(store, fake, "ann")
    first.tick(run_id)
    store.runs.release(run_id, first.owner)
    ours = store.runs.active_partitions(fake.cluster_id)
    report = cancel_service.cancel_seen(
        store, fake, BOB, fake.cluster_id, plan_cancel(fake.snapshot(), None, ours), ours, wait_s=5
    )
    assert report.settled and [v for _, v, _ in report.verdicts] == [CancelVerdict.CANCELLED]
    assert store.runs.require(run_id).state is RunState.CANCELLED
    assert [a.outcome for a in store.audit.entries() if a.action == "cancel-complete"] == [
        "left the in-flight list; every broker shows the original replicas"
    ]
