"""Real browser, the operator's report: one partition of a running run cancelled on the Live page
(chosen partitions) while the rest of its wave had moved; the run completes the rest, and the
Runs page says "partly cancelled" and "Completed, 1 partition cancelled: …", its wave done (it
said "cancelled", 0/1 waves)."""

from __future__ import annotations

import re

from playwright.sync_api import expect, sync_playwright

from console.access.auth import SANDBOX_USERS, write_users
from console.plans.plan import Plan, PlanEntry
from console.state.reader import ClusterReader
from console.storage.store import Store
from tests.e2e.browser import CHROMIUM_ARGS, sign_in
from tests.integration.helpers import clear_throttles, first_wave_sent, in_flight, make_topic
from tests.support import settings_for, wait_for

SLOW = 2_000  # bytes/s: the big partition stays in flight for the whole test


def test_one_partition_cancelled_on_live_leaves_the_run_to_complete_the_rest(sandbox, app_url, tmp_path, monkeypatch):
    monkeypatch.setenv("CONSOLE_DATA_DIR", str(tmp_path))  # the app's data dir (see the app_url fixture)
    write_users(tmp_path / "users.json", {n: (pw, list(r)) for n, (pw, r) in SANDBOX_USERS.items()})
    bs = sandbox.bootstrap_servers
    small, big = "e2e-partly", "e2e-partly-big"
    make_topic(bs, small, 3, 1, 1, assignment=[[0], [0], [1]])
    make_topic(bs, big, 1, 1, 600, assignment=[[0]])
    plan = Plan.of([PlanEntry(small, p, (2,)) for p in range(3)] + [PlanEntry(big, 0, (2,))])
    store = Store()
    with ClusterReader(settings_for(sandbox)) as reader:
        run_id = first_wave_sent(store, reader.gateway(), reader.snapshot(), plan, "partly", SLOW)
    try:
        wait_for(lambda: in_flight(bs) == {(big, 0)}, timeout=120, what="three moved, the big one in flight")
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1440, "height": 1300})
            page.goto(app_url)
            expect(page.get_by_role("heading", name="Live reassignments")).to_be_visible(timeout=60_000)
            sign_in(page)
            page.get_by_text("Chosen partitions").click()
            page.get_by_label("Partitions in flight", exact=True).click()
            page.keyboard.type(big)
            page.get_by_role("option", name=f"{big}-0", exact=True).click()
            page.keyboard.press("Escape")
            page.get_by_role("button", name="Cancel…").click()
            dialog = page.get_by_role("dialog")
            send = dialog.get_by_role("button", name="Send the cancel for 1 partition")
            expect(send).to_be_visible(timeout=30_000)
            send.click()
            expect(dialog.get_by_text("Outcome:")).to_be_visible(timeout=60_000)
            dialog.get_by_role("button", name="Close").click()
            wait_for(lambda: store.runs.require(run_id).state.terminal, timeout=60, what="the run ended")

            page.goto(f"{app_url}/runs?run={run_id}")
            expect(page.get_by_role("heading", name="Runs")).to_be_visible(timeout=60_000)
            expect(page.get_by_text(re.compile(rf"Run {run_id}\s*· partly cancelled · by ann"))).to_be_visible(
                timeout=30_000
            )
            expect(page.get_by_text(f"Completed, 1 partition cancelled: {big}-0", exact=False)).to_be_visible()
            expect(page.get_by_text("Traceback")).to_have_count(0)
            page.screenshot(path=str(tmp_path / "partly-cancelled.png"), full_page=True)
            browser.close()
        run = store.runs.require(run_id)
        assert run.state == "partly cancelled" and [w.state for w in store.runs.waves(run_id)] == ["completed"]
        assert not store.runs.ledger(run_id)
        with ClusterReader(settings_for(sandbox)) as reader:
            state = reader.snapshot()
        assert [state.partition(small, p).replicas for p in range(3)] == [(2,)] * 3
        assert state.partition(big, 0).replicas == (0,)
    finally:
        clear_throttles(bs, [0, 1, 2], [small, big])
