"""Two executors on one PostgreSQL store and the sandbox: one drives a throttled run; when it is
killed mid-wave the other takes the run over once the lease runs out, resumes it from the intent
log and finishes it, each request sent once; one paused past its lease and then resumed sends
nothing more. The audit log names both sides of the hand-over."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.request
from collections import Counter
from pathlib import Path

from console.access.auth import Identity
from console.core.states import RunState
from console.moves.waves import WaveLimits
from console.plans.plan import Plan, PlanEntry
from console.services import runs as run_service
from console.state.reader import ClusterReader
from console.storage.store import Store
from tests.integration.helpers import BROKERS, clear_throttles, make_topic
from tests.support import settings_for, wait_for

LEASE_S = 5
ROOT = Path(__file__).resolve().parents[2]
ASSIGNMENT = [[0, 1], [1, 0], [0, 1]]
TARGETS = [(0, 2), (1, 2), (0, 2)]


def executors(bs: str, pg_url: str, logs: Path) -> list[subprocess.Popen[bytes]]:
    """Two executor processes, each serving its metrics on a free port (its heartbeat says when it
    last stepped the runs: see :func:`steps_after`) and writing to ``logs/executor-<i>.log``."""
    env = {
        **os.environ,
        "CONSOLE_STORE_URL": pg_url,
        "CONSOLE_RUN_LEASE_S": str(LEASE_S),
        "CONSOLE_METRICS_ADDRESS": "127.0.0.1:0",
        "PYTHONPATH": str(ROOT),
    }
    return [
        subprocess.Popen(
            [sys.executable, "-m", "console", "executor", "--bootstrap-server", bs, "--every", "0.3"],
            env={**env, "USER": f"executor-{i}", "LOGNAME": f"executor-{i}"},  # who acts, in the audit log
            stderr=(logs / f"executor-{i}.log").open("wb"),
            cwd=ROOT,
        )
        for i in range(2)
    ]


def start(sandbox, store: Store, topic: str) -> int:
    make_topic(sandbox.bootstrap_servers, topic, 3, 2, 60, assignment=ASSIGNMENT)
    plan = Plan.of([PlanEntry(topic, p, target) for p, target in enumerate(TARGETS)])
    with ClusterReader(settings_for(sandbox)) as reader:
        return run_service.start_run(
            store,
            reader.gateway(),
            reader.snapshot(),
            run_service.RunRequest(
                Identity.cli("ann"), plan, topic, run_service.RunSettings(rate=30_000, limits=WaveLimits(1))
            ),
            users=None,
        )


def heartbeat(log: Path) -> float:
    """When the executor writing ``log`` last ended a step of the runs, from its metrics (0 before
    its first)."""
    found = re.search(r"Metrics on http://(\S+)/metrics", log.read_text(errors="replace"))
    if found is None:
        return 0.0
    with urllib.request.urlopen(f"http://{found.group(1)}/metrics", timeout=10) as r:
        text = r.read().decode()
    beats = re.findall(r"^console_executor_heartbeat_timestamp_seconds\{[^}]*\} (\S+)$", text, re.MULTILINE)
    return max((float(b) for b in beats), default=0.0)


def steps_after(logs: Path, procs: list[subprocess.Popen[bytes]], since: float, steps: int = 2) -> None:
    """Wait until each executor has taken ``steps`` whole steps of the runs, each begun after
    ``since``: a heartbeat after another one after ``since`` ends a step begun after it."""
    for i in range(len(procs)):
        log = logs / f"executor-{i}.log"
        last = since
        for n in range(steps + 1):
            last = wait_for(
                lambda log=log, last=last: (beat := heartbeat(log)) > last and beat,
                timeout=60,
                every=0.2,
                what=f"executor-{i}'s step {n} after {since:.1f}",
            )


def driver(store: Store, run_id: int, procs: list[subprocess.Popen[bytes]]) -> subprocess.Popen[bytes]:
    """The executor process holding the run's lease (its owner is ``host:pid:…``)."""
    row = store.db.one("SELECT owner FROM runs WHERE id = ?", (run_id,))
    assert row is not None and row[0] is not None
    pid = int(str(row[0]).split(":")[1])
    (proc,) = [p for p in procs if p.pid == pid]
    return proc


def sent_after(store: Store, user: str, since: float) -> list[str]:
    """The requests ``user`` announced since ``since`` and did not find refused by its lost lease."""
    entries = store.audit.entries()
    refused = {e.ref for e in entries if e.outcome == "failed" and "lost its lease" in (e.response or "")}
    return [
        f"{e.id} {e.action} {e.request}"
        for e in entries
        if e.user == user and e.at >= since and e.outcome == "sending" and e.id not in refused
    ]


def sent_once(store: Store, run_id: int) -> None:
    """Each wave submitted once, throttled once and its throttles taken off once; every intent
    answered. Not counted: an intent a driver wrote before it was paused, answered "failed" because
    it had lost its lease when it woke (not sent), and one a killed driver wrote and never answered
    that the driver taking over found not applied and answered so ("resumed", sent again)."""
    entries = store.audit.entries()
    answered = {e.ref for e in entries}
    assert not [e for e in entries if e.outcome == "sending" and e.id not in answered], entries
    not_sent = {
        e.ref for e in entries if e.ref is not None and e.outcome == "failed" and "lost its lease" in (e.response or "")
    } | {e.ref for e in entries if e.outcome == "resumed" and json.loads(e.response or "{}").get("sent_again")}
    for action in ("submit-wave", "throttle-set", "throttle-removed"):
        intents = [
            json.loads(e.request)
            for e in entries
            if e.action == action and e.outcome == "sending" and e.id not in not_sent
        ]
        per_wave = Counter(r["wave"] for r in intents if r["run"] == run_id and r.get("wave") is not None)
        assert per_wave == Counter({1: 1, 2: 1, 3: 1}), f"{action} {per_wave}:\n" + "\n".join(
            f"{e.id} ref={e.ref} {e.user} {e.action} {e.outcome} {e.request} {e.response}"
            for e in entries
            if e.action in (action, "run-handover")
        )
    assert not store.runs.ledger(run_id)


def at_targets(sandbox, topic: str) -> None:
    with ClusterReader(settings_for(sandbox)) as reader:
        wait_for(
            lambda: [reader.snapshot().partition(topic, p).replicas for p in range(3)] == TARGETS,
            timeout=30,
            what="every partition where the plan put it",
        )
        wait_for(
            lambda: (
                not reader.snapshot().throttles.broker_map() and topic not in reader.snapshot().throttles.topic_map()
            ),
            timeout=30,
            what="no throttle left",
        )


def stop(procs: list[subprocess.Popen[bytes]]) -> None:
    for p in procs:
        if p.poll() is None:
            p.send_signal(signal.SIGCONT)
            p.send_signal(signal.SIGTERM)
    for p in procs:
        try:
            p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def test_a_driver_killed_mid_wave_is_taken_over_and_the_run_finishes_each_request_sent_once(sandbox, pg_url, tmp_path):
    store = Store(pg_url)
    run_id = start(sandbox, store, "h-kill")
    procs = executors(sandbox.bootstrap_servers, pg_url, tmp_path)
    try:
        wait_for(
            lambda: [w.state for w in store.runs.waves(run_id)][:2] == ["completed", "running"],
            timeout=120,
            what="wave 2 running",
        )
        first = driver(store, run_id, procs)
        first.send_signal(signal.SIGKILL)
        killed_at = time.time()
        first.wait()
        (other,) = [p for p in procs if p is not first]
        wait_for(lambda: store.runs.require(run_id).state is RunState.COMPLETED, timeout=LEASE_S + 60, what="completed")
        done_at = store.runs.require(run_id).updated_at
        assert done_at - (killed_at + LEASE_S) < 30, f"finished {done_at - killed_at:.1f} s after the kill"
        (handover,) = [json.loads(e.request) for e in store.audit.entries(action="run-handover")]
        assert handover["run"] == run_id and f":{first.pid}:" in handover["from"] and f":{other.pid}:" in handover["to"]
        sent_once(store, run_id)
        at_targets(sandbox, "h-kill")
    finally:
        stop(procs)
        clear_throttles(sandbox.bootstrap_servers, BROKERS, ["h-kill"])


def test_a_driver_paused_past_its_lease_sends_nothing_when_it_resumes(sandbox, pg_url, tmp_path):
    store = Store(pg_url)
    run_id = start(sandbox, store, "h-pause")
    procs = executors(sandbox.bootstrap_servers, pg_url, tmp_path)
    try:
        wait_for(
            lambda: [w.state for w in store.runs.waves(run_id)][:2] == ["completed", "running"],
            timeout=120,
            what="wave 2 running",
        )
        paused = driver(store, run_id, procs)
        paused.send_signal(signal.SIGSTOP)
        wait_for(lambda: store.audit.entries(action="run-handover"), timeout=LEASE_S + 30, what="the run taken over")
        (handover,) = [json.loads(e.request) for e in store.audit.entries(action="run-handover")]
        assert f":{paused.pid}:" in handover["from"] and f":{paused.pid}:" not in handover["to"]
        woke = time.time()
        paused.send_signal(signal.SIGCONT)  # it wakes up mid-step, past its lease
        wait_for(lambda: store.runs.require(run_id).state is RunState.COMPLETED, timeout=90, what="completed")
        steps_after(tmp_path, procs, time.time())  # it takes a few more steps
        assert paused.poll() is None and sent_after(store, f"executor-{procs.index(paused)}", woke) == []
        sent_once(store, run_id)  # the taking over driver looks before it takes a throttle off again
        at_targets(sandbox, "h-pause")
        assert len(store.audit.entries(action="run-handover")) == 1  # it did not take the run back
    finally:
        stop(procs)
        clear_throttles(sandbox.bootstrap_servers, BROKERS, ["h-pause"])


def test_a_cancel_with_two_executors_running_is_carried_out_once(sandbox, pg_url, tmp_path, monkeypatch, capsys):
    from console import cli

    bs = sandbox.bootstrap_servers
    monkeypatch.setenv("CONSOLE_STORE_URL", pg_url)
    store = Store(pg_url)
    make_topic(bs, "h-cancel", 2, 2, 300, assignment=[[0, 1], [1, 0]])
    plan = Plan.of([PlanEntry("h-cancel", 0, (0, 2)), PlanEntry("h-cancel", 1, (1, 2))])
    with ClusterReader(settings_for(sandbox)) as reader:
        run_id = run_service.start_run(
            store,
            reader.gateway(),
            reader.snapshot(),
            run_service.RunRequest(Identity.cli("ann"), plan, "h-cancel", run_service.RunSettings(rate=2000)),
            users=None,
        )
    procs = executors(bs, pg_url, tmp_path)
    try:
        wait_for(lambda: [w.state for w in store.runs.waves(run_id)] == ["running"], timeout=60, what="wave 1 running")
        assert cli.main(["cancel", "--bootstrap-server", bs, "--run", str(run_id), "--yes", "--json"]) == 0
        out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
        assert sorted(out["accepted"]) == ["h-cancel-0", "h-cancel-1"]
        wait_for(lambda: store.runs.require(run_id).state is RunState.CANCELLED, timeout=60, what="cancelled")
        steps_after(tmp_path, procs, time.time())  # both take a few more steps: nothing more is done for the run
        ends = [e for e in store.audit.entries(action="run-cancelled") if json.loads(e.request)["run"] == run_id]
        removed = [e for e in store.audit.entries(action="throttle-removed") if e.outcome == "sending"]
        assert len(ends) == 1 and len(removed) == 1 and not store.runs.ledger(run_id)
        assert not store.audit.entries(action="run-handover")  # one driver throughout
        with ClusterReader(settings_for(sandbox)) as reader:
            wait_for(
                lambda: [reader.snapshot().partition("h-cancel", p).replicas for p in (0, 1)] == [(0, 1), (1, 0)],
                timeout=30,
                what="back on the original replicas",
            )
    finally:
        stop(procs)
        clear_throttles(bs, BROKERS, ["h-cancel"])
