"""Real browser, two console servers on one PostgreSQL store (as behind a proxy): a sign-in on one
is valid on the other, a plan saved through one is on the other's pages, and signing out on the
second ends the session on the first; a run goes on on the other server when the one driving it
is killed mid-wave, and its Runs page shows the hand-over."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import time

from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import Page, expect, sync_playwright

from console.access.auth import SANDBOX_USERS, Identity, write_users
from console.core.model import cluster_key
from console.core.states import RunState
from console.moves.waves import WaveLimits
from console.plans.plan import Plan, PlanEntry
from console.services import runs as run_service
from console.state.reader import ClusterReader
from console.storage.store import Store
from tests.e2e.browser import CHROMIUM_ARGS, SERVERS_LEASE_S
from tests.integration.helpers import BROKERS, clear_throttles, make_topic
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


def test_a_run_goes_on_on_the_other_server_when_the_one_driving_it_is_killed(
    sandbox, two_servers_on_postgresql, pg_url, tmp_path
):
    one, two = two_servers_on_postgresql
    write_users(tmp_path / "users.json", {n: (pw, list(r)) for n, (pw, r) in SANDBOX_USERS.items()})
    make_topic(sandbox.bootstrap_servers, "e2e-handover", 3, 2, 120, assignment=[[0, 1], [1, 0], [0, 1]])
    store = Store(pg_url)
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
            context = browser.new_context(viewport={"width": 1400, "height": 1600})
            pages = {url: context.new_page() for url in (one, two)}
            for url, page in pages.items():  # both servers up, their workers started with them
                page.goto(f"{url}/runs")
                expect(page.get_by_role("heading", name="Audit log")).to_be_visible(timeout=90_000)
            with ClusterReader(settings_for(sandbox)) as reader:
                plan = Plan.of([PlanEntry("e2e-handover", p, t) for p, t in enumerate([(0, 2), (1, 2), (0, 2)])])
                run_id = run_service.start_run(store, reader.gateway(), reader.snapshot(), run_service.RunRequest(Identity.cli("ann"), plan, "handover", run_service.RunSettings(rate=20_000, limits=WaveLimits(1))), users=None)  # fmt: skip
            wait_for(
                lambda: [w.state for w in store.runs.waves(run_id)][:2] == ["completed", "running"],
                timeout=180,
                what="wave 2 running, driven by one of the servers",
            )
            owner = str(store.db.one("SELECT owner FROM runs WHERE id = ?", (run_id,))[0])
            assert owner.startswith(f"{socket.gethostname()}:")
            os.kill(int(owner.split(":")[1]), signal.SIGKILL)  # the server driving the run dies mid-wave
            killed = time.time()
            handover = wait_for(
                lambda: store.audit.entries(action="run-handover"), timeout=SERVERS_LEASE_S + 30, what="taken over"
            )[0]
            assert handover.at - killed < SERVERS_LEASE_S + 30
            took = json.loads(handover.request)
            assert took["run"] == run_id and took["from"] == owner and took["to"] != owner
            wait_for(lambda: store.runs.require(run_id).state is RunState.COMPLETED, timeout=120, what="completed")
            survivor = context.new_page()
            for url in pages:  # the killed server answers no more: the other shows the run
                try:
                    survivor.goto(f"{url}/runs", timeout=30_000)
                except PlaywrightError:
                    continue
                break
            expect(survivor.get_by_role("heading", name="Audit log")).to_be_visible(timeout=60_000)
            expect(survivor.get_by_test_id("stDataFrame").last).to_be_visible(timeout=60_000)  # the audit log
            expect(survivor.get_by_text("Traceback")).to_have_count(0)
            survivor.screenshot(path=str(tmp_path / "runs-after-handover.png"), full_page=True)
            browser.close()
        sends = [
            json.loads(e.request)["wave"] for e in store.audit.entries(action="submit-wave") if e.outcome == "sending"
        ]
        assert sorted(sends) == [1, 2, 3]  # each wave sent once, across the two servers
        assert not store.runs.ledger(run_id)
    finally:
        clear_throttles(sandbox.bootstrap_servers, BROKERS, ["e2e-handover"])
