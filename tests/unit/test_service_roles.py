"""Every service that changes a cluster or the store checks who acts, where it happens: a refused
call raises NotPermitted, writes one audit entry "refused" (who, what, which cluster) and nothing
else, and sends nothing to the cluster."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import dataclass

import pytest

from console.access.auth import ROLES, Identity, Users
from console.core.errors import NotPermitted
from console.core.limits import FOLLOWER_RATE
from console.moves.cancel import plan_cancel
from console.moves.throttles import Leftover
from console.services import cancel as cancel_service
from console.services import cordons as cordon_service
from console.services import decommission as decommission_service
from console.services import plans as plan_service
from console.services import runs as run_service
from console.services.guard import REFUSED, require
from console.storage.store import Store
from tests.unit.world import ServiceWorld


@dataclass(frozen=True)
class Case:
    action: str
    """What the refused audit entry names (the action the role rules know)."""
    call: Callable[[ServiceWorld, Identity], object]
    reads: tuple[str, ...] = ()
    """What the service reads from the cluster before it refuses (to name the cluster as its other
    audit entries do); it never sends anything."""


def _in_flight(w: ServiceWorld) -> dict[tuple[str, int], int]:
    return w.store.runs.active_partitions(w.fake.cluster_id)


ROLE_CASES = {
    "start_run": Case(
        "submit", lambda w, who: run_service.start_run(w.store, w.fake, who, w.state, w.plan, "x", users=None)
    ),
    "approve": Case("approve", lambda w, who: run_service.approve(w.store, who, w.fake.cluster_id, w.plan_id)),
    "pause": Case("pause", lambda w, who: run_service.pause(w.store, who, w.run_id)),
    "resume": Case("resume", lambda w, who: run_service.resume(w.store, who, w.run_id)),
    "stop": Case("stop", lambda w, who: run_service.stop(w.store, who, w.run_id)),
    "change_throttle": Case(
        "throttle", lambda w, who: run_service.change_throttle(w.store, w.fake, who, w.run_id, 1_000, confirm_s=0)
    ),
    "abandon": Case(
        "abandon", lambda w, who: run_service.abandon(w.store, w.fake, who, w.run_id, cancel_reassignments=True)
    ),
    "rollback_as_plan": Case(
        "save plans", lambda w, who: run_service.rollback_as_plan(w.store, who, w.state, w.fake.name, w.run_id)
    ),
    "sweep": Case(
        "sweep",
        lambda w, who: run_service.sweep(w.store, w.fake, who, [Leftover("broker", "2", FOLLOWER_RATE, "1000")]),
        reads=("snapshot",),
    ),
    "cancel": Case(
        "cancel",
        lambda w, who: cancel_service.cancel(
            w.store, w.fake, who, w.fake.cluster_id, plan_cancel(w.state, None), _in_flight(w), wait_s=0
        ),
    ),
    "cancel_seen": Case(
        "cancel",
        lambda w, who: cancel_service.cancel_seen(
            w.store, w.fake, who, w.fake.cluster_id, plan_cancel(w.state, None), _in_flight(w), wait_s=0
        ),
    ),
    "cordon": Case("cordon", lambda w, who: cordon_service.cordon(w.store, w.fake, who, 1), reads=("snapshot",)),
    "uncordon": Case(
        "uncordon", lambda w, who: cordon_service.uncordon(w.store, w.fake, who, 1, "/data"), reads=("snapshot",)
    ),
    "decommission": Case(
        "decommission",
        lambda w, who: decommission_service.start(w.store, w.fake, who, w.fake.name, (1,)),
        reads=("snapshot",),
    ),
    "save_plan": Case(
        "save plans", lambda w, who: plan_service.save_plan(w.store, who, w.state, w.fake.name, "mine", w.plan)
    ),
}


def store_rows(store: Store) -> dict[str, list[tuple[object, ...]]]:
    """Every row of every table but the audit log (and SQLite's own), as committed."""
    with sqlite3.connect(store.path) as db:
        names = db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        tables = [t for (t,) in names if t != "audit" and not t.startswith("sqlite_")]
        return {t: sorted(db.execute(f'SELECT * FROM "{t}"').fetchall(), key=repr) for t in tables}


def assert_refused(world: ServiceWorld, who: Identity, case: Case, says: str) -> None:
    before_rows, before_audit = store_rows(world.store), world.store.audit.entries()
    with pytest.raises(NotPermitted, match=says) as refused:
        case.call(world, who)
    assert refused.value.hint
    new = [e for e in world.store.audit.entries() if e.id not in {b.id for b in before_audit}]
    assert [(e.user, e.action, e.cluster, e.outcome) for e in new] == [
        (who.name, case.action, world.fake.cluster_id, REFUSED)
    ]
    assert store_rows(world.store) == before_rows  # nothing else written
    assert [c.method for c in world.fake.calls] == list(case.reads)  # nothing sent


@pytest.mark.parametrize("service", ROLE_CASES)
def test_a_viewer_is_refused_by_every_service_that_changes_something(
    service: str, service_world: ServiceWorld, viewer: Identity
) -> None:
    case = ROLE_CASES[service]
    need = "operator or approver" if case.action == "save plans" else "approver" if service == "approve" else "operator"
    assert_refused(service_world, viewer, case, f"vic may not {case.action}: it needs the {need} role")


def test_an_operator_may_not_approve(service_world: ServiceWorld, operator: Identity) -> None:
    assert_refused(service_world, operator, ROLE_CASES["approve"], "olga may not approve: it needs the approver role")


def test_an_approver_may_not_submit(service_world: ServiceWorld, approver: Identity) -> None:
    assert_refused(service_world, approver, ROLE_CASES["start_run"], "abe may not submit: it needs the operator role")


@pytest.mark.parametrize("plan_id", [None, "saved"])
def test_an_operator_may_not_submit_what_the_two_person_rule_holds_back(
    plan_id: str | None, service_world: ServiceWorld, operator: Identity
) -> None:
    w = service_world
    rule = Users(two_person_rule=True)
    case = Case(
        "submit",
        lambda w, who: run_service.start_run(
            w.store, w.fake, who, w.state, w.plan, "x", users=rule, plan_id=w.plan_id if plan_id else None
        ),
    )
    says = "needs an approval by someone other than its author" if plan_id else "two-person rule is on"
    assert_refused(w, operator, case, says)


def test_with_the_approval_the_operator_submits(
    service_world: ServiceWorld, operator: Identity, approver: Identity
) -> None:
    w = service_world
    run_service.approve(w.store, approver, w.fake.cluster_id, w.plan_id)
    run_id = run_service.start_run(
        w.store, w.fake, operator, w.state, w.plan, "x", users=Users(two_person_rule=True), plan_id=w.plan_id
    )
    assert w.store.runs.require(run_id).author == "olga"
    assert [(e.action, e.outcome) for e in w.store.audit.entries()][-2:] in (
        [("approve", "approved"), ("submit", "run recorded")],
        [("submit", "run recorded"), ("approve", "approved")],
    )


def test_readers_may_note_and_bring_a_plan_up_to_date_as_the_review_page_lets_them(
    service_world: ServiceWorld, viewer: Identity
) -> None:
    w = service_world
    plan_service.add_note(w.store, viewer, w.plan_id, "looks fine")
    assert [(n.author, n.note) for n in w.store.plans.notes(w.plan_id)] == [("vic", "looks fine")]
    new = plan_service.save_rebased_plan(w.store, viewer, w.state, w.fake.name, w.plan_id)
    assert w.store.plans.load(new).summary.author == "vic"  # type: ignore[union-attr]
    assert not [e for e in w.store.audit.entries() if e.outcome == REFUSED] and w.fake.calls == []


def test_the_command_line_acts_with_every_role() -> None:
    cli = Identity.cli("ann")
    assert cli.roles == frozenset(ROLES)
    assert all(cli.can(case.action) for case in ROLE_CASES.values())


def test_an_action_without_a_role_rule_is_a_bug(service_world: ServiceWorld) -> None:
    with pytest.raises(ValueError, match="no role rule"):
        require(service_world.store, Identity.cli("ann"), "launch", "c")
