"""Real browser: draft a plan, review it, download the plan and rollback JSON files."""

from __future__ import annotations

import json
import re

from playwright.sync_api import expect, sync_playwright

from console.access.auth import SANDBOX_USERS, write_users
from console.plans.plan import parse_plan
from tests.e2e.browser import CHROMIUM_ARGS, sign_in


def test_draft_review_and_download(demo_sandbox, app_url, tmp_path):
    # saving a draft needs the operator or approver role (the app's data dir is tmp_path)
    write_users(tmp_path / "users.json", {"approver": (SANDBOX_USERS["approver"][0], ["approver"])})
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1200}, accept_downloads=True)
        page.goto(f"{app_url}/drafts")
        expect(page.get_by_role("heading", name="Drafts")).to_be_visible(timeout=30_000)
        sign_in(page, "approver")
        # start from the current assignment of one topic
        page.get_by_label("Topics", exact=True).first.click()
        page.keyboard.type("inventory")  # earlier tests leave many topics: filter the list first
        page.get_by_role("option", name="inventory", exact=True).click()
        page.keyboard.press("Escape")
        page.get_by_role("button", name="Start draft").click()
        expect(page.get_by_text("Partitions in the draft")).to_be_visible(timeout=30_000)
        # bulk edit: make broker 0 (the first choice) the preferred leader wherever it holds a replica
        page.get_by_role("button", name="Move to first").click()
        page.get_by_label("Name").fill("inventory leaders on 0")
        page.get_by_role("button", name="Save draft").click()
        expect(page.get_by_text("Saved as plan")).to_be_visible(timeout=30_000)
        page.get_by_role("link", name="Review it").click()
        expect(page.get_by_role("heading", name="Review a plan")).to_be_visible(timeout=30_000)
        expect(page.get_by_text("Bytes to copy")).to_be_visible(timeout=30_000)
        page.screenshot(path=str(tmp_path / "review.png"), full_page=True)
        files = {}
        for label in ("Plan JSON", "Rollback JSON"):
            with page.expect_download(timeout=30_000) as dl:
                page.get_by_role("button", name=label).click()
            path = tmp_path / dl.value.suggested_filename
            dl.value.save_as(path)
            files[label] = path.read_text()
        # the shared link opens the same plan in a fresh session
        link = page.get_by_role("link", name="?plan=1").get_attribute("href")
        other = browser.new_context().new_page()
        other.goto(f"{app_url}/review{link}")
        expect(other.get_by_role("combobox", name="Plan")).to_have_value(
            re.compile(r"^#1 inventory leaders on 0"), timeout=30_000
        )
        expect(other.get_by_text("Partitions", exact=True).first).to_be_visible()
        browser.close()
    plan, back = parse_plan(files["Plan JSON"]), parse_plan(files["Rollback JSON"])
    assert plan.topics == back.topics == ("inventory",)
    assert all(e.replicas[0] == 0 for e in plan.entries if 0 in e.replicas)
    assert any(e.replicas != b.replicas for e, b in zip(plan.entries, back.entries, strict=False))
    assert {e.key for e in plan.entries} == {e.key for e in back.entries}
    assert json.loads(files["Rollback JSON"])["version"] == 1
