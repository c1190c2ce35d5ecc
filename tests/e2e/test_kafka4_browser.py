"""Real browser on a Kafka 4.x KRaft cluster of four brokers: eligible leader replicas and a fenced
broker on Live and Overview, and the decommission flow end to end on Drafts (cordon, drain plan,
submitted from Review, broker still running, shut down, unregistered), with a screenshot at each
step."""

from __future__ import annotations

import re

from playwright.sync_api import Page, expect, sync_playwright
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from console import cli
from console.access.auth import SANDBOX_USERS, write_users
from console.core.model import BrokerId
from console.core.states import RunState
from console.state.reader import ClusterReader
from console.storage.store import Store
from tests.e2e.browser import CHROMIUM_ARGS, script_run_done, sign_in, still_picture
from tests.integration.helpers import make_topic, set_min_isr
from tests.support import settings_for, wait_for


def open_decommission(page: Page, app_url: str) -> None:
    page.goto(f"{app_url}/drafts")
    expect(page.get_by_role("heading", name="Drafts")).to_be_visible(timeout=60_000)
    page.get_by_text("Decommission brokers: cordon, drain, verify, unregister").click()
    script_run_done(page)


def open_until(page: Page, label: str, option: str, typed: str = "", click: bool = False, reload: bool = False) -> None:
    """Open the select box ``label`` until ``option`` shows (again when a script run closed the
    list before it did; with ``reload``, the page is loaded again in between), and click it with ``click``."""
    for attempt in range(4):
        script_run_done(page)
        page.get_by_label(label, exact=True).click()
        if typed:
            page.keyboard.type(typed)
        found = page.get_by_role("option", name=option, exact=True)
        try:  # a loaded machine draws a list's options late: 20 s before the next try
            if click:
                found.click(timeout=20_000)
            else:
                expect(found).to_be_visible(timeout=20_000)
            return
        except (PlaywrightTimeout, AssertionError):
            if attempt == 3:  # say what the list held instead (a failure on CI is read from its output)
                shown = page.get_by_role("option").all_inner_texts()
                pickers = page.get_by_label(label, exact=True).count()
                text = page.get_by_test_id("stMain").inner_text()[:3000]  # the banners say what the read lacked
                raise AssertionError(
                    f"{label!r} ({pickers} found) offered {shown}, not {option!r}; page:\n{text}"
                ) from None
            page.keyboard.press("Escape")
            if reload:
                page.reload()


def pick_broker_3(page: Page) -> None:
    """Choose broker 3 in the decommission's broker list."""
    open_until(page, "Brokers to decommission", "3", typed="3", click=True)


def test_elr_fenced_brokers_and_the_decommission_flow_in_chromium(
    four_brokers, four_app_url, tmp_path, monkeypatch, capsys
):
    sb, bs, app_url = four_brokers, four_brokers.bootstrap_servers, four_app_url
    monkeypatch.setenv("CONSOLE_DATA_DIR", str(tmp_path))
    write_users(tmp_path / "users.json", {n: (pw, list(r)) for n, (pw, r) in SANDBOX_USERS.items()})
    make_topic(bs, "elr", 2, 2, 50, assignment=[[1, 2], [2, 1]])
    set_min_isr(bs, "elr", 2)
    make_topic(bs, "dec", 3, 2, 100, assignment=[[3, 0], [1, 3], [3, 2]])
    shots = tmp_path / "shots"
    shots.mkdir()
    with ClusterReader(settings_for(sb)) as reader, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1500, "height": 1300})
        page.goto(app_url)
        expect(page.get_by_role("heading", name="Live reassignments")).to_be_visible(timeout=60_000)
        sign_in(page, "admin")

        # eligible leader replicas: broker 2 stops, leaves the ISR below min ISR and stays electable
        sb.stop("broker-2")
        try:
            wait_for(lambda: reader.snapshot().partition("elr", 0).elr == (2,), timeout=60, what="ELR 2")
            page.goto(app_url)
            page.get_by_text("Only partitions in flight").click()
            expect(page.get_by_text(re.compile(r"Eligible leader replicas \(KIP-966\) on 2 partitions"))).to_be_visible(
                timeout=30_000
            )
            expect(page.get_by_text(re.compile(r"elr-0: ELR 2"))).to_be_visible()
            script_run_done(page)
            # the partitions table with its ELR columns drawn before the picture is taken
            expect(page.get_by_test_id("stDataFrame").first).to_be_visible(timeout=30_000)
            still_picture(page, "the Live page with its ELR columns", shots / "1-live-elr.png", full_page=True)
            page.goto(f"{app_url}/overview")
            expect(page.get_by_text("Under min ISR", exact=True)).to_be_visible(timeout=60_000)
            expect(page.get_by_text(re.compile(r"Broker 2 is registered but fenced"))).to_be_attached(timeout=30_000)
            # which partitions: under min ISR, and those with eligible leader replicas, listed
            expect(page.get_by_text(re.compile(r"^Under min ISR: 2 partitions$"))).to_be_visible(timeout=30_000)
            page.get_by_text(re.compile(r"^With eligible leader replicas: 2 partitions$")).click()
            script_run_done(page)
            expect(page.get_by_text(re.compile(r"^Eligible leader replicas or last known ones"))).to_be_visible()
            still_picture(page, "Overview with broker 2 fenced", shots / "2-overview-fenced.png", full_page=True)
        finally:
            sb.start("broker-2")
        wait_for(lambda: not reader.snapshot().partition("elr", 0).elr, timeout=90, what="ELR cleared")

        # drain broker 1's first log dir (generated and submitted from the command line), then look at it
        drained = f"{sb.data_dir}/broker-1/d1"
        plan = tmp_path / "drain.json"
        assert cli.main(["generate", "--bootstrap-server", bs, "--drain-log-dir", f"1:{drained}"]) == 0
        plan.write_text(capsys.readouterr().out)
        submit = ["submit", "--bootstrap-server", bs, "--reassignment-json-file", str(plan), "--yes"]
        assert cli.main([*submit, "--no-elect-leaders"]) == 0
        wait_for(
            lambda: (
                not any(
                    log.broker == 1 and log.log_dir == drained for p in reader.snapshot().partitions for log in p.logs
                )
            ),
            timeout=60,
            what="the drained dir empty",
        )
        page.goto(f"{app_url}/overview")
        page.get_by_text(re.compile(r"^Log dirs \(\d+\)")).click()
        script_run_done(page)
        page.get_by_text(re.compile(r"^Log dirs \(\d+\)")).scroll_into_view_if_needed()
        page.screenshot(path=str(shots / "2b-overview-drained-dir.png"), full_page=False)

        # the decommission of broker 3: start it on Drafts
        open_decommission(page, app_url)
        pick_broker_3(page)
        page.keyboard.press("Escape")
        page.get_by_role("button", name="Start the decommission").click()
        expect(page.get_by_text("Decommission 1", exact=True)).to_be_visible(timeout=60_000)
        expect(page.get_by_role("button", name="Open the drain plan in Review")).to_be_visible(timeout=30_000)
        page.screenshot(path=str(shots / "3-drafts-review-step.png"), full_page=True)
        b3 = reader.snapshot().broker(BrokerId(3))
        assert b3 is not None and b3.cordoned is True
        # Overview shows the cordon
        page.goto(f"{app_url}/overview")
        expect(page.get_by_text(re.compile(r"A cordoned broker \(every log dir cordoned\)"))).to_be_visible(
            timeout=60_000
        )
        # every cordon in one line: no broker to pick (a picker's list once stayed empty on CI, twice)
        expect(
            page.get_by_text(re.compile(r"^Cordoned now: broker 3 \((cordoned|(\d+) of \2 dirs cordoned)\)\.$"))
        ).to_be_visible(timeout=30_000)
        page.screenshot(path=str(shots / "4-overview-cordoned.png"), full_page=True)

        # review and submit the drain plan
        open_decommission(page, app_url)
        page.get_by_role("button", name="Open the drain plan in Review").click()
        expect(page.get_by_role("heading", name="Review a plan")).to_be_visible(timeout=60_000)
        page.get_by_role("button", name="Submit…").click()
        dialog = page.get_by_role("dialog")
        expect(dialog.get_by_label("Type the cluster's name")).to_be_visible(timeout=60_000)
        for box in dialog.get_by_role("checkbox").all():
            box.check()
        dialog.get_by_label("Type the cluster's name").fill("sandbox")
        dialog.get_by_label("Type the cluster's name").press("Enter")
        dialog.get_by_role("button", name="Start the run").click()
        expect(dialog.get_by_text("Run 2 started.")).to_be_visible(timeout=30_000)  # run 1 drained the dir
        store = Store()
        wait_for(lambda: store.runs.require(2).state is RunState.COMPLETED, timeout=120, what="drain run completed")

        # the flow follows the run; broker 3 still runs
        open_decommission(page, app_url)
        page.get_by_role("button", name="Check and continue").click()
        expect(page.get_by_text(re.compile(r"Broker 3 is still running"))).to_be_visible(timeout=60_000)
        page.screenshot(path=str(shots / "5-drafts-still-running.png"), full_page=True)

        # shut down on its host, then unregistered
        sb.stop("broker-3")
        wait_for(lambda: (b := reader.snapshot().broker(BrokerId(3))) is not None and b.fenced, what="3 fenced")
        page.get_by_role("button", name="Check and continue").click()
        expect(page.get_by_text("They are shut down for good")).to_be_visible(timeout=60_000)
        page.screenshot(path=str(shots / "6-drafts-unregister.png"), full_page=True)
        page.get_by_text("They are shut down for good").click()
        page.get_by_role("button", name="Unregister broker 3").click()
        expect(page.get_by_text(re.compile(r"Unregistered broker 3"))).to_be_attached(timeout=60_000)
        expect(page.get_by_text(re.compile(r"broker 3: done\. The brokers are gone"))).to_be_visible(timeout=30_000)
        expect(page.get_by_text("Traceback")).to_have_count(0)
        page.screenshot(path=str(shots / "7-drafts-done.png"), full_page=True)
        browser.close()
        registered = reader.kafka.reads.describe_registered()
        assert registered is not None and 3 not in {b.id for b in registered}
