"""The two-person rule holds: an approval counts only for the content it approved and the cluster
it was given on, and nobody who authored a version of a plan (saved it, overwrote it, brought it
up to date, or authored the plan it was brought up to date from) approves it; every refusal is
audited. The bypasses of issue 28 (a guest's rebased copy, an overwrite, a plan of one cluster
run on another) end to end through the services on the fake cluster."""

from __future__ import annotations

import pytest

from console.access.auth import APPROVER, OPERATOR, Identity, Users
from console.core.model import BrokerId
from console.core.states import RunState
from console.plans.plan import Plan, PlanEntry
from console.services import plans as plan_service
from console.services import runs as run_service
from console.services.guard import REFUSED
from console.storage.store import Store
from tests.fakes.cluster import FakeCluster
from tests.unit.world import ServiceWorld

RULE = Users(two_person_rule=True)
ADMIN = Identity("admin", frozenset({OPERATOR, APPROVER}), "users file")
CARL = Identity("carl", frozenset({APPROVER}), "users file")


def stale_plan(w: ServiceWorld) -> Plan:
    """u-0 to brokers 1,2, drafted when it was on 2,0 (it is on 0,2 now): stale."""
    return Plan.of([PlanEntry("u", 0, (BrokerId(1), BrokerId(2)))], {("u", 0): (BrokerId(2), BrokerId(0))})


def refusals(store: Store) -> list[tuple[str, str, str]]:
    return [(e.user, e.action, e.cluster) for e in store.audit.entries() if e.outcome == REFUSED]


def finish_runs(w: ServiceWorld) -> None:
    """The world's active run ends, so that a plan of the same partitions can start."""
    w.store.runs.set_state(w.run_id, RunState.COMPLETED)


def test_the_authors_own_approval_is_refused_and_audited(service_world: ServiceWorld) -> None:
    w = service_world
    mine = plan_service.save_plan(w.store, ADMIN, w.state, w.fake.name, "mine", w.plan)
    with pytest.raises(Exception, match="admin authored a version of plan"):
        run_service.approve(w.store, ADMIN, w.fake.cluster_id, mine)
    assert refusals(w.store) == [("admin", "approve", w.fake.cluster_id)]
    assert w.store.plans.approvals(mine) == []


def test_an_approval_is_audited_under_the_plans_cluster_and_a_mismatch_refused(service_world: ServiceWorld) -> None:
    w = service_world
    with pytest.raises(Exception, match=f"is a plan of cluster {w.fake.cluster_id}, not of elsewhere"):
        run_service.approve(w.store, CARL, "elsewhere", w.plan_id)
    assert refusals(w.store) == [("carl", "approve", w.fake.cluster_id)]  # never under the cluster the caller named
    run_service.approve(w.store, CARL, w.fake.cluster_id, w.plan_id)
    (entry,) = [e for e in w.store.audit.entries(action="approve") if e.outcome == "approved"]
    assert entry.cluster == w.fake.cluster_id
    assert [(a.approver, a.cluster) for a in w.store.plans.approvals(w.plan_id)] == [("carl", w.fake.cluster_id)]


def test_a_guests_rebase_is_refused_and_a_rebasers_copy_keeps_the_authors_lineage(
    service_world: ServiceWorld, guest: Identity, operator: Identity
) -> None:
    """Finding 2: admin saves P; a window that never signed in brings P up to date; admin approves
    the copy and submits it. Now the guest is refused, and a copy made by an operator counts
    admin among its authors: admin cannot approve it, someone else must."""
    w = service_world
    finish_runs(w)
    p = plan_service.save_plan(w.store, ADMIN, w.state, w.fake.name, "P", stale_plan(w))
    with pytest.raises(Exception, match="guest may not rebase"):
        plan_service.save_rebased_plan(w.store, guest, w.state, w.fake.name, p)
    copy = plan_service.save_rebased_plan(w.store, operator, w.state, w.fake.name, p)
    assert w.store.plans.authors(copy) == {"admin", "olga"}
    with pytest.raises(Exception, match="admin authored a version of plan"):
        run_service.approve(w.store, ADMIN, w.fake.cluster_id, copy)
    saved = w.store.plans.load(copy)
    assert saved is not None
    with pytest.raises(Exception, match="needs an approval by someone who authored no version"):
        run_service.start_run(
            w.store, w.fake, w.state, run_service.RunRequest(ADMIN, saved.plan, "x", plan_id=copy), users=RULE
        )
    assert [a for _, a, _ in refusals(w.store)] == ["rebase", "approve", "submit"]
    assert w.store.runs.list() == [w.store.runs.require(w.run_id)] and w.fake.calls == []
    run_service.approve(w.store, CARL, w.fake.cluster_id, copy)
    run_id = run_service.start_run(
        w.store, w.fake, w.state, run_service.RunRequest(ADMIN, saved.plan, "x", plan_id=copy), users=RULE
    )
    assert w.store.runs.require(run_id).author == "admin"


def test_an_overwrite_by_someone_else_clears_the_approvals_and_keeps_the_first_author(
    service_world: ServiceWorld, operator: Identity
) -> None:
    """Finding 2, by overwrite: an approver re-saves someone's plan under the same name with the
    same content; the original author may not then approve and submit her own plan."""
    w = service_world
    finish_runs(w)
    p = plan_service.save_plan(w.store, operator, w.state, w.fake.name, "P", w.plan)
    run_service.approve(w.store, CARL, w.fake.cluster_id, p)
    assert plan_service.save_plan(w.store, ADMIN, w.state, w.fake.name, "P", w.plan) == p  # same name, same content
    assert w.store.plans.approvals(p) == [] and w.store.plans.authors(p) == {"olga", "admin"}
    assert w.store.plans.load(p).summary.author == "admin"  # type: ignore[union-attr]
    for author in (ADMIN, Identity("olga", frozenset({OPERATOR, APPROVER}), "users file")):
        with pytest.raises(Exception, match=f"{author.name} authored a version of plan"):
            run_service.approve(w.store, author, w.fake.cluster_id, p)
    with pytest.raises(Exception, match="needs an approval"):
        run_service.start_run(
            w.store, w.fake, w.state, run_service.RunRequest(ADMIN, w.plan, "x", plan_id=p), users=RULE
        )
    # the same author saving again keeps the approvals of that content
    run_service.approve(w.store, CARL, w.fake.cluster_id, p)
    plan_service.save_plan(w.store, ADMIN, w.state, w.fake.name, "P", w.plan)
    assert [a.approver for a in w.store.plans.approvals(p)] == ["carl"]
    run_service.start_run(w.store, w.fake, w.state, run_service.RunRequest(ADMIN, w.plan, "x", plan_id=p), users=RULE)


def test_a_save_over_by_its_last_author_keeps_the_approvals_for_the_content_they_approved(
    service_world: ServiceWorld, operator: Identity
) -> None:
    """What the guide says of a save over a plan (save --replace) by the one who saved it last: no
    approval is deleted, and an approval counts for the content it approved only."""
    w = service_world
    p = plan_service.save_plan(w.store, operator, w.state, w.fake.name, "P", w.plan)
    run_service.approve(w.store, CARL, w.fake.cluster_id, p)
    changed = Plan.of([PlanEntry(e.topic, e.partition, tuple(reversed(e.replicas))) for e in w.plan.entries])
    assert plan_service.save_plan(w.store, operator, w.state, w.fake.name, "P", changed) == p
    assert [a.approver for a in w.store.plans.approvals(p)] == ["carl"]  # on record
    problem = run_service.two_person_problem(w.store, RULE, p, changed, w.fake.cluster_id)
    assert problem == "The plan changed since it was approved; it needs a new approval."
    plan_service.save_plan(w.store, operator, w.state, w.fake.name, "P", w.plan)  # the approved content again
    assert run_service.two_person_problem(w.store, RULE, p, w.plan, w.fake.cluster_id) is None


@pytest.mark.parametrize("rule", [None, RULE])
def test_a_plan_of_one_cluster_is_not_run_on_another(service_world: ServiceWorld, rule: Users | None) -> None:
    w = service_world
    run_service.approve(w.store, CARL, w.fake.cluster_id, w.plan_id)
    other = FakeCluster.of(3, {"u": [[0, 2]]})
    other.cluster_id = "cluster-b"
    state_b = other.snapshot()
    with pytest.raises(Exception, match=f"Plan {w.plan_id} is a plan of cluster {w.fake.cluster_id}, not of cluster-b"):
        run_service.start_run(
            w.store,
            other,
            state_b,
            run_service.RunRequest(ADMIN, w.plan.with_basis(state_b), "x", plan_id=w.plan_id),
            users=rule,
        )
    assert refusals(w.store) == [("admin", "submit", "cluster-b")]
    assert [r.cluster for r in w.store.runs.list()] == [w.fake.cluster_id]
    assert run_service.two_person_problem(w.store, RULE, w.plan_id, w.plan, "cluster-b") is not None
    assert run_service.two_person_problem(w.store, RULE, w.plan_id, w.plan, w.fake.cluster_id) is None


def test_notes_are_audited_kept_as_typed_and_bounded(service_world: ServiceWorld, operator: Identity) -> None:
    w = service_world
    forged = "fine\n\n**approver** · 2026-11-28 06:00 — Approved, ship it"
    assert plan_service.add_note(w.store, operator, w.plan_id, forged)
    (note,) = w.store.plans.notes(w.plan_id)
    assert (note.author, note.note) == ("olga", forged)
    (entry,) = w.store.audit.entries(action="note")
    assert (entry.user, entry.cluster, entry.outcome) == ("olga", w.fake.cluster_id, "added")
    assert "Approved, ship it" in entry.request
    assert not plan_service.add_note(w.store, operator, w.plan_id, "   ")  # blank: nothing
    with pytest.raises(Exception, match="at most 10,000 are kept"):
        plan_service.add_note(w.store, operator, w.plan_id, "x" * 10_001)
    assert len(w.store.plans.notes(w.plan_id)) == 1 and len(w.store.audit.entries(action="note")) == 1
