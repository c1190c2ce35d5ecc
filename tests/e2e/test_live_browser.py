"""Real browser (Debian chromium + Playwright) against `streamlit run` on the sandbox (Kafka 4.x KRaft),
and on the ZooKeeper-mode sandbox for what only ZooKeeper gives (the watches)."""

from __future__ import annotations

import re
import time

from playwright.sync_api import expect, sync_playwright

from tests.e2e.browser import CHROMIUM_ARGS, script_run_done
from tests.integration.helpers import (
    clear_throttles,
    make_topic,
    reassign,
    set_broker_rates,
    throttle_topic_all,
    unthrottle_and_wait,
)


def test_live_page_shows_in_flight_partition_and_refreshes(sandbox, app_url, tmp_path):
    bs = sandbox.bootstrap_servers
    make_topic(bs, "e2e-move", 1, 1, 300, assignment=[[0]])
    set_broker_rates(bs, [0, 1, 2], 2000)
    throttle_topic_all(bs, "e2e-move")
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
            browser.close()
    finally:
        unthrottle_and_wait(bs, [0, 1, 2])
        clear_throttles(bs, [0, 1, 2], ["e2e-move"])


def test_on_call_line_says_unknown_when_the_cluster_does_not_answer(unreachable_app_url, tmp_path):
    """Met in the browser: a cluster that did not answer showed "In flight now (0): nothing"."""
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1100})
        page.goto(unreachable_app_url)
        main = page.get_by_test_id("stMain")
        expect(main.get_by_text("In flight now: unknown (ListPartitionReassignments: unavailable)")).to_be_visible(
            timeout=30_000
        )
        script_run_done(page)
        expect(main.get_by_text(re.compile(r"In flight now \(\d+\)"))).to_have_count(0)
        page.screenshot(path=str(tmp_path / "live-unreachable.png"), full_page=True)
        browser.close()


def test_live_page_reruns_on_a_zookeeper_watch(zk_sandbox, zk_app_url, tmp_path):
    """ZooKeeper mode only: the console watches the topic znodes."""
    bs = zk_sandbox.bootstrap_servers
    make_topic(bs, "e2e-watch", 1, 1, 300, assignment=[[1]])
    set_broker_rates(bs, [0, 1, 2], 2000)
    throttle_topic_all(bs, "e2e-watch")
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1400, "height": 1100})
            page.goto(zk_app_url)
            expect(page.get_by_text("Live reassignments")).to_be_visible(timeout=30_000)
            expect(page.get_by_text(re.compile(r"last refreshed \d\d:\d\d:\d\d"))).to_be_visible(timeout=30_000)

            # With the refresh at 60 s, a reassignment that starts shows within seconds: a ZooKeeper
            # watch on the topic znode fires and reruns the page.
            slider = page.get_by_role("slider").first
            slider.focus()
            page.keyboard.press("End")
            expect(page.get_by_text(re.compile(r"every 60 s and on every ZooKeeper watch"))).to_be_visible(
                timeout=15_000
            )
            script_run_done(page)  # the run that drew the caption ends by noting the ZooKeeper generation
            reassign(bs, {("e2e-watch", 0): [2]})
            started = time.monotonic()
            expect(page.get_by_text("e2e-watch-0", exact=True).first).to_be_attached(timeout=30_000)
            print(f"reassignment shown {time.monotonic() - started:.1f} s after it started (refresh interval 60 s)")
            browser.close()
    finally:
        unthrottle_and_wait(bs, [0, 1, 2])
        clear_throttles(bs, [0, 1, 2], ["e2e-watch"])


def test_live_at_1440_px_shows_what_on_call_needs_without_scrolling(sandbox, app_url, tmp_path):
    """At 1440 × 900 the partitions table's copy rate, ETA, throttle, state and started-by are on
    screen (they were cut off to the right); the cancel controls come before the tables."""
    bs = sandbox.bootstrap_servers
    topic = "e2e-wide-table-topic"
    make_topic(bs, topic, 1, 1, 300, assignment=[[0]])
    set_broker_rates(bs, [0, 1, 2], 2000)
    throttle_topic_all(bs, topic)
    reassign(bs, {(topic, 0): [1]})
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1440, "height": 900})
            page.goto(app_url)
            expect(page.get_by_text("Replicas by broker")).to_be_visible(timeout=60_000)
            script_run_done(page)
            cancel = page.get_by_role("button", name="Cancel…").bounding_box()
            table = page.get_by_test_id("stDataFrame").filter(has_text=f"{topic}-0").first
            before = table.bounding_box()
            assert cancel is not None and before is not None and cancel["y"] < before["y"], "cancel first"
            table.scroll_into_view_if_needed()
            box = table.bounding_box()
            assert box is not None
            # the grid's header cells stay in the DOM for accessibility, in column order
            (tmp_path / "table.html").write_text(table.inner_html())
            headers = [h.strip() for h in table.locator("th").all_inner_texts()]
            wanted = ["copy rate", "ETA", "throttle", "state", "started by"]
            assert all(w in headers for w in wanted), headers
            assert len(headers) <= 12, f"the table's columns no longer fit 1440 px: {headers}"
            assert box["x"] + box["width"] <= 1440
            table.screenshot(path=str(tmp_path / "live-table-1440.png"))
            page.screenshot(path=str(tmp_path / "live-1440.png"), full_page=True)
            browser.close()
    finally:
        unthrottle_and_wait(bs, [0, 1, 2])
        clear_throttles(bs, [0, 1, 2], [topic])


def test_a_live_page_opened_later_has_the_rates_the_server_watched(sandbox, app_url, tmp_path, monkeypatch):
    """The copy rate and the ETA are there at the page's first picture when the server has been
    watching the move (its worker reads the cluster at each step of a run); they said "measuring…"
    for the first ten seconds of every page opened."""
    from console.cli import main
    from console.core.states import RunState, WaveState
    from console.state.reader import ClusterReader
    from console.storage.store import Store
    from tests.integration.helpers import no_throttles_left
    from tests.support import settings_for, wait_for, write_plan

    monkeypatch.setenv("CONSOLE_DATA_DIR", str(tmp_path))  # the server's store (see the app_url fixture)
    bs = sandbox.bootstrap_servers
    topic = "e2e-watched"
    make_topic(bs, topic, 1, 1, 600, assignment=[[0]])
    plan = write_plan(tmp_path / "plan.json", [(topic, 0, [1])])
    store = Store()
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        first = browser.new_page(viewport={"width": 1440, "height": 900})
        first.goto(app_url)  # the server builds its parts for the cluster: its worker drives the console's runs
        expect(first.get_by_text("Live reassignments")).to_be_visible(timeout=60_000)
        first.close()
        argv = ["submit", "--bootstrap-server", bs, "--reassignment-json-file", str(plan), "--yes", "--detach"]
        assert main([*argv, "--throttle", "5000"]) == 0
        (run,) = store.runs.list()
        wait_for(
            lambda: [w.state for w in store.runs.waves(run.id)] == [WaveState.RUNNING],
            timeout=60,
            what="the server's worker sent the wave",
        )
        since = time.monotonic()  # the worker's reads are not seen from outside: give it a few steps (1 s each)
        wait_for(lambda: time.monotonic() - since > 4, timeout=10, what="a few of the worker's steps")
        page = browser.new_context(viewport={"width": 1440, "height": 900}).new_page()
        page.goto(app_url)
        rate = page.get_by_test_id("stMetric").filter(has_text="Copy rate (observed)")
        expect(rate).to_be_visible(timeout=60_000)
        shown = rate.inner_text()  # the first picture, before the panel's first refresh (5 s)
        page.screenshot(path=str(tmp_path / "live-opened-later.png"), full_page=True)
        assert "measuring" not in shown and "/s" in shown, shown
        eta = page.get_by_test_id("stMetric").filter(has_text="ETA (last to finish)")
        expect(eta).to_contain_text("ends ≈ ")
        browser.close()
    assert main(["cancel", "--bootstrap-server", bs, "--run", str(run.id), "--yes"]) == 0
    wait_for(lambda: store.runs.require(run.id).state is RunState.CANCELLED, timeout=60, what="the run cancelled")
    with ClusterReader(settings_for(sandbox)) as reader:
        wait_for(lambda: no_throttles_left(reader.snapshot()), timeout=60, what="no throttle left")
