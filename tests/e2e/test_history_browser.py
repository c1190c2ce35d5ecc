"""Real browser: the History page draws a cluster's past moves (timeline by outcome), copy rates,
broker load and truly under-replicated vs reassigning, from the history job's tables."""

from __future__ import annotations

import shutil

from playwright.sync_api import expect, sync_playwright

from console.pipeline.jobs import history_job
from console.pipeline.spark import SparkSettings
from tests.e2e.browser import CHROMIUM_ARGS
from tests.unit.timeline import timeline, write_states


def test_history_page_draws_moves_rates_load_and_incidents(app_url, tmp_path):
    history = tmp_path / "history"  # the app's data dir is tmp_path (the app_url fixture)
    write_states(history / "snapshots", timeline())
    history_job(str(history / "snapshots"), str(history / "tables"), SparkSettings(master="local[2]"), stuck_after_s=30)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1200})
        page.goto(f"{app_url}/history")
        expect(page.get_by_role("heading", name="History")).to_be_visible(timeout=60_000)
        expect(page.get_by_text("The history job last ran")).to_be_visible(timeout=60_000)
        page.get_by_role("radio", name="All").click()  # the scripted day is in the past
        moves = page.get_by_test_id("stMetric").filter(has_text="Moves")
        expect(moves.first).to_contain_text("6", timeout=30_000)
        charts = page.get_by_test_id("stVegaLiteChart")
        expect(charts).to_have_count(4, timeout=30_000)
        for i in range(4):
            expect(charts.nth(i).locator("canvas, svg").first).to_be_attached(timeout=30_000)
        expect(page.get_by_text("Truly under-replicated vs reassigning")).to_be_visible()
        expect(page.get_by_text("Traceback")).to_have_count(0)
        height = page.get_by_test_id("stMain").evaluate("m => m.scrollHeight")
        page.set_viewport_size({"width": 1400, "height": max(1200, height + 50)})
        expect(charts.nth(3)).to_be_in_viewport(timeout=30_000)
        page.screenshot(path=str(tmp_path / "history.png"), full_page=True)
        shutil.copy(tmp_path / "history.png", "/tmp/history.png")
        browser.close()
