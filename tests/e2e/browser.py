"""Helpers for the browser tests: how chromium is started, the sidebar sign-in, waiting for a
script run to end."""

from __future__ import annotations

from pathlib import Path

from playwright.sync_api import Page, expect

from tests.support import wait_for

ROOT = Path(__file__).resolve().parents[2]
SERVERS_LEASE_S = 10
"""The run lease (seconds) of the two console servers the ``two_servers_on_postgresql`` fixture starts."""
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def sign_in(page: Page, user: str = "operator") -> None:
    """Sign in from the sidebar as a sandbox user; wait for the session cookie the server sets a
    moment after the sign-in (the page goes through the console's route and back), and the page
    loaded again, signed in."""
    from console.access.auth import SANDBOX_USERS

    sidebar = page.get_by_test_id("stSidebar")
    sidebar.get_by_label("User").fill(user)
    sidebar.get_by_role("textbox", name="Password").fill(SANDBOX_USERS[user][0])
    sidebar.get_by_role("button", name="Sign in").click()
    expect(sidebar.get_by_text(f"Signed in as {user}")).to_be_visible(timeout=30_000)
    wait_for(
        lambda: any(c["name"] == "console_session" for c in page.context.cookies()),
        timeout=30,
        every=0.1,
        what="the session cookie",
    )
    page.wait_for_load_state()
    expect(sidebar.get_by_text(f"Signed in as {user}")).to_be_visible(timeout=30_000)


def script_run_done(page: Page, timeout_ms: float = 30_000) -> None:
    """Wait until the app's script is not running (Streamlit marks the state on its root element):
    what the current run draws last is in place."""
    expect(page.get_by_test_id("stApp")).to_have_attribute("data-test-script-state", "notRunning", timeout=timeout_ms)
