"""Real browser: Review's impact panel on a plan of the demo's, read as a reviewer would: the
headline (bytes copied, across zones, leader changes), how to set prices, the disk chart beside the
zone pairs, the brokers with their copy, the topics touched; a screenshot of the panel is kept."""

from __future__ import annotations

from playwright.sync_api import expect, sync_playwright

from console.access.auth import Identity
from console.core.format import human_bytes
from console.core.model import BrokerId
from console.moves.impact_columns import impact
from console.plans.diff import diff
from console.plans.plan import Plan, PlanEntry
from console.services import plans as plan_service
from console.state.reader import ClusterReader
from console.storage.store import Store
from tests.e2e.browser import CHROMIUM_ARGS
from tests.support import settings_for


def test_review_shows_what_the_demo_plan_costs_and_whom_it_touches(demo_sandbox, app_url, tmp_path):
    store = Store(tmp_path / "console.db")  # the app's data dir (app_url points CONSOLE_DATA_DIR at tmp_path)
    with ClusterReader(settings_for(demo_sandbox)) as reader:
        state = reader.snapshot(info=True)
    brokers = {0, 1, 2}
    # every inventory partition (RF 2 on 3 brokers, one per rack) gets the broker it lacks as first replica
    plan = Plan.of(
        [
            PlanEntry(p.topic, p.partition, (BrokerId(min(brokers - set(p.replicas))), p.replicas[0]))
            for p in state.partitions
            if p.topic == "inventory"
        ]
    )
    plan_id = plan_service.save_plan(store, Identity.cli("ann"), state, "sandbox", "inventory across racks", plan)
    expected = impact(diff(state, plan, elect=None))
    assert expected.cross_zone_bytes == expected.bytes_to_copy > 0
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1400})
        page.goto(f"{app_url}/review?plan={plan_id}")
        expect(page.get_by_role("heading", name="Impact")).to_be_visible(timeout=60_000)
        headline = page.get_by_text("This plan copies")
        expect(headline).to_be_visible(timeout=30_000)
        said = headline.inner_text()
        copied = human_bytes(expected.bytes_to_copy)
        assert f"copies {copied}, {copied} across zones" in said, said
        assert f"{expected.leader_changes} leader change" in said, said
        expect(page.get_by_text("Set prices to see money too")).to_be_visible()
        expect(page.get_by_text("Disk per broker")).to_be_visible()
        expect(page.get_by_text("Copied between zones, once")).to_be_visible()
        expect(page.get_by_text("Topics touched")).to_be_visible()
        expect(page.get_by_text("KAFKA-20075")).to_be_visible()
        # the zone pairs as a reviewer reads them: from and to which rack, how much, crossing
        page.get_by_text("Copied between zones, once").scroll_into_view_if_needed()
        zones = page.get_by_test_id("stDataFrame").filter(has_text="rack-").first
        expect(zones).to_be_visible(timeout=30_000)
        expect(zones).to_contain_text("yes")
        # the brokers' copy and disk, and the topic touched (the grids draw once scrolled to)
        page.get_by_text("Topics touched").scroll_into_view_if_needed()
        expect(page.get_by_test_id("stDataFrame").filter(has_text="inventory").first).to_be_visible(timeout=30_000)
        page.get_by_role("heading", name="Impact").scroll_into_view_if_needed()
        page.screenshot(path=str(tmp_path / "impact.png"))
        browser.close()
