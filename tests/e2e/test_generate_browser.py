"""Real browser: the Drafts page's "Generate a plan" section. An impossible goal says why; a possible
one shows its report (metrics, headline, chart), and "Open in Review" saves it with its report."""

from __future__ import annotations

import re
import shutil

from playwright.sync_api import expect, sync_playwright

from console.access.auth import SANDBOX_USERS, write_users
from tests.e2e.browser import CHROMIUM_ARGS, sign_in


def test_generate_a_plan_then_open_it_in_review(demo_sandbox, app_url, tmp_path):
    # opening a generated plan in Review saves it: that needs the operator or approver role
    # (the app's data dir is tmp_path, see the app_url fixture)
    write_users(tmp_path / "users.json", {n: (pw, list(r)) for n, (pw, r) in SANDBOX_USERS.items()})
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1200})
        page.goto(f"{app_url}/drafts")
        expect(page.get_by_role("heading", name="Drafts")).to_be_visible(timeout=60_000)
        sign_in(page)

        # the section, open while there is no draft (the "Start a new draft" one has a "Topics" picker too)
        gen = page.get_by_test_id("stExpander").filter(has_text="Generate a plan")
        expect(gen.get_by_role("button", name="Generate")).to_be_visible(timeout=30_000)

        # draining one of three brokers cannot keep replication factor 3: the page says why
        # ("Decommission" is the default goal: clicking it again would unselect it)
        expect(gen.get_by_label("Brokers to drain")).to_be_visible()
        gen.get_by_label("Brokers to drain").click()
        page.get_by_role("option", name=re.compile(r"^2 · ")).click()
        page.keyboard.press("Escape")
        gen.get_by_role("button", name="Generate").click()
        expect(gen.get_by_text(re.compile(r"fewer than the 3 replicas")).first).to_be_visible(timeout=60_000)
        # what to do stays in view: the reason is not folded away inside the status box
        expect(gen.get_by_text(re.compile(r"Drain fewer brokers, add brokers first")).first).to_be_visible()
        page.screenshot(path=str(tmp_path / "generate-impossible.png"), full_page=True)
        expect(page.get_by_text("Replicas moved")).to_have_count(0)  # no plan, no report

        # the replication factor of "orders", down to 2
        gen.get_by_role("radio", name="Replication factor").click()  # a segmented control
        topics = gen.get_by_label("Topics to change", exact=True)
        expect(topics).to_be_visible(timeout=30_000)
        topics.click()
        page.keyboard.type("orders")  # earlier tests may leave many topics: filter the list first
        page.get_by_role("option", name="orders", exact=True).click()
        page.keyboard.press("Escape")
        rf = gen.get_by_label("New replication factor")
        rf.fill("2")
        rf.press("Tab")  # a number input sends its value when it loses focus
        gen.get_by_role("button", name="Generate").click()
        expect(gen.get_by_test_id("stMetricLabel").filter(has_text="Replicas moved")).to_be_visible(timeout=60_000)
        expect(gen.get_by_text(re.compile(r"replication factor 2 for orders: 12 partitions change"))).to_be_visible()
        expect(gen.get_by_test_id("stMetricLabel").filter(has_text="Moved / least possible")).to_be_visible()
        expect(gen.get_by_test_id("stVegaLiteChart").first).to_be_visible(timeout=30_000)
        expect(gen.get_by_test_id("stVegaLiteChart").first.locator("canvas, svg").first).to_be_attached(timeout=30_000)
        expect(page.get_by_text("Traceback")).to_have_count(0)
        # Streamlit scrolls inside its main section, so a full-page screenshot stops at the window:
        # make the window as tall as the page first
        height = page.get_by_test_id("stMain").evaluate("m => m.scrollHeight")
        page.set_viewport_size({"width": 1400, "height": max(1200, height + 50)})
        expect(gen.get_by_test_id("stVegaLiteChart").first).to_be_in_viewport(timeout=30_000)
        page.screenshot(path=str(tmp_path / "generate.png"), full_page=True)
        shutil.copy(tmp_path / "generate.png", "/tmp/generate.png")

        # saved with its report, and shown on the Review page
        open_review = gen.get_by_role("button", name="Open in Review")
        expect(open_review).to_be_enabled()
        open_review.click()
        expect(page.get_by_role("heading", name="Review a plan")).to_be_visible(timeout=60_000)
        expect(page.get_by_role("heading", name="How it was generated")).to_be_visible(timeout=30_000)
        expect(page.get_by_text(re.compile(r"replication factor 2 for orders: 12 partitions change"))).to_be_visible()
        expect(page.get_by_text("Traceback")).to_have_count(0)
        page.screenshot(path=str(tmp_path / "generated-review.png"), full_page=True)
        browser.close()
