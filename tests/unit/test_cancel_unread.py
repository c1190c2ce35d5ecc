"""A cancel's recheck and read back when the cluster's read did not cover some partitions (a
broker paused, a read that met it timed out): those partitions are said not read, naming the
brokers that did not answer, never gone (issue 42). The fake reproduces the read's two shapes:
Metadata not answered (nothing listed) and ListPartitionReassignments not answered (partitions
listed, none in flight)."""

from __future__ import annotations

from pathlib import Path

import pytest

from console.access.auth import Identity
from console.core.errors import ClusterUnavailable
from console.core.model import BrokerId
from console.moves.cancel import CancelVerdict, plan_cancel, recheck
from console.services import cancel as cancel_service
from console.storage.store import Store
from tests.fakes.cluster import FakeCluster

pytestmark = pytest.mark.unit
B1, B2 = BrokerId(1), BrokerId(2)


def moving() -> FakeCluster:
    """t-0 and t-1 moving from broker 0 onto 2 (copying for ever)."""
    fake = FakeCluster.of(3, {"t": [[0], [0]]}, size=10**9, copy_rate=1)
    fake.alter_reassignments({("t", 0): (B2,), ("t", 1): (B2,)})
    return fake


def down() -> ClusterUnavailable:
    return ClusterUnavailable("The cluster did not answer (timed out).", "Check the brokers.")


@pytest.mark.parametrize("part", ["snapshot", "snapshot:reassignments"])
def test_a_read_that_did_not_cover_a_partition_never_says_it_is_gone(part: str) -> None:
    fake = moving()
    seen = plan_cancel(fake.snapshot(lean=True), None, {})
    fake.fail_next(part, down())
    checked = recheck(seen, fake.snapshot(lean=True))
    assert checked.send == ()
    verdicts = {k: v for k, (v, _) in checked.verdicts.items()}
    assert verdicts == {("t", 0): CancelVerdict.NOT_READ, ("t", 1): CancelVerdict.NOT_READ}
    detail = checked.verdicts[("t", 0)][1]
    which = "Metadata" if part == "snapshot" else "ListPartitionReassignments"
    assert detail == f"{which} did not answer (unavailable)"
    assert "gone" not in detail


def test_a_read_that_covered_it_still_says_what_is_gone_or_completed() -> None:
    fake = moving()
    seen = plan_cancel(fake.snapshot(lean=True), None, {})
    fake.delete_topic("t")
    checked = recheck(seen, fake.snapshot(lean=True))
    assert {v for v, _ in checked.verdicts.values()} == {CancelVerdict.GONE}, "Metadata answered without it"


def test_a_cancel_reads_again_when_its_first_read_did_not_cover_the_partitions(tmp_path: Path) -> None:
    fake = moving()
    seen = plan_cancel(fake.snapshot(lean=True), None, {})
    fake.fail_next("snapshot", down())  # the first read met the paused broker; the next did not
    report = cancel_service.cancel_seen(
        Store(tmp_path / "console.db"), fake, Identity.cli("ann"), fake.cluster_id, seen, {}, wait_s=0
    )
    assert report.count(CancelVerdict.ACCEPTED) == 2, report.rows()
    assert not fake.list_reassignments()


def test_a_cancel_whose_reads_never_cover_the_partitions_sends_nothing_and_names_the_silent_broker(
    tmp_path: Path,
) -> None:
    fake = moving()
    seen = plan_cancel(fake.snapshot(lean=True), None, {})
    fake.fail_next("snapshot:reassignments", down(), times=cancel_service.RECHECK_READS)
    fake.paused = {B1}
    store = Store(tmp_path / "console.db")
    report = cancel_service.cancel_seen(store, fake, Identity.cli("ann"), fake.cluster_id, seen, {}, wait_s=0)
    assert report.rows() == [
        {"partition": f"t-{p}", "outcome": CancelVerdict.NOT_READ.value, "detail": "broker 1 did not answer"}
        for p in (0, 1)
    ]
    assert report.summary() == "2 partitions not sent (not read now)."
    assert len(fake.calls_to("alter_reassignments")) == 1 and len(fake.list_reassignments()) == 2, "nothing sent"
    (entry,) = store.audit.entries(action="cancel")
    assert entry.outcome == "not read: nothing sent" and '"t-0":"not_read"' in (entry.response or "")


def test_after_a_cancel_a_partition_no_broker_answered_for_is_not_read_back_never_gone(tmp_path: Path) -> None:
    fake = moving()
    seen = plan_cancel(fake.snapshot(lean=True), None, {})
    report = cancel_service.cancel_seen(
        Store(tmp_path / "console.db"), fake, Identity.cli("ann"), fake.cluster_id, seen, {}, wait_s=0
    )
    fake.paused = {B1}
    report = cancel_service.look_back(fake, report.leaving(fake.list_reassignments()))
    assert [(r["outcome"], r["detail"]) for r in report.rows()] == [
        (CancelVerdict.UNCONFIRMED.value, "not read back (broker 1 did not answer)")
    ] * 2
    assert "no answer from 1 broker 1" in report.summary() and "gone" not in report.summary()


@pytest.mark.parametrize("part", ["snapshot", "snapshot:reassignments"])
@pytest.mark.parametrize("scope", [None, [("t", 0), ("t", 1)]])
def test_the_dialog_opened_on_a_read_that_failed_says_the_read_failed_never_nothing_to_cancel(
    part: str, scope: list[tuple[str, int]] | None
) -> None:
    fake = moving()
    fake.fail_next(part, down())
    plan = plan_cancel(fake.snapshot(lean=True), scope, {}, True)
    which = "Metadata" if part == "snapshot" else "ListPartitionReassignments"
    assert plan.cancel == () and plan.not_in_flight == ()
    assert plan.unread == f"{which} did not answer (unavailable)"
    assert plan.not_read == tuple(scope or ())
    said = "\n".join(plan.explain())
    assert f"The cluster's read failed ({which} did not answer (unavailable))" in said
    assert "Not in flight" not in said and "Cancel 0" not in said


def test_a_read_that_answered_plans_as_before() -> None:
    fake = moving()
    plan = plan_cancel(fake.snapshot(lean=True), [("t", 0), ("nope", 0)], {}, True)
    assert (plan.unread, plan.not_read, plan.not_in_flight) == ("", (), (("nope", 0),))
    assert [p.key for p in plan.cancel] == [("t", 0)]
