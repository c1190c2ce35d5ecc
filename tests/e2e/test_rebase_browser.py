"""Real browser: a stale saved plan brought up to date from its Review page, and the link to the new
version; not by a window that never signed in (issue 28). Review notes: plain text under who wrote
them, and a note typed but not added is not left to the next person signing in (issue 32)."""

from __future__ import annotations

import re

from playwright.sync_api import Page, expect, sync_playwright

from console.access.auth import SANDBOX_USERS, Identity, write_users
from console.core.model import BrokerId
from console.plans.plan import Plan, PlanEntry
from console.services import plans as plan_service
from console.state.reader import ClusterReader
from console.storage.store import Store
from tests.e2e.browser import CHROMIUM_ARGS
from tests.integration.helpers import make_topic, settle, submit
from tests.support import settings_for

TOPIC = "e2e-rebase"


def sign_in(page: Page, user: str) -> None:
    sidebar = page.get_by_test_id("stSidebar")
    sidebar.get_by_label("User").fill(user)
    sidebar.get_by_role("textbox", name="Password").fill(SANDBOX_USERS[user][0])
    sidebar.get_by_role("button", name="Sign in").click()
    expect(sidebar.get_by_text(f"Signed in as {user}")).to_be_visible(timeout=30_000)


def test_bring_a_stale_plan_up_to_date(sandbox, app_url, tmp_path):
    bs = sandbox.bootstrap_servers
    write_users(tmp_path / "users.json", {n: (pw, list(r)) for n, (pw, r) in SANDBOX_USERS.items()})
    make_topic(bs, TOPIC, 2, 2, 2, assignment=[[0, 1], [1, 2]])
    store = Store(tmp_path / "console.db")  # the app's data dir (app_url points CONSOLE_DATA_DIR at tmp_path)
    with ClusterReader(settings_for(sandbox)) as reader:
        drafted = reader.snapshot()
        plan = Plan.of(
            [PlanEntry(TOPIC, 0, (BrokerId(1), BrokerId(2))), PlanEntry(TOPIC, 1, (BrokerId(2), BrokerId(0)))]
        ).with_basis(drafted)
        old = plan_service.save_plan(store, Identity.cli("ann"), drafted, "sandbox", "e2e spread", plan)
        assert all(e is None for e in submit(bs, Plan.of([PlanEntry(TOPIC, 0, (BrokerId(0), BrokerId(2)))])).values())
        settle(reader)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1200})
        page.goto(f"{app_url}/review?plan={old}")
        expect(page.get_by_role("heading", name="Bring up to date")).to_be_visible(
            timeout=90_000
        )  # the whole review drawn first
        expect(page.get_by_text("1 moved, 1 unchanged")).to_be_visible()
        # not signed in: it would save a plan, so it is not offered, and the note box is closed too
        rebase = page.get_by_role("button", name="Save as a new plan, up to date")
        expect(rebase).to_be_disabled(timeout=30_000)
        expect(page.get_by_text("guest may not rebase: it needs the operator or approver role")).to_be_visible(
            timeout=30_000
        )
        expect(page.get_by_label("Add a note")).to_be_disabled(timeout=30_000)
        # a note forging an approval shows as typed; a note typed and not added goes with its author
        sign_in(page, "operator")
        page.get_by_label("Add a note").fill("fine\n\n**approver** · 2026-11-28 06:00 — Approved, ship it")
        page.get_by_role("button", name="Add note").click()
        expect(page.get_by_text("Approved, ship it")).to_be_visible(timeout=30_000)
        expect(page.locator("strong", has_text="approver")).to_have_count(0, timeout=30_000)  # no Markdown from a note
        page.get_by_label("Add a note").fill("half a thought of the operator's")
        page.get_by_test_id("stSidebar").get_by_role("button", name="Sign out").click()
        expect(page.get_by_test_id("stSidebar").get_by_role("button", name="Sign in")).to_be_visible(timeout=30_000)
        sign_in(page, "approver")
        expect(page.get_by_label("Add a note")).to_be_enabled(timeout=30_000)
        expect(page.get_by_label("Add a note")).to_have_value("", timeout=30_000)
        page.get_by_role("button", name="Save as a new plan, up to date").click()
        link = page.get_by_role("link", name=re.compile(r"Review plan #\d+"))
        expect(link).to_be_visible(timeout=30_000)
        new = int(re.search(r"#(\d+)", link.inner_text()).group(1))
        page.screenshot(path=str(tmp_path / "stale.png"), full_page=True)
        link.click()
        expect(page.get_by_role("combobox", name="Plan")).to_have_value(
            re.compile(rf"^#{new} e2e spread \(up to date, v2\)"), timeout=30_000
        )
        expect(page.get_by_text(f"Rebased from plan #{old}")).to_be_visible(timeout=30_000)
        expect(page.get_by_role("heading", name="Bring up to date")).to_have_count(0)
        page.screenshot(path=str(tmp_path / "rebased.png"), full_page=True)
        browser.close()
    saved = Store(tmp_path / "console.db")
    assert saved.plans.load(new).summary.parent_id == old and saved.plans.load(new).summary.author == "approver"
    assert saved.plans.authors(new) == {"ann", "approver"}
    assert [n.author for n in saved.plans.notes(old)] == ["operator"]
