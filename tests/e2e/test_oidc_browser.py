"""Real browser, real identity provider: people sign in through Keycloak's own login page
(Streamlit's ``st.login``), and the console gives them the roles their groups have on the cluster
shown (``[access]``: operators operate ``sandbox``, are viewers on ``production``, the same
cluster under another name; viewers and people in no group are viewers)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect, sync_playwright

from console.access.auth import Identity
from console.access.groups import group_roles
from console.core.errors import NotPermitted
from console.core.model import cluster_key
from console.plans.plan import Plan, PlanEntry
from console.services import runs as run_service
from console.state.reader import ClusterReader
from console.storage.store import Store
from tests.e2e.browser import CHROMIUM_ARGS, script_run_done
from tests.e2e.identity import OIDC_ACCESS
from tests.integration.helpers import clear_throttles, make_topic
from tests.keycloak import PASSWORDS
from tests.support import settings_for, wait_for

# Keycloak starts once per test session in about a minute, but a loaded machine makes it several
pytestmark = pytest.mark.timeout(1800)


def provider_sign_in(page: Page, user: str) -> None:
    """From the console's sidebar through Keycloak's login page and back, signed in."""
    page.get_by_test_id("stSidebar").get_by_role("button", name="Sign in with the identity provider").click()
    page.wait_for_url(re.compile(r"/realms/console/protocol/openid-connect/auth"), timeout=60_000)
    page.locator("#username").fill(user)
    page.locator("#password").fill(PASSWORDS[user])
    page.locator("#kc-login").click()
    expect(page.get_by_test_id("stSidebar").get_by_text(f"Signed in as {user}@example.com")).to_be_visible(
        timeout=60_000
    )


def open_plan(page: Page, app_url: str, plan_id: int) -> None:
    page.goto(f"{app_url}/review?plan={plan_id}")
    expect(page.get_by_role("heading", name="Review a plan")).to_be_visible(timeout=60_000)
    expect(page.get_by_role("heading", name="Submit")).to_be_visible(timeout=60_000)
    script_run_done(page)


def claims_of(page: Page, secrets: Path) -> dict[str, object]:
    """What Keycloak said about the person signed in in ``page``: the claims Streamlit keeps in
    its signed identity cookie (read with the test's own cookie secret)."""
    import tomllib

    from streamlit.web.server.starlette.starlette_app_utils import decode_signed_value

    secret = tomllib.loads(secrets.read_text())["auth"]["cookie_secret"]
    cookie = next(c for c in page.context.cookies() if c["name"] == "_streamlit_user")
    raw = decode_signed_value(secret, "_streamlit_user", cookie["value"].encode("latin-1"))
    assert raw is not None
    return dict(json.loads(raw))


def identity_from(claims: dict[str, object], *cluster: str) -> Identity:
    """The identity the console gives these claims on the cluster known by ``cluster``."""
    import tomllib

    groups = group_roles(tomllib.loads(OIDC_ACCESS)["access"])
    return Identity(str(claims["email"]), source="oidc").on(groups.on(groups.groups_in(claims), *cluster), *cluster)


@pytest.fixture
def browser() -> Browser:
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture
def oidc_plan(sandbox, oidc_app_url, tmp_path, monkeypatch) -> tuple[int, str]:
    """A small saved plan on the sandbox (by someone else), in the app's store; its id and the
    cluster's key."""
    monkeypatch.setenv("CONSOLE_DATA_DIR", str(tmp_path))
    topic = f"e2e-oidc-{tmp_path.name}"  # one per test: the sandbox is the session's
    make_topic(sandbox.bootstrap_servers, topic, 2, 1, 20, assignment=[[0], [1]])
    with ClusterReader(settings_for(sandbox)) as reader:
        state = reader.snapshot()
        plan = Plan.of([PlanEntry(topic, 0, (2,)), PlanEntry(topic, 1, (2,))]).with_basis(state)
        key = cluster_key(state, "sandbox")
        plan_id = Store().plans.save("oidc move", key, plan, Plan.of([]), "ann", state.fingerprint())
    return plan_id, key


def test_an_operator_signs_in_through_the_provider_and_submits(sandbox, oidc_app_url, oidc_plan, browser, tmp_path):
    plan_id, key = oidc_plan
    store = Store()
    page = browser.new_page(viewport={"width": 1400, "height": 1300})
    try:
        page.goto(oidc_app_url)
        expect(page.get_by_role("heading", name="Live reassignments")).to_be_visible(timeout=60_000)
        page.get_by_role("button", name="Sign in with the identity provider").click()
        page.wait_for_url(re.compile(r"/realms/console/protocol/openid-connect/auth"), timeout=60_000)
        expect(page.locator("#kc-login")).to_be_visible(timeout=30_000)
        page.screenshot(path=str(tmp_path / "keycloak-login.png"))
        page.locator("#username").fill("alice")
        page.locator("#password").fill(PASSWORDS["alice"])
        page.locator("#kc-login").click()
        sidebar = page.get_by_test_id("stSidebar")
        expect(sidebar.get_by_text("Signed in as alice@example.com through the identity provider")).to_be_visible(
            timeout=60_000
        )
        expect(sidebar.get_by_text("(approver, operator, viewer)")).to_be_visible()

        # the same cluster configured as "production": alice is only a viewer there
        open_plan(page, oidc_app_url, plan_id)
        sidebar.get_by_label("Cluster").click()
        page.get_by_role("option", name="production").click()
        expect(
            sidebar.get_by_text("Signed in as alice@example.com through the identity provider (viewer)")
        ).to_be_visible(timeout=60_000)
        expect(page.get_by_text(re.compile(r"alice@example.com may not submit"))).to_be_visible(timeout=30_000)
        expect(page.get_by_role("button", name="Submit…")).to_have_count(0)
        page.screenshot(path=str(tmp_path / "oidc-production-viewer.png"), full_page=True)

        # on the sandbox she operates: she submits (a new page load: the first cluster, the sandbox)
        open_plan(page, oidc_app_url, plan_id)
        page.get_by_role("button", name="Submit…").click()
        dialog = page.get_by_role("dialog")
        expect(dialog.get_by_text(re.compile(r"^2 partitions in 1 wave\b")).first).to_be_visible(timeout=30_000)
        for box in dialog.get_by_role("checkbox").all():
            box.check()  # acknowledge the warnings
        dialog.get_by_label("Type the cluster's name").fill("sandbox")
        dialog.get_by_label("Type the cluster's name").press("Enter")
        dialog.get_by_role("button", name="Start the run").click()
        expect(dialog.get_by_text(re.compile(r"Run \d+ started\."))).to_be_visible(timeout=30_000)
        page.screenshot(path=str(tmp_path / "oidc-submitted.png"), full_page=True)
        dialog.get_by_role("button", name="Close").click()

        expect(page.get_by_text("Traceback")).to_have_count(0)
    finally:
        page.close()
        run = store.runs.list(key)
        if run:
            wait_for(lambda: store.runs.get(run[0].id).state in ("completed", "failed"), timeout=120, what="run over")
        clear_throttles(sandbox.bootstrap_servers, [0, 1, 2], [f"e2e-oidc-{tmp_path.name}"])
    runs = store.runs.list(key)
    assert [(r.author, r.state) for r in runs] == [("alice@example.com", "completed")]
    sign_ins = [a for a in store.audit.entries(action="sign-in") if a.user == "alice@example.com"]
    assert [json.loads(a.request)["source"] for a in sign_ins] == ["oidc"]  # once, through three page loads
    assert json.loads(sign_ins[0].request)["groups"] == ["operators"]


@pytest.mark.parametrize("user", ["victor", "nina"])
def test_viewers_and_people_in_no_group_see_every_write_disabled_and_are_refused(
    sandbox, oidc_app_url, oidc_plan, browser, tmp_path, user
):
    plan_id, key = oidc_plan
    store = Store()
    page = browser.new_page(viewport={"width": 1400, "height": 1300})
    page.goto(oidc_app_url)
    expect(page.get_by_role("heading", name="Live reassignments")).to_be_visible(timeout=60_000)
    provider_sign_in(page, user)
    sidebar = page.get_by_test_id("stSidebar")
    expect(
        sidebar.get_by_text(f"Signed in as {user}@example.com through the identity provider (viewer)")
    ).to_be_visible()
    script_run_done(page)
    # Live: cancel is disabled (the page refreshes every few seconds: give it time)
    expect(page.get_by_text(re.compile(rf"{user}@example.com may not cancel"))).to_be_visible(timeout=30_000)
    expect(page.get_by_role("button", name="Cancel…")).to_be_disabled(timeout=30_000)
    page.screenshot(path=str(tmp_path / f"{user}-live.png"), full_page=True)
    # Review: no submit, no approval
    open_plan(page, oidc_app_url, plan_id)
    expect(page.get_by_text(re.compile(rf"{user}@example.com may not submit"))).to_be_visible(timeout=30_000)
    expect(page.get_by_role("button", name="Submit…")).to_have_count(0)
    expect(page.get_by_role("button", name="Approve this plan")).to_have_count(0)
    page.screenshot(path=str(tmp_path / f"{user}-review.png"), full_page=True)
    # Drafts: saving is disabled
    page.get_by_role("link", name="Drafts").click()
    expect(page.get_by_role("heading", name="Drafts")).to_be_visible(timeout=30_000)
    script_run_done(page)
    expect(page.get_by_text("Traceback")).to_have_count(0)

    # the services refuse the identity the provider's claims give, on the sandbox's names
    claims = claims_of(page, tmp_path / "secrets.toml")
    assert claims.get("groups", []) == (["viewers"] if user == "victor" else [])  # no groups: no claim
    who = identity_from(claims, "sandbox", key)
    assert who.roles == frozenset({"viewer"})
    with ClusterReader(settings_for(sandbox)) as reader:
        with pytest.raises(NotPermitted):
            run_service.approve(store, who, key, plan_id)
        plan = store.plans.load(plan_id).plan
        with pytest.raises(NotPermitted):
            run_service.start_run(
                store, reader.gateway(), reader.snapshot(), run_service.RunRequest(who, plan, "as a viewer"), users=None
            )
    refused = [a for a in store.audit.entries() if a.user == f"{user}@example.com" and a.outcome == "refused"]
    assert sorted(a.action for a in refused) == ["approve", "submit"]
    assert store.runs.list(key) == []
    page.close()
