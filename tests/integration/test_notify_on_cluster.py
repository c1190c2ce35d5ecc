"""Notifications and metrics during real throttled runs on the sandbox: Apprise's JSON webhook
posts to a local receiver the run's messages in order, once each; with the receiver down (it takes
connections and never answers) the same run completes at the same pace and the failures are kept
and audited; a scrape of the metrics address during a run, parsed with prometheus-client's own
parser, says the run, what is left and the executor's heartbeat."""

from __future__ import annotations

import os
import time
import urllib.request
from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families

from console.access.auth import Identity
from console.core.states import RunState
from console.metrics.server import serve_metrics
from console.moves.waves import WaveLimits
from console.notify import hub
from console.plans.plan import Plan, PlanEntry
from console.runs.executor import Executor
from console.runs.worker import Worker
from console.services import runs as run_service
from console.state.reader import ClusterReader
from console.storage.store import Store
from tests.integration.helpers import BROKERS, clear_throttles, make_topic
from tests.support import settings_for, wait_for

RATE = 1_000_000  # bytes/s per broker: each wave copies 2 MB at it
ROOT = Path(__file__).resolve().parents[2]
EXPECTED = ["run-started", "wave-done", "wave-done", "run-completed"]


def plan_for(topic: str) -> Plan:
    """Two partitions both adding a replica on broker 2: two waves at one move per broker."""
    return Plan.of([PlanEntry(topic, 0, (0, 2)), PlanEntry(topic, 1, (1, 2))])


def timed_run(reader: ClusterReader, store: Store, topic: str) -> tuple[int, float]:
    """A throttled run of :func:`plan_for` driven to its end as ``submit`` does; its id and seconds."""
    t0 = time.monotonic()
    run_id = run_service.start_run(
        store,
        reader.gateway(),
        reader.snapshot(),
        run_service.RunRequest(
            Identity.cli("ann"),
            plan_for(topic),
            topic,
            run_service.RunSettings(rate=RATE, limits=WaveLimits(moves_per_broker=1)),
        ),
        users=None,
    )
    run = Executor(store, reader.gateway(), "worker").drive(run_id, every=0.5, timeout=240)
    assert run.state is RunState.COMPLETED
    return run_id, time.monotonic() - t0


def test_messages_arrive_in_order_once_each_and_a_receiver_down_costs_the_run_nothing(
    sandbox, tmp_path, monkeypatch, receiver, hanging_port, notify_settings
):
    monkeypatch.setenv("CONSOLE_DATA_DIR", str(tmp_path))
    bs = sandbox.bootstrap_servers
    for topic in ("n-up", "n-down"):
        make_topic(bs, topic, 2, 2, 2000, assignment=[[0, 1], [1, 0]])
    store = Store()
    try:
        with ClusterReader(settings_for(sandbox)) as reader:
            key = reader.snapshot().cluster_id
            notify_settings(
                f"""public_url = "https://console.example.com"
retries = 1
backoff_s = 0.5
[[clusters."{key}".destinations]]
url = "{receiver.url("hook")}"
events = {EXPECTED!r}
[[clusters.elsewhere.destinations]]
url = "{receiver.url("elsewhere")}"
"""
            )
            hub.notifier()  # built (and Apprise imported) before the runs are timed, as the server does at start
            up_id, up_s = timed_run(reader, store, "n-up")
            assert hub.notifier().delivery.drain(30)
            got = receiver.at("hook")
            assert [b["title"] for b in got] == [
                f"[{key}] Run started · run #{up_id}",
                f"[{key}] Wave done · run #{up_id}",
                f"[{key}] Wave done · run #{up_id}",
                f"[{key}] Run completed · run #{up_id}",
            ]
            first, last = str(got[0]["message"]), str(got[-1]["message"])
            assert first.startswith(f"ann started run #{up_id} (n-up): 2 waves, throttled at")
            assert "Moved so far: 0 partition(s); left: 2 (0 of 2 wave(s) done)" in first and "ETA: " in first
            assert "Moved so far: 2 partition(s); left: 0 (2 of 2 wave(s) done)" in last
            assert last.endswith(f"https://console.example.com/runs?run={up_id}") and "By: worker" in last
            assert got[-1]["type"] == "info" and not receiver.at("elsewhere")  # another cluster's destination

            notify_settings(
                f"""retries = 1
backoff_s = 0.5
[[clusters."{key}".destinations]]
url = "json://127.0.0.1:{hanging_port}/hook?rto=2&cto=2"
events = {EXPECTED!r}
"""
            )
            hub.notifier()
            down_id, down_s = timed_run(reader, store, "n-down")
            assert down_s <= up_s + max(0.5 * up_s, 5.0), f"receiver up: {up_s:.1f} s, down: {down_s:.1f} s"
            assert hub.notifier().delivery.drain(90)
        failed = [f for f in store.notifications.list(key) if f.run_id == down_id]
        assert [f.event for f in reversed(failed)] == EXPECTED
        assert {(f.attempts, f.destination) for f in failed} == {(2, f"json://127.0.0.1:{hanging_port}/…")}
        audited = [a for a in store.audit.entries() if a.action == "notification-failed"]
        assert len(audited) == 4 and {a.cluster for a in audited} == {key}
        assert not [f for f in store.notifications.list(key) if f.run_id == up_id]
        print(f"\nrun with the receiver up: {up_s:.1f} s; down: {down_s:.1f} s; a message as received: {got[0]}")
    finally:
        clear_throttles(bs, BROKERS, ["n-up", "n-down"])
        store.close()


def test_a_scrape_during_a_run_says_the_run_what_is_left_and_the_heartbeat(sandbox, tmp_path, monkeypatch):
    monkeypatch.setenv("CONSOLE_DATA_DIR", str(tmp_path))
    bs = sandbox.bootstrap_servers
    make_topic(bs, "n-scrape", 2, 2, 3000, assignment=[[0, 1], [1, 0]])
    store = Store()
    served = serve_metrics(store, "127.0.0.1:0")
    assert served is not None
    try:
        with ClusterReader(settings_for(sandbox)) as reader:
            key = reader.snapshot().cluster_id
            run_id = run_service.start_run(
                store,
                reader.gateway(),
                reader.snapshot(),
                run_service.RunRequest(
                    Identity.cli("ann"),
                    plan_for("n-scrape"),
                    "scrape",
                    # slow enough that the first wave is still copying when a scrape under load
                    # comes back (at RATE it took 3 s, and a loaded run's scrapes never caught it)
                    run_service.RunSettings(rate=RATE // 10, limits=WaveLimits(moves_per_broker=1)),
                ),
                users=None,
            )
            worker = Worker(store, reader.gateway(), "worker", every_s=0.5).start()
            try:

                def scrape() -> dict[str, list[tuple[dict[str, str], float]]] | None:
                    text = urllib.request.urlopen(f"http://{served}/metrics", timeout=5).read().decode()
                    out: dict[str, list[tuple[dict[str, str], float]]] = {}
                    for family in text_string_to_metric_families(text):
                        for s in family.samples:
                            out.setdefault(s.name, []).append((s.labels, s.value))
                    moving = {lb["mover"]: v for lb, v in out.get("console_reassignments_in_flight", [])}
                    bytes_left = [v for lb, v in out.get("console_run_bytes_left", []) if lb["run"] == str(run_id)]
                    return out if moving.get("console") and bytes_left and bytes_left[0] > 0 else None

                seen = wait_for(scrape, timeout=60, what="a scrape during the run's first wave")
                run = {"cluster": key, "run": str(run_id)}
                assert ({"cluster": key, "state": "running"}, 1.0) in seen["console_runs"]
                assert (run, 2.0) in seen["console_run_partitions_left"] and (run, 0.0) in seen["console_run_stuck"]
                assert (run, 1.0) in seen["console_run_waves_sent"]
                assert any(
                    lb["cluster"] == key and v >= 1 for lb, v in seen["console_waves_sent_total"]
                )  # this process's
                assert any(lb["cluster"] == key and v > 0 for lb, v in seen["console_throttles_set"])
                assert ({"cluster": key, "mover": "other"}, 0.0) in seen["console_reassignments_in_flight"]
                (beat,) = [v for lb, v in seen["console_executor_heartbeat_timestamp_seconds"] if lb["cluster"] == key]
                assert time.time() - beat < 30
                (lease,) = [v for lb, v in seen["console_run_lease_seconds"] if lb["run"] == str(run_id)]
                assert 0 < lease <= 30
                print(
                    f"\nscrape during run {run_id}: "
                    + ", ".join(
                        f"{n}={seen[n]}"
                        for n in (
                            "console_run_bytes_left",
                            "console_run_partitions_left",
                            "console_reassignments_in_flight",
                        )
                    )
                )
                run_service.change_throttle(store, reader.gateway(), Identity.cli("ann"), run_id, RATE)  # then on
                wait_for(
                    lambda: store.runs.require(run_id).state is RunState.COMPLETED, timeout=240, what="the run done"
                )
            finally:
                worker.stop()
    finally:
        clear_throttles(bs, BROKERS, ["n-scrape"])
        store.close()


def test_a_command_that_ends_right_after_an_event_still_sends_it(tmp_path, receiver):
    """``submit --detach`` ends as soon as the run is recorded: its run-started message goes out first."""
    import subprocess
    import sys

    (tmp_path / "notify.toml").write_text(f'[[clusters."*".destinations]]\nurl = "{receiver.url("exit")}"\n')
    script = (
        "from console.notify.hub import emit\n"
        "from console.notify.events import Event\n"
        "from console.storage.store import Store\n"
        "emit(Store(), Event.RUN_STARTED, cluster='c1', who='ann', detail='ann started run #1', run=None)\n"
    )
    env = {**os.environ, "CONSOLE_DATA_DIR": str(tmp_path), "PYTHONPATH": str(ROOT)}
    env.pop("CONSOLE_NOTIFY_FILE", None)
    subprocess.run([sys.executable, "-c", script], env=env, check=True, timeout=60)
    assert [b["title"] for b in receiver.at("exit")] == ["[c1] Run started"]
