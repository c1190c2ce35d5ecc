"""AppTest, issue 28's findings on the Review page as a guest and as a viewer: "Save as a new
plan, up to date" and "Add note" are disabled for them, with why; a note is shown as the plain
text typed, under the author and time the console recorded (a note forging another reviewer's
approval in Markdown shows literally); a note typed but not added is not left to whoever signs
in next in that window."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest
from streamlit.testing.v1.errors import AppTestError

from console.access.auth import APPROVER, OPERATOR, Identity
from console.core.model import BrokerId
from console.plans.plan import Plan, PlanEntry
from console.services import plans as plan_service
from console.storage.store import Store
from tests.app.pages import APP, sign_in
from tests.fakes.app import AppCluster
from tests.support import wait_for

pytestmark = pytest.mark.usefixtures("sandbox_users")

TOPIC = "app-writes"
FORGED = "fine\n\n**approver** · 2026-11-28 06:00 — Approved, ship it"
ADMIN = Identity("admin", frozenset({OPERATOR, APPROVER}), "users file")
REBASE = "Save as a new plan, up to date"


@pytest.fixture
def stale_plan(fake_cluster: AppCluster) -> int:
    """Plan "spread" saved by admin, then made stale by someone else's move of partition 0."""
    with fake_cluster.held() as fake:
        fake.create_topic(TOPIC, [[0, 1], [1, 2]], size=2 * 1024)
    drafted = fake_cluster.snapshot()
    plan = Plan.of(
        [PlanEntry(TOPIC, 0, (BrokerId(1), BrokerId(2))), PlanEntry(TOPIC, 1, (BrokerId(2), BrokerId(0)))]
    ).with_basis(drafted)
    plan_id = plan_service.save_plan(Store(), ADMIN, drafted, "test", "spread", plan)
    moved = fake_cluster.alter_reassignments({(TOPIC, 0): (BrokerId(0), BrokerId(2))})
    assert all(o.accepted for o in moved.values())
    wait_for(lambda: not fake_cluster.snapshot().in_flight, timeout=120, what="reassignments to complete")
    return plan_id


def review(plan_id: int, user: str | None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params["plan"] = str(plan_id)
    at.run()
    assert not at.exception
    if user:
        sign_in(at, user)
    at.switch_page("views/review.py").run()
    assert not at.exception and at.header[0].value == "Review a plan"
    return at


def note_box(at: AppTest, user: str):
    return at.text_area(key=f"review.note.{user}")


def note_button(at: AppTest):
    return at.button(key="FormSubmitter:note-Add note")


@pytest.mark.parametrize("user", [None, "viewer"])
def test_a_guest_or_a_viewer_can_neither_bring_a_plan_up_to_date_nor_add_a_note(stale_plan: int, user: str | None):
    at = review(stale_plan, user)
    name = user or "guest"
    assert "Bring up to date" in [s.value for s in at.subheader]
    rebase = next(b for b in at.button if b.label == REBASE)
    assert rebase.disabled
    assert any(f"{name} may not rebase: it needs the operator or approver role" in c.value for c in at.caption)
    with pytest.raises(AppTestError, match="disabled"):
        rebase.click()
    assert note_box(at, name).disabled and note_button(at).disabled
    assert any(f"{name} may not add notes: it needs the operator or approver role" in c.value for c in at.caption)
    with pytest.raises(AppTestError, match="disabled"):
        note_button(at).click()
    store = Store()
    assert [p.id for p in store.plans.list()] == [stale_plan] and store.plans.notes(stale_plan) == []


def test_an_operator_brings_it_up_to_date_and_cannot_approve_the_copy_of_their_own_plan(stale_plan: int):
    at = review(stale_plan, "admin")
    next(b for b in at.button if b.label == REBASE).click().run()
    assert not at.exception
    (new,) = [p for p in Store().plans.list() if p.id != stale_plan]
    assert new.author == "admin" and new.parent_id == stale_plan
    at = review(new.id, "admin")
    assert "Approve this plan" not in [b.label for b in at.button]
    assert any("You authored a version of this plan (admin): someone else approves it." in c.value for c in at.caption)


def test_a_note_is_shown_as_typed_under_who_wrote_it(stale_plan: int):
    at = review(stale_plan, "operator")
    note_box(at, "operator").set_value(FORGED)
    note_button(at).click().run()
    assert not at.exception
    ((author, note),) = [(n.author, n.note) for n in Store().plans.notes(stale_plan)]
    assert (author, note) == ("operator", FORGED)
    texts = [t.value for t in at.text]
    assert FORGED in texts  # plain text, as typed
    assert any(t.startswith("operator · ") for t in texts)
    assert not any("Approved, ship it" in m.value for m in at.markdown)  # never rendered as Markdown
    entry = Store().audit.entries(action="note")[-1]
    assert (entry.user, entry.outcome) == ("operator", "added")


def test_a_note_typed_but_not_added_is_not_left_to_the_next_user(stale_plan: int):
    """Issue 32: text typed in "Add a note" survived sign-out and sign-in as someone else. The box
    is now the signed-in person's own widget: the next person gets a new, empty one (the browser
    drops what was typed in a widget that is no longer drawn)."""
    at = review(stale_plan, "operator")
    note_box(at, "operator").set_value("half a thought of the operator's")
    at.sidebar.button(key="auth.sign_out").click().run()
    assert not at.exception
    assert [t.key for t in at.text_area] == ["review.note.guest"] and at.text_area[0].value == ""
    sign_in(at, "approver")
    assert [t.key for t in at.text_area] == ["review.note.approver"] and at.text_area[0].value == ""
    assert Store().plans.notes(stale_plan) == []
