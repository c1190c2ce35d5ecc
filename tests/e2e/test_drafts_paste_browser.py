"""Real browser: a plan pasted into Drafts' "…or paste it" box loads on the first click of Load. The
button was disabled until the box lost focus, so the first click only took the focus away (the
text went in) and a second click loaded it."""

from __future__ import annotations

import json

from playwright.sync_api import expect, sync_playwright

from tests.e2e.browser import CHROMIUM_ARGS
from tests.integration.helpers import make_topic


def test_a_pasted_plan_loads_on_one_click(sandbox, app_url, tmp_path):
    bs = sandbox.bootstrap_servers
    topic = "e2e-paste"
    make_topic(bs, topic, 2, 1, 10, assignment=[[0], [1]])
    plan = {"version": 1, "partitions": [{"topic": topic, "partition": p, "replicas": [2]} for p in range(2)]}
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1440, "height": 1000})
        page.goto(f"{app_url}/drafts")
        expect(page.get_by_role("heading", name="Drafts")).to_be_visible(timeout=60_000)
        page.get_by_text("JSON", exact=True).click()  # "Start from"
        box = page.get_by_label("…or paste it")
        expect(box).to_be_visible(timeout=30_000)
        # the uploader says the console's plan limit (256 MiB), not Streamlit's default (it said 200MB)
        expect(page.get_by_text("256MB per file")).to_be_visible(timeout=30_000)
        box.click()
        page.keyboard.insert_text(json.dumps(plan))  # as a paste: the text is in, the box still has the focus
        # one click, as a person makes it (no waiting for the button to look enabled first)
        page.get_by_role("button", name="Load", exact=True).click(force=True)
        expect(page.get_by_text("Partitions in the draft")).to_be_visible(timeout=30_000)
        expect(page.get_by_text(f"{topic}", exact=False).first).to_be_attached()
        expect(page.get_by_text("Traceback")).to_have_count(0)
        browser.close()
