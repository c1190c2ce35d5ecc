"""Real browser, 1440 px wide, with the two-person rule on: a plan pasted on Review is saved there
("Save as plan…", a dialog asking its name), the page then shows the saved plan, which another
person approves and the operator submits (issue: a pasted or uploaded plan got "save the plan so
that someone else can approve it" and no way to save it)."""

from __future__ import annotations

import json
import re

from playwright.sync_api import Page, expect, sync_playwright

from console.access.auth import SANDBOX_USERS, write_users
from console.plans.plan import parse_plan, plan_hash
from console.storage.store import Store
from tests.e2e.browser import CHROMIUM_ARGS, script_run_done, sign_in
from tests.integration.helpers import make_topic

TOPIC = "e2e-two-person"
PLAN = json.dumps({"version": 1, "partitions": [{"topic": TOPIC, "partition": 0, "replicas": [1, 2]}]})


def sign_out(page: Page) -> None:
    sidebar = page.get_by_test_id("stSidebar")
    sidebar.get_by_role("button", name="Sign out").click()
    expect(sidebar.get_by_role("button", name="Sign in")).to_be_visible(timeout=30_000)


def test_a_pasted_plan_is_saved_from_review_then_approved_and_offered_for_submission(sandbox, app_url, tmp_path):
    write_users(
        tmp_path / "users.json",  # the app's data dir (app_url points CONSOLE_DATA_DIR at tmp_path)
        {n: (pw, list(r)) for n, (pw, r) in SANDBOX_USERS.items()},
        two_person_rule=True,
    )
    make_topic(sandbox.bootstrap_servers, TOPIC, 1, 2, 10, assignment=[[0, 1]])
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1440, "height": 1200})
        page.goto(f"{app_url}/review")
        expect(page.get_by_role("heading", name="Review a plan")).to_be_visible(timeout=60_000)
        sign_in(page, "operator")
        box = page.get_by_label("…or paste it")
        box.fill(PLAN)
        box.blur()  # a text area sends its value when it loses focus
        expect(
            page.get_by_text("The two-person rule is on: save the plan so that someone else can approve it")
        ).to_be_visible(timeout=30_000)
        expect(page.get_by_role("button", name="Submit…")).to_have_count(0)
        page.get_by_role("button", name="Save as plan…").click()
        dialog = page.get_by_role("dialog")
        dialog.get_by_label("Name").fill("e2e two people")
        dialog.get_by_label("Name").press("Enter")
        script_run_done(page)
        dialog.get_by_role("button", name="Save", exact=True).click()
        expect(page.get_by_text("Saved as plan #1 (e2e two people).")).to_be_visible(timeout=30_000)
        expect(page.get_by_role("dialog")).to_have_count(0)
        expect(page.get_by_role("combobox", name="Plan")).to_have_value(re.compile(r"^#1 e2e two people"))
        expect(
            page.get_by_text("The plan needs an approval by someone who authored no version of it (authors: operator).")
        ).to_be_visible(timeout=30_000)
        page.screenshot(path=str(tmp_path / "saved.png"), full_page=True)

        # someone who authored no version approves it; the operator can then submit it
        sign_out(page)
        sign_in(page, "approver")
        page.get_by_role("button", name="Approve this plan").click()
        expect(page.get_by_text(re.compile(r"^Approved by approver \("))).to_be_visible(timeout=30_000)
        sign_out(page)
        sign_in(page, "operator")
        expect(page.get_by_role("combobox", name="Plan")).to_have_value(re.compile(r"^#1 e2e two people"))
        expect(page.get_by_role("button", name="Submit…")).to_be_visible(timeout=30_000)
        expect(page.get_by_text("Traceback")).to_have_count(0)
        page.screenshot(path=str(tmp_path / "approved.png"), full_page=True)
        browser.close()
    store = Store(tmp_path / "console.db")
    saved = store.plans.load(1)
    assert saved is not None and saved.summary.author == "operator" and saved.summary.name == "e2e two people"
    assert plan_hash(saved.plan) == plan_hash(parse_plan(PLAN))  # the content pasted
    assert saved.plan.basis == {(TOPIC, 0): (0, 1)}  # the replicas it was checked against
    assert [(a.approver, a.plan_hash) for a in store.plans.approvals(1)] == [("approver", plan_hash(saved.plan))]
    assert [(e.user, e.outcome) for e in store.audit.entries(action="plan-saved")] == [("operator", "saved")]
