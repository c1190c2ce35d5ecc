"""Every service that changes a cluster or the store checks who acts, where it happens: a refused
call raises NotPermitted, writes one audit entry "refused" (who, what, which cluster) and nothing
else, and sends nothing to the cluster."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from console import services
from console.access.auth import NEEDS, NEEDS_ONE_OF, OPEN_TO_ALL, ROLES, Identity, Users
from console.core.errors import NotPermitted
from console.core.limits import FOLLOWER_RATE
from console.moves.cancel import plan_cancel
from console.moves.throttles import Leftover, LeftoverKind
from console.services import cancel as cancel_service
from console.services import cordons as cordon_service
from console.services import decommission as decommission_service
from console.services import history as history_service
from console.services import other_throttles
from console.services import plans as plan_service
from console.services import runs as run_service
from console.services.cancel import CancelResult
from console.services.cordons import UNCORDON
from console.services.guard import REFUSED, require
from tests.unit.world import ServiceWorld, store_rows


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


def _never_run(snapshots: str, tables: str) -> list[str]:
    raise AssertionError("the history job ran for someone it refuses")


def _history(w: ServiceWorld) -> Path:
    return w.store.path.parent / "history"


ROLE_CASES = {
    "runs.start_run": Case(
        "submit",
        lambda w, who: run_service.start_run(
            w.store, w.fake, w.state, run_service.RunRequest(who, w.plan, "x"), users=None
        ),
    ),
    "runs.approve": Case("approve", lambda w, who: run_service.approve(w.store, who, w.fake.cluster_id, w.plan_id)),
    "runs.pause": Case("pause", lambda w, who: run_service.pause(w.store, who, w.run_id)),
    "runs.resume": Case("resume", lambda w, who: run_service.resume(w.store, who, w.run_id)),
    "runs.stop": Case("stop", lambda w, who: run_service.stop(w.store, who, w.run_id)),
    "runs.change_throttle": Case(
        "throttle", lambda w, who: run_service.change_throttle(w.store, w.fake, who, w.run_id, 1_000, confirm_s=0)
    ),
    "runs.abandon": Case(
        "abandon", lambda w, who: run_service.abandon(w.store, w.fake, who, w.run_id, cancel_reassignments=True)
    ),
    "runs.rollback_as_plan": Case(
        "save plans", lambda w, who: run_service.rollback_as_plan(w.store, who, w.state, w.fake.name, w.run_id)
    ),
    "runs.sweep": Case(
        "sweep",
        lambda w, who: run_service.sweep(w.store, w.fake, who, [Leftover("broker", "2", FOLLOWER_RATE, "1000")]),
        reads=("snapshot",),
    ),
    "other_throttles.clear_left_by_others": Case(
        "sweep",
        lambda w, who: other_throttles.clear_left_by_others(
            w.store, w.fake, who, [Leftover(LeftoverKind.BROKER, "2", FOLLOWER_RATE, "1000")]
        ),
        reads=("snapshot",),
    ),
    "cancel.cancel": Case(
        "cancel",
        lambda w, who: cancel_service.cancel(
            w.store, w.fake, who, w.fake.cluster_id, plan_cancel(w.state, None), _in_flight(w), wait_s=0
        ),
    ),
    "cancel.cancel_seen": Case(
        "cancel",
        lambda w, who: cancel_service.cancel_seen(
            w.store, w.fake, who, w.fake.cluster_id, plan_cancel(w.state, None), _in_flight(w), wait_s=0
        ),
    ),
    "cancel.finish_cancel": Case(
        "cancel",
        lambda w, who: cancel_service.finish_cancel(
            w.store, w.fake, who, w.fake.cluster_id, CancelResult((), (), 0.0, (), ()), _in_flight(w)
        ),
    ),
    "cancel.check_at_risk": Case(
        "cancel",
        lambda w, who: cancel_service.check_at_risk(w.store, who, w.fake.cluster_id, plan_cancel(w.state, None), False),
    ),
    "cancel.cancel_dir_moves": Case(
        "cancel", lambda w, who: cancel_service.cancel_dir_moves(w.store, w.fake, who, w.fake.name), reads=("snapshot",)
    ),
    "cordons.change": Case(
        "uncordon",
        lambda w, who: cordon_service.change(w.store, w.fake, who, UNCORDON, 1, "/data"),
        reads=("snapshot",),
    ),
    "cordons.check_change": Case(
        "cordon",
        lambda w, who: cordon_service.check_change(
            w.store, who, "cordon", w.fake.cluster_id, w.state, w.state.info, 1, None
        ),
    ),
    "decommission.start": Case(
        "decommission",
        lambda w, who: decommission_service.start(w.store, w.fake, who, w.fake.name, (1,)),
        reads=("snapshot",),
    ),
    "decommission.advance": Case(
        "decommission", lambda w, who: decommission_service.advance(w.store, w.fake, who, w.fake.name, w.flow_id)
    ),
    "decommission.unregister": Case(
        "unregister", lambda w, who: decommission_service.unregister(w.store, w.fake, who, w.flow_id)
    ),
    "decommission.unregister_idle": Case(
        "unregister",
        lambda w, who: decommission_service.unregister_idle(w.store, w.fake, who, w.fake.name, 2),
        reads=("snapshot",),
    ),
    "decommission.abandon": Case(
        "decommission", lambda w, who: decommission_service.abandon(w.store, who, w.flow_id, "no")
    ),
    "plans.save_plan": Case(
        "save plans", lambda w, who: plan_service.save_plan(w.store, who, w.state, w.fake.name, "mine", w.plan)
    ),
    "plans.save_rebased_plan": Case(
        "rebase", lambda w, who: plan_service.save_rebased_plan(w.store, who, w.state, w.fake.name, w.plan_id)
    ),
    "plans.add_note": Case(
        "add notes",
        lambda w, who: plan_service.add_note(
            w.store, who, w.plan_id, "fine\n\n**approver** · 2026-11-28 06:00 — Approved, ship it"
        ),
    ),
    "history.update_history": Case(
        "update the history",
        lambda w, who: history_service.update_history(
            w.store, who, w.fake.cluster_id, _history(w) / "snapshots", _history(w) / "tables", job=_never_run
        ),
    ),
}
"""Every service function that changes the store or a cluster on someone's behalf, called so that
it would change something if it were let through."""

NOT_CHECKED = {
    "store_copy.copy_store": "the command line only: whoever can open both stores (file modes, PostgreSQL roles) "
    "copies one into an empty one; audited in the target",
    "guard.require": "the check itself",
    "guard.refuse": "the refusal itself (writes the refused entry)",
    "preflight.check_submit": "the refusal of a submission itself, for a service that checked who acts",
    "guard.audited_send": "sends for a service that checked who acts before calling it",
    "runs.two_person_problem": "reads the store: why the rule holds a plan back",
    "cancel.runs_dir_moves": "reads the store and the cluster: what a cancel would stop",
    "sessions.sign_in": "what someone not signed in does; it checks the password (audited by itself)",
    "sessions.resume_session": "reads: who a session token signs in",
    "sessions.sign_out": "ends one's own session (a token only its holder has)",
    "sessions.redeem_ticket": "one's own sign-in: the one-time ticket only the tab that signed in holds",
    "sessions.record_streamlit_sign_in": "audits a sign-in the identity provider made (nothing else written)",
    "signins.signed_in": "audits a sign-in the identity provider or a trusted proxy made (nothing else written)",
    "signins.signed_out": "audits one's own sign-out of the identity provider's sign-in",
    "signins.refused_headers": "audits identity headers no trusted proxy sent (nothing else written)",
    "drafts.autosave_draft": "one's own scratch draft, keyed by user: read by nobody else, changes no plan",
    "drafts.autosave_undo": "one's own scratch draft (undo), keyed by user",
    "drafts.autosave_stack": "one's own scratch draft (a guest's draft adopted at sign-in), keyed by user",
    "drafts.discard_autosave": "one's own scratch draft, keyed by user",
    "drafts.keep_generated": "one's own last generated plan and report (scratch), keyed by user",
    "drafts.generated": "reads one's own last generated plan, keyed by user",
    "other_moves.others_in_flight": "reads the store and a snapshot: what other movers have in flight",
    "other_moves.check_other_moves": "a check of start_run's (called after its role check); refuses, audited",
    "runs.check_approval": "a check of start_run's (called after its role check) and of the command line's submit: "
    "the two-person rule and a saved plan's cluster; refuses, audited",
    "other_throttles.set_by_runs": "reads the store: the throttles the console's runs set and have not taken off",
    "other_throttles.left_by_others": "reads the store and a snapshot: the throttles another tool left after a cancel",
    "unthrottled.check_ceiling": "a check of start_run's and change_throttle's (after their role check); refuses, audited",
}
"""Public service functions that take the store or an identity but need no role, and why."""


def service_functions() -> dict[str, Callable[..., object]]:
    """Every public function of every module of console/services that takes the store or who acts
    (found, not listed: a new one cannot be forgotten)."""
    found: dict[str, Callable[..., object]] = {}
    for info in pkgutil.iter_modules(services.__path__):
        module = importlib.import_module(f"console.services.{info.name}")
        for name, fn in vars(module).items():
            if name.startswith("_") or not inspect.isfunction(fn) or fn.__module__ != module.__name__:
                continue
            params = inspect.signature(fn).parameters.values()
            if any(p.name in ("store", "who") or p.annotation in ("Store", "Identity") for p in params):
                found[f"{info.name}.{name}"] = fn
    return found


def test_every_service_that_writes_is_in_the_refusal_cases_or_says_why_it_needs_no_role() -> None:
    found = set(service_functions())
    assert found - set(ROLE_CASES) - set(NOT_CHECKED) == set(), "add a case to ROLE_CASES (or a reason to NOT_CHECKED)"
    assert set(ROLE_CASES) | set(NOT_CHECKED) <= found, "a case names a service function that is gone"
    assert not set(ROLE_CASES) & set(NOT_CHECKED)


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


def _need(action: str) -> str:
    return " or ".join(NEEDS_ONE_OF.get(action, ())) or NEEDS[action]


@pytest.mark.parametrize("service", ROLE_CASES)
@pytest.mark.parametrize("who", ["guest", "viewer"])
def test_a_guest_and_a_viewer_are_refused_by_every_service_that_changes_something(
    who: str, service: str, service_world: ServiceWorld, request: pytest.FixtureRequest
) -> None:
    case = ROLE_CASES[service]
    person: Identity = request.getfixturevalue(who)
    assert_refused(
        service_world, person, case, f"{person.name} may not {case.action}: it needs the {_need(case.action)} role"
    )
    assert not (_history(service_world) / ".tables.lock").exists()


def test_an_operator_may_not_approve(service_world: ServiceWorld, operator: Identity) -> None:
    assert_refused(
        service_world, operator, ROLE_CASES["runs.approve"], "olga may not approve: it needs the approver role"
    )


def test_an_approver_may_not_submit(service_world: ServiceWorld, approver: Identity) -> None:
    assert_refused(
        service_world, approver, ROLE_CASES["runs.start_run"], "abe may not submit: it needs the operator role"
    )


@pytest.mark.parametrize("plan_id", [None, "saved"])
def test_an_operator_may_not_submit_what_the_two_person_rule_holds_back(
    plan_id: str | None, service_world: ServiceWorld, operator: Identity
) -> None:
    w = service_world
    rule = Users(two_person_rule=True)
    case = Case(
        "submit",
        lambda w, who: run_service.start_run(
            w.store,
            w.fake,
            w.state,
            run_service.RunRequest(who, w.plan, "x", plan_id=w.plan_id if plan_id else None),
            users=rule,
        ),
    )
    says = "needs an approval by someone who authored no version of it" if plan_id else "two-person rule is on"
    assert_refused(w, operator, case, says)


def test_with_the_approval_the_operator_submits(
    service_world: ServiceWorld, operator: Identity, approver: Identity
) -> None:
    w = service_world
    run_service.approve(w.store, approver, w.fake.cluster_id, w.plan_id)
    run_id = run_service.start_run(
        w.store,
        w.fake,
        w.state,
        run_service.RunRequest(operator, w.plan, "x", plan_id=w.plan_id),
        users=Users(two_person_rule=True),
    )
    assert w.store.runs.require(run_id).author == "olga"
    assert [(e.action, e.outcome) for e in w.store.audit.entries()][-2:] in (
        [("approve", "approved"), ("submit", "run recorded")],
        [("submit", "run recorded"), ("approve", "approved")],
    )


def test_the_command_line_acts_with_every_role() -> None:
    cli = Identity.cli("ann")
    assert cli.roles == frozenset(ROLES)
    assert all(cli.can(case.action) for case in ROLE_CASES.values())
    assert not OPEN_TO_ALL, "nothing that changes the store is open to every reader"


def test_an_action_without_a_role_rule_is_a_bug(service_world: ServiceWorld) -> None:
    with pytest.raises(ValueError, match="no role rule"):
        require(service_world.store, Identity.cli("ann"), "launch", "c")
