"""Real browser (Debian chromium + Playwright) against `streamlit run` on the sandbox."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect, sync_playwright

from console.sandbox.cluster import free_port
from tests.conftest import wait_for
from tests.integration.helpers import (
    clear_throttles,
    make_topic,
    reassign,
    set_broker_rates,
    throttle_topic_all,
    unthrottle_and_wait,
)

ROOT = Path(__file__).resolve().parents[2]
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
    """Sign in from the sidebar as a sandbox user; wait for the session cookie the page writes a
    moment after the sign-in (a reload needs it)."""
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


@pytest.fixture
def app_url(sandbox, tmp_path):
    port = free_port()
    env = dict(
        os.environ,
        CONSOLE_BOOTSTRAP_SERVERS=sandbox.bootstrap_servers,
        CONSOLE_ZOOKEEPER=sandbox.zookeeper,
        CONSOLE_CLUSTER_NAME="sandbox",
        CONSOLE_DATA_DIR=str(tmp_path),
        PYTHONPATH=str(ROOT),
    )
    log = open(tmp_path / "streamlit.log", "w")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "streamlit",
            "run",
            str(ROOT / "app.py"),
            "--server.port",
            str(port),
            "--server.headless",
            "true",
        ],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )

    def healthy() -> bool:
        try:
            return urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=1).status == 200
        except OSError:
            return False

    try:
        wait_for(healthy, timeout=60, what="streamlit health")
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(10)


def test_live_page_shows_in_flight_partition_and_refreshes(sandbox, app_url, tmp_path):
    bs = sandbox.bootstrap_servers
    make_topic(bs, "e2e-move", 1, 1, 300, assignment=[[0]])
    make_topic(bs, "e2e-watch", 1, 1, 300, assignment=[[1]])
    set_broker_rates(bs, [0, 1, 2], 2000)
    throttle_topic_all(bs, "e2e-move")
    throttle_topic_all(bs, "e2e-watch")
    reassign(bs, {("e2e-move", 0): [1]})
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1400, "height": 1100})
            page.goto(app_url)
            expect(page.get_by_text("Live reassignments")).to_be_visible(timeout=30_000)
            expect(page.get_by_text("Replicas by broker")).to_be_visible(timeout=30_000)
            # the dataframe draws on a canvas; its cells stay in the DOM for accessibility
            expect(page.get_by_text("e2e-move-0", exact=True).first).to_be_attached(timeout=30_000)
            caption = page.get_by_text(re.compile(r"last refreshed \d\d:\d\d:\d\d"))
            first = caption.inner_text()
            # the panel refreshes on its own (every 5 s by default)
            expect(caption).not_to_have_text(first, timeout=20_000)
            page.screenshot(path=str(tmp_path / "live.png"), full_page=True)

            # With the refresh at 60 s, a reassignment that starts shows within seconds: a ZooKeeper
            # watch on the topic znode fires and reruns the page.
            slider = page.get_by_role("slider").first
            slider.focus()
            page.keyboard.press("End")
            expect(page.get_by_text(re.compile(r"every 60 s and on every ZooKeeper watch"))).to_be_visible(
                timeout=15_000
            )
            time.sleep(2)
            reassign(bs, {("e2e-watch", 0): [2]})
            started = time.monotonic()
            expect(page.get_by_text("e2e-watch-0", exact=True).first).to_be_attached(timeout=30_000)
            print(f"reassignment shown {time.monotonic() - started:.1f} s after it started (refresh interval 60 s)")
            browser.close()
    finally:
        unthrottle_and_wait(bs, [0, 1, 2])
        clear_throttles(bs, [0, 1, 2], ["e2e-move", "e2e-watch"])
