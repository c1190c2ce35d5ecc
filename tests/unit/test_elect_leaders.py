"""The preferred leader election a run ends with, against the in-memory controller (tests/fakes/cluster.py).

A plan that only reorders replicas changes no leader by itself; with the election (on by default
when the plan changes some partition's first replica) the run ends with the first replicas
leading. Checked here: the leaders in the fake, the outcomes kept in wave 0, the audit log
(intent before answer, one answer per intent), batching, a worker dying at the election, an
election that fails for some partitions or altogether, the store's migration, and the review's
leaders after (column-wise equal to the per-partition rule).
"""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from console import cli
from console.access.auth import Identity
from console.core.errors import AuthorizationFailed, ClusterUnavailable, ConsoleError
from console.core.model import BrokerId, ClusterState, SourceStatus
from console.core.states import RunState
from console.moves.waves import WaveLimits
from console.plans.columns import PAD
from console.plans.diff import change_of, diff, first_replica_changes
from console.plans.plan import Plan, PlanEntry
from console.present import history
from console.runs import election
from console.runs import executor as executor_module
from console.runs.executor import Executor
from console.runs.steps import Step
from console.services import runs as run_service
from console.storage.audit import AuditEntry
from console.storage.runs import ELECTION_WAVE
from console.storage.store import Store
from tests.fakes.cluster import Crash, FakeCluster
from tests.unit.builders import ids
from tests.unit.strategies import clusters, plans_for

REORDER = [("t", 0, (1, 0)), ("t", 1, (2, 1)), ("u", 0, (0, 2))]
"""Reorders only: t-0 on (0,1), t-1 on (1,2), u-0 on (2,0) get another first replica."""
READS = ("snapshot", "describe_configs", "list_reassignments")


pytestmark = pytest.mark.usefixtures("no_sleep")  # no real sleep in the executor or the services


def cluster(brokers: int = 3, **topics: list[tuple[int, ...]]) -> FakeCluster:
    return FakeCluster.of(brokers, topics or {"t": [(0, 1), (1, 2)], "u": [(2, 0)]}, size=1_000, copy_rate=10_000)


def plan_of(moves: list[tuple[str, int, tuple[int, ...]]]) -> Plan:
    return Plan.of(PlanEntry(t, p, ids(*r)) for t, p, r in moves)


def start(
    store: Store, fake: FakeCluster, moves: list[tuple[str, int, tuple[int, ...]]] = REORDER, elect: bool | None = None
) -> int:
    return run_service.start_run(
        store,
        fake,
        fake.snapshot(),
        run_service.RunRequest(
            Identity.cli("ann"), plan_of(moves), "r", run_service.RunSettings(limits=WaveLimits(), elect_leaders=elect)
        ),
        users=None,
    )


def ex(store: Store, fake: FakeCluster, user: str = "ann") -> Executor:
    return Executor(store, fake, user, settle_s=0, poll_s=0)


def tick(executor: Executor, run_id: int) -> Step:
    try:
        return executor.tick(run_id)
    except ConsoleError as e:  # as Executor.drive: the next tick tries again
        return Step(executor.store.runs.require(run_id), None, f"retrying: {e.message}")


def run_to_end(executor: Executor, fake: FakeCluster, run_id: int) -> list[Step]:
    steps: list[Step] = []
    for _ in range(50):
        steps.append(tick(executor, run_id))
        if steps[-1].run.state.terminal:
            return steps
        fake.advance(1)
    raise AssertionError(f"run {run_id} did not end: {[s.did for s in steps[-5:]]}")


def first_wave_completed(executor: Executor, fake: FakeCluster, run_id: int) -> None:
    """Tick (the fake cluster's clock moving on) until the first wave has completed."""
    for _ in range(10):
        if tick(executor, run_id).did == "wave 1 completed":
            return
        fake.advance(1)


def leaders(fake: FakeCluster) -> dict[tuple[str, int], int | None]:
    return {p.key: p.leader for p in fake.snapshot().partitions}


def audit(store: Store) -> list[AuditEntry]:
    """The audit log, checked: an answer refers to an earlier intent of the same action, once."""
    entries = store.audit.entries()
    by_id = {e.id: e for e in entries}
    for e in entries:
        if e.ref is not None:
            assert by_id[e.ref].id < e.id and by_id[e.ref].outcome == "sending" and by_id[e.ref].action == e.action, e
    assert all(n == 1 for n in Counter((e.ref, e.action) for e in entries if e.ref is not None).values())
    return entries


def elections(store: Store) -> list[tuple[str, object, object]]:
    """The "elect-leaders" entries: (outcome, partitions asked, response)."""
    return [
        (e.outcome, json.loads(e.request).get("partitions"), json.loads(e.response) if e.response else None)
        for e in audit(store)
        if e.action == "elect-leaders"
    ]


# -- a reorder-only plan ----------------------------------------------------------------------------
def test_a_reorder_only_run_ends_with_the_first_replicas_leading(store: Store) -> None:
    fake = cluster()
    assert leaders(fake) == {("t", 0): 0, ("t", 1): 1, ("u", 0): 2}
    run_id = start(store, fake)  # elect_leaders=None: on, the first replicas change
    assert store.runs.require(run_id).elect_leaders is True

    steps = run_to_end(ex(store, fake), fake, run_id)

    assert steps[-1].run.state is RunState.COMPLETED
    assert steps[-1].did == "run completed; preferred leader election: 3 elected, 0 not"
    assert leaders(fake) == {("t", 0): 1, ("t", 1): 2, ("u", 0): 0}
    assert [c.args[0] for c in fake.calls_to("elect_leaders")] == [[("t", 0), ("t", 1), ("u", 0)]]
    assert [(o.wave, o.key, o.accepted) for o in store.runs.outcomes(run_id, ELECTION_WAVE)] == [
        (0, ("t", 0), True),
        (0, ("t", 1), True),
        (0, ("u", 0), True),
    ]
    actions = [(e.action, e.outcome) for e in audit(store)]
    # after the last wave, before the run is marked completed
    assert actions[-4:] == [
        ("wave-complete", "completed"),
        ("elect-leaders", "sending"),
        ("elect-leaders", "accepted"),
        ("run-completed", "completed"),
    ]
    (_sending, asked, _), (_, _, answer) = elections(store)
    assert asked == [["t", 0, 1], ["t", 1, 2], ["u", 0, 0]]
    assert isinstance(answer, list) and [(o["topic"], o["partition"], o["accepted"]) for o in answer] == [
        ("t", 0, True),
        ("t", 1, True),
        ("u", 0, True),
    ]
    assert json.loads(audit(store)[0].request)["elect_leaders"] is True  # the choice is in the submit entry
    run = store.runs.require(run_id)
    assert history.election_line(run, store.runs.outcomes(run_id)) == "Preferred leader election: 3 elected, 0 not."
    assert history.not_elected_rows(store.runs.outcomes(run_id)) == []


def test_with_the_election_off_the_leaders_stay_where_they_were(store: Store) -> None:
    fake = cluster()
    run_id = start(store, fake, elect=False)
    assert store.runs.require(run_id).elect_leaders is False

    assert run_to_end(ex(store, fake), fake, run_id)[-1].run.state is RunState.COMPLETED
    assert [p.replicas for p in fake.snapshot().partitions] == [ids(1, 0), ids(2, 1), ids(0, 2)]
    assert leaders(fake) == {("t", 0): 0, ("t", 1): 1, ("u", 0): 2}
    assert fake.calls_to("elect_leaders") == [] and elections(store) == []
    assert store.runs.outcomes(run_id, ELECTION_WAVE) == []
    assert history.election_line(store.runs.require(run_id), []) is None


def test_the_default_is_on_only_when_some_first_replica_changes(store: Store) -> None:
    fake = cluster()
    same_first = [("t", 0, (0, 2)), ("t", 1, (1, 0))]  # moves, but every first replica stays
    assert not first_replica_changes(fake.snapshot(), plan_of(same_first))
    assert first_replica_changes(fake.snapshot(), plan_of(REORDER[:1]))
    assert not first_replica_changes(fake.snapshot(), plan_of([("zz", 0, (1, 0))]))  # unknown partition
    run_id = start(store, fake, same_first)
    assert store.runs.require(run_id).elect_leaders is False
    assert run_to_end(ex(store, fake), fake, run_id)[-1].run.state is RunState.COMPLETED
    assert fake.calls_to("elect_leaders") == []
    # asked for explicitly, a run whose preferred replicas lead already sends no election
    other = start(store, fake, [("t", 1, (1, 2))], elect=True)
    assert store.runs.require(other).elect_leaders is True
    steps = run_to_end(ex(store, fake), fake, other)
    assert steps[-1].run.state is RunState.COMPLETED and fake.calls_to("elect_leaders") == []


def test_a_move_whose_new_first_replica_already_leads_needs_no_election(store: Store) -> None:
    fake = cluster()
    run_id = start(store, fake, [("t", 0, (2, 1))])  # leader 0 leaves: the controller elects 2 itself
    assert store.runs.require(run_id).elect_leaders is True
    steps = run_to_end(ex(store, fake), fake, run_id)
    assert steps[-1].run.state is RunState.COMPLETED and steps[-1].did == "run completed"
    assert leaders(fake)[("t", 0)] == 2 and fake.calls_to("elect_leaders") == [] and elections(store) == []


def test_elections_go_in_batches_of_at_most_the_request_limit(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(election, "REQUEST_LIMIT", 2)
    fake = cluster(t=[(0, 1)] * 5)
    run_id = start(store, fake, [("t", p, (1, 0)) for p in range(5)])
    assert run_to_end(ex(store, fake), fake, run_id)[-1].run.state is RunState.COMPLETED
    assert [len(c.args[0]) for c in fake.calls_to("elect_leaders")] == [2, 2, 1]
    assert set(leaders(fake).values()) == {1}
    assert [o for o, _, _ in elections(store)] == ["sending", "accepted"] * 3


# -- a worker dying at the election ----------------------------------------------------------------------
@pytest.mark.parametrize("applied", [False, True], ids=["before it took effect", "after it took effect"])
def test_a_worker_that_dies_at_the_election_is_finished_by_another(
    store: Store, monkeypatch: pytest.MonkeyPatch, applied: bool
) -> None:
    monkeypatch.setattr(executor_module, "LEASE_S", 0.0)  # the dead worker's lease has run out
    fake = cluster()
    run_id = start(store, fake)
    fake.fail_next("elect_leaders", Crash("worker killed at the election"), applied=applied)
    with pytest.raises(Crash):
        run_to_end(ex(store, fake), fake, run_id)
    assert store.runs.require(run_id).state is RunState.RUNNING  # not completed before the election
    assert [o for o, _, _ in elections(store)] == ["sending"]  # the intent, without its answer

    steps = run_to_end(ex(store, fake, "bob"), fake, run_id)

    assert steps[-1].run.state is RunState.COMPLETED
    assert leaders(fake) == {("t", 0): 1, ("t", 1): 2, ("u", 0): 0}
    keys = [("t", 0), ("t", 1), ("u", 0)]
    got = [(o.key, o.accepted, o.code) for o in store.runs.outcomes(run_id, ELECTION_WAVE)]
    if applied:  # found leading: recorded, not sent again; the old intent gets its answer
        assert len(fake.calls_to("elect_leaders")) == 1
        assert got == [(k, True, "ALREADY_ELECTED") for k in keys]
        assert [o for o, _, _ in elections(store)] == ["sending", "resumed"]
        assert elections(store)[1][2] == {"already_elected": [list(k) for k in keys], "sent_again": []}
    else:  # never took effect: sent again (an election is idempotent)
        assert [c.args[0] for c in fake.calls_to("elect_leaders")] == [keys, keys]
        assert got == [(k, True, None) for k in keys]
        assert [o for o, _, _ in elections(store)] == ["sending", "resumed", "sending", "accepted"]
        assert elections(store)[1][2] == {"already_elected": [], "sent_again": [list(k) for k in keys]}
    assert Counter(e.action for e in audit(store))["run-completed"] == 1


# -- an election that fails ----------------------------------------------------------------------------------
def test_an_election_refused_for_some_partitions_completes_the_run_with_the_failures_recorded(store: Store) -> None:
    fake = cluster(4, t=[(0, 1), (1, 2)], u=[(2, 3)])
    fake.reject_election("t", 1, "PREFERRED_LEADER_NOT_AVAILABLE")
    run_id = start(store, fake, [("t", 0, (1, 0)), ("t", 1, (2, 1)), ("u", 0, (3, 2))])
    executor = ex(store, fake)
    first_wave_completed(executor, fake, run_id)  # the election comes at the next tick
    fake.stop_broker(3)  # u-0's first replica (3) drops out of the ISR before the election
    steps = run_to_end(executor, fake, run_id)

    assert steps[-1].run.state is RunState.COMPLETED  # the run does not fail
    assert steps[-1].did == "run completed; preferred leader election: 1 elected, 2 not"
    assert leaders(fake) == {("t", 0): 1, ("t", 1): 1, ("u", 0): 2}
    assert [(o.key, o.accepted, o.code) for o in store.runs.outcomes(run_id, ELECTION_WAVE)] == [
        (("t", 0), True, None),
        (("t", 1), False, "PREFERRED_LEADER_NOT_AVAILABLE"),
        (("u", 0), False, "PREFERRED_NOT_IN_SYNC"),
    ]
    assert [c.args[0] for c in fake.calls_to("elect_leaders")] == [[("t", 0), ("t", 1)]]  # u-0 is not sent
    assert [(o, a) for o, a, _ in elections(store)] == [
        ("not sent", [["u", 0, 3]]),
        ("sending", [["t", 0, 1], ["t", 1, 2]]),
        ("partly accepted", [["t", 0, 1], ["t", 1, 2]]),
    ]
    outcomes = store.runs.outcomes(run_id)
    # the Runs page: not elected is not "rejected by the controller"
    assert history.rejected_rows(outcomes) == []
    assert [r["partition"] for r in history.not_elected_rows(outcomes)] == ["t-1", "u-0"]
    assert history.election_line(store.runs.require(run_id), outcomes) == "Preferred leader election: 1 elected, 2 not."


def test_a_cluster_that_refuses_elections_completes_the_run_with_every_partition_not_elected(store: Store) -> None:
    fake = cluster()
    fake.fail_next("elect_leaders", AuthorizationFailed("Not authorised to elect leaders.", "Grant ALTER on CLUSTER."))
    run_id = start(store, fake)
    steps = run_to_end(ex(store, fake), fake, run_id)
    assert steps[-1].run.state is RunState.COMPLETED
    assert len(fake.calls_to("elect_leaders")) == 1 and leaders(fake) == {("t", 0): 0, ("t", 1): 1, ("u", 0): 2}
    assert {(o.accepted, o.code) for o in store.runs.outcomes(run_id, ELECTION_WAVE)} == {
        (False, "CLUSTER_AUTHORIZATION_FAILED")
    }
    assert [o for o, _, _ in elections(store)] == ["sending", "failed"]
    assert "Grant ALTER on CLUSTER." in str(elections(store)[1][2])


def test_an_unavailable_controller_is_asked_again_at_the_next_tick(store: Store) -> None:
    fake = cluster()
    fake.fail_next("elect_leaders", ClusterUnavailable("No controller answered.", "Retry."))
    run_id = start(store, fake)
    steps = run_to_end(ex(store, fake), fake, run_id)
    assert "retrying: No controller answered." in [s.did for s in steps]
    assert steps[-1].run.state is RunState.COMPLETED and len(fake.calls_to("elect_leaders")) == 2
    assert leaders(fake) == {("t", 0): 1, ("t", 1): 2, ("u", 0): 0}
    assert [o for o, _, _ in elections(store)] == ["sending", "failed", "sending", "accepted"]


def test_a_controller_that_never_answers_the_election_does_not_hold_the_run_forever(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(election, "ELECTION_ATTEMPTS", 3)
    fake = cluster()
    fake.fail_next("elect_leaders", ClusterUnavailable("Kafka did not answer ElectLeaders.", "Retry."), times=99)
    run_id = start(store, fake)
    steps = run_to_end(ex(store, fake), fake, run_id)
    assert steps[-1].run.state is RunState.COMPLETED and len(fake.calls_to("elect_leaders")) == 3
    assert {(o.accepted, o.code) for o in store.runs.outcomes(run_id, ELECTION_WAVE)} == {(False, "NO_ANSWER")}
    assert [o for o, _, _ in elections(store)] == ["sending", "failed"] * 3 + ["given up"]
    assert "Kafka did not answer ElectLeaders." in (store.runs.outcomes(run_id, ELECTION_WAVE)[0].message or "")


def test_the_adapter_reads_each_partitions_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    """confluent-kafka answers a KafkaError per partition (None when elected); ELECTION_NOT_NEEDED
    means the preferred replica leads already. The request carries no timeout keyword: the
    binding of confluent-kafka 2.16 refuses them."""
    from concurrent.futures import Future

    from confluent_kafka import KafkaError, KafkaException
    from confluent_kafka import TopicPartition as CTP

    from console.access.settings import ConnectionSettings
    from console.adapters.kafka import KafkaGateway

    asked: list[tuple[object, ...]] = []

    class Admin:
        def elect_leaders(self, election_type: object, partitions: list[CTP], **kw: object) -> Future[object]:
            asked.append((election_type, [(p.topic, p.partition) for p in partitions], kw))
            f: Future[object] = Future()
            f.set_result(
                {
                    CTP("t", 0): None,
                    CTP("t", 1): KafkaError(KafkaError.ELECTION_NOT_NEEDED),
                    CTP("t", 2): KafkaError(KafkaError.PREFERRED_LEADER_NOT_AVAILABLE),
                    CTP("t", 3): KafkaException(KafkaError(KafkaError.ELECTION_NOT_NEEDED)),
                }
            )
            return f

    kafka = KafkaGateway(ConnectionSettings({"bootstrap.servers": "127.0.0.1:1"}, name="x", timeout_s=1.0))
    monkeypatch.setattr(kafka.client, "confluent", lambda: Admin())
    out = kafka.elect_leaders([("t", 0), ("t", 1), ("t", 2), ("t", 3)])
    assert [(o.key, o.accepted, o.code) for o in out.values()] == [
        (("t", 0), True, None),
        (("t", 1), True, None),
        (("t", 2), False, "PREFERRED_LEADER_NOT_AVAILABLE"),
        (("t", 3), True, None),
    ]
    assert asked[0][1] == [("t", 0), ("t", 1), ("t", 2), ("t", 3)] and asked[0][2] == {}


def test_rejected_and_gone_partitions_are_left_out(store: Store) -> None:
    fake = cluster()
    fake.reject("t", 0, "INVALID_REPLICA_ASSIGNMENT")  # the wave's request is refused for t-0
    run_id = start(store, fake)
    executor = ex(store, fake)
    first_wave_completed(executor, fake, run_id)
    fake.delete_topic("u")
    assert run_to_end(executor, fake, run_id)[-1].run.state is RunState.COMPLETED
    assert [c.args[0] for c in fake.calls_to("elect_leaders")] == [[("t", 1)]]
    assert [(o.key, o.accepted) for o in store.runs.outcomes(run_id, ELECTION_WAVE)] == [(("t", 1), True)]


def test_no_election_from_a_snapshot_without_metadata(store: Store) -> None:
    fake = cluster()
    run_id = start(store, fake)
    executor = ex(store, fake)
    first_wave_completed(executor, fake, run_id)
    real = fake.snapshot

    def no_metadata(max_age_s: float = 0.0) -> ClusterState:  # Metadata failed: no partition seen
        s = real(max_age_s)
        return replace(s, partitions=(), status=replace(s.status, metadata=SourceStatus.UNAVAILABLE))

    fake.snapshot = no_metadata  # type: ignore[method-assign]
    step = tick(executor, run_id)
    fake.snapshot = real  # type: ignore[method-assign]
    assert step.did.startswith("waiting: Metadata did not answer") and step.run.state is RunState.RUNNING
    assert run_to_end(executor, fake, run_id)[-1].run.state is RunState.COMPLETED
    assert leaders(fake) == {("t", 0): 1, ("t", 1): 2, ("u", 0): 0}


# -- the store ----------------------------------------------------------------------------------------------
def test_a_store_from_before_the_election_gets_the_column_and_its_runs_read_as_off(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    old = sqlite3.connect(path)
    old.executescript("""
        CREATE TABLE runs (id INTEGER PRIMARY KEY AUTOINCREMENT, cluster TEXT NOT NULL, name TEXT NOT NULL,
            author TEXT NOT NULL, created_at REAL NOT NULL, updated_at REAL NOT NULL, state TEXT NOT NULL,
            plan_json TEXT NOT NULL, rollback_json TEXT NOT NULL, plan_hash TEXT NOT NULL, rate INTEGER,
            moves_per_broker INTEGER NOT NULL, per_request INTEGER NOT NULL, bytes_per_wave INTEGER,
            path TEXT NOT NULL DEFAULT 'api', owner TEXT, lease_until REAL);
        INSERT INTO runs (cluster, name, author, created_at, updated_at, state, plan_json, rollback_json, plan_hash,
            rate, moves_per_broker, per_request) VALUES ('c', 'old', 'ann', 1, 1, 'completed', '{}', '{}', 'h', NULL, 5, 500);
    """)
    old.close()
    store = Store(path)
    (run,) = store.runs.list()
    assert run.name == "old" and run.elect_leaders is False
    fake = cluster()
    new = start(store, fake, elect=True)
    store.close()
    again = Store(path)  # opening a migrated store again changes nothing
    assert [(r.name, r.elect_leaders) for r in again.runs.list()] == [("r", True), ("old", False)]
    assert again.runs.require(new).elect_leaders is True
    again.close()


# -- the CLI ----------------------------------------------------------------------------------------------
def test_the_cli_flag_and_runs_json(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    parser = cli.build_parser()
    base = ["submit", "--bootstrap-server", "b:9092", "--reassignment-json-file", "p.json"]
    assert parser.parse_args(base).no_elect_leaders is False
    assert parser.parse_args([*base, "--no-elect-leaders"]).no_elect_leaders is True
    monkeypatch.setenv("CONSOLE_DATA_DIR", str(tmp_path))
    store = Store()
    fake = cluster()
    start(store, fake, REORDER[:1], elect=False)
    start(store, fake, REORDER[1:])
    store.close()
    assert cli.main(["runs", "--json"]) == 0
    assert [(r["run"], r["elect_leaders"]) for r in json.loads(capsys.readouterr().out)] == [(2, True), (1, False)]


# -- the review: leaders after, with the election ----------------------------------------------------------
def test_the_review_counts_the_leaders_the_election_moves() -> None:
    state = cluster().snapshot()
    plan = plan_of(REORDER)
    off, on, auto = diff(state, plan), diff(state, plan, elect=True), diff(state, plan, elect=None)
    assert off.summary()["leaders_changing"] == 0 and not off.elect
    assert on.summary()["leaders_changing"] == 3 and auto.elect and auto.summary()["leaders_changing"] == 3
    assert [(c.leader_before, c.leader_after, c.needs_election) for c in on.changes] == [
        (0, 1, False),
        (1, 2, False),
        (2, 0, False),
    ]
    assert [(c.leader_before, c.leader_after, c.needs_election) for c in off.changes] == [
        (0, 0, True),
        (1, 1, True),
        (2, 2, True),
    ]
    assert {b.broker: (b.leaders_before, b.leaders_after) for b in on.brokers} == {0: (1, 1), 1: (1, 1), 2: (1, 1)}
    # a preferred replica out of sync now, and not being added, is not counted as leading after
    fake = cluster()
    fake.stop_broker(1)
    fake.live.add(BrokerId(1))  # back, but not in the ISR yet
    c = diff(fake.snapshot(), plan_of([("t", 0, (1, 0))]), elect=True).changes[0]
    assert (c.leader_before, c.leader_after) == (0, 0)
    # a new replica first: it leads after the election (the wave completes only once it is in sync)
    c = diff(state, plan_of([("t", 1, (0, 1))]), elect=True).changes[0]
    assert (c.adding, c.leader_before, c.leader_after) == (ids(0), 1, 0)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_column_wise_leaders_after_the_election_equal_the_per_partition_rule(data: st.DataObject) -> None:
    state = data.draw(clusters())
    plan = data.draw(plans_for(state))
    d = diff(state, plan, elect=True)
    for i, e in enumerate(plan.entries):
        ref = change_of(state.partition_index.get(e.key), e, elect=True)
        assert d.changes[i] == ref
        assert (None if d.columns.leader_after[i] == PAD else int(d.columns.leader_after[i])) == ref.leader_after
    moved = Counter[int]()
    for ref in d.changes:
        if ref.leader_before != ref.leader_after:
            if ref.leader_before is not None:
                moved[ref.leader_before] -= 1
            if ref.leader_after is not None:
                moved[ref.leader_after] += 1
    totals = state.broker_totals
    assert {b.broker: b.leaders_after for b in d.brokers} == {
        b.broker: totals.get(b.broker, (0, 0, 0))[1] + moved[b.broker] for b in d.brokers
    }
