"""Real browser on a Kafka 4.x KRaft cluster of four brokers: the console's server drives a run
whose destination, broker 3, is stopped while a partition copies onto it; a guardrail pauses the
run. The Live page says so at its top (the words, a link to the run, "Cancel these…" opening the
cancel dialog on exactly the partition that cannot finish, "Resume"); once broker 3 is back, the
run's Runs page says what paused it has cleared, and its Resume sends the run on to the end."""

from __future__ import annotations

import re

from playwright.sync_api import expect, sync_playwright

from console.access.auth import SANDBOX_USERS, Identity, write_users
from console.core.states import RunState, WaveState
from console.moves.waves import WaveLimits
from console.plans.plan import Plan, PlanEntry
from console.services import runs as run_service
from console.state.reader import ClusterReader
from console.storage.store import Store
from tests.e2e.browser import CHROMIUM_ARGS, script_run_done, sign_in
from tests.integration.helpers import clear_throttles, make_topic
from tests.support import settings_for, wait_for

GONE = r"broker 3, a destination of wave 2, is (offline|fenced)\. In flight onto it: guarded-0 \(cannot finish while it is gone\)\."


def test_a_run_a_guardrail_paused_is_said_on_live_and_resumed_from_runs(
    four_brokers, four_app_url, tmp_path, monkeypatch
):
    sb, bs, app_url = four_brokers, four_brokers.bootstrap_servers, four_app_url
    monkeypatch.setenv("CONSOLE_DATA_DIR", str(tmp_path))  # the app's data dir (see the four_app_url fixture)
    write_users(tmp_path / "users.json", {n: (pw, list(r)) for n, (pw, r) in SANDBOX_USERS.items()})
    make_topic(bs, "guarded", 2, 1, 300, assignment=[[0], [1]])
    store = Store()
    shots = tmp_path / "shots"
    shots.mkdir()
    ann = Identity.cli("ann")
    with ClusterReader(settings_for(sb)) as reader:
        plan = Plan.of([PlanEntry("guarded", 0, (3,)), PlanEntry("guarded", 1, (3,))])
        # the server's worker drives it: a wave a partition, 5 KB/s
        how = run_service.RunSettings(rate=5_000, limits=WaveLimits(1))
        request = run_service.RunRequest(ann, plan, "guarded", how)
        run_id = run_service.start_run(store, reader.gateway(), reader.snapshot(), request, users=None)
        try:
            with sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
                page = browser.new_page(viewport={"width": 1440, "height": 1200})
                page.goto(app_url)
                expect(page.get_by_role("heading", name="Live reassignments")).to_be_visible(timeout=60_000)
                sign_in(page, "operator")
                wait_for(
                    lambda: [w.state for w in store.runs.waves(run_id)] == [WaveState.RUNNING, WaveState.PENDING],
                    timeout=60,
                    what="wave 1 copying onto broker 3",
                )

                sb.stop("broker-3")  # the destination goes while guarded-0 copies onto it
                wait_for(lambda: store.runs.require(run_id).state is RunState.PAUSED, timeout=90, what="paused")
                banner = page.get_by_text(
                    re.compile(rf"^Run {run_id} \(guarded\) paused by a guardrail since \d\d:\d\d:\d\d: {GONE}$")
                )
                expect(banner).to_be_visible(timeout=30_000)  # the top of Live, refreshed on its own
                expect(page.get_by_role("link", name=f"Open run {run_id}")).to_be_visible()
                expect(page.get_by_role("button", name="Resume")).to_be_enabled()
                script_run_done(page)
                page.screenshot(path=str(shots / "1-live-paused-by-a-guardrail.png"), full_page=False)

                page.get_by_role("button", name="Cancel these…").click()  # the dialog, on exactly guarded-0
                dialog = page.get_by_role("dialog")
                expect(dialog.get_by_role("button", name="Send the cancel for 1 partition")).to_be_visible(
                    timeout=30_000
                )
                expect(dialog.get_by_text("guarded-0")).to_be_visible()
                page.screenshot(path=str(shots / "2-live-cancel-these.png"), full_page=False)
                page.keyboard.press("Escape")  # not sent: broker 3 comes back instead
                expect(dialog).to_have_count(0, timeout=30_000)

                sb.start("broker-3")
                wait_for(lambda: store.holds.held([run_id]) == {}, timeout=120, what="the cause cleared")
                assert store.runs.require(run_id).state is RunState.PAUSED  # it waits for a person
                cleared = re.compile(
                    rf"^Run {run_id} \(guarded\) paused by a guardrail since .*; what paused it has cleared since\.$"
                )
                expect(page.get_by_text(cleared)).to_be_visible(timeout=30_000)

                page.get_by_role("link", name=f"Open run {run_id}").click()
                expect(page.get_by_role("heading", name="Runs")).to_be_visible(timeout=30_000)
                said = re.compile(r"^Paused by a guardrail since \d\d:\d\d:\d\d; what paused it has cleared since\.$")
                expect(page.get_by_text(said)).to_be_visible(timeout=30_000)
                expect(page.get_by_role("button", name="Resume")).to_have_count(1)  # the guardrail's, not twice
                script_run_done(page)
                page.screenshot(path=str(shots / "3-runs-paused-by-a-guardrail.png"), full_page=True)
                page.get_by_role("button", name="Resume").click()
                expect(page.get_by_text(re.compile(r"running · by ann"))).to_be_visible(timeout=30_000)
                expect(page.get_by_text(said)).to_have_count(0)
                expect(page.get_by_text("Traceback")).to_have_count(0)
                script_run_done(page)
                page.screenshot(path=str(shots / "4-runs-resumed.png"), full_page=True)
                browser.close()
            (resumed,) = store.audit.entries(action="run-running")
            assert resumed.user == "operator"
            run_service.change_throttle(store, reader.gateway(), ann, run_id, 10_000_000)  # the rest, quickly
            wait_for(lambda: store.runs.require(run_id).state is RunState.COMPLETED, timeout=180, what="completed")
            assert [reader.snapshot().partition("guarded", p).replicas for p in (0, 1)] == [(3,), (3,)]
            assert not store.runs.ledger()  # no throttle left
        finally:
            sb.start("broker-3")  # back, if the test stopped before it started it again
            clear_throttles(bs, [0, 1, 2, 3], ["guarded"])
