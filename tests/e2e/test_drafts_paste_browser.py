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


def test_a_loaded_plan_starts_a_new_draft_and_never_overwrites_the_saved_one(sandbox, app_url, tmp_path):
    """A draft saved as plan 1, then other JSON loaded: the page said "Saved as plan 1." still, the
    Name box kept plan 1's name, and the next Save replaced plan 1's content with the new draft."""
    from console.access.auth import SANDBOX_USERS, write_users
    from console.storage.store import Store
    from tests.e2e.browser import script_run_done, sign_in

    write_users(tmp_path / "users.json", {"operator": (SANDBOX_USERS["operator"][0], ["operator"])})
    bs = sandbox.bootstrap_servers
    kept, other = "e2e-keep", "e2e-other"
    make_topic(bs, kept, 6, 1, 1, assignment=[[p % 3] for p in range(6)])
    make_topic(bs, other, 1, 1, 1, assignment=[[0]])
    plan = {"version": 1, "partitions": [{"topic": other, "partition": 0, "replicas": [0, 1, 2]}]}
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1440, "height": 1200})
        page.goto(f"{app_url}/drafts")
        expect(page.get_by_role("heading", name="Drafts")).to_be_visible(timeout=60_000)
        sign_in(page, "operator")
        # a draft of the 6 partitions of one topic, saved as plan 1
        page.get_by_label("Topics", exact=True).first.click()
        page.keyboard.type(kept)  # earlier tests leave other topics: filter the list first
        page.get_by_role("option", name=kept, exact=True).click()
        page.keyboard.press("Escape")
        page.get_by_role("button", name="Start draft").click()
        expect(page.get_by_text("Partitions in the draft")).to_be_visible(timeout=30_000)
        page.get_by_label("Name").fill("keep 6 partitions")
        page.get_by_role("button", name="Save draft").click()
        expect(page.get_by_text("Saved as plan 1.")).to_be_visible(timeout=30_000)
        # other JSON loaded: a new draft, tied to no saved plan
        page.get_by_text("Start a new draft").click()  # folded once there is a draft
        page.get_by_text("JSON", exact=True).click()  # "Start from"
        box = page.get_by_label("…or paste it")
        expect(box).to_be_visible(timeout=30_000)
        box.click()
        page.keyboard.insert_text(json.dumps(plan))
        page.get_by_role("button", name="Load", exact=True).click(force=True)
        expect(page.get_by_text("Partitions in the draft")).to_be_visible(timeout=30_000)
        script_run_done(page)
        expect(page.get_by_text("Saved as plan")).to_have_count(0)
        expect(page.get_by_label("Name")).not_to_have_value("keep 6 partitions")
        # plan 1's name given again: refused, not a silent overwrite
        page.get_by_label("Name").fill("keep 6 partitions")
        page.get_by_role("button", name="Save draft").click()
        expect(page.get_by_text("Plan 1 is named 'keep 6 partitions' already")).to_be_visible(timeout=30_000)
        expect(page.get_by_text("Saved as plan")).to_have_count(0)
        page.get_by_label("Name").fill("other onto 0,1,2")
        page.get_by_role("button", name="Save draft").click()
        expect(page.get_by_text("Saved as plan 2.")).to_be_visible(timeout=30_000)
        expect(page.get_by_text("Traceback")).to_have_count(0)
        browser.close()
    store = Store(tmp_path / "console.db")
    first, second = store.plans.load(1), store.plans.load(2)
    assert first is not None and second is not None
    assert first.summary.name == "keep 6 partitions"
    assert first.plan.topics == (kept,) and len(first.plan) == 6
    assert second.plan.topics == (other,) and len(second.plan) == 1
