"""Real browser at 1440 px: Overview's and Live's metric labels and values are not cut ("Offline,
nothing ele…" was, six metrics in a row; "Stalled (adding on a down br…" on Live)."""

from __future__ import annotations

from playwright.sync_api import expect, sync_playwright

from tests.e2e.browser import CHROMIUM_ARGS, script_run_done

CUT = """
() => [...document.querySelectorAll('[data-testid="stMetricLabel"], [data-testid="stMetricValue"]')]
  .flatMap((e) => [e, ...e.querySelectorAll("*")])
  .filter((e) => e.scrollWidth > e.clientWidth + 1 && getComputedStyle(e).overflow !== "visible")
  .map((e) => e.innerText)
"""


def test_overview_metrics_are_not_cut_at_1440_px(sandbox, app_url, tmp_path):
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1440, "height": 1000})
        page.goto(f"{app_url}/overview")
        expect(page.get_by_role("heading", name="Cluster overview")).to_be_visible(timeout=120_000)
        expect(page.get_by_text("Offline, nothing electable")).to_be_visible(timeout=60_000)
        script_run_done(page, 60_000)
        page.screenshot(path=str(tmp_path / "overview-1440.png"), full_page=True)
        assert page.evaluate(CUT) == []
        browser.close()


def test_live_metrics_are_not_cut_at_1440_px(sandbox, app_url, tmp_path):
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1440, "height": 1000})
        page.goto(app_url)
        expect(page.get_by_role("heading", name="Live reassignments")).to_be_visible(timeout=120_000)
        expect(page.get_by_text("Stalled, broker down")).to_be_visible(timeout=60_000)
        script_run_done(page, 60_000)
        page.screenshot(path=str(tmp_path / "live-1440.png"), full_page=True)
        assert page.evaluate(CUT) == []
        browser.close()
