"""Real browser: Review reads the plan from the box used last. A plan pasted while a file stayed in
the uploader was ignored without a word; the paste box showed a character counter of 268,435,456;
a pasted plan that cannot be used was told to "Fix the file"."""

from __future__ import annotations

import json

from playwright.sync_api import expect, sync_playwright

from tests.e2e.browser import CHROMIUM_ARGS, script_run_done
from tests.integration.helpers import make_topic


def test_review_reads_the_box_used_last_and_speaks_of_pasted_text(sandbox, app_url, tmp_path):
    bs = sandbox.bootstrap_servers
    filed, pasted = "e2e-box-file", "e2e-box-paste"
    make_topic(bs, filed, 1, 1, 1, assignment=[[0]])
    make_topic(bs, pasted, 2, 1, 1, assignment=[[0], [0]])
    upload = tmp_path / "filed.json"
    upload.write_text(json.dumps({"version": 1, "partitions": [{"topic": filed, "partition": 0, "replicas": [1]}]}))
    paste = {"version": 1, "partitions": [{"topic": pasted, "partition": p, "replicas": [2]} for p in (0, 1)]}
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1440, "height": 1200})
        page.goto(f"{app_url}/review")
        expect(page.get_by_role("heading", name="Review a plan")).to_be_visible(timeout=60_000)
        box = page.get_by_label("…or paste it")
        expect(box).to_be_visible(timeout=30_000)
        page.locator("input[type=file]").set_input_files(str(upload))
        expect(page.get_by_text("Checked against the cluster as it was at")).to_be_visible(timeout=30_000)
        partitions = page.get_by_test_id("stMetric").filter(has_text="Partitions").first
        expect(partitions).to_contain_text("1")  # the file's one partition
        box.click()
        page.keyboard.insert_text(json.dumps(paste))
        box.press("Control+Enter")  # the text goes in, as when the box loses the focus
        expect(page.get_by_text("Reading the pasted text, the box used last")).to_be_visible(timeout=30_000)
        script_run_done(page)
        expect(partitions).to_contain_text("2")  # the pasted plan's two
        assert "268435456" not in page.get_by_test_id("stTextArea").inner_text()  # no counter under the box
        box.fill(json.dumps({"version": 1}))  # no partitions: the hint every plan that cannot be used gets
        box.press("Control+Enter")
        expect(page.get_by_text("Fix the text and paste it again")).to_be_visible(timeout=30_000)
        expect(page.get_by_text("Fix the file")).to_have_count(0)
        page.screenshot(path=str(tmp_path / "review-boxes.png"), full_page=True)
        expect(page.get_by_text("Traceback")).to_have_count(0)
        browser.close()
