"""Real browser: sign in as an operator, submit a reviewed plan, watch it on the Runs page, cancel
it from the Live page through the confirmation dialog."""

from __future__ import annotations

import re
import time

from playwright.sync_api import expect, sync_playwright

from console.access.auth import SANDBOX_USERS, Identity, write_users
from console.core.model import cluster_key
from console.plans.plan import Plan, PlanEntry
from console.state.reader import ClusterReader
from console.storage.store import Store
from tests.e2e.browser import CHROMIUM_ARGS, sign_in
from tests.integration.helpers import clear_throttles, make_topic
from tests.support import settings_for, wait_for


def test_submit_watch_and_cancel_in_the_browser(sandbox, app_url, tmp_path, monkeypatch):
    monkeypatch.setenv("CONSOLE_DATA_DIR", str(tmp_path))  # the app's data dir (see the app_url fixture)
    write_users(tmp_path / "users.json", {n: (pw, list(r)) for n, (pw, r) in SANDBOX_USERS.items()})
    bs = sandbox.bootstrap_servers
    make_topic(bs, "e2e-run", 2, 1, 300, assignment=[[0], [1]])
    store = Store()
    with ClusterReader(settings_for(sandbox)) as reader:
        state = reader.snapshot()
        plan = Plan.of([PlanEntry("e2e-run", 0, (2,)), PlanEntry("e2e-run", 1, (2,))]).with_basis(state)
        plan_id = store.plans.save(
            "e2e run", cluster_key(state, "sandbox"), plan, Plan.of([]), "ann", state.fingerprint()
        )
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1400, "height": 1400})
            page.goto(f"{app_url}/review?plan={plan_id}")
            expect(page.get_by_role("heading", name="Review a plan")).to_be_visible(timeout=60_000)
            sign_in(page)
            page.get_by_role("textbox", name=re.compile(r"^Throttle")).fill("2 KB/s")
            page.get_by_role("textbox", name=re.compile(r"^Throttle")).press("Enter")
            page.get_by_role("button", name="Submit…").click()
            dialog = page.get_by_role("dialog")
            expect(dialog.get_by_text(re.compile(r"^2 partitions in 1 wave\b")).first).to_be_visible(timeout=30_000)
            expect(dialog.get_by_text(re.compile(r"at 2\.0 KB/s per broker")).first).to_be_visible()
            for box in dialog.get_by_role("checkbox").all():
                box.check()  # acknowledge the warnings
            dialog.get_by_label("Type the cluster's name").fill("sandbox")
            dialog.get_by_label("Type the cluster's name").press("Enter")
            dialog.get_by_role("button", name="Start the run").click()
            expect(dialog.get_by_text("Run 1 started.")).to_be_visible(timeout=30_000)
            expect(dialog.get_by_role("button", name="Start the run")).to_be_disabled()  # started once
            dialog.get_by_role("link", name="Watch run 1").click()
            expect(page.get_by_role("heading", name="Runs")).to_be_visible(timeout=30_000)
            # table cells are drawn on a canvas: look at the run's heading line instead
            expect(page.get_by_text(re.compile(r"running · by operator"))).to_be_visible(timeout=60_000)
            expect(page.get_by_text("Traceback")).to_have_count(0)
            wait_for(lambda: [w.state for w in store.runs.waves(1)] == ["running"], timeout=60, what="wave 1 running")
            page.screenshot(path=str(tmp_path / "runs.png"), full_page=True)

            # on-call: cancel the topic from the Live page, which opens on a snapshot shared with the
            # other pages (the Runs page may have read one as the wave was being sent): none taken
            # before the server's own request returned is shared after it, so the wave's answer is
            # what to wait for
            wait_for(
                lambda: [e for e in store.audit.entries(action="submit-wave") if e.ref is not None],
                timeout=60,
                what="the wave's request answered",
            )
            page.get_by_role("link", name="Live").click()
            expect(page.get_by_role("heading", name="Live reassignments")).to_be_visible(timeout=30_000)
            page.get_by_text("A topic").click()
            page.get_by_label("Topic", exact=True).click()
            page.keyboard.type("e2e-run")  # the list may be long: filter it first
            page.get_by_role("option", name="e2e-run", exact=True).click()
            page.get_by_role("button", name="Cancel…").click()
            dialog = page.get_by_role("dialog")
            expect(dialog.get_by_text("e2e-run-0")).to_be_visible(timeout=30_000)
            send = dialog.get_by_role("button", name="Send the cancel for 2 partitions")
            clicked = time.time()
            send.click()
            expect(dialog.get_by_text("Outcome:")).to_be_visible(timeout=60_000)
            expect(page.get_by_text("Traceback")).to_have_count(0)
            page.screenshot(path=str(tmp_path / "cancel.png"), full_page=True)
            dialog.get_by_role("button", name="Close").click()  # closing the dialog leaves the outcome on the page
            expect(page.get_by_text("Cancel by operator")).to_be_visible(timeout=30_000)
            browser.close()
        sending = [a for a in store.audit.entries(action="cancel") if a.outcome == "sending"]
        assert len(sending) == 1 and sending[0].user == "operator"
        print(f"click to cancel request recorded and sent: {sending[0].at - clicked:.2f} s")
        wait_for(lambda: store.runs.get(1).state == "cancelled", timeout=60, what="the run marked cancelled")
        with ClusterReader(settings_for(sandbox)) as reader:
            wait_for(
                lambda: [reader.snapshot().partition("e2e-run", p).replicas for p in (0, 1)] == [(0,), (1,)],
                timeout=30,
                what="back on the original replicas",
            )
        assert not store.runs.ledger()
    finally:
        clear_throttles(bs, [0, 1, 2], ["e2e-run"])


def test_review_reads_a_number_alone_as_bytes_and_asks_before_an_effectively_unthrottled_submit(
    sandbox, app_url, tmp_path, monkeypatch
):
    """Met at 1440 px: 20000 read as 20.0 GB/s on Review (bytes/s in the CLI), and 99999 GB/s, above
    what any broker link carries, taken without a word with Submit… enabled."""
    monkeypatch.setenv("CONSOLE_DATA_DIR", str(tmp_path))  # the app's data dir (see the app_url fixture)
    write_users(tmp_path / "users.json", {n: (pw, list(r)) for n, (pw, r) in SANDBOX_USERS.items()})
    make_topic(sandbox.bootstrap_servers, "e2e-rate", 1, 1, 1, assignment=[[0]])
    with ClusterReader(settings_for(sandbox)) as reader:
        state = reader.snapshot()
        plan = Plan.of([PlanEntry("e2e-rate", 0, (1,))]).with_basis(state)
        plan_id = Store().plans.save(
            "e2e rate", cluster_key(state, "sandbox"), plan, Plan.of([]), "ann", state.fingerprint()
        )
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1440, "height": 1200})
        page.goto(f"{app_url}/review?plan={plan_id}")
        expect(page.get_by_role("heading", name="Review a plan")).to_be_visible(timeout=60_000)
        sign_in(page)
        rate = page.get_by_role("textbox", name=re.compile(r"^Throttle"))
        submit = page.get_by_role("button", name="Submit…")
        rate.fill("20000")
        rate.press("Enter")
        expect(page.get_by_text("= 20.0 KB/s per broker (20,000 bytes/s)")).to_be_visible(timeout=30_000)
        expect(submit).to_be_enabled()
        rate.fill("99999 GB/s")
        rate.press("Enter")
        expect(page.get_by_text(re.compile(r"is above 10\.0 GB/s.*effectively unthrottled"))).to_be_visible(
            timeout=30_000
        )
        expect(submit).to_be_disabled()
        page.get_by_text("Send it effectively unthrottled").click()
        expect(submit).to_be_enabled(timeout=30_000)
        page.screenshot(path=str(tmp_path / "review-unthrottled.png"), full_page=True)
        submit.click()
        dialog = page.get_by_role("dialog")
        expect(dialog.get_by_text("You ticked “Send it effectively unthrottled”")).to_be_visible(timeout=30_000)
        expect(page.get_by_text("Traceback")).to_have_count(0)
        browser.close()


def test_a_console_started_mid_run_resumes_it(sandbox, app_url, tmp_path, monkeypatch):
    """The run was started (wave 1 sent) by a console that is gone; this console's server picks it
    up as soon as anyone opens a page, and sends each wave once."""
    import json

    from console.moves.waves import WaveLimits
    from console.runs.executor import Executor
    from console.services import runs as run_service

    monkeypatch.setenv("CONSOLE_DATA_DIR", str(tmp_path))
    bs = sandbox.bootstrap_servers
    make_topic(bs, "e2e-resume", 2, 1, 30, assignment=[[0], [1]])
    store = Store()
    with ClusterReader(settings_for(sandbox)) as reader:
        gone = Executor(store, reader.gateway(), "ann")
        run_id = run_service.start_run(
            gone.store,
            gone.cluster,
            reader.snapshot(),
            run_service.RunRequest(
                Identity.cli(gone.user),
                Plan.of([PlanEntry("e2e-resume", 0, (2,)), PlanEntry("e2e-resume", 1, (2,))]),
                "resume",
                run_service.RunSettings(limits=WaveLimits(1)),
            ),
            users=None,
        )
        assert gone.tick(run_id).did.startswith("wave 1 submitted")
    store.runs.release(run_id, gone.owner)  # that console stopped
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        page = browser.new_page()
        page.goto(app_url)
        expect(page.get_by_role("heading", name="Live reassignments")).to_be_visible(timeout=60_000)
        wait_for(
            lambda: store.runs.get(run_id).state == "completed", timeout=90, what="the run completed by the server"
        )
        browser.close()
    sent = [json.loads(a.request)["wave"] for a in store.audit.entries(action="submit-wave") if a.outcome == "sending"]
    assert sorted(sent) == [1, 2]
