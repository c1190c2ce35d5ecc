"""A log dir that goes offline during a log dir move (KAFKA-19571: a transient I/O error during a
move between dirs can mark a whole dir offline): the fake cluster models it as Kafka does, and a
run whose move's source or target dir goes offline records it, audits it and does not wait for it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from console import cli
from console.access.auth import Identity
from console.cli import runs as runs_cli
from console.cli.exits import Exit
from console.core.limits import LOG_DIR_RATE
from console.core.model import DIR_OFFLINE, BrokerId, DirOutcome, replicas_in_dir
from console.core.states import RunState, WaveState
from console.plans.logdirs import current_dir, dir_moves_in_flight, future_dir
from console.plans.plan import Plan, PlanEntry
from console.present import history
from console.present.notebook import run_parts
from console.runs import executor as executor_module
from console.runs.executor import Executor
from console.runs.steps import Step
from console.services import runs as run_service
from console.state.merge import LOG_DIR_OFFLINE
from console.storage.store import Store
from tests.fakes.cluster import Crash, FakeCluster, FakeReader

pytestmark = [pytest.mark.unit, pytest.mark.usefixtures("no_sleep")]
ANN = Identity.cli("ann")
D1, D2 = "/k/d1", "/k/d2"
MOVE = Plan.of([PlanEntry("t", 1, (BrokerId(1), BrokerId(2)), ("any", D2))])
"""Broker 2's replica of t-1 from D1 to D2, nothing else."""


def two_dirs() -> FakeCluster:
    """Brokers 0..3, two dirs each; t-0 on 0,1 and t-1 on 1,2, every replica in the first dir."""
    return FakeCluster.of(4, {"t": [[0, 1], [1, 2]]}, size=10_000, copy_rate=10, log_dirs=(D1, D2))


def test_the_fake_takes_a_dir_offline_as_kafka_does_and_a_restart_brings_it_back() -> None:
    fake = two_dirs()
    fake.alter_replica_log_dirs({("t", 1, BrokerId(2)): D2})  # a copy into D2 of broker 2
    fake.advance(1)
    fake.fail_log_dir(1, D1)  # t-0 and t-1 have their replica of broker 1 there
    fake.fail_log_dir(2, D2)  # the copy into it is dropped
    state = fake.snapshot()
    b1 = state.broker(BrokerId(1))
    assert [(d.path, d.offline) for d in b1.log_dirs] == [(D1, True), (D2, False)]
    assert "KAFKA_STORAGE_ERROR" in (b1.log_dirs[0].error or "")
    for n in (0, 1):
        p = state.partition("t", n)
        assert BrokerId(1) not in p.isr and p.leader != BrokerId(1)
        assert current_dir(p, BrokerId(1)) is None  # an offline dir lists nothing
    assert [p.name for p in replicas_in_dir(state.partitions, b1, D1)] == ["t-0", "t-1"]
    warned = [f for f in state.findings if f.code == LOG_DIR_OFFLINE]
    assert [(f.broker, D1 in f.message or D2 in f.message) for f in warned] == [(1, True), (2, True)]
    assert "t-0" in warned[0].message and "KAFKA-19571" in warned[0].hint
    assert not dir_moves_in_flight(state)
    assert current_dir(state.partition("t", 1), BrokerId(2)) == D1  # stays where it was
    # nothing can be put in it, nor moved out of a replica in it
    answers = fake.alter_replica_log_dirs({("t", 1, BrokerId(2)): D2, ("t", 0, BrokerId(1)): D2})
    assert [a.code for a in answers] == ["KAFKA_STORAGE_ERROR", "KAFKA_STORAGE_ERROR"]
    fake.stop_broker(1)
    fake.start_broker(1)
    back = fake.snapshot()
    assert not back.broker(BrokerId(1)).log_dirs[0].offline
    assert BrokerId(1) in back.partition("t", 0).isr
    assert [f.broker for f in back.findings if f.code == LOG_DIR_OFFLINE] == [2]


def test_a_copy_out_of_a_dir_that_goes_offline_stops_where_it_was() -> None:
    fake = two_dirs()
    fake.alter_replica_log_dirs({("t", 1, BrokerId(2)): D2})
    fake.advance(1)
    fake.fail_log_dir(2, D1)  # the source of the copy
    fake.advance(100)
    state = fake.snapshot()
    p = state.partition("t", 1)
    assert current_dir(p, BrokerId(2)) is None and future_dir(p, BrokerId(2)) == D2
    assert [(m.to_dir, m.copied_bytes) for m in dir_moves_in_flight(state)] == [(D2, 10)]  # copies nothing more
    assert fake.dir_of(("t", 1), 2) == D1


def start(tmp_path: Path, fake: FakeCluster) -> tuple[Store, int, Executor]:
    """The move under way: throttled (the log-dir rate set on broker 2), the copy started."""
    store = Store(tmp_path / "console.db")
    run_id = run_service.start_run(
        store,
        fake,
        fake.snapshot(),
        run_service.RunRequest(ANN, MOVE, "dir move", run_service.RunSettings(rate=5_000)),
        users=None,
    )
    ex = Executor(store, fake, "ann", stuck_after_s=10**9)
    ex.tick(run_id)
    fake.advance(1)
    assert fake.broker_configs[BrokerId(2)] == {LOG_DIR_RATE: "5000"}
    assert [(m.broker, m.to_dir) for m in dir_moves_in_flight(fake.snapshot())] == [(2, D2)]
    return store, run_id, ex


def drive(store: Store, fake: FakeCluster, run_id: int, ex: Executor) -> RunState:
    ticks: list[str] = []

    def step(s: Step) -> None:
        ticks.append(s.did)
        fake.advance(1)  # at 10 B/s the 10 kB copy would take far longer than these ticks

    state = ex.drive(run_id, every=0, progress=step, timeout=30).state
    assert len(ticks) < 10, ticks  # it did not wait for the copy
    return state


def said(store: Store, run_id: int) -> list[str]:
    return [o.message or "" for o in store.runs.outcomes(run_id) if o.code == DIR_OFFLINE]


def audited(store: Store) -> list[dict[str, object]]:
    return [json.loads(e.request) for e in store.audit.entries() if e.action == "log-dir-offline"]


@pytest.mark.parametrize("offline", [D2, D1], ids=["target", "source"])
def test_a_dir_move_whose_dir_goes_offline_is_recorded_and_not_waited_for(tmp_path: Path, offline: str) -> None:
    fake = two_dirs()
    fake.copy_rate = 10
    store, run_id, ex = start(tmp_path, fake)
    fake.fail_log_dir(2, offline)
    assert drive(store, fake, run_id, ex) is RunState.COMPLETED
    [message] = said(store, run_id)
    assert f"the log dir {offline} of broker 2" in message and "went offline during the move" in message
    assert "KAFKA-19571" in message and "restart broker 2" in message and f"not in {D2} as the plan asked" in message
    if offline == D2:
        assert f"the replica stays in {D1}" in message
        assert current_dir(fake.snapshot().partition("t", 1), BrokerId(2)) == D1
    else:
        assert "offline on broker 2 (out of the ISR)" in message
    [entry] = audited(store)
    assert entry["replicas"] == [
        {
            "topic": "t",
            "partition": 1,
            "broker": 2,
            "log_dir": D2,
            "offline_dir": offline,
            "from": D1 if offline == D2 else None,
        }
    ]
    assert [(d.code, d.log_dir) for d in store.runs.dir_moves(run_id)] == [(None, D2), (DIR_OFFLINE, offline)]
    assert [w.state for w in store.runs.waves(run_id)] == [WaveState.COMPLETED]
    # the run's end says the replica is not where the plan asked
    [end] = [e for e in store.audit.entries() if e.action == "run-completed"]
    assert json.loads(end.response or "{}")["not_in_log_dir"] == [["t", 1, 2, offline]]
    # the log-dir throttle came off with the wave; the dir was asked for once
    assert not fake.broker_configs.get(BrokerId(2)) and not store.runs.ledger(run_id)
    assert len(fake.calls_to("alter_replica_log_dirs")) == 1


@pytest.mark.parametrize("offline", [D2, D1], ids=["target", "source"])
def test_a_worker_that_resumes_after_the_offline_dir_was_recorded_neither_asks_nor_records_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, offline: str
) -> None:
    monkeypatch.setattr(executor_module, "LEASE_S", 0.0)  # the dead worker's lease has run out
    fake = two_dirs()
    fake.copy_rate = 10
    store, run_id, ex = start(tmp_path, fake)
    fake.fail_log_dir(2, offline)
    fake.fail_next("alter_configs", Crash("worker killed while taking the throttle off"))
    with pytest.raises(Crash):
        ex.tick(run_id)  # recorded the offline dir, then died taking the wave's throttle off
    assert len(said(store, run_id)) == 1
    assert fake.broker_configs[BrokerId(2)] == {LOG_DIR_RATE: "5000"}
    assert drive(store, fake, run_id, Executor(store, fake, "bob")) is RunState.COMPLETED
    assert len(said(store, run_id)) == 1 and len(audited(store)) == 1
    assert len(fake.calls_to("alter_replica_log_dirs")) == 1  # not sent again
    assert not fake.broker_configs.get(BrokerId(2)) and not store.runs.ledger(run_id)


def test_the_runs_page_the_runs_list_and_the_notebook_say_the_replica_is_not_in_its_dir_not_rejected(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    fake = two_dirs()
    fake.copy_rate = 10
    store, run_id, ex = start(tmp_path, fake)
    fake.fail_log_dir(2, D2)
    assert drive(store, fake, run_id, ex) is RunState.COMPLETED
    outcomes = store.runs.outcomes(run_id)
    assert history.rejected_rows(outcomes) == []  # the controller refused nothing
    [row] = history.not_in_dir_rows(outcomes)
    assert row["partition"] == "t-1" and f"the log dir {D2} of broker 2" in str(row["what happened"])
    assert [r["rejected"] for r in history.wave_rows(fake.snapshot(), store.runs.waves(run_id), outcomes)] == [0]
    assert "0 partition(s) rejected, 1 replica not in its log dir" in " ".join(
        run_parts(store.runs.detail(run_id)).summary
    )
    assert store.runs.detail(run_id).to_pandas()["rejected"].tolist() == [0]
    store.close()
    monkeypatch.setenv("CONSOLE_DATA_DIR", str(tmp_path))  # the store start() made
    assert cli.main(["runs"]) == 0
    header, line = capsys.readouterr().out.splitlines()
    assert header.split()[-1] == "problems" and line.endswith("1 replica not in its log dir (a dir went offline)")
    assert cli.main(["runs", "--json"]) == 0
    [listed] = json.loads(capsys.readouterr().out)
    assert listed["state"] == "completed" and listed["problems"] == "1 replica not in its log dir (a dir went offline)"


def test_submit_says_the_replica_not_in_its_dir_apart_from_rejections_and_ends_partly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    fake = two_dirs()
    fake.copy_rate = 10
    sent = fake.alter_replica_log_dirs

    def and_the_dir_fails(moves: dict[tuple[str, int, BrokerId], str]) -> list[DirOutcome]:
        answers = sent(moves)
        fake.fail_log_dir(2, D2)  # during the copy the broker just started
        return answers

    monkeypatch.setattr(fake, "alter_replica_log_dirs", and_the_dir_fails)
    monkeypatch.setenv("CONSOLE_DATA_DIR", str(tmp_path))
    monkeypatch.setattr(runs_cli, "connect", lambda args: FakeReader(fake))
    plan = tmp_path / "plan.json"
    plan.write_text(MOVE.to_json())
    args = ["submit", "--bootstrap-server", "fake:9092", "--reassignment-json-file", str(plan), "--yes", "--json"]
    assert cli.main(args) == Exit.PARTLY
    out, err = capsys.readouterr()
    assert f"Not in its log dir (wave 1): t-1: the log dir {D2} of broker 2 went offline" in err
    assert "Rejected" not in err
    said = json.loads(out)
    assert said["state"] == "completed" and said["not_in_log_dir"] == ["t-1"] and said["rejected"] == []


def test_a_new_replica_whose_dir_goes_offline_is_said_once_and_its_reassignment_is_left_to_the_stuck_flag(
    tmp_path: Path,
) -> None:
    fake = two_dirs()
    fake.copy_rate = 10
    store = Store(tmp_path / "console.db")
    plan = Plan.of([PlanEntry("t", 0, (BrokerId(0), BrokerId(3)), ("any", D2))])  # 3 created in D2
    run_id = run_service.start_run(
        store, fake, fake.snapshot(), run_service.RunRequest(ANN, plan, "new replica"), users=None
    )
    ex = Executor(store, fake, "ann", stuck_after_s=10**9)
    ex.tick(run_id)
    assert [d.code for d in store.runs.dir_moves(run_id)] == ["REPLICA_NOT_AVAILABLE"]
    assert fake.dir_of(("t", 0), 3) == D2
    fake.fail_log_dir(3, D2)
    for _ in range(3):
        ex.tick(run_id)
        fake.advance(1)
    [message] = said(store, run_id)
    assert message.startswith(f"the log dir {D2} of broker 3 is offline")  # it was not moving yet: not "during"
    assert "no log in an online dir of broker 3" in message and f"not in {D2} as the plan asked" in message
    assert len(audited(store)) == 1
    # the reassignment itself cannot complete (its new replica is offline): the run waits, as for any
    # replica that cannot catch up, and the stuck flag says so in time
    assert store.runs.require(run_id).state is RunState.RUNNING
    assert [w.state for w in store.runs.waves(run_id)] == [WaveState.RUNNING]
