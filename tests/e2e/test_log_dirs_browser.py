"""Real browser: a run whose plan moves a replica to the other log dir of its broker, throttled, is
watched on the Live page (the copy in flight, from and to which dir), then cancelled there (the
dialog names the replica and its dirs; the replica stays in its dir)."""

from __future__ import annotations

import json
import re

from playwright.sync_api import expect, sync_playwright

from console import cli
from console.access.auth import SANDBOX_USERS, write_users
from console.core.limits import LOG_DIR_RATE
from console.core.states import RunState
from console.plans.logdirs import dir_moves_in_flight
from console.runs.executor import Executor
from console.state.reader import ClusterReader
from console.storage.store import Store
from tests.e2e.browser import CHROMIUM_ARGS, script_run_done, sign_in
from tests.integration.helpers import make_topic
from tests.support import settings_for, wait_for


def test_a_log_dir_move_in_flight_on_the_live_page(sandbox, app_url, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("CONSOLE_DATA_DIR", str(tmp_path))
    write_users(tmp_path / "users.json", {n: (pw, list(r)) for n, (pw, r) in SANDBOX_USERS.items()})
    bs, topic = sandbox.bootstrap_servers, "e2e-dir-move"
    make_topic(bs, topic, 1, 1, 3000, assignment=[[2]])
    with ClusterReader(settings_for(sandbox)) as reader:
        here = next(log.log_dir for log in reader.snapshot().partition(topic, 0).logs)
        there = next(d for d in (f"{sandbox.data_dir}/broker-2/d1", f"{sandbox.data_dir}/broker-2/d2") if d != here)
        plan = tmp_path / "plan.json"
        plan.write_text(
            json.dumps(
                {"version": 1, "partitions": [{"topic": topic, "partition": 0, "replicas": [2], "log_dirs": [there]}]}
            )
        )
        submit = ["submit", "--bootstrap-server", bs, "--reassignment-json-file", str(plan), "--yes", "--detach"]
        assert cli.main([*submit, "--throttle", "20000"]) == 0  # the copy between dirs at 20 KB/s: minutes
        run_id = int(capsys.readouterr().out.strip().splitlines()[-1])
        worker = Executor(Store(), reader.gateway(), "e2e")
        worker.tick(run_id)  # the throttle, the dir asked for, the (empty) reassignment
        wait_for(lambda: dir_moves_in_flight(reader.snapshot()), timeout=60, what="the copy between dirs")
        try:
            with sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
                page = browser.new_page(viewport={"width": 1400, "height": 1100})
                page.goto(app_url)
                expect(page.get_by_role("heading", name="Live reassignments")).to_be_visible(timeout=60_000)
                sign_in(page)
                expect(page.get_by_text(re.compile(r"Log dir moves in flight \(1\)"))).to_be_visible(timeout=30_000)
                script_run_done(page)
                expect(page.get_by_text("Traceback")).to_have_count(0)
                page.screenshot(path=str(tmp_path / "live-dir-move.png"), full_page=True)
                # cancelled from the page: the dialog names the replica, from and to which dir
                page.get_by_role("button", name="Cancel log dir moves…").click()
                dialog = page.get_by_role("dialog")
                expect(dialog.get_by_text(f"{topic}-0 on broker 2: {here} → {there}")).to_be_visible(timeout=30_000)
                page.screenshot(path=str(tmp_path / "live-dir-cancel.png"), full_page=True)
                dialog.get_by_role("button", name="Send the cancel for 1 log dir move").click()
                expect(dialog.get_by_text("Cancel sent", exact=True)).to_be_visible(timeout=30_000)
                browser.close()
            wait_for(lambda: not dir_moves_in_flight(reader.snapshot()), timeout=60, what="the copy dropped")
            assert next(log.log_dir for log in reader.snapshot().partition(topic, 0).logs) == here
        finally:
            if dir_moves_in_flight(reader.snapshot()):  # the page did not cancel it: leave nothing behind
                cli.main(["cancel", "--bootstrap-server", bs, "--log-dir-moves", "--topic", topic, "--yes"])
                wait_for(lambda: not dir_moves_in_flight(reader.snapshot()), timeout=60, what="the copy dropped")
            # the run no longer waits for the cancelled copy: it completes and takes its throttle off
            assert worker.drive(run_id, every=0.5, timeout=60).state is RunState.COMPLETED
            assert all(LOG_DIR_RATE not in cfg for _, cfg in reader.snapshot().throttles.brokers)
