"""Real browser: a cancel click is never lost, even when the set in flight changes while the dialog
is open (one partition cancelled elsewhere meanwhile); every partition gets a visible outcome.
Also the on-call figure: from a fresh load of the Live page to the cancel accepted."""

from __future__ import annotations

import json
import re
import time
from datetime import datetime

from playwright.sync_api import Page, expect, sync_playwright

from components.widgets import SHARED_SNAPSHOT_AGE_S
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
    throttle_topic_all,
)
from tests.support import settings_for, wait_for

SLOW = 2_000  # bytes/s: moves stay in flight for the whole test


def _cancel_elsewhere(bs: str, topic: str, partition: int) -> None:
    """What another operator (or a script) does meanwhile: AlterPartitionReassignments with no
    target for one partition (not the official tool's --cancel, which also clears throttles)."""
    reassign(bs, {(topic, partition): None})
    wait_for(lambda: (topic, partition) not in in_flight(bs, topic), timeout=60, what="cancelled elsewhere")


def _in_flight(bs: str, topic: str) -> set[int]:
    return {p for _, p in in_flight(bs, topic)}


def refreshed_after(page: Page, moment: float) -> None:
    """Wait until the Live panel shows a snapshot taken after ``moment`` (its caption's time, to the
    second, is a later second)."""
    caption = page.get_by_text(re.compile(r"last refreshed \d\d:\d\d:\d\d")).first
    after = datetime.fromtimestamp(moment)

    def shown_later() -> bool:
        found = re.search(r"last refreshed (\d\d):(\d\d):(\d\d)", caption.inner_text())
        if found is None:
            return False
        h, m, s = (int(x) for x in found.groups())
        ahead = (h * 3600 + m * 60 + s) - (after.hour * 3600 + after.minute * 60 + after.second)
        return 0 < ahead % 86_400 < 3600  # across midnight too

    wait_for(shown_later, timeout=30, every=0.25, what="the Live panel refreshed")


def test_a_cancel_click_is_never_lost_when_the_set_changes_under_the_dialog(
    sandbox,
    app_url,
    tmp_path,
    monkeypatch,
):
    monkeypatch.setenv("CONSOLE_DATA_DIR", str(tmp_path))  # the app's data dir (see the app_url fixture)
    write_users(tmp_path / "users.json", {n: (pw, list(r)) for n, (pw, r) in SANDBOX_USERS.items()})
    bs = sandbox.bootstrap_servers
    topic = "e2e-lost-click"
    make_topic(bs, topic, 4, 1, 200, assignment=[[0], [0], [1], [1]])
    set_broker_rates(bs, [0, 1, 2], SLOW)
    throttle_topic_all(bs, topic)
    reassign(bs, {(topic, p): [2] for p in range(4)})
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1400, "height": 1300})
            page.goto(app_url)
            expect(page.get_by_role("heading", name="Live reassignments")).to_be_visible(timeout=60_000)
            sign_in(page)
            # "when will it finish": the totals and, per partition, rate, bytes left, ETA, throttles
            expect(page.get_by_text("ETA (last to finish)")).to_be_visible(timeout=30_000)
            expect(page.get_by_text("Copy rate (observed)")).to_be_visible()
            expect(page.get_by_text(f"{topic}-1", exact=True).first).to_be_attached(timeout=30_000)
            page.get_by_text("A topic").click()
            page.get_by_label("Topic", exact=True).click()
            page.keyboard.type(topic)
            page.get_by_role("option", name=topic, exact=True).click()
            page.get_by_text("Include reassignments this console did not start").click()
            include = page.get_by_role("checkbox", name="Include reassignments this console did not start")
            expect(include).to_be_checked()
            page.get_by_role("button", name="Cancel…").click()
            dialog = page.get_by_role("dialog")
            send = dialog.get_by_role("button", name="Send the cancel for 4 partitions")
            expect(send).to_be_visible(timeout=30_000)

            # while the dialog is open, one partition is cancelled elsewhere and the page refreshes
            _cancel_elsewhere(bs, topic, 0)
            refreshed_after(
                page, time.time()
            )  # the Live panel refreshes every 5 s: the picture under the dialog changed
            expect(send).to_be_visible()  # the dialog still shows what the operator saw
            send.click()
            expect(dialog.get_by_text("Outcome:")).to_be_visible(timeout=60_000)
            expect(dialog.get_by_text(f"{topic}-0", exact=True).first).to_be_attached()
            expect(page.get_by_text("Traceback")).to_have_count(0)
            page.screenshot(path=str(tmp_path / "cancel-outcome.png"), full_page=True)
            dialog.get_by_role("button", name="Close").click()  # closing the dialog leaves the outcome on the page
            expect(page.get_by_text("Cancel by operator")).to_be_visible(timeout=30_000)
            browser.close()
        wait_for(lambda: not _in_flight(bs, topic), timeout=60, what="every remaining partition left the list")
        audit = Store().audit.entries(action="cancel")
        sending = [a for a in audit if a.outcome == "sending"]
        assert len(sending) == 1 and sending[0].user == "operator"
        request = json.loads(sending[0].request)
        assert sorted(p for _, p in request["cancel"]) == [1, 2, 3]  # only what was still in flight was sent
        assert request["not_sent"] == {f"{topic}-0": "gone"}  # and what was not, with why
        assert [a.outcome for a in audit if a.ref == sending[0].id] == ["accepted"]
    finally:
        set_broker_rates(bs, [0, 1, 2], 50_000_000)
        clear_throttles(bs, [0, 1, 2], [topic])


def test_cancel_the_run_from_the_runs_page_keeps_the_click_too(sandbox, app_url, tmp_path, monkeypatch):
    monkeypatch.setenv("CONSOLE_DATA_DIR", str(tmp_path))
    write_users(tmp_path / "users.json", {n: (pw, list(r)) for n, (pw, r) in SANDBOX_USERS.items()})
    bs = sandbox.bootstrap_servers
    topic = "e2e-run-cancel"
    make_topic(bs, topic, 3, 1, 200, assignment=[[0], [0], [1]])
    store = Store()
    with ClusterReader(settings_for(sandbox)) as reader:
        run_id = first_wave_sent(
            store,
            reader.gateway(),
            reader.snapshot(),
            Plan.of([PlanEntry(topic, p, (2,)) for p in range(3)]),
            "to cancel",
            SLOW,
        )
    try:
        wait_for(lambda: _in_flight(bs, topic) == {0, 1, 2}, timeout=30, what="the wave in flight")
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1400, "height": 1300})
            page.goto(f"{app_url}/runs?run={run_id}")
            expect(page.get_by_role("heading", name="Runs")).to_be_visible(timeout=60_000)
            sign_in(page)
            page.get_by_role("button", name="Cancel the run…").click()
            dialog = page.get_by_role("dialog")
            send = dialog.get_by_role("button", name="Send the cancel for 3 partitions")
            expect(send).to_be_visible(timeout=30_000)
            _cancel_elsewhere(bs, topic, 2)
            send.click()
            expect(dialog.get_by_text("Outcome:")).to_be_visible(timeout=60_000)
            expect(page.get_by_text("Traceback")).to_have_count(0)
            browser.close()
        wait_for(lambda: not _in_flight(bs, topic), timeout=60, what="the run's partitions left the list")
        wait_for(lambda: store.runs.require(run_id).state == "cancelled", timeout=60, what="the run marked cancelled")
        assert not store.runs.ledger(run_id)
        assert [w.state for w in store.runs.waves(run_id)] == ["cancelled"]
        # one event, one entry: the cancel's clean-up and the server's worker both saw it end
        actions = [(a.action, a.outcome) for a in store.audit.entries()]
        assert actions.count(("run-cancelled", "cancelled")) == 1, actions
        assert actions.count(("throttle-removed", "sending")) == 1, actions
    finally:
        clear_throttles(bs, [0, 1, 2], [topic])


def test_on_call_cancel_from_a_fresh_page_load(sandbox, app_url, tmp_path, monkeypatch):
    """The figure for docs/BENCHMARKS.md: a signed-in operator loads the Live page and cancels
    everything in flight: two clicks, nothing typed; time from the load to the controller's answer."""
    monkeypatch.setenv("CONSOLE_DATA_DIR", str(tmp_path))
    write_users(tmp_path / "users.json", {n: (pw, list(r)) for n, (pw, r) in SANDBOX_USERS.items()})
    bs = sandbox.bootstrap_servers
    topic = "e2e-on-call"
    make_topic(bs, topic, 2, 1, 200, assignment=[[0], [1]])
    set_broker_rates(bs, [0, 1, 2], SLOW)
    throttle_topic_all(bs, topic)
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1400, "height": 1300})
            page.goto(f"{app_url}/live")  # the Live page has a URL of its own, as well as /
            expect(page.get_by_role("heading", name="Live reassignments")).to_be_visible(timeout=60_000)
            sign_in(page)
            reassign(bs, {(topic, p): [2] for p in range(2)})
            wait_for(lambda: _in_flight(bs, topic) == {0, 1}, timeout=30, what="in flight")
            # fixed wait: the page opens on a snapshot at most SHARED_SNAPSHOT_AGE_S old (one read however
            # many open it at once): one the earlier session read before the moves may still be that young,
            # and the moves were started outside the console, so nothing tells the server (the figure is
            # of a load that reads the cluster: the shared read must age out, time must pass)
            time.sleep(SHARED_SNAPSHOT_AGE_S)
            clicks = 0
            loaded = time.time()
            page.reload()  # a fresh load by a signed-in operator
            opener = page.get_by_role("button", name="Cancel…")
            # the page's first picture is drawn from a snapshot read for this load, not one another
            # session read seconds before the moves started ("No partition reassignments found")
            expect(page.get_by_role("radiogroup", name="Cancel")).to_be_visible(timeout=30_000)
            main = page.get_by_test_id("stMain")
            reassigning = main.get_by_test_id("stMetric").filter(has_text="Reassigning partitions")
            # drawn first, with the Cancel… button, from the snapshot the panel below then shows
            listed = main.get_by_text(re.compile(r"In flight now \(\d+\)")).inner_text(timeout=30_000)
            first = (
                main.get_by_text("No partition reassignments found").count(),
                reassigning.inner_text(timeout=30_000),
            )
            assert int(re.search(r"\((\d+)\)", listed).group(1)) >= 2, f"the page opened on an older picture: {listed}"
            assert first[0] == 0 and int(first[1].split()[-1]) >= 2, f"the page opened on an older picture: {first}"
            expect(page.get_by_test_id("stSidebar").get_by_text("Signed in as")).to_be_visible(timeout=30_000)
            expect(opener).to_be_enabled(timeout=30_000)
            ready = time.time()
            opener.click()
            clicks += 1
            send = page.get_by_role("dialog").get_by_role("button", name="Send the cancel for")
            send.wait_for(timeout=30_000)
            dialog = time.time()
            send.click()
            clicks += 1
            wait_for(
                lambda: any(a.outcome != "sending" for a in Store().audit.entries(action="cancel")),
                timeout=30,
                every=0.05,
                what="the controller's answer",
            )
            answered = next(a for a in Store().audit.entries(action="cancel") if a.ref is not None)
            took = answered.at - loaded
            sent = next(a for a in Store().audit.entries(action="cancel") if a.ref is None)
            print(
                f"on-call cancel: {clicks} clicks, nothing typed, {took:.2f} s from the page load to the answer "
                f"(page ready {ready - loaded:.2f} s, dialog open {dialog - ready:.2f} s, request on its way "
                f"{sent.at - dialog:.2f} s, answered {answered.at - sent.at:.2f} s)"
            )
            (tmp_path / "on-call.json").write_text(json.dumps({"clicks": clicks, "seconds": took}))
            assert clicks <= 3  # the time is a figure for docs/BENCHMARKS.md, not a timed test
            browser.close()
        wait_for(lambda: not _in_flight(bs, topic), timeout=60, what="cancelled")
    finally:
        set_broker_rates(bs, [0, 1, 2], 50_000_000)
        clear_throttles(bs, [0, 1, 2], [topic])


def test_chosen_partitions_of_another_mover_are_marked_and_the_dialog_includes_them(
    sandbox, app_url, tmp_path, monkeypatch
):
    """A person who picks one partition another mover is reassigning sees it marked in the picker,
    and the dialog says whose it is and lets it be included there (it said "Cancel 0 reassignments"
    until a box on the page, labelled for everything in flight, was ticked)."""
    monkeypatch.setenv("CONSOLE_DATA_DIR", str(tmp_path))
    write_users(tmp_path / "users.json", {n: (pw, list(r)) for n, (pw, r) in SANDBOX_USERS.items()})
    bs = sandbox.bootstrap_servers
    topic = "e2e-other-mover"
    make_topic(bs, topic, 2, 1, 200, assignment=[[0], [1]])
    set_broker_rates(bs, [0, 1, 2], SLOW)
    throttle_topic_all(bs, topic)
    reassign(bs, {(topic, p): [2] for p in range(2)})
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1440, "height": 1300})
            page.goto(app_url)
            expect(page.get_by_role("heading", name="Live reassignments")).to_be_visible(timeout=60_000)
            sign_in(page)
            page.get_by_text("Chosen partitions").click()
            page.get_by_role("combobox", name="Partitions in flight").click()
            page.keyboard.type(f"{topic}-1")
            page.get_by_role("option", name=f"{topic}-1 · another mover").click()
            page.keyboard.press("Escape")
            page.get_by_role("button", name="Cancel…").click()
            dialog = page.get_by_role("dialog")
            expect(dialog.get_by_text("a reassignment this console did not start")).to_be_visible(timeout=30_000)
            include = dialog.get_by_text("Include the reassignments this console did not start in this cancel")
            include.click()
            send = dialog.get_by_role("button", name="Send the cancel for 1 partition")
            expect(send).to_be_visible(timeout=30_000)
            page.screenshot(path=str(tmp_path / "cancel-other-mover.png"), full_page=True)
            send.click()
            expect(dialog.get_by_text("Outcome:")).to_be_visible(timeout=60_000)
            expect(page.get_by_text("Traceback")).to_have_count(0)
            browser.close()
        wait_for(lambda: _in_flight(bs, topic) == {0}, timeout=60, what="the chosen partition cancelled, not the other")
        sending = [a for a in Store().audit.entries(action="cancel") if a.outcome == "sending"]
        assert [sorted(p for _, p in json.loads(a.request)["cancel"]) for a in sending] == [[1]]
    finally:
        reassign(bs, {(topic, 0): None})
        set_broker_rates(bs, [0, 1, 2], 50_000_000)
        clear_throttles(bs, [0, 1, 2], [topic])
