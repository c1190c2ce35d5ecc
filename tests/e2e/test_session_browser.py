"""Real browser: a sign-in against the users file lasts across reloads and tabs in an HttpOnly cookie
the server sets, signing out ends it in every tab, and a draft comes back after a reload."""

from __future__ import annotations

import json

import pytest
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
    expect(page.get_by_test_id("stSidebar").get_by_text(f"Signed in as {user}")).to_be_visible(timeout=30_000)


def signed_out(page: Page) -> None:
    sidebar = page.get_by_test_id("stSidebar")
    expect(sidebar.get_by_role("button", name="Sign in")).to_be_visible(timeout=30_000)
    expect(sidebar.get_by_text("Signed in as")).to_have_count(0)


def test_sign_in_lasts_across_reloads_and_tabs_and_a_draft_comes_back(sandbox, app_url, tmp_path, monkeypatch):
    monkeypatch.setenv("CONSOLE_DATA_DIR", str(tmp_path))  # the app's data dir (see the app_url fixture)
    write_users(tmp_path / "users.json", {n: (pw, list(r)) for n, (pw, r) in SANDBOX_USERS.items()})
    make_topic(sandbox.bootstrap_servers, "e2e-session", 2, 1, 1, assignment=[[0], [1]])
    store = Store()
    with ClusterReader(settings_for(sandbox)) as reader:
        state = reader.snapshot()
        shared = store.plans.save(
            "shared",
            cluster_key(state, "sandbox"),
            Plan.of([PlanEntry("e2e-session", 0, (2,))]),
            Plan.of([]),
            "ann",
            state.fingerprint(),
        )
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        context = browser.new_context(viewport={"width": 1400, "height": 1200})
        page = context.new_page()
        page.goto(f"{app_url}/drafts")
        expect(page.get_by_role("heading", name="Drafts")).to_be_visible(timeout=60_000)
        expect(page.get_by_text("Not autosaved: sign in")).to_be_visible(timeout=30_000)
        sidebar = page.get_by_test_id("stSidebar")
        sidebar.get_by_label("User").fill("operator")
        sidebar.get_by_role("textbox", name="Password").fill("operator-secret")
        sidebar.get_by_role("button", name="Sign in").click()
        signed_in_as(page, "operator")
        cookie = wait_for(
            lambda: next((c for c in context.cookies() if c["name"] == COOKIE), None),
            timeout=30,
            what="the session cookie",
        )
        session = store.sessions.get(cookie["value"])
        assert session is not None and session.user == "operator"
        assert cookie["expires"] == pytest.approx(session.expires_at, abs=5)
        assert cookie["sameSite"] == "Lax" and cookie["path"] == "/"
        # set by the server, HttpOnly: no script on the page reads it; not Secure over plain http
        assert cookie["httpOnly"] is True and cookie["secure"] is False
        page.wait_for_load_state()
        assert COOKIE not in page.evaluate("document.cookie")
        # the browser went through the console's route and came back to the page, no ticket kept
        assert page.url == f"{app_url}/drafts" and "ticket" not in page.url

        # a draft, from pasted JSON
        expect(page.get_by_text("Autosaved as you edit")).to_be_visible(timeout=30_000)
        page.get_by_text("JSON", exact=True).click()  # "Start from"
        page.get_by_label("…or paste it").fill(
            json.dumps(
                {
                    "version": 1,
                    "partitions": [
                        {"topic": "e2e-session", "partition": 0, "replicas": [2]},
                        {"topic": "e2e-session", "partition": 1, "replicas": [7]},
                    ],
                }
            )
        )
        page.get_by_label("…or paste it").blur()  # a text area sends its value when it loses focus
        load = page.get_by_role("button", name="Load", exact=True)
        expect(load).to_be_enabled(timeout=30_000)
        load.click()
        expect(page.get_by_text("Partitions in the draft")).to_be_visible(timeout=30_000)
        expect(page.get_by_text("Unknown broker: 7 (in e2e-session-1)")).to_be_visible()  # said at once
        page.screenshot(path=str(tmp_path / "drafts-signed-in.png"), full_page=True)

        # reload: still signed in, the draft is back
        page.reload()
        expect(page.get_by_role("heading", name="Drafts")).to_be_visible(timeout=60_000)
        signed_in_as(page, "operator")
        expect(page.get_by_text("was brought back")).to_be_visible(timeout=30_000)
        expect(page.get_by_test_id("stMetricValue").first).to_have_text("2", timeout=30_000)
        expect(page.get_by_text("Unknown broker: 7 (in e2e-session-1)")).to_be_visible()

        # a second tab, opened from a shared review link: signed in too; the link carries no session
        other = context.new_page()
        other.goto(f"{app_url}/review?plan={shared}")
        expect(other.get_by_role("heading", name="Review a plan")).to_be_visible(timeout=60_000)
        signed_in_as(other, "operator")
        page.screenshot(path=str(tmp_path / "drafts-reloaded.png"), full_page=True)
        assert cookie["value"] not in other.url and cookie["value"] not in page.url

        # sign out in the first tab: the session ends everywhere
        page.get_by_test_id("stSidebar").get_by_role("button", name="Sign out").click()
        signed_out(page)
        assert store.sessions.get(cookie["value"]) is None
        wait_for(
            lambda: not [c for c in context.cookies() if c["name"] == COOKIE], timeout=30, what="the cookie cleared"
        )
        expect(page.get_by_text("Not autosaved: sign in")).to_be_visible(timeout=30_000)
        expect(page.get_by_text("Partitions in the draft")).to_have_count(0)  # not left on the screen
        # the other tab is signed out at its next rerun
        other.get_by_test_id("stSidebarNav").get_by_role("link", name="Overview").click()
        expect(other.get_by_role("heading", name="Cluster overview")).to_be_visible(timeout=60_000)
        signed_out(other)
        other.reload()
        signed_out(other)
        expect(other.get_by_text("Traceback")).to_have_count(0)
        expect(page.get_by_text("Traceback")).to_have_count(0)
        browser.close()
    audit = [(a.user, a.action, a.outcome) for a in store.audit.entries() if a.action in ("sign-in", "sign-out")]
    assert audit == [("operator", "sign-in", "signed in"), ("operator", "sign-out", "signed out")]
