"""A plan's log dirs carried out over the fake cluster (two dirs per broker): AlterReplicaLogDirs
before the reassignment (a new replica placed in the dir asked for, an existing one copied to its
other dir), the wave waiting for the copies, the log-dir throttle in the ledger and taken off, each
request audited, and a worker resuming in the middle without asking twice."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from console.access.auth import Identity
from console.core.errors import NotPermitted
from console.core.limits import LOG_DIR_RATE
from console.core.model import BrokerId
from console.core.states import RunState
from console.moves.throttles import leftover_throttles
from console.plans.diff import ChangeKind, change_of, diff
from console.plans.logdirs import current_dir, dir_moves_in_flight, dirs_reached
from console.plans.plan import Plan, PlanEntry
from console.runs import executor as executor_module
from console.runs.executor import Executor
from console.services import cancel as cancel_service
from console.services import runs as run_service
from console.storage.store import Store
from tests.fakes.cluster import Crash, FakeCluster

pytestmark = [pytest.mark.unit, pytest.mark.usefixtures("no_sleep")]
ANN = Identity.cli("ann")
D1, D2 = "/k/d1", "/k/d2"


def two_dirs() -> FakeCluster:
    """Brokers 0..3, two dirs each; t-0 on 0,1 and t-1 on 1,2, every replica in the first dir."""
    return FakeCluster.of(4, {"t": [[0, 1], [1, 2]]}, size=10_000, copy_rate=1_000, log_dirs=(D1, D2))


PLAN = Plan.of(
    [
        PlanEntry("t", 0, (BrokerId(0), BrokerId(3)), (D2, D2)),  # 0 changes dir, new replica 3 into D2
        PlanEntry("t", 1, (BrokerId(1), BrokerId(2)), ("any", D2)),  # only 2 changes dir
    ]
)


def drive(store: Store, fake: FakeCluster, run_id: int, executor: Executor | None = None) -> RunState:
    ex = executor or Executor(store, fake, "ann")
    return ex.drive(run_id, every=0, progress=lambda _s: fake.advance(2), timeout=30).state


def test_a_dir_only_entry_is_a_log_dir_move_not_a_no_change() -> None:
    state = two_dirs().snapshot()
    assert change_of(state.partition("t", 1), PLAN.entries[1]).kind is ChangeKind.LOG_DIR
    assert change_of(state.partition("t", 0), PLAN.entries[0]).kind is ChangeKind.MOVE
    assert diff(state, PLAN).counts()[ChangeKind.LOG_DIR.value] == 1
    already = Plan.of([PlanEntry("t", 1, (BrokerId(1), BrokerId(2)), (D1, D1))])  # where they are
    assert change_of(state.partition("t", 1), already.entries[0]).kind is ChangeKind.NONE


def test_named_dirs_are_asked_for_before_the_reassignment_and_the_wave_waits_for_the_copies(tmp_path: Path) -> None:
    fake = two_dirs()
    store = Store(tmp_path / "console.db")
    run_id = run_service.start_run(
        store,
        fake,
        fake.snapshot(),
        run_service.RunRequest(ANN, PLAN, "dirs", run_service.RunSettings(rate=5_000)),
        users=None,
    )
    ex = Executor(store, fake, "ann")
    ex.tick(run_id)  # throttle, then the dirs, then the reassignment
    methods = [c.method for c in fake.calls if c.method in ("alter_replica_log_dirs", "alter_reassignments")]
    assert methods[:2] == ["alter_replica_log_dirs", "alter_reassignments"]
    answers = {(d.topic, d.partition, int(d.broker)): d.code for d in store.runs.dir_moves(run_id)}
    assert answers == {("t", 0, 0): None, ("t", 0, 3): "REPLICA_NOT_AVAILABLE", ("t", 1, 2): None}
    ledger = {(e.name, e.key) for e in store.runs.ledger(run_id)}
    assert {("0", LOG_DIR_RATE), ("2", LOG_DIR_RATE)} <= ledger  # the brokers copying between their dirs
    assert fake.broker_configs[BrokerId(0)][LOG_DIR_RATE] == "5000"
    moving = fake.snapshot()
    assert {(m.topic, m.partition, int(m.broker), m.to_dir) for m in dir_moves_in_flight(moving)} == {
        ("t", 0, 0, D2),
        ("t", 1, 2, D2),
    }

    assert drive(store, fake, run_id, ex) is RunState.COMPLETED
    done = fake.snapshot()
    assert current_dir(done.partition("t", 0), BrokerId(0)) == D2
    assert current_dir(done.partition("t", 0), BrokerId(3)) == D2  # created where asked
    assert current_dir(done.partition("t", 1), BrokerId(2)) == D2
    assert all(dirs_reached(done.partition(e.topic, e.partition), e) for e in PLAN.entries)
    assert not dir_moves_in_flight(done)
    assert LOG_DIR_RATE not in fake.broker_configs.get(BrokerId(0), {})  # taken off with the wave
    audit = [e for e in store.audit.entries() if e.action == "alter-log-dirs"]
    assert [a.outcome for a in audit][-1].startswith("2 moving, 1 placed when created")
    assert json.loads(audit[0].request)["replicas"][0][:3] == ["t", 0, 0]


def test_a_worker_that_dies_at_any_call_is_finished_by_another_without_asking_for_a_dir_twice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(executor_module, "LEASE_S", 0.0)  # the dead worker's lease has run out
    reference = two_dirs()
    ref_store = Store(tmp_path / "reference.db")
    ref_run = run_service.start_run(
        ref_store,
        reference,
        reference.snapshot(),
        run_service.RunRequest(ANN, PLAN, "dirs", run_service.RunSettings(rate=5_000)),
        users=None,
    )
    assert drive(ref_store, reference, ref_run) is RunState.COMPLETED
    methods = [c.method for c in reference.calls]
    wrong: list[str] = []
    for k in range(1, len(methods)):
        for applied in (False, True):
            if applied and methods[k] in ("snapshot", "describe_configs", "list_reassignments", "cluster_info"):
                continue
            fake = two_dirs()
            store = Store(tmp_path / f"crash-{k}-{applied}.db")
            run_id = run_service.start_run(
                store,
                fake,
                fake.snapshot(),
                run_service.RunRequest(ANN, PLAN, "dirs", run_service.RunSettings(rate=5_000)),
                users=None,
            )
            fake.fail_call(k, Crash(f"worker killed at call {k}"), applied=applied)
            with pytest.raises(Crash):
                drive(store, fake, run_id)
            state = drive(store, fake, run_id, Executor(store, fake, "bob"))
            done = fake.snapshot()
            # asked twice only when the worker died after the broker took the request, before its answer was kept
            twice_ok = applied and methods[k] == "alter_replica_log_dirs"
            asked = Counter(
                r
                for i, c in enumerate(fake.calls)
                if c.method == "alter_replica_log_dirs" and (c.error is None or (i == k and applied))
                for r in c.args[0]
            )
            where = f"call {k} ({methods[k]}, {'after' if applied else 'before'} it took effect)"
            if state is not RunState.COMPLETED:
                wrong.append(f"{where}: run {state}")
            if not all(dirs_reached(done.partition(e.topic, e.partition), e) for e in PLAN.entries):
                wrong.append(f"{where}: dirs not reached")
            if max(asked.values(), default=0) > (2 if twice_ok else 1):
                wrong.append(f"{where}: asked {dict(asked)}")
            if store.runs.ledger(run_id) or LOG_DIR_RATE in fake.broker_configs.get(BrokerId(0), {}):
                wrong.append(f"{where}: log dir throttle left")
            store.close()
    assert not wrong, "\n".join(wrong)


def test_a_dir_the_broker_refuses_is_recorded_and_not_waited_for(tmp_path: Path) -> None:
    fake = FakeCluster.of(4, {"t": [[0, 1], [1, 2]]}, size=10_000, copy_rate=1_000, log_dirs=(D1, D2, "/k/gone"))
    store = Store(tmp_path / "console.db")
    plan = Plan.of([PlanEntry("t", 1, (BrokerId(1), BrokerId(2)), ("any", "/k/gone"))])
    run_id = run_service.start_run(
        store, fake, fake.snapshot(), run_service.RunRequest(ANN, plan, "bad dir"), users=None
    )
    fake.log_dirs = (D1, D2)  # the dir is gone since the run was recorded (a start_run refuses an unknown one)
    assert drive(store, fake, run_id) is RunState.COMPLETED
    assert [d.code for d in store.runs.dir_moves(run_id)] == ["LOG_DIR_NOT_FOUND"]
    assert [e.outcome for e in store.audit.entries() if e.action == "alter-log-dirs"][-1].endswith("1 refused")


def test_a_log_dir_move_is_cancelled_back_to_its_dir_and_the_run_stops_waiting_for_it(tmp_path: Path) -> None:
    fake = two_dirs()
    fake.copy_rate = 10  # the copy between dirs takes long
    store = Store(tmp_path / "console.db")
    plan = Plan.of([PlanEntry("t", 1, (BrokerId(1), BrokerId(2)), ("any", D2))])
    run_id = run_service.start_run(
        store, fake, fake.snapshot(), run_service.RunRequest(ANN, plan, "slow dir"), users=None
    )
    ex = Executor(store, fake, "ann")
    ex.tick(run_id)
    fake.advance(1)
    assert [(m.partition, int(m.broker), m.from_dir, m.to_dir) for m in dir_moves_in_flight(fake.snapshot())] == [
        (1, 2, D1, D2)
    ]
    with pytest.raises(NotPermitted):
        cancel_service.cancel_dir_moves(store, fake, Identity("vic"), fake.name)
    assert len(fake.calls_to("alter_replica_log_dirs")) == 1  # the viewer sent nothing
    done = cancel_service.cancel_dir_moves(store, fake, ANN, fake.name, topic="t")
    assert [(a.topic, a.partition, int(a.broker), a.log_dir, a.accepted) for a in done.answers] == [
        ("t", 1, 2, D1, True)
    ]
    assert done.runs == (run_id,)
    now = fake.snapshot()
    assert not dir_moves_in_flight(now) and current_dir(now.partition("t", 1), BrokerId(2)) == D1
    assert drive(store, fake, run_id, ex) is RunState.COMPLETED  # no longer waits for the cancelled move
    assert len(fake.calls_to("alter_replica_log_dirs")) == 2  # and does not ask for it again
    audit = [(e.action, e.outcome) for e in store.audit.entries() if "cancel_log_dir_moves" in e.request]
    assert audit == [
        ("cancel", "refused"),
        ("cancel-log-dir-moves", "sending"),
        ("cancel-log-dir-moves", "1 cancelled"),
    ]


def test_a_rate_change_during_a_dir_move_changes_the_log_dir_rate_only_and_nothing_is_left(tmp_path: Path) -> None:
    fake = two_dirs()
    fake.copy_rate = 10  # the copy between dirs takes long
    store = Store(tmp_path / "console.db")
    plan = Plan.of([PlanEntry("t", 1, (BrokerId(1), BrokerId(2)), ("any", D2))])  # broker 2 changes dir only
    run_id = run_service.start_run(
        store,
        fake,
        fake.snapshot(),
        run_service.RunRequest(ANN, plan, "slow dir", run_service.RunSettings(rate=5_000)),
        users=None,
    )
    ex = Executor(store, fake, "ann")
    ex.tick(run_id)
    fake.advance(1)
    assert fake.broker_configs[BrokerId(2)] == {LOG_DIR_RATE: "5000"}
    assert leftover_throttles(fake.snapshot()) == []  # the dir copy needs it: not a leftover to sweep
    run_service.change_throttle(store, fake, ANN, run_id, 7_000, confirm_s=0)
    assert fake.broker_configs[BrokerId(2)] == {LOG_DIR_RATE: "7000"}  # no replication rates it never had
    fake.copy_rate = 100_000
    assert drive(store, fake, run_id, ex) is RunState.COMPLETED
    assert not any(fake.broker_configs.get(BrokerId(b)) for b in range(4))
    assert not store.runs.ledger(run_id)


def test_cancelling_a_run_cancels_the_log_dir_moves_it_asked_for_and_the_run_ends_cancelled(tmp_path: Path) -> None:
    from console.moves.cancel import plan_cancel

    fake = two_dirs()
    fake.copy_rate = 10  # every copy takes long
    store = Store(tmp_path / "console.db")
    run_id = run_service.start_run(store, fake, fake.snapshot(), run_service.RunRequest(ANN, PLAN, "dirs"), users=None)
    ex = Executor(store, fake, "ann")
    ex.tick(run_id)  # the dirs asked for, then the reassignment
    fake.advance(1)
    fake.alter_replica_log_dirs({("t", 1, BrokerId(1)): D2})  # a dir move the run did not ask for
    state = fake.snapshot()
    cluster = store.runs.require(run_id).cluster
    ours = store.runs.active_partitions(cluster)
    keys = [k for k, r in ours.items() if r == run_id]  # the Runs page's "Cancel the run…"
    seen = plan_cancel(state, keys, ours)
    assert [p.key for p in seen.cancel] == [("t", 0)]  # t-1 only changes dir: not a reassignment in flight
    moves = cancel_service.runs_dir_moves(store, lambda: state, {run_id}, keys)
    assert sorted((m.partition, int(m.broker), m.to_dir) for m in moves) == [(0, 0, D2), (1, 2, D2)]

    with pytest.raises(NotPermitted):  # a viewer: refused, audited, nothing sent
        cancel_service.cancel_seen(store, fake, Identity("vic"), cluster, seen, ours, dir_moves=[m.key for m in moves])
    assert len(fake.calls_to("alter_replica_log_dirs")) == 2 and len(fake.calls_to("alter_reassignments")) == 1

    report = cancel_service.cancel_seen(
        store, fake, ANN, cluster, seen, ours, wait_s=5, dir_moves=[m.key for m in moves], whole_runs={run_id}
    )
    assert report.dirs is not None
    assert sorted((a.partition, int(a.broker), a.log_dir, a.accepted) for a in report.dirs.answers) == [
        (0, 0, D1, True),
        (1, 2, D1, True),
    ]
    assert report.dirs.runs == (run_id,)
    assert "2 log dir moves cancelled" in report.summary()
    now = fake.snapshot()
    # the run's dir moves dropped, each replica in its dir; the one it did not ask for still moving
    assert [(m.partition, int(m.broker)) for m in dir_moves_in_flight(now)] == [(1, 1)]
    assert current_dir(now.partition("t", 1), BrokerId(2)) == D1
    assert not now.in_flight
    assert drive(store, fake, run_id, ex) is RunState.CANCELLED  # its worker (holding it) ends it as cancelled
    audit = [(e.action, e.outcome) for e in store.audit.entries() if e.action == "cancel-log-dir-moves"]
    assert audit == [("cancel-log-dir-moves", "sending"), ("cancel-log-dir-moves", "2 cancelled")]
    # the cancel of the Live dialog: only the replicas the operator saw, one no longer moving left alone
    gone = cancel_service.cancel_dir_moves(
        store, fake, ANN, fake.name, replicas=[("t", 1, BrokerId(1)), ("t", 0, BrokerId(0))]
    )
    assert [(a.partition, int(a.broker), a.accepted) for a in gone.answers] == [(1, 1, True)]
    assert gone.gone == (("t", 0, BrokerId(0)),)
    assert [r["outcome"] for r in gone.rows()] == [f"accepted: stays in {D1}", "no longer moving"]
    assert not dir_moves_in_flight(fake.snapshot())


def test_cancelling_a_run_whose_wave_only_moves_dirs_stops_it_before_its_next_wave(tmp_path: Path) -> None:
    from console.moves.cancel import plan_cancel
    from console.moves.waves import WaveLimits

    fake = two_dirs()
    fake.copy_rate = 10  # the copy between dirs takes long
    store = Store(tmp_path / "console.db")
    plan = Plan.of(
        [
            PlanEntry("t", 0, (BrokerId(0), BrokerId(1)), (D2, "any")),  # wave 1: broker 0 changes dir only
            PlanEntry("t", 1, (BrokerId(1), BrokerId(3))),  # wave 2: a reassignment
        ]
    )
    run_id = run_service.start_run(
        store,
        fake,
        fake.snapshot(),
        run_service.RunRequest(ANN, plan, "two waves", run_service.RunSettings(limits=WaveLimits(partitions=1))),
        users=None,
    )
    ex = Executor(store, fake, "ann")
    ex.tick(run_id)
    fake.advance(1)
    state = fake.snapshot()
    cluster = store.runs.require(run_id).cluster
    ours = store.runs.active_partitions(cluster)
    keys = [k for k, r in ours.items() if r == run_id]
    assert keys == [("t", 0)]
    seen = plan_cancel(state, keys, ours)
    assert not seen.cancel  # nothing in flight to cancel: only the dir move
    moves = cancel_service.runs_dir_moves(store, lambda: state, {run_id}, keys)
    report = cancel_service.cancel_seen(
        store, fake, ANN, cluster, seen, ours, wait_s=0, dir_moves=[m.key for m in moves]
    )
    assert report.dirs is not None and [a.accepted for a in report.dirs.answers] == [True]
    assert store.runs.require(run_id).state is RunState.STOPPING
    assert drive(store, fake, run_id, ex) is RunState.STOPPED
    assert not fake.calls_to("alter_reassignments")  # wave 2 never sent
    assert current_dir(fake.snapshot().partition("t", 0), BrokerId(0)) == D1
    assert [e.outcome for e in store.audit.entries(action="run-stopping")] == ["stopping"]
