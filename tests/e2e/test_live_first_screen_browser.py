"""Met at 40,000 partitions with 2,000 in flight: at 1440 × 900 the Live page's first screen was
filled by names (the on-call line named the first 20 of hundreds, the other mover's notice its
partitions) and showed no progress. Now the first screen shows what is moving (the counts, what is
left to copy, the ETA and the slowest broker) above any list, and no sentence names hundreds of
partitions: the on-call line and the other mover's notice summarise them by topic and by broker."""

from __future__ import annotations

import os
import re

from playwright.sync_api import expect, sync_playwright

from console.sandbox.demo import set_broker_rates
from tests.e2e.browser import CHROMIUM_ARGS, script_run_done
from tests.integration.helpers import (
    clear_throttles,
    make_topic,
    reassign,
    throttle_topic_all,
    unthrottle_and_wait,
)

TOPIC = f"e2e-wide-{os.getpid()}"  # a topic of its own (the session's sandbox may outlive a run)
PARTS = 300
FIRST_SCREEN = {"width": 1440, "height": 900}
FIGURES = ("Reassigning partitions", "Left to copy", "ETA (last to finish)", "Slowest broker")


def test_the_first_screen_shows_what_is_moving_before_any_list_and_names_no_hundreds(sandbox, app_url, tmp_path):
    bs = sandbox.bootstrap_servers
    make_topic(bs, TOPIC, PARTS, 1, 20, assignment=[[0]] * PARTS)
    set_broker_rates(bs, [0, 1, 2], 2000)  # 300 × 20 KB at 2 KB/s: in flight for the whole test
    throttle_topic_all(bs, TOPIC)
    reassign(bs, {(TOPIC, p): [1] for p in range(PARTS)})  # another mover's: not this console's runs
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
            page = browser.new_page(viewport=FIRST_SCREEN)
            page.goto(app_url)
            main = page.get_by_test_id("stMain")
            expect(main.get_by_text(re.compile(rf"In flight now \({PARTS}\)"))).to_be_visible(timeout=60_000)
            expect(main.get_by_test_id("stMetric").filter(has_text="Slowest broker")).to_be_visible(timeout=60_000)
            expect(main.get_by_test_id("stDataFrame").first).to_be_attached(timeout=60_000)
            script_run_done(page)
            page.screenshot(path=str(tmp_path / "live-first-screen.png"))
            tops = {}
            for label in FIGURES:
                box = main.get_by_test_id("stMetric").filter(has_text=label).first.bounding_box()
                assert box is not None, label
                tops[label] = box["y"]
                assert box["y"] + box["height"] <= FIRST_SCREEN["height"], f"{label} below the first screen: {box}"
            lists = [b["y"] for t in main.get_by_test_id("stDataFrame").all() if (b := t.bounding_box()) is not None]
            assert lists and min(lists) > max(tops.values()), (tops, lists)
            # no sentence names hundreds of partitions: at most a handful of names in any text
            for text in main.locator("[data-testid=stMarkdownContainer]").all_inner_texts():
                named = re.findall(rf"{TOPIC}-\d+", text)
                assert len(named) <= 10, f"{len(named)} partitions named in one text: {text[:200]}"
            line = main.get_by_text(re.compile(r"In flight now \(\d+\)")).inner_text()
            assert f"1 topic ({TOPIC} {PARTS})" in line and f"adding on brokers 1 ({PARTS})" in line, line
            notice = main.get_by_test_id("stAlert").filter(has_text="Another mover is reassigning")
            expect(notice).to_have_count(1)
            said = notice.get_by_test_id("stMarkdownContainer").inner_text().strip()
            assert "\n" not in said and "Which partitions" in said, said
            browser.close()
    finally:
        unthrottle_and_wait(bs, [0, 1, 2])
        clear_throttles(bs, [0, 1, 2], [TOPIC])
