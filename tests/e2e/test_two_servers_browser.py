"""Real browser, two console servers on one PostgreSQL store (as behind a proxy): a sign-in on one
is valid on the other, a plan saved through one is on the other's pages, and signing out on the
second ends the session on the first."""

from __future__ import annotations

import re

from playwright.sync_api import Page, expect, sync_playwright

from console.access.auth import SANDBOX_USERS, write_users
from console.core.model import cluster_key
from console.plans.plan import Plan, PlanEntry
from console.state.reader import ClusterReader
from console.storage.store import Store
from tests.e2e.browser import CHROMIUM_ARGS
from tests.integration.helpers import make_topic
from tests.support import settings_for, wait_for

COOKIE = "console_session"


def signed_in_as(page: Page, user: str) -> None:
    expect(page.get_by_test_id("stSidebar").get_by_text(f"Signed in as {user}")).to_be_visible(timeout=60_000)


def test_a_sign_in_on_one_server_holds_on_the_other_and_both_show_one_store(
    sandbox, two_servers_on_postgresql, pg_url, tmp_path
):
    one, two = two_servers_on_postgresql
    write_users(tmp_path / "users.json", {n: (pw, list(r)) for n, (pw, r) in SANDBOX_USERS.items()})
    make_topic(sandbox.bootstrap_servers, "e2e-two", 1, 1, 1, assignment=[[0]])
    store = Store(pg_url)
    with ClusterReader(settings_for(sandbox)) as reader:
        state = reader.snapshot()
        plan_id = store.plans.save(
            "saved through the store both serve",
            cluster_key(state, "sandbox"),
            Plan.of([PlanEntry("e2e-two", 0, (1,))]),
            Plan.of([]),
            "ann",
            state.fingerprint(),
        )
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        context = browser.new_context(viewport={"width": 1400, "height": 1200})
        page = context.new_page()
        page.goto(f"{one}/drafts")
        expect(page.get_by_role("heading", name="Drafts")).to_be_visible(timeout=60_000)
        sidebar = page.get_by_test_id("stSidebar")
        sidebar.get_by_label("User").fill("operator")
        sidebar.get_by_role("textbox", name="Password").fill("operator-secret")
        sidebar.get_by_role("button", name="Sign in").click()
        signed_in_as(page, "operator")
        cookie = wait_for(
            lambda: next((c for c in context.cookies() if c["name"] == COOKIE), None), timeout=30, what="the cookie"
        )
        assert store.sessions.get(cookie["value"]) is not None  # the session is in the shared store

        # the other server (another port of the same host: the browser sends the same cookie)
        other = context.new_page()
        other.goto(f"{two}/review?plan={plan_id}")
        expect(other.get_by_role("heading", name="Review a plan")).to_be_visible(timeout=60_000)
        signed_in_as(other, "operator")
        expect(other.get_by_role("combobox", name="Plan")).to_have_value(
            re.compile(rf"^#{plan_id} saved through the store both serve"), timeout=30_000
        )

        # signing out on the second server ends the session on the first
        other.get_by_test_id("stSidebar").get_by_role("button", name="Sign out").click()
        expect(other.get_by_test_id("stSidebar").get_by_role("button", name="Sign in")).to_be_visible(timeout=30_000)
        assert store.sessions.get(cookie["value"]) is None
        page.reload()
        expect(page.get_by_test_id("stSidebar").get_by_role("button", name="Sign in")).to_be_visible(timeout=60_000)
        expect(page.get_by_test_id("stSidebar").get_by_text("Signed in as")).to_have_count(0)
        expect(page.get_by_text("Traceback")).to_have_count(0)
        expect(other.get_by_text("Traceback")).to_have_count(0)
        browser.close()
    audit = [(a.user, a.action, a.outcome) for a in store.audit.entries() if a.action in ("sign-in", "sign-out")]
    assert audit == [("operator", "sign-in", "signed in"), ("operator", "sign-out", "signed out")]
