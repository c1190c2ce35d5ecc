"""Real browser: a run paused from the Runs page while its wave copies. When the wave completes, the
page (left open, not reloaded) shows it everywhere at once: the runs table, the waves and the
audit log; it says how the paused run ends and offers only what applies to it then."""

from __future__ import annotations

import re

from playwright.sync_api import expect, sync_playwright

from console.access.auth import SANDBOX_USERS, Identity, write_users
from console.core.states import RunState, WaveState
from console.moves.waves import WaveLimits
from console.plans.plan import Plan, PlanEntry
from console.services import runs as run_service
from console.services.sessions import CONSOLE_WIDE
from console.state.reader import ClusterReader
from console.storage.store import Store
from tests.e2e.browser import CHROMIUM_ARGS, full_page_screenshot, sign_in
from tests.integration.helpers import clear_throttles, make_topic
from tests.support import settings_for, wait_for


def test_a_paused_run_refreshes_as_one_and_says_how_it_ends(sandbox, app_url, tmp_path, monkeypatch):
    monkeypatch.setenv("CONSOLE_DATA_DIR", str(tmp_path))  # the app's data dir (see the app_url fixture)
    write_users(tmp_path / "users.json", {n: (pw, list(r)) for n, (pw, r) in SANDBOX_USERS.items()})
    bs = sandbox.bootstrap_servers
    make_topic(bs, "e2e-paused", 3, 1, 200, assignment=[[0], [1], [0]])
    store = Store()
    with ClusterReader(settings_for(sandbox)) as reader:
        plan = Plan.of([PlanEntry("e2e-paused", p, (2,)) for p in range(3)])
        # three waves of one partition, about 20 s each at the throttle
        how = run_service.RunSettings(rate=10_000, limits=WaveLimits(1, 1))
        request = run_service.RunRequest(Identity.cli("ann"), plan, "paused", how)
        run_id = run_service.start_run(store, reader.gateway(), reader.snapshot(), request, users=None)
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1440, "height": 1000})
            page.goto(f"{app_url}/runs?run={run_id}")
            expect(page.get_by_role("heading", name="Runs")).to_be_visible(timeout=60_000)
            sign_in(page)
            wait_for(lambda: store.runs.waves(run_id)[0].state is WaveState.RUNNING, timeout=60, what="wave 1 sent")
            page.get_by_role("button", name="Pause before the next wave").click()
            expect(page.get_by_text(re.compile(r"paused · by ann"))).to_be_visible(timeout=30_000)
            # the wave copies on while the page stays open; the run stays paused
            wait_for(
                lambda: store.runs.waves(run_id)[0].state is WaveState.COMPLETED,
                timeout=120,
                what="wave 1 completed while paused",
            )
            logged = len(store.audit.entries(clusters=(store.runs.require(run_id).cluster, CONSOLE_WIDE)))
            # the runs table (a grid: its screen readers' copy of the cells) says what the waves say
            runs_grid = page.get_by_test_id("stDataFrame").first
            expect(runs_grid.get_by_test_id("glide-cell-4-0")).to_have_text("1/3", timeout=15_000)
            expect(page.get_by_text(f"Requests and responses in full ({logged} entries)")).to_be_visible()
            expect(page.get_by_text(re.compile(r"Run \d+ is paused between waves"))).to_be_visible()
            ending = page.get_by_test_id("stAlert").filter(has_text="is paused between waves")
            for said in ("Resume", "Stop here", "Abandon…", "nothing to cancel"):
                expect(ending).to_contain_text(said)
            # only what applies: no wave is copying, so nothing to stop "after" and nothing to cancel
            expect(page.get_by_role("button", name="Stop after this wave")).to_have_count(0)
            expect(page.get_by_role("button", name="Cancel the run…")).to_have_count(0)
            expect(page.get_by_role("button", name="Resume")).to_be_enabled()
            full_page_screenshot(page, tmp_path / "paused.png")
            page.get_by_role("button", name="Stop here").click()
            wait_for(lambda: store.runs.require(run_id).state is RunState.STOPPED, timeout=60, what="the run stopped")
            expect(page.get_by_text(re.compile(r"stopped · by ann"))).to_be_visible(timeout=30_000)
            expect(page.get_by_text("Traceback")).to_have_count(0)
            browser.close()
        assert [w.state for w in store.runs.waves(run_id)] == [
            WaveState.COMPLETED,
            WaveState.SKIPPED,
            WaveState.SKIPPED,
        ]
        assert not store.runs.ledger(run_id)  # its throttles came off
    finally:
        clear_throttles(bs, [0, 1, 2], ["e2e-paused"])
