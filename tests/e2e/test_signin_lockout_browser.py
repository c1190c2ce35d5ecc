"""Real browser at 1440 × 900: the sign-in's refusal (a wrong password, then the lock after too many)
is where the person looking at the sign-in box sees it, not under the sidebar's fold."""

from __future__ import annotations

from playwright.sync_api import expect, sync_playwright

from console.access.auth import SANDBOX_USERS, write_users
from console.services.sessions import NAME_LIMIT
from tests.e2e.browser import CHROMIUM_ARGS


def test_the_lockout_message_is_in_view_at_900_px(app_url, tmp_path):
    write_users(tmp_path / "users.json", {n: (pw, list(r)) for n, (pw, r) in SANDBOX_USERS.items()})
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1440, "height": 900})
        page.goto(app_url)
        expect(page.get_by_role("heading", name="Live reassignments")).to_be_visible(timeout=120_000)
        sidebar = page.get_by_test_id("stSidebar")
        for attempt in range(NAME_LIMIT + 1):
            sidebar.get_by_label("User").fill("operator")
            sidebar.get_by_role("textbox", name="Password").fill(f"wrong-{attempt}")
            sidebar.get_by_role("button", name="Sign in").click()
            said = sidebar.get_by_text("Unknown user or wrong password.").or_(
                sidebar.get_by_text("Too many failed sign-ins")
            )
            expect(said).to_be_visible(timeout=30_000)
            expect(said).to_be_in_viewport()
        locked = sidebar.get_by_text("Too many failed sign-ins")
        expect(locked).to_be_visible(timeout=30_000)
        page.screenshot(path=str(tmp_path / "lockout-900.png"))
        expect(locked).to_be_in_viewport()
        browser.close()
