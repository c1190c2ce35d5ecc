"""Real browser at 1440 px: charts colour racks and brokers without an alarm's red (Overview's disk
chart drew rack-c bright red, History's broker load broker 3), and History explains its copy
rates' columns below the grid: a grid header's tooltip stayed where it was drawn when the page
scrolled, over the headers and text that scrolled under it."""

from __future__ import annotations

from playwright.sync_api import Page, expect, sync_playwright

from console.pipeline.jobs import history_job
from console.pipeline.spark import SparkSettings
from tests.e2e.browser import (
    CHROMIUM_ARGS,
    SCROLL_TOP,
    alarm_red_pixels,
    grid_tooltips,
    script_run_done,
    scrolled_past,
    shown_in_full,
    still_picture,
)
from tests.integration.helpers import make_topic
from tests.support import settled, wait_for
from tests.unit.timeline import timeline, write_states


def test_overview_colours_the_racks_without_red(sandbox, app_url, tmp_path):
    make_topic(sandbox.bootstrap_servers, "e2e-racks", 3, 1, 300, assignment=[[0], [1], [2]])  # a bar per rack
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1440, "height": 1000})
        page.goto(f"{app_url}/overview")
        expect(page.get_by_role("heading", name="Brokers")).to_be_visible(timeout=60_000)
        chart = page.get_by_test_id("stVegaLiteChart").first
        expect(chart.locator("canvas, svg").first).to_be_attached(timeout=30_000)
        chart.scroll_into_view_if_needed()
        script_run_done(page)
        shot = still_picture(chart, "the disk chart", tmp_path / "disk.png")
        assert alarm_red_pixels(shot) < 20, "a rack is drawn in an alarm's red"
        browser.close()


def test_history_explains_its_columns_without_a_stuck_tooltip_and_colours_brokers_without_red(app_url, tmp_path):
    history = tmp_path / "history"  # the app's data dir is tmp_path (the app_url fixture)
    write_states(history / "snapshots", timeline())
    history_job(str(history / "snapshots"), str(history / "tables"), SparkSettings(master="local[2]"), stuck_after_s=30)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1440, "height": 900})
        page.goto(f"{app_url}/history")
        expect(page.get_by_text("The history job last ran")).to_be_visible(timeout=60_000)
        page.get_by_role("radio", name="All").click()  # the scripted day is in the past
        charts = page.get_by_test_id("stVegaLiteChart")
        expect(charts).to_have_count(4, timeout=30_000)
        script_run_done(page)
        # the copy rates grid: along its header row to its last column, then the page scrolls
        rates = page.get_by_test_id("stDataFrame").nth(1)
        rates.scroll_into_view_if_needed()
        box = settled(rates.bounding_box, "the copy rates grid's place on the page")
        assert box is not None
        page.mouse.move(box["x"] + box["width"] / 20, box["y"] + 17)
        page.mouse.move(box["x"] + box["width"] - 40, box["y"] + 17, steps=20)  # along the headers
        # fixed wait: the pointer rests on the last header as a person's would; a header's help shows
        # only after a hover delay, and nothing on the page says that none will come
        page.wait_for_timeout(1500)
        top = page.evaluate(SCROLL_TOP)
        page.mouse.wheel(0, 300)
        scrolled_past(page, top)
        page.screenshot(path=str(tmp_path / "scrolled.png"))
        stuck = _tooltips_left(page)
        explained = [
            shown_in_full(page, "broker throughput: what the broker took in per second while the move copied"),
            shown_in_full(page, "of the throttle: that throughput over the throttle in force"),
        ]
        # broker load: four brokers, none in red
        load = charts.nth(2)
        load.scroll_into_view_if_needed()
        red = alarm_red_pixels(still_picture(load, "the broker load chart", tmp_path / "load.png"))
        assert (stuck, explained, red < 20) == ([], [True, True], True), (stuck, explained, red)
        expect(page.get_by_text("Traceback")).to_have_count(0)
        browser.close()


def _tooltips_left(page: Page, within_s: float = 10) -> list[str]:
    """The grid tooltips still shown ``within_s`` seconds after a scroll (one going away as it
    should is waited for: a stuck one stays)."""
    try:
        wait_for(lambda: not grid_tooltips(page), timeout=within_s, every=0.2, what="no grid tooltip left")
    except AssertionError:
        return grid_tooltips(page)
    return []
