"""Real browser: a reverse proxy's identity headers (oauth2-proxy style) sign people in only when
the request carries the trusted proxy's secret; otherwise they are ignored, said and audited."""

from __future__ import annotations

import json

from playwright.sync_api import expect, sync_playwright

from console.storage.store import Store
from tests.e2e.browser import CHROMIUM_ARGS, script_run_done
from tests.e2e.identity import PROXY_SECRET

IDENTITY = {"X-Forwarded-User": "pat", "X-Forwarded-Email": "pat@example.com", "X-Forwarded-Groups": "operators,x"}


def test_identity_headers_count_only_from_the_trusted_proxy(proxy_app_url, tmp_path, monkeypatch):
    monkeypatch.setenv("CONSOLE_DATA_DIR", str(tmp_path))
    store = Store()
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        proxied = browser.new_context(
            viewport={"width": 1400, "height": 1000},
            extra_http_headers={**IDENTITY, "X-Console-Proxy-Secret": PROXY_SECRET},
        )
        page = proxied.new_page()
        page.goto(proxy_app_url)
        sidebar = page.get_by_test_id("stSidebar")
        expect(sidebar.get_by_text("Signed in as pat through the proxy (approver, operator, viewer)")).to_be_visible(
            timeout=60_000
        )
        script_run_done(page)
        page.screenshot(path=str(tmp_path / "proxy-signed-in.png"), full_page=True)

        forged = browser.new_context(
            viewport={"width": 1400, "height": 1000},
            extra_http_headers={**IDENTITY, "X-Console-Proxy-Secret": "guessed"},
        )
        page = forged.new_page()
        page.goto(proxy_app_url)
        expect(sidebar := page.get_by_test_id("stSidebar")).to_be_visible(timeout=60_000)
        expect(sidebar.get_by_text("Identity headers ignored: the proxy secret is missing or wrong")).to_be_visible(
            timeout=60_000
        )
        expect(sidebar.get_by_text("Signed in as pat")).to_have_count(0)
        script_run_done(page)
        page.screenshot(path=str(tmp_path / "proxy-forged.png"), full_page=True)
        browser.close()
    entries = [(a.user, a.action, a.outcome, json.loads(a.request)) for a in store.audit.entries(action="sign-in")]
    assert entries == [
        ("pat", "sign-in", "signed in", {"source": "proxy", "groups": ["operators", "x"]}),
        ("pat", "sign-in", "refused", {"source": "proxy", "why": "the proxy secret is missing or wrong"}),
    ]
