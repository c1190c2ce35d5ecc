"""Real browser: the cancel dialog draws its explanation of what cancel means before (above) its
Send button, always. A person once saw the button first: the explanation was a code block, whose
code the browser loads on first use, while the button's was loaded already. The test makes that
load fail outright (the slowest it can be) and watches the dialog as it is drawn."""

from __future__ import annotations

from playwright.sync_api import Route, expect, sync_playwright

from console.access.auth import SANDBOX_USERS, write_users
from console.plans.plan import Plan, PlanEntry
from console.state.reader import ClusterReader
from console.storage.store import Store
from tests.e2e.browser import CHROMIUM_ARGS, sign_in
from tests.integration.helpers import (
    clear_throttles,
    first_wave_sent,
    in_flight,
    make_topic,
    reassign,
    set_broker_rates,
)
from tests.support import settings_for, wait_for

SLOW = 2_000  # bytes/s: the moves stay in flight for the whole test
WATCH = """
window.__sendSeen = null;
new MutationObserver(() => {
  if (window.__sendSeen) return;
  const dialog = document.querySelector('[role="dialog"]');
  const send = dialog && [...dialog.querySelectorAll("button")].find((b) => b.innerText.includes("Send the cancel"));
  if (!send) return;
  window.__sendSeen = {
    explained: dialog.innerText.includes("each partition goes back to its original replicas"),
    text: dialog.innerText.slice(0, 600),
  };
}).observe(document, { childList: true, subtree: true, characterData: true });
"""


def test_the_cancel_dialog_explains_before_its_send_button_is_drawn(sandbox, app_url, tmp_path, monkeypatch):
    monkeypatch.setenv("CONSOLE_DATA_DIR", str(tmp_path))
    write_users(tmp_path / "users.json", {n: (pw, list(r)) for n, (pw, r) in SANDBOX_USERS.items()})
    bs = sandbox.bootstrap_servers
    topic = "e2e-cancel-order"
    make_topic(bs, topic, 2, 1, 200, assignment=[[0], [1]])
    with ClusterReader(settings_for(sandbox)) as reader:
        run_id = first_wave_sent(
            Store(),
            reader.gateway(),
            reader.snapshot(),
            Plan.of([PlanEntry(topic, p, (2,)) for p in range(2)]),
            "o",
            SLOW,
        )

    def never(route: Route) -> None:
        route.abort()  # the code block's code: later than anything else, for good

    try:
        wait_for(lambda: len(in_flight(bs, topic)) == 2, timeout=30, what="the wave in flight")
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1440, "height": 1000})
            page.route("**/StreamlitSyntaxHighlighter*.js", never)
            page.add_init_script(WATCH)
            page.goto(f"{app_url}/runs?run={run_id}")
            expect(page.get_by_role("heading", name="Runs")).to_be_visible(timeout=60_000)
            sign_in(page)
            page.get_by_role("button", name="Cancel the run…").click()
            dialog = page.get_by_role("dialog")
            send = dialog.get_by_role("button", name="Send the cancel for 2 partitions")
            expect(send).to_be_visible(timeout=30_000)
            seen = page.evaluate("window.__sendSeen")
            assert seen is not None and seen["explained"], f"the Send button came first: {seen}"
            said = dialog.get_by_text("each partition goes back to its original replicas")
            expect(said).to_be_visible()
            above, button = said.bounding_box(), send.bounding_box()
            assert above is not None and button is not None and above["y"] < button["y"]
            send.click()  # the partitions go back: nothing is left in flight for the next test
            expect(dialog.get_by_text("Outcome:")).to_be_visible(timeout=60_000)
            browser.close()
        wait_for(lambda: not in_flight(bs, topic), timeout=60, what="the cancelled partitions left the list")
    finally:
        if in_flight(bs, topic):
            reassign(bs, {(topic, p): None for p in range(2)})
        set_broker_rates(bs, [0, 1, 2], 50_000_000)
        clear_throttles(bs, [0, 1, 2], [topic])
