"""AppTest, the Review page with the two-person rule on: a pasted plan, which cannot be submitted
as it is, is offered "Save as plan…" (the way on) to an operator and to an approver, not to a
viewer or a guest; a saved plan is not offered it. The dialog itself is clicked in the browser
(tests/e2e/test_two_person_browser.py): AppTest cannot click inside st.dialog."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from console.access.auth import write_users_file
from console.core.model import BrokerId
from console.plans.plan import Plan, PlanEntry
from tests.app.pages import APP, sign_in
from tests.fakes.app import AppCluster

TOPIC = "app-save-pasted"
SAVE = "Save as plan…"


@pytest.fixture
def rule_on(sandbox_users: Path, fake_cluster: AppCluster) -> Plan:
    """The sandbox's users with the two-person rule on, a topic, and a plan of it to paste."""
    body = json.loads(sandbox_users.read_text())
    write_users_file(sandbox_users, {**body, "two_person_rule": True})
    with fake_cluster.held() as fake:
        fake.create_topic(TOPIC, [[0, 1]])
    return Plan.of([PlanEntry(TOPIC, 0, (BrokerId(1), BrokerId(2)))])


def pasted(plan: Plan, user: str | None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60)
    at.run()
    assert not at.exception
    if user:
        sign_in(at, user)
    at.switch_page("views/review.py").run()
    assert not at.exception and at.header[0].value == "Review a plan"
    at.text_area(key="review.paste").set_value(plan.to_json()).run()
    assert not at.exception
    return at


@pytest.mark.parametrize(
    ("user", "offered"), [("operator", True), ("approver", True), ("viewer", False), (None, False)]
)
def test_a_pasted_plan_is_offered_save_as_plan_to_whoever_may_save_plans(
    rule_on: Plan, user: str | None, offered: bool
) -> None:
    at = pasted(rule_on, user)
    assert any(b.label == SAVE for b in at.button) is offered
    assert not any(b.label == "Submit…" for b in at.button)  # the rule holds it back
    if user == "operator":
        assert any("The two-person rule is on: save the plan" in w.value for w in at.warning)
