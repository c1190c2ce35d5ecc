"""The two-person rule from a shell, through the command line's ``main``: every refusal of ``submit``
is the service's, audited once with who, what and why (issue: four refused submits, no plan id, a
plan id of other content, an unknown id, a plan not approved, left no audit entry); ``save`` and
``approve`` let a team that works from a shell use the rule end to end (one saves, another
approves, the first submits), with the pages' rules and audit entries: an author's own approval
is refused and audited, a name another plan has is not replaced unless asked."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from console import cli
from console.access.auth import write_users_file
from console.cli.exits import Exit
from console.core.model import BrokerId
from console.plans.plan import Plan, PlanEntry, plan_hash
from console.services.guard import REFUSED
from console.storage.audit import AuditEntry
from tests.unit.world import SHELL_USER, ServiceWorld

pytestmark = pytest.mark.usefixtures("no_sleep")
CONN = ["--bootstrap-server", "fake:9092"]
OTHER = Plan.of([PlanEntry("u", 0, (BrokerId(2), BrokerId(1)))])
"""Another content than the world's saved plan (u-0 to 1,2), on the same partition."""


def rule_on(w: ServiceWorld) -> None:
    assert w.store.path is not None
    write_users_file(w.store.path.parent / "users.json", {"users": {}, "two_person_rule": True})


def plan_file(tmp_path: Path, plan: Plan, name: str = "plan.json") -> str:
    path = tmp_path / name
    path.write_text(plan.to_json())
    return str(path)


def as_user(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    for var in ("LOGNAME", "USER"):
        monkeypatch.setenv(var, name)


def new_entries(w: ServiceWorld, before: list[AuditEntry]) -> list[AuditEntry]:
    seen = {e.id for e in before}
    return [e for e in w.store.audit.entries() if e.id not in seen]


def sent(w: ServiceWorld) -> list[str]:
    """The writes the fake cluster was sent (reads left out)."""
    reads = {"snapshot", "cluster_info", "describe_configs", "list_reassignments"}
    return [c.method for c in w.fake.calls if c.method not in reads]


@pytest.mark.parametrize(
    ("case", "says"),
    [
        (
            "no plan id",
            "The two-person rule is on: save the plan so that someone else can approve it, and submit the saved plan.",
        ),
        ("other content", "This is not the content of saved plan {plan_id}."),
        ("unknown id", "Plan 999 is not in the store."),
        ("not approved", "The plan needs an approval by someone who authored no version of it (authors: carol)."),
    ],
)
def test_each_refusal_of_a_submit_by_the_two_person_rule_is_audited_once(
    case: str, says: str, cli_world: ServiceWorld, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    w = cli_world
    rule_on(w)
    said = says.format(plan_id=w.plan_id)
    plan, plan_id = {
        "no plan id": (w.plan, None),
        "other content": (OTHER, w.plan_id),
        "unknown id": (w.plan, 999),
        "not approved": (w.plan, w.plan_id),
    }[case]
    argv = ["submit", *CONN, "--reassignment-json-file", plan_file(tmp_path, plan), "--yes"]
    argv += [] if plan_id is None else ["--plan-id", str(plan_id)]
    before, runs = w.store.audit.entries(), w.store.runs.list()
    assert cli.main(argv) == Exit.FAILED
    err = capsys.readouterr().err
    assert f"Refused: {said}" in err and "Nothing was sent." in err
    (entry,) = new_entries(w, before)
    assert (entry.user, entry.action, entry.cluster, entry.outcome) == (
        SHELL_USER,
        "submit",
        w.fake.cluster_id,
        REFUSED,
    )
    assert json.loads(entry.response or "{}")["why"] == said
    assert json.loads(entry.request)["plan"] == plan_id and entry.plan_hash == plan_hash(plan)
    assert w.store.runs.list() == runs and sent(w) == []


def test_save_approve_and_submit_from_the_shell_by_two_people(
    cli_world: ServiceWorld, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    w = cli_world
    rule_on(w)
    f = plan_file(tmp_path, OTHER)
    as_user(monkeypatch, "ann")
    assert cli.main(["save", *CONN, "--reassignment-json-file", f, "--name", "spread"]) == Exit.OK
    out = capsys.readouterr()
    plan_id = int(out.out.strip())
    assert f"approve --plan-id {plan_id}" in out.err  # the rule is on: what comes next
    saved = w.store.plans.load(plan_id)
    assert saved is not None and plan_hash(saved.plan) == plan_hash(OTHER) and saved.summary.author == "ann"
    assert saved.plan.basis == {("u", 0): (BrokerId(0), BrokerId(2))}  # the replicas when saved: the stale check's
    submit = ["submit", *CONN, "--reassignment-json-file", f, "--plan-id", str(plan_id), "--yes", "--detach"]

    # the author approving her own plan: refused, audited; her submit waits for someone else's approval
    before = w.store.audit.entries()
    assert cli.main(["approve", *CONN, "--plan-id", str(plan_id)]) == Exit.FAILED
    assert f"ann authored a version of plan {plan_id}: an author cannot approve it." in capsys.readouterr().err
    assert [(e.user, e.action, e.outcome) for e in new_entries(w, before)] == [("ann", "approve", REFUSED)]
    assert w.store.plans.approvals(plan_id) == []
    assert cli.main(submit) == Exit.FAILED
    assert "needs an approval by someone who authored no version of it (authors: ann)" in capsys.readouterr().err

    as_user(monkeypatch, "bob")
    assert cli.main(["approve", *CONN, "--plan-id", str(plan_id), "--reassignment-json-file", f]) == Exit.OK
    assert f"Plan {plan_id} (spread) approved by bob" in capsys.readouterr().err
    assert [(a.approver, a.cluster) for a in w.store.plans.approvals(plan_id)] == [("bob", w.fake.cluster_id)]

    as_user(monkeypatch, "ann")
    assert cli.main(submit) == Exit.OK
    run_id = int(capsys.readouterr().out.strip())
    run = w.store.runs.require(run_id)
    assert (run.author, run.plan_hash) == ("ann", plan_hash(OTHER))
    assert [(e.user, e.action, e.outcome) for e in w.store.audit.entries()][-3:] == [
        ("ann", "submit", REFUSED),
        ("bob", "approve", "approved"),
        ("ann", "submit", "run recorded"),
    ]


def test_an_approval_of_another_content_than_the_file_reviewed_is_refused_and_audited(
    cli_world: ServiceWorld, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    w = cli_world
    before = w.store.audit.entries()
    argv = ["approve", *CONN, "--plan-id", str(w.plan_id), "--reassignment-json-file", plan_file(tmp_path, OTHER)]
    assert cli.main(argv) == Exit.FAILED
    assert f"Plan {w.plan_id} is not the plan reviewed: its content is another." in capsys.readouterr().err
    assert [(e.user, e.action, e.cluster, e.outcome) for e in new_entries(w, before)] == [
        (SHELL_USER, "approve", w.fake.cluster_id, REFUSED)
    ]
    assert w.store.plans.approvals(w.plan_id) == []


def test_save_keeps_another_plans_name_unless_told_to_replace_it(
    cli_world: ServiceWorld, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The world's plan "p" (carol's) is approved by ann; saving other content as "p" is refused,
    nothing saved; with --replace it is saved over it, carol and the shell's user its authors, and
    the approval cleared (another content, by someone other than its last author)."""
    from console.access.auth import APPROVER, Identity
    from console.services import runs as run_service

    w = cli_world
    run_service.approve(w.store, Identity("ann", frozenset({APPROVER})), w.fake.cluster_id, w.plan_id)
    argv = ["save", *CONN, "--reassignment-json-file", plan_file(tmp_path, OTHER), "--name", " p "]
    assert cli.main(argv) == Exit.UNUSABLE
    err = capsys.readouterr().err
    assert f"Plan {w.plan_id} is named 'p' already: saving would replace its content." in err
    assert f"--replace to save over plan {w.plan_id}" in err
    assert plan_hash(w.store.plans.load(w.plan_id).plan) == plan_hash(w.plan)  # type: ignore[union-attr]
    assert cli.main([*argv, "--replace"]) == Exit.OK
    assert int(capsys.readouterr().out) == w.plan_id
    assert plan_hash(w.store.plans.load(w.plan_id).plan) == plan_hash(OTHER)  # type: ignore[union-attr]
    assert w.store.plans.authors(w.plan_id) == {"carol", SHELL_USER} and w.store.plans.approvals(w.plan_id) == []
    assert cli.main(["save", *CONN, "--reassignment-json-file", plan_file(tmp_path, OTHER), "--name", "  "]) == 2
    assert "A saved plan needs a name." in capsys.readouterr().err


def test_the_saved_plan_is_submitted_by_its_id_alone_as_save_and_approve_say(
    cli_world: ServiceWorld, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``save`` and ``approve`` end with "Submit it with --plan-id N"; doing so said "No plan file given"."""
    w = cli_world
    plan = tmp_path / "p.json"
    plan.write_text(w.plan.to_json())
    assert cli.main(["save", str(plan), "--name", "by id"]) == Exit.OK  # the file positional, as submit takes it
    plan_id = int(capsys.readouterr().out.strip())
    assert cli.main(["submit", "--plan-id", str(plan_id), "--yes", "--detach"]) == Exit.OK
    (run,) = [r for r in w.store.runs.list() if r.name == "by id"]
    assert run.plan_hash == plan_hash(w.plan)
    assert cli.main(["submit", "--plan-id", "999", "--yes"]) == Exit.UNUSABLE
    assert "Plan 999 is not in the store." in capsys.readouterr().err
