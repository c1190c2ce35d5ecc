"""Real browser at 1440 × 1000: the tables' long text is shown in full and no table scrolls sideways.
A data grid (``st.dataframe``) draws its cells on a canvas, cut with "…" to the column's width: Overview's
throttle values and the capabilities' "why", Review's finding hints and messages and the audit log's
requests were cut so, and Review's findings grid scrolled sideways."""

from __future__ import annotations

from confluent_kafka.admin import AlterConfigOpType, ConfigEntry, ConfigResource, ResourceType
from playwright.sync_api import Page, expect, sync_playwright

from console.access.auth import SANDBOX_USERS, Identity, write_users
from console.core.limits import LEADER_LIST
from console.core.model import Severity, cluster_key
from console.plans.diff import diff
from console.plans.plan import Plan, PlanEntry
from console.plans.validate import validate
from console.present.cluster import capability_rows
from console.present.throttles import setting_text
from console.services import runs as run_service
from console.state.reader import ClusterReader
from console.storage.store import Store
from tests.e2e.browser import (
    CHROMIUM_ARGS,
    full_page_screenshot,
    script_run_done,
    shown_in_full,
    sign_in,
    wide_tables,
)
from tests.integration.helpers import admin, clear_throttles, first_wave_sent, make_topic
from tests.support import settings_for, wait_for

WIDTH, HEIGHT = 1440, 1000


def _open(pw) -> Page:
    browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
    return browser.new_page(viewport={"width": WIDTH, "height": HEIGHT})


def _not_cut(page: Page, texts: list[str]) -> None:
    """Every text of ``texts`` shown in full, and no table on the page scrolls sideways."""
    assert wide_tables(page) == [], "a table scrolls sideways at 1440 px"
    cut = [t for t in texts if not shown_in_full(page, t)]
    assert cut == [], f"not shown in full at 1440 px: {cut}"


def test_overview_shows_throttle_values_and_why_a_capability_is_on_in_full(sandbox, app_url, tmp_path):
    bs = sandbox.bootstrap_servers
    topic = "e2e-listed-throttle"
    make_topic(bs, topic, 40, 3, 1)
    listed = ",".join(f"{p}:{b}" for p in range(40) for b in range(3))  # every replica, as kafka-configs sets it
    res = ConfigResource(
        ResourceType.TOPIC,
        topic,
        incremental_configs=[ConfigEntry(LEADER_LIST, listed, incremental_operation=AlterConfigOpType.SET)],
    )
    client = admin(bs)  # kept until the futures resolve
    for f in client.incremental_alter_configs([res]).values():
        f.result()
    with ClusterReader(settings_for(sandbox)) as reader:
        info = reader.snapshot(info=True).info
    whys = [str(r["why"]) for r in capability_rows(info)]
    try:
        with sync_playwright() as pw:
            page = _open(pw)
            page.goto(f"{app_url}/overview")
            expect(page.get_by_role("heading", name="Replication throttles set now")).to_be_visible(timeout=120_000)
            expect(page.get_by_text(f"topic {topic}").first).to_be_attached(timeout=60_000)
            script_run_done(page, 60_000)
            full_page_screenshot(page, tmp_path / "overview-1440.png")
            _not_cut(page, [*whys, setting_text(LEADER_LIST, listed)])
            page.context.browser.close()
    finally:
        clear_throttles(bs, [], [topic])


def test_review_shows_every_finding_hint_in_full(sandbox, app_url, tmp_path, monkeypatch):
    monkeypatch.setenv("CONSOLE_DATA_DIR", str(tmp_path))  # the app's data dir (see the app_url fixture)
    bs = sandbox.bootstrap_servers
    topic = "e2e-hinted-plan"
    make_topic(bs, topic, 3, 1, 1, assignment=[[0], [1], [2]])
    plan = Plan.of(
        [
            PlanEntry(topic, 0, (7,)),  # a broker the cluster does not know
            PlanEntry(topic, 1, (2,)),  # a move
            PlanEntry(topic, 2, (0, 1)),  # one more replica
            PlanEntry(topic, 9, (0,)),  # no such partition
            PlanEntry("e2e-no-such-topic", 0, (0,)),
        ]
    )
    with ClusterReader(settings_for(sandbox)) as reader:
        state = reader.snapshot(info=True)
    findings = validate(state, plan, diff(state, plan, elect=None))
    hints = sorted({f.hint for f in findings if f.hint}, key=len, reverse=True)
    assert len(hints) >= 3
    messages = [f.message for f in findings if f.severity is not Severity.INFO]  # a few: each in full too
    plan_id = Store().plans.save(
        "hinted", cluster_key(state, "sandbox"), plan.with_basis(state), Plan.of([]), "ann", state.fingerprint()
    )
    with sync_playwright() as pw:
        page = _open(pw)
        page.goto(f"{app_url}/review?plan={plan_id}")
        expect(page.get_by_role("heading", name="Findings")).to_be_visible(timeout=120_000)
        expect(page.get_by_role("button", name="Rollback JSON")).to_be_visible(timeout=60_000)  # drawn last
        script_run_done(page, 60_000)
        full_page_screenshot(page, tmp_path / "review-1440.png")
        _not_cut(page, [*hints, *messages])
        page.context.browser.close()


def test_audit_log_shows_each_request_in_full_and_the_runs_state_as_it_is(sandbox, app_url, tmp_path, monkeypatch):
    """Also: the Runs page opened while the run copies says it completed when it does, without a
    reload (its runs table and picker said "running" until the page was loaded again)."""
    monkeypatch.setenv("CONSOLE_DATA_DIR", str(tmp_path))
    write_users(tmp_path / "users.json", {n: (pw, list(r)) for n, (pw, r) in SANDBOX_USERS.items()})
    bs = sandbox.bootstrap_servers
    topic = "e2e-audited-requests"
    # 600 KB per partition: a throttle lets a broker's fetch of 16 KB per partition through whenever
    # the last quota window's average fell below it, about 3 KB/s whatever the rate under that, so
    # 1.2 MB per broker stays in flight for minutes (100 KB finished in about a minute: CI met a
    # page opened under load after the run had completed)
    make_topic(bs, topic, 6, 1, 600, assignment=[[0], [1], [2], [0], [1], [2]])
    store = Store()
    with ClusterReader(settings_for(sandbox)) as reader:
        plan = Plan.of([PlanEntry(topic, p, ((p + 1) % 3,)) for p in range(6)])
        run_id = first_wave_sent(
            store, reader.gateway(), reader.snapshot(), plan, "audited", 500
        )  # running while the page loads
    try:
        with sync_playwright() as pw:
            page = _open(pw)
            page.goto(f"{app_url}/runs?run={run_id}")
            sign_in(page)  # an operator sees the run's controls
            runs = page.get_by_test_id("stDataFrame").first  # its cells' copy for screen readers, in the DOM
            expect(runs.get_by_text("running", exact=True)).to_be_attached(timeout=120_000)
            expect(page.get_by_role("button", name="Pause before the next wave")).to_be_visible()
            # the copies finish: sped up through the console (a rate raised by hand with kafka-configs is
            # set back by the run's guardrail, and under load the copies then stayed at 500 B/s)
            with ClusterReader(settings_for(sandbox)) as reader:
                run_service.change_throttle(store, reader.gateway(), Identity.cli("ann"), run_id, 50_000_000)
            wait_for(lambda: store.runs.get(run_id).state == "completed", timeout=90, what="the run completed")
            # no reload: the runs table and the controls follow the run
            expect(runs.get_by_text("completed", exact=True)).to_be_attached(timeout=30_000)
            expect(page.get_by_role("button", name="Pause before the next wave")).to_have_count(0)
            script_run_done(page, 60_000)
            requests = sorted({a.request for a in store.audit.entries()}, key=len, reverse=True)
            assert '"partitions"' in requests[0] or len(requests[0]) > 100, requests[0]  # a long one
            assert wide_tables(page) == [], "a table scrolls sideways at 1440 px"
            page.get_by_text("Requests and responses in full").click()
            full_page_screenshot(page, tmp_path / "runs-1440.png")
            _not_cut(page, requests[:3])
            page.context.browser.close()
    finally:
        clear_throttles(bs, [0, 1, 2], [topic])
