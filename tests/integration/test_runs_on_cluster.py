"""Runs on the real cluster: a throttled plan in waves completes and leaves the throttles exactly
as they were; a second run on the same partitions is refused; a worker that resumes a run never
sends a wave twice."""

from __future__ import annotations

import json

from confluent_kafka.admin import AlterConfigOpType, ConfigEntry, ConfigResource, ResourceType

from console import cli
from console.access.auth import Identity
from console.core.states import RunState, WaveState
from console.moves.waves import WaveLimits
from console.plans.plan import Plan, PlanEntry
from console.runs.executor import Executor
from console.services import runs as run_service
from console.state.reader import ClusterReader
from console.storage.store import Store
from tests.integration.helpers import BROKERS, admin, clear_throttles, make_topic, reassign
from tests.support import settings_for, wait_for, write_plan


def set_configs(bs: str, kind, name: str, values: dict[str, str]) -> None:
    res = ConfigResource(
        kind,
        name,
        incremental_configs=[ConfigEntry(k, v, incremental_operation=AlterConfigOpType.SET) for k, v in values.items()],
    )
    client = admin(bs)  # kept alive until the futures resolve
    for f in client.incremental_alter_configs([res]).values():
        f.result()


def test_throttled_plan_in_waves_completes_and_restores_throttles(sandbox, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("CONSOLE_DATA_DIR", str(tmp_path))
    bs = sandbox.bootstrap_servers
    make_topic(bs, "r-waves", 4, 2, 150, assignment=[[0, 1], [1, 0], [0, 1], [1, 0]])
    # throttles somebody set before the run: they must be exactly as they were afterwards
    set_configs(bs, ResourceType.TOPIC, "r-waves", {"follower.replication.throttled.replicas": "3:0"})
    set_configs(bs, ResourceType.BROKER, "1", {"follower.replication.throttled.rate": "77777777"})
    try:
        with ClusterReader(settings_for(sandbox)) as reader:
            before = wait_for(
                lambda: (
                    (s := reader.snapshot()).throttles.topic_map().get("r-waves")
                    and s.throttles.broker_map().get("1")
                    and s.throttles
                ),
                what="the earlier throttles seen",
            )
            plan = write_plan(
                tmp_path / "plan.json",
                [("r-waves", 0, [0, 2]), ("r-waves", 1, [1, 2]), ("r-waves", 2, [2, 1]), ("r-waves", 3, [2, 0])],
            )
            code = cli.main(
                [
                    "submit",
                    "--bootstrap-server",
                    bs,
                    "--reassignment-json-file",
                    str(plan),
                    "--throttle",
                    "3000000",
                    "--max-moves-per-broker",
                    "2",
                    "--yes",
                    "--json",
                ]
            )
            out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
            assert code == 0 and out["state"] == "completed" and not out["rejected"]
            state = reader.snapshot()
            assert [state.partition("r-waves", p).replicas for p in range(4)] == [(0, 2), (1, 2), (2, 1), (2, 0)]
            assert wait_for(
                lambda: reader.snapshot().throttles == before, timeout=30, what="throttles back as they were"
            )
        store = Store()
        (run,) = store.runs.list()
        assert run.state == "completed" and run.rate == 3000000
        assert [w.state for w in store.runs.waves(run.id)] == ["completed", "completed"]
        actions = [(a.action, a.outcome) for a in store.audit.entries()]
        assert actions.count(("submit-wave", "sending")) == 2 and actions.count(("submit-wave", "accepted")) == 2
        assert ("throttle-set", "sending") in actions and ("run-completed", "completed") in actions
        assert not store.runs.ledger()  # every throttle the run set was taken away
        assert cli.main(["runs", "--json"]) == 0
        assert json.loads(capsys.readouterr().out)[0]["waves"] == "2/2"
    finally:
        clear_throttles(bs, BROKERS, ["r-waves"])


def test_second_run_on_the_same_partitions_is_refused(sandbox, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("CONSOLE_DATA_DIR", str(tmp_path))
    bs = sandbox.bootstrap_servers
    make_topic(bs, "r-clash", 1, 2, 10, assignment=[[0, 1]])
    plan = Plan.of([PlanEntry("r-clash", 0, (1, 2))])
    with ClusterReader(settings_for(sandbox)) as reader:
        run_id = run_service.start_run(
            Store(),
            reader.gateway(),
            reader.snapshot(),
            run_service.RunRequest(Identity.cli("ann"), plan, "first"),
            users=None,
        )
    path = tmp_path / "p.json"
    path.write_text(plan.to_json())
    assert cli.main(["submit", "--bootstrap-server", bs, "--reassignment-json-file", str(path), "--yes"]) == 1
    assert f"Run #{run_id} (first, by ann) is already moving r-clash-0" in capsys.readouterr().err
    Store().runs.set_state(run_id, RunState.ABANDONED)


def test_a_resumed_run_never_sends_a_wave_twice(sandbox, tmp_path, monkeypatch):
    monkeypatch.setenv("CONSOLE_DATA_DIR", str(tmp_path))
    bs = sandbox.bootstrap_servers
    make_topic(bs, "r-resume", 2, 2, 20, assignment=[[0, 1], [1, 0]])
    plan = Plan.of([PlanEntry("r-resume", 0, (0, 2)), PlanEntry("r-resume", 1, (1, 2))])
    with ClusterReader(settings_for(sandbox)) as reader:
        run_id = run_service.start_run(
            Store(),
            reader.gateway(),
            reader.snapshot(),
            run_service.RunRequest(Identity.cli("ann"), plan, "resume", run_service.RunSettings(limits=WaveLimits(1))),
            users=None,
        )
    store = Store()
    # the first worker wrote its intent and sent wave 1, then stopped before recording the answer
    store.runs.set_wave(run_id, 1, WaveState.SUBMITTING)
    reassign(bs, {("r-resume", 0): [0, 2]})
    with ClusterReader(settings_for(sandbox)) as reader:  # a new worker
        run = Executor(store, reader.gateway(), "ann").drive(run_id, every=0.5, timeout=120)
        assert run.state == "completed"
        assert reader.snapshot().partition("r-resume", 1).replicas == (1, 2)
    sent = [json.loads(a.request) for a in store.audit.entries(action="submit-wave") if a.outcome == "sending"]
    assert [(r["wave"], r["partitions"]) for r in sent] == [(2, [["r-resume", 1, [1, 2]]])]
    assert [(o.wave, o.code) for o in store.runs.outcomes(run_id)] == [(1, "ALREADY_SENT"), (2, None)]


def test_cancel_of_a_run_reverts_it_and_takes_its_throttles_off(sandbox, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("CONSOLE_DATA_DIR", str(tmp_path))
    bs = sandbox.bootstrap_servers
    make_topic(bs, "r-cancel", 2, 2, 300, assignment=[[0, 1], [1, 0]])
    plan = Plan.of([PlanEntry("r-cancel", 0, (0, 2)), PlanEntry("r-cancel", 1, (1, 2))])
    try:
        with ClusterReader(settings_for(sandbox)) as reader:
            before = reader.snapshot().throttles
            executor = Executor(Store(), reader.gateway(), "ann")
            run_id = run_service.start_run(
                executor.store,
                executor.cluster,
                reader.snapshot(),
                run_service.RunRequest(Identity.cli(executor.user), plan, "slow", run_service.RunSettings(rate=2000)),
                users=None,
            )
            assert executor.tick(run_id).did == "wave 1 submitted (2 partitions)"
            wait_for(lambda: len(reader.snapshot().in_flight) == 2, what="both moving")
            # the rate changes while the wave runs
            assert cli.main(["throttle", "--bootstrap-server", bs, "--run", str(run_id), "--rate", "4000"]) == 0
            wait_for(
                lambda: all(
                    reader.snapshot().throttles.broker_map().get(str(b), {}).get("leader.replication.throttled.rate")
                    == "4000"
                    for b in (0, 1, 2)
                ),
                what="new rate on brokers 0-2",
            )
            # a topic cancel takes the console's own run without --include-others
            assert cli.main(["cancel", "--bootstrap-server", bs, "--run", str(run_id), "--yes", "--json"]) == 0
            out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
            assert sorted(out["accepted"]) == ["r-cancel-0", "r-cancel-1"] and not out["still_in_flight"]
            # brokers learn the outcome from the controller a moment after the list empties
            wait_for(
                lambda: [reader.snapshot().partition("r-cancel", p).replicas for p in (0, 1)] == [(0, 1), (1, 0)],
                timeout=30,
                what="back on the original replicas",
            )
            executor.tick(run_id)  # the run's worker (it holds the lease) cleans up at its next step
            store = Store()
            assert store.runs.get(run_id).state == "cancelled" and not store.runs.ledger()
            assert wait_for(lambda: reader.snapshot().throttles == before, timeout=30, what="throttles as before")
    finally:
        clear_throttles(bs, BROKERS, ["r-cancel"])


def test_standalone_executor_killed_mid_run_resumes_without_sending_a_wave_twice(sandbox, tmp_path, monkeypatch):
    import os
    import signal
    import subprocess
    import sys

    bs = sandbox.bootstrap_servers
    env = {**os.environ, "CONSOLE_DATA_DIR": str(tmp_path), "CONSOLE_RUN_LEASE_S": "3", "PYTHONPATH": os.getcwd()}
    make_topic(bs, "r-exec", 3, 2, 60, assignment=[[0, 1], [1, 0], [0, 1]])
    plan = Plan.of([PlanEntry("r-exec", p, (r[0], 2)) for p, r in enumerate([[0, 1], [1, 0], [0, 1]])])
    monkeypatch.setenv("CONSOLE_DATA_DIR", str(tmp_path))
    try:
        with ClusterReader(settings_for(sandbox)) as reader:
            run_id = run_service.start_run(
                Store(),
                reader.gateway(),
                reader.snapshot(),
                run_service.RunRequest(
                    Identity.cli("ann"), plan, "exec", run_service.RunSettings(rate=30_000, limits=WaveLimits(1))
                ),
                users=None,
            )
        store = Store()

        def executor() -> subprocess.Popen:
            return subprocess.Popen(
                [sys.executable, "-m", "console", "executor", "--bootstrap-server", bs, "--every", "0.3"],
                env=env,
                stderr=subprocess.DEVNULL,
            )

        first = executor()
        wait_for(
            lambda: [w.state for w in store.runs.waves(run_id)][:2] == ["completed", "running"],
            timeout=120,
            what="wave 2 running",
        )
        first.send_signal(signal.SIGKILL)
        first.wait()
        second = executor()
        try:
            wait_for(lambda: store.runs.get(run_id).state == "completed", timeout=180, what="the run completed")
        finally:
            second.send_signal(signal.SIGTERM)
            second.wait(timeout=30)
        sent = [
            json.loads(a.request)["wave"] for a in store.audit.entries(action="submit-wave") if a.outcome == "sending"
        ]
        assert sorted(sent) == [1, 2, 3]  # each wave once
        assert not store.runs.ledger()
        with ClusterReader(settings_for(sandbox)) as reader:
            wait_for(
                lambda: (
                    [reader.snapshot().partition("r-exec", p).replicas for p in range(3)] == [(0, 2), (1, 2), (0, 2)]
                ),
                timeout=30,
                what="every partition at its target",
            )
    finally:
        clear_throttles(bs, BROKERS, ["r-exec"])


def test_sweeper_removes_throttles_nothing_needs(sandbox, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("CONSOLE_DATA_DIR", str(tmp_path))
    bs = sandbox.bootstrap_servers
    make_topic(bs, "r-sweep", 1, 1, 1, assignment=[[0]])
    set_configs(bs, ResourceType.TOPIC, "r-sweep", {"leader.replication.throttled.replicas": "0:0"})
    set_configs(bs, ResourceType.BROKER, "2", {"leader.replication.throttled.rate": "1234"})
    with ClusterReader(settings_for(sandbox)) as reader:
        wait_for(lambda: "r-sweep" in reader.snapshot().throttles.topic_map(), what="the throttle seen")
        assert cli.main(["throttle", "--bootstrap-server", bs, "--sweep", "--yes"]) == 0
        assert "topic r-sweep: leader.replication.throttled.replicas = 0:0" in capsys.readouterr().err
        # the sweep went through another reader (the command's): this one reads the topic's configs
        # again at its next full read, or now when asked (a topic not moving has them carried over)
        wait_for(
            lambda: (
                not (s := reader.snapshot(full=True)).throttles.topic_map().get("r-sweep")
                and "2" not in s.throttles.broker_map()
            ),
            timeout=30,
            what="throttles gone",
        )
    assert [a.outcome for a in Store().audit.entries(action="throttle-sweep")] == ["sending", "removed"]


def test_the_legacy_zookeeper_path_chosen_explicitly(zk_sandbox, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("CONSOLE_DATA_DIR", str(tmp_path))
    bs = zk_sandbox.bootstrap_servers
    make_topic(bs, "r-legacy", 2, 1, 20, assignment=[[0], [1]])
    plan = write_plan(tmp_path / "plan.json", [("r-legacy", 0, [2]), ("r-legacy", 1, [2])])
    code = cli.main(
        [
            "submit",
            "--bootstrap-server",
            bs,
            "--zookeeper",
            zk_sandbox.zookeeper,
            "--reassignment-json-file",
            str(plan),
            "--path",
            "zookeeper",
            "--yes",
            "--json",
        ]
    )
    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert code == 0 and out["state"] == "completed"
    store = Store()
    (run,) = store.runs.list()
    assert run.path == "zookeeper"
    assert [(a.action, a.outcome) for a in store.audit.entries(action="submit-wave")] == [
        ("submit-wave", "sending"),
        ("submit-wave", "znode created"),
    ]
    with ClusterReader(settings_for(zk_sandbox)) as reader:
        wait_for(
            lambda: [reader.snapshot().partition("r-legacy", p).replicas for p in (0, 1)] == [(2,), (2,)],
            timeout=30,
            what="both on broker 2",
        )
        from kazoo.client import KazooClient

        zk = KazooClient(hosts=zk_sandbox.zookeeper)
        zk.start(timeout=10)
        try:
            assert zk.exists("/admin/reassign_partitions") is None  # the controller deleted it when done
        finally:
            zk.stop()


def test_cancel_keeps_completed_partitions_and_the_rollback_restores_them(sandbox, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("CONSOLE_DATA_DIR", str(tmp_path))
    bs = sandbox.bootstrap_servers
    make_topic(bs, "r-back", 2, 1, 300, assignment=[[0], [1]])
    plan = Plan.of([PlanEntry("r-back", 0, (2,)), PlanEntry("r-back", 1, (2,))])
    try:
        with ClusterReader(settings_for(sandbox)) as reader:
            executor = Executor(Store(), reader.gateway(), "ann")
            run_id = run_service.start_run(
                executor.store,
                executor.cluster,
                reader.snapshot(),
                run_service.RunRequest(
                    Identity.cli(executor.user),
                    plan,
                    "two waves",
                    run_service.RunSettings(rate=3000, limits=WaveLimits(1)),
                ),
                users=None,
            )
            store = Store()
            # wave 1 runs fast, wave 2 slowly
            store.runs.set_rate(run_id, 50_000_000)

            def wave_1_completed() -> bool:
                executor.tick(run_id)
                return next(w.state for w in store.runs.waves(run_id)) == "completed"

            wait_for(wave_1_completed, timeout=120, every=0.3, what="wave 1 completed")
            store.runs.set_rate(run_id, 2000)
            executor.tick(run_id)  # wave 2: throttled at 2 KB/s, submitted
            wait_for(lambda: reader.snapshot().partition("r-back", 1).reassigning, what="wave 2 moving")
            assert cli.main(["cancel", "--bootstrap-server", bs, "--run", str(run_id), "--yes", "--json"]) == 0
            capsys.readouterr()
            wait_for(
                lambda: [reader.snapshot().partition("r-back", p).replicas for p in (0, 1)] == [(2,), (1,)],
                timeout=30,
                what="the completed partition stays, the other goes back",
            )
            executor.tick(run_id)  # the run's worker (it holds the lease) cleans up at its next step
            assert store.runs.get(run_id).state == "cancelled"
            back = tmp_path / "rollback.json"
            back.write_text(store.runs.get(run_id).rollback_json)
            assert cli.main(["submit", "--bootstrap-server", bs, "--reassignment-json-file", str(back), "--yes"]) == 0
            wait_for(
                lambda: [reader.snapshot().partition("r-back", p).replicas for p in (0, 1)] == [(0,), (1,)],
                timeout=30,
                what="the rollback restored both",
            )
    finally:
        clear_throttles(bs, BROKERS, ["r-back"])
