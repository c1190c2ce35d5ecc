"""Real browser: a stale saved plan brought up to date from its Review page, and the link to the new version."""

from __future__ import annotations

import re

from playwright.sync_api import expect, sync_playwright

from console.access.auth import Identity
from console.core.model import BrokerId
from console.plans.plan import Plan, PlanEntry
from console.services import plans as plan_service
from console.state.reader import ClusterReader
from console.storage.store import Store
from tests.e2e.browser import CHROMIUM_ARGS
from tests.integration.helpers import make_topic, settle, submit
from tests.support import settings_for

TOPIC = "e2e-rebase"


def test_bring_a_stale_plan_up_to_date(sandbox, app_url, tmp_path):
    bs = sandbox.bootstrap_servers
    make_topic(bs, TOPIC, 2, 2, 2, assignment=[[0, 1], [1, 2]])
    store = Store(tmp_path / "console.db")  # the app's data dir (app_url points CONSOLE_DATA_DIR at tmp_path)
    with ClusterReader(settings_for(sandbox)) as reader:
        drafted = reader.snapshot()
        plan = Plan.of(
            [PlanEntry(TOPIC, 0, (BrokerId(1), BrokerId(2))), PlanEntry(TOPIC, 1, (BrokerId(2), BrokerId(0)))]
        ).with_basis(drafted)
        old = plan_service.save_plan(store, Identity.cli("ann"), drafted, "sandbox", "e2e spread", plan)
        assert all(e is None for e in submit(bs, Plan.of([PlanEntry(TOPIC, 0, (BrokerId(0), BrokerId(2)))])).values())
        settle(reader)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1200})
        page.goto(f"{app_url}/review?plan={old}")
        expect(page.get_by_role("heading", name="Bring up to date")).to_be_visible(timeout=30_000)
        expect(page.get_by_text("1 moved, 1 unchanged")).to_be_visible()
        page.get_by_role("button", name="Save as a new plan, up to date").click()
        link = page.get_by_role("link", name=re.compile(r"Review plan #\d+"))
        expect(link).to_be_visible(timeout=30_000)
        new = int(re.search(r"#(\d+)", link.inner_text()).group(1))
        page.screenshot(path=str(tmp_path / "stale.png"), full_page=True)
        link.click()
        expect(page.get_by_role("combobox", name="Plan")).to_have_value(
            re.compile(rf"^#{new} e2e spread \(up to date, v2\)"), timeout=30_000
        )
        expect(page.get_by_text(f"Rebased from plan #{old}")).to_be_visible(timeout=30_000)
        expect(page.get_by_role("heading", name="Bring up to date")).to_have_count(0)
        page.screenshot(path=str(tmp_path / "rebased.png"), full_page=True)
        browser.close()
    assert Store(tmp_path / "console.db").plans.load(new).summary.parent_id == old
