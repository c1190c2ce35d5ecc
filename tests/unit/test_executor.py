"""The executor driven through whole runs against an in-memory controller (tests/fakes/cluster.py).

Each test runs a real store, starts a run with :func:`run_service.start_run`, ticks the executor
while the fake's clock moves, and checks three things: the store (run and wave states,
outcomes, the throttle ledger), the audit log (intent before answer, one answer per intent, one
end per run) and the fake cluster (what was sent, how often, and the configs left behind).
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from console.access.auth import Identity
from console.core.errors import (
    AuthorizationFailed,
    ClusterUnavailable,
    ConsoleError,
    IllegalTransition,
    PartiallyApplied,
    UnsupportedByCluster,
)
from console.core.limits import FOLLOWER_LIST, FOLLOWER_RATE, LEADER_LIST, LEADER_RATE
from console.core.model import BrokerId, TopicPartition
from console.core.states import RunState, SubmitPath, WaveState
from console.moves.cancel import plan_cancel
from console.moves.guardrails import GuardrailSettings
from console.moves.throttles import leftover_throttles
from console.moves.waves import WaveLimits
from console.plans.plan import Plan, PlanEntry
from console.present import history
from console.runs import executor as executor_module
from console.runs.executor import Executor
from console.runs.steps import Step
from console.services import cancel as cancel_service
from console.services import runs as run_service
from console.storage.audit import AuditEntry
from console.storage.store import Store
from tests.fakes.cluster import Crash, FakeCluster
from tests.unit.builders import ids

RATE = 1_000
SIZE = 4_000  # bytes per partition: 4 s of copying at RATE
MOVES = [("t", 0, (3, 1)), ("t", 1, (3, 2))]  # both add on broker 3: two waves at one move per broker
ONE_WAVE = [("t", 0, (3, 1)), ("t", 1, (0, 2))]
ENDS = {"run-completed", "run-cancelled", "run-failed", "run-stopped", "run-abandoned"}


# -- the world ---------------------------------------------------------------------------------------
pytestmark = pytest.mark.usefixtures("no_sleep")  # no real sleep in the executor or the services


def cluster(copy_rate: int = 10 * RATE, **kw: bool) -> FakeCluster:
    """Brokers 0..3; t-0 on (0,1), t-1 on (1,2), u-0 on (2,0); throttles someone set before the
    console: an entry on t's leader list and a leader rate on broker 1."""
    fake = FakeCluster.of(4, {"t": [(0, 1), (1, 2)], "u": [(2, 0)]}, size=SIZE, copy_rate=copy_rate, **kw)
    fake.topic_configs["t"] = {LEADER_LIST: "9:9"}
    fake.broker_configs[BrokerId(1)] = {LEADER_RATE: "5000"}
    return fake


BEFORE = ({1: {LEADER_RATE: "5000"}}, {"t": {LEADER_LIST: "9:9"}})


def configs(fake: FakeCluster) -> tuple[dict[int, dict[str, str]], dict[str, dict[str, str]]]:
    """The dynamic configs the fake holds (non-empty only)."""
    return (
        {int(b): c for b, c in fake.broker_configs.items() if c},
        {t: c for t, c in fake.topic_configs.items() if c},
    )


def start(
    store: Store,
    fake: FakeCluster,
    moves: list[tuple[str, int, tuple[int, ...]]] = MOVES,
    rate: int | None = RATE,
    limits: WaveLimits = WaveLimits(moves_per_broker=1),
    name: str = "r",
    elect_leaders: bool = False,
) -> int:
    plan = Plan.of(PlanEntry(t, p, ids(*r)) for t, p, r in moves)
    return run_service.start_run(
        store,
        fake,
        fake.snapshot(),
        run_service.RunRequest(
            Identity.cli("ann"),
            plan,
            name,
            run_service.RunSettings(rate=rate, limits=limits, elect_leaders=elect_leaders),
        ),
        users=None,
    )


def tick(executor: Executor, run_id: int) -> Step:
    """One tick as :meth:`Executor.drive` takes it: a cluster error means "again at the next tick"."""
    try:
        return executor.tick(run_id)
    except ConsoleError as e:
        return Step(executor.store.runs.require(run_id), None, f"retrying: {e.message}")


def run_to_end(
    executor: Executor, fake: FakeCluster, run_id: int, max_ticks: int = 200, step_s: float = 1.0
) -> list[Step]:
    steps: list[Step] = []
    for _ in range(max_ticks):
        steps.append(tick(executor, run_id))
        if steps[-1].run.state.terminal:
            return steps
        fake.advance(step_s)
    raise AssertionError(f"run {run_id} did not end in {max_ticks} ticks: {[s.did for s in steps[-5:]]}")


def tick_until(
    executor: Executor, fake: FakeCluster, run_id: int, wave: int, state: WaveState, step_s: float = 1.0
) -> None:
    for _ in range(50):
        if waves(executor.store, run_id)[wave - 1] is state:
            return
        tick(executor, run_id)
        fake.advance(step_s)
    raise AssertionError(f"wave {wave} never became {state}")


def waves(store: Store, run_id: int) -> list[WaveState]:
    return [w.state for w in store.runs.waves(run_id)]


def sent(fake: FakeCluster) -> list[TopicPartition]:
    """Every partition an applied request moved to a target (accepted by the controller)."""
    out: list[TopicPartition] = []
    for c in fake.calls_to("alter_reassignments"):
        targets, result = c.args[0], c.result
        if isinstance(result, dict) and isinstance(targets, dict):
            out += [k for k, o in result.items() if o.accepted and targets[k] is not None]
    for c in fake.calls_to("create_legacy_reassignment"):
        if isinstance(c.result, dict):  # the znode was written
            out += list(c.result)
    return out


def effects(fake: FakeCluster) -> list[str]:
    """The calls that change the cluster, in order (reads left out)."""
    return [
        c.method
        for c in fake.calls
        if c.method not in ("snapshot", "describe_configs", "list_reassignments", "replicas_seen")
    ]


def audit(store: Store) -> list[AuditEntry]:
    """The audit log, checked for what must always hold: an answer refers to an earlier intent of
    the same action, each intent is answered at most once per action, a run ends once, a wave
    completes once."""
    entries = store.audit.entries()
    by_id = {e.id: e for e in entries}
    for e in entries:
        if e.ref is not None:
            intent = by_id[e.ref]
            assert intent.id < e.id and intent.outcome == "sending", (intent, e)
            assert intent.action == e.action or (intent.action, e.action) == ("cancel", "cancel-complete"), (intent, e)
    answers = Counter((e.ref, e.action) for e in entries if e.ref is not None)
    assert all(n == 1 for n in answers.values()), answers
    runs_ended = Counter(json.loads(e.request)["run"] for e in entries if e.action in ENDS)
    assert all(n == 1 for n in runs_ended.values()), runs_ended
    completed = Counter(
        (json.loads(e.request)["run"], json.loads(e.request)["wave"]) for e in entries if e.action == "wave-complete"
    )
    assert all(n == 1 for n in completed.values()), completed
    return entries


def actions(store: Store) -> list[tuple[str, str]]:
    return [(e.action, e.outcome) for e in audit(store)]


def executor(store: Store, fake: FakeCluster, user: str = "ann") -> Executor:
    return Executor(store, fake, user, settle_s=0, poll_s=0)


# -- 1. a throttled run in two waves ------------------------------------------------------------------------
def test_a_throttled_plan_in_two_waves_completes_and_leaves_the_throttles_as_they_were(store: Store) -> None:
    fake = cluster()
    run_id = start(store, fake)
    ex = executor(store, fake)
    assert [len(w.entries_json) > 0 for w in store.runs.waves(run_id)] == [True, True]

    steps = run_to_end(ex, fake, run_id)

    assert steps[-1].run.state is RunState.COMPLETED and waves(store, run_id) == [WaveState.COMPLETED] * 2
    assert [(o.wave, o.key, o.accepted) for o in store.runs.outcomes(run_id)] == [
        (1, ("t", 0), True),
        (2, ("t", 1), True),
    ]
    state = fake.snapshot()
    assert [(p.replicas, p.reassigning) for p in state.partitions[:2]] == [(ids(3, 1), False), (ids(3, 2), False)]
    # each wave sent once, throttled before its request and unthrottled after it
    assert sent(fake) == [("t", 0), ("t", 1)]
    assert effects(fake) == ["alter_configs", "alter_reassignments", "alter_configs"] * 2
    first_set = fake.calls_to("alter_configs")[0].args
    assert first_set == (
        {
            0: {LEADER_RATE: "1000", FOLLOWER_RATE: "1000"},
            1: {LEADER_RATE: "1000", FOLLOWER_RATE: "1000"},
            3: {LEADER_RATE: "1000", FOLLOWER_RATE: "1000"},
        },
        {"t": {LEADER_LIST: "0:0,0:1,9:9", FOLLOWER_LIST: "0:3"}},
    )
    assert fake.calls_to("alter_configs")[1].args == (
        {
            0: {LEADER_RATE: None, FOLLOWER_RATE: None},
            1: {LEADER_RATE: "5000", FOLLOWER_RATE: None},
            3: {LEADER_RATE: None, FOLLOWER_RATE: None},
        },
        {"t": {LEADER_LIST: "9:9", FOLLOWER_LIST: None}},
    )
    assert fake.clock - 1_700_000_000 >= 2 * SIZE / RATE  # the copy really ran at the throttle, not at 10×
    # what was there before the run is back, exactly; nothing of the run is left
    assert configs(fake) == BEFORE
    assert store.runs.ledger(run_id) == []
    assert actions(store) == [
        ("submit", "run recorded"),
        ("throttle-set", "sending"),
        ("throttle-set", "applied"),
        ("submit-wave", "sending"),
        ("submit-wave", "accepted"),
        ("throttle-removed", "sending"),
        ("throttle-removed", "applied"),
        ("wave-complete", "completed"),
        ("throttle-set", "sending"),
        ("throttle-set", "applied"),
        ("submit-wave", "sending"),
        ("submit-wave", "accepted"),
        ("throttle-removed", "sending"),
        ("throttle-removed", "applied"),
        ("wave-complete", "completed"),
        ("run-completed", "completed"),
    ]
    assert tick(ex, run_id).did == "completed" and len(fake.calls_to("alter_reassignments")) == 2  # ended: inert


# -- 2. a worker dying anywhere ------------------------------------------------------------------------------
def _reference(tmp_path: Path) -> tuple[list[str], object, object]:
    store = Store(tmp_path / "reference.db")
    fake = cluster()
    run_to_end(executor(store, fake), fake, start(store, fake))
    store.close()
    return (
        [c.method for c in fake.calls],
        configs(fake),
        [(p.key, p.replicas, p.leader) for p in fake.snapshot().partitions],
    )


def test_a_worker_that_dies_at_any_call_is_finished_by_another_with_the_same_result(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Found by this test (fixed): a worker that died after the wave's throttle was applied but before
    # the wave was marked submitting throttled the wave again on resume, the second ledger entry
    # recorded the run's own rate as "before", and restoring used that value, so the run's rate was
    # left on brokers 0 and 3 and broker 1 got 1000 instead of 5000.
    monkeypatch.setattr(executor_module, "LEASE_S", 0.0)  # the dead worker's lease has run out
    methods, want_configs, want_partitions = _reference(tmp_path)
    want_effects = [
        m for m in methods if m not in ("snapshot", "describe_configs", "list_reassignments", "replicas_seen")
    ]
    assert want_configs == BEFORE
    assert len(methods) > 20
    wrong: list[str] = []
    # Dying at a tick's first snapshot is the same as discarding the executor after the tick before.
    for k in range(1, len(methods)):  # call 0 is the snapshot start_run is given
        for applied in (False, True):
            if applied and methods[k] in ("snapshot", "describe_configs", "list_reassignments", "replicas_seen"):
                continue  # a read that answered and then the worker died: the same as dying before it
            store = Store(tmp_path / f"crash-{k}-{applied}.db")
            fake = cluster()
            run_id = start(store, fake)
            fake.fail_call(k, Crash(f"worker killed at call {k}"), applied=applied)
            first = executor(store, fake)
            with pytest.raises(Crash):
                run_to_end(first, fake, run_id)
            assert len(fake.calls) == k + 1 and fake.calls[k].method == methods[k]
            second = executor(store, fake, "bob")
            run = run_to_end(second, fake, run_id)[-1].run
            where = f"call {k} ({methods[k]}, {'after' if applied else 'before'} it took effect)"
            entries = store.audit.entries()
            answered = {e.ref for e in entries}
            got = {
                # a request the dead worker sent is not sent again; one it did not send is sent once more
                "requests": (
                    Counter(effects(fake)) - Counter(want_effects),
                    Counter(want_effects) - Counter(effects(fake)),
                ),
                "unanswered": [(e.id, e.action) for e in entries if e.outcome == "sending" and e.id not in answered],
                "run": run.state,
                "waves": waves(store, run_id),
                "sent": sorted(sent(fake)),
                "configs": configs(fake),
                "partitions": [(p.key, p.replicas, p.leader) for p in fake.snapshot().partitions],
                "open ledger": store.runs.ledger(run_id),
            }
            again = Counter() if applied or methods[k] not in want_effects else Counter([methods[k]])
            want = {
                "requests": (again, Counter()),
                "unanswered": [],
                "run": RunState.COMPLETED,
                "waves": [WaveState.COMPLETED] * 2,
                "sent": [("t", 0), ("t", 1)],
                "configs": want_configs,
                "partitions": want_partitions,
                "open ledger": [],
            }
            wrong += [f"{where}: {f} {got[f]} instead of {want[f]}" for f in want if got[f] != want[f]]
            audit(store)  # intent before answer, one end, one completion per wave, at every crash point
            store.close()
    assert not wrong, "\n".join(wrong)


# -- 3. cancel mid-run ---------------------------------------------------------------------------------------
def test_a_cancel_mid_run_reverts_the_wave_takes_its_throttles_off_and_cancels_the_later_waves(store: Store) -> None:
    fake = cluster()
    run_id = start(store, fake)
    ex = executor(store, fake)
    tick_until(ex, fake, run_id, 1, WaveState.RUNNING)
    fake.advance(1)
    moving = fake.snapshot().partition("t", 0)
    assert moving is not None and moving.reassigning and 0 < (moving.size_on(BrokerId(3)) or 0) < SIZE  # mid-copy

    ours = store.runs.active_partitions(fake.cluster_id)
    assert ours == {("t", 0): run_id}
    result = cancel_service.cancel(
        store,
        fake,
        Identity.cli("ann"),
        fake.cluster_id,
        plan_cancel(fake.snapshot(), [("t", 0)], ours),
        ours,
        wait_s=5,
    )

    assert [o.key for o in result.accepted] == [("t", 0)] and result.left == (("t", 0),) and not result.still_in_flight
    back = fake.snapshot().partition("t", 0)
    assert (
        back is not None and not back.reassigning and set(back.replicas) == {0, 1} and back.size_on(BrokerId(3)) is None
    )
    # the run's worker holds its lease: the cancel leaves the clean-up to it (never two at once)
    assert store.runs.require(run_id).state is RunState.RUNNING
    tick(ex, run_id)
    run = store.runs.require(run_id)
    assert run.state is RunState.CANCELLED and waves(store, run_id) == [WaveState.CANCELLED, WaveState.CANCELLED]
    assert configs(fake) == BEFORE and store.runs.ledger(run_id) == []
    assert actions(store)[-8:] == [
        ("submit-wave", "accepted"),
        ("cancel", "sending"),
        ("cancel", "accepted"),
        ("cancel-complete", "left the in-flight list; every broker shows the original replicas"),
        ("partitions-cancelled", "no longer waited for"),  # nothing of its wave moved: the run is cancelled
        ("throttle-removed", "sending"),
        ("throttle-removed", "applied"),
        ("run-cancelled", "cancelled"),
    ]
    for _ in range(5):  # the worker's later ticks send nothing more
        tick(ex, run_id)
        fake.advance(5)
    assert sent(fake) == [("t", 0)] and fake.calls_to("alter_reassignments")[-1].args == ({("t", 0): None},)


def test_a_cancel_without_a_worker_cleans_up_at_once(store: Store) -> None:
    """No worker holds the run (e.g. a CLI submit that was stopped): the cancel itself takes the
    run's throttles off and ends it."""
    fake = cluster(copy_rate=1)
    run_id = start(store, fake)
    ex = executor(store, fake)
    tick_until(ex, fake, run_id, 1, WaveState.RUNNING)
    store.runs.release(run_id, ex.owner)  # the worker stopped (and said so)
    ours = store.runs.active_partitions(fake.cluster_id)
    cancel_service.cancel(
        store,
        fake,
        Identity.cli("bob"),
        fake.cluster_id,
        plan_cancel(fake.snapshot(), list(ours), ours),
        ours,
        wait_s=5,
    )
    assert store.runs.require(run_id).state is RunState.CANCELLED
    assert configs(fake) == BEFORE and store.runs.ledger(run_id) == []


# -- 3b. some partitions of a run cancelled -----------------------------------------------------------------
SIX = [("s", p, (2, 0)) for p in range(6)]
"""Broker 2 added to each, as the preferred leader: 0 leads until the closing election."""


def six_partitions() -> FakeCluster:
    """Brokers 0..3; s-0..s-5 on (0, 1), s-p holding p + 1 KB: copied one a second at 1 KB/s each."""
    return FakeCluster(
        {b: f"r{b}" for b in range(4)}, {("s", p): ((0, 1), 1000 * (p + 1)) for p in range(6)}, copy_rate=1000
    )


def test_one_partition_cancelled_mid_wave_leaves_the_run_to_complete_the_rest_and_elect_their_leaders(
    store: Store,
) -> None:
    """The operator's report: cancelling s-5 on Live while 3 of its 6 partitions had moved ended the
    whole run "cancelled · 0/1 waves", without its leader election. The run goes on: it completes,
    naming s-5 cancelled, elects the leaders of the five that moved, and counts what is done."""
    fake = six_partitions()
    run_id = start(store, fake, SIX, rate=100_000, limits=WaveLimits(moves_per_broker=6), elect_leaders=True)
    ex = executor(store, fake)
    steps = [tick(ex, run_id)]
    for _ in range(3):
        fake.advance(1)
        steps.append(tick(ex, run_id))
    assert [s.did for s in steps] == [
        "wave 1 submitted (6 partitions)",
        "wave 1: 1 of 6 done",
        "wave 1: 2 of 6 done",
        "wave 1: 3 of 6 done",
    ]
    ours = store.runs.active_partitions(fake.cluster_id)
    report = cancel_service.cancel_seen(  # Live's "Chosen partitions": s-5 only
        store,
        fake,
        Identity.cli("bob"),
        fake.cluster_id,
        plan_cancel(fake.snapshot(), [("s", 5)], ours),
        ours,
        wait_s=5,
    )
    assert report.summary().startswith("1 partition cancelled")
    fake.advance(1)
    steps = run_to_end(ex, fake, run_id)

    assert [s.did for s in steps] == [
        "wave 1: 4 of 5 done (1 cancelled)",
        "wave 1 completed; 1 partition cancelled: s-5",
        "run completed, 1 partition cancelled: s-5; preferred leader election: 5 elected, 0 not",
    ]
    run = store.runs.require(run_id)
    assert run.state is RunState.PARTLY_CANCELLED and waves(store, run_id) == [WaveState.COMPLETED]
    outcomes = store.runs.outcomes(run_id)
    assert [(o.name, o.code) for o in outcomes if not o.accepted] == [("s-5", "PARTITION_CANCELLED")]
    # the closing election: the five that moved, not the one that went back
    (elected,) = fake.calls_to("elect_leaders")
    assert sorted(elected.args[0]) == [("s", p) for p in range(5)]
    state = fake.snapshot()
    assert [(p.replicas, p.leader) for p in state.partitions] == [(ids(2, 0), 2)] * 5 + [(ids(0, 1), 0)]
    assert configs(fake) == ({}, {}) and store.runs.ledger(run_id) == []  # no throttle left behind
    # the run's record says what happened; the cancel's audit entries name the run
    assert history.waves_done(store.runs.waves(run_id)) == "1/1"
    waves_table = store.runs.detail(run_id).to_pandas()  # a notebook's view
    assert (waves_table["rejected"].tolist(), waves_table["cancelled"].tolist()) == ([0], [1])
    assert history.record_line(run, outcomes) == (
        "Completed, 1 partition cancelled: s-5: back on their brokers before the run (each one's order below); every other partition reached "
        "its target."
    )
    entries = audit(store)
    assert [json.loads(e.request)["runs"] for e in entries if e.action.startswith("cancel")] == [[run_id]] * 3
    assert ("partitions-cancelled", "no longer waited for") in actions(store)
    assert actions(store)[-1] == ("run-partly-cancelled", "partly cancelled")
    assert json.loads(entries[-1].response or "{}")["cancelled"] == ["s-5"]


def test_a_partition_at_its_target_counts_done_while_its_new_replica_is_out_of_the_isr(store: Store) -> None:
    """The operator's shell said "0 of 6 done" while three had moved (Live and the Runs page's "at
    target" said so): a partition whose reassignment completed is done as the progress counts it,
    even while its new replica has fallen out of the ISR; the wave still waits for it to be in sync."""
    fake = six_partitions()
    run_id = start(store, fake, SIX, rate=100_000, limits=WaveLimits(moves_per_broker=6))
    ex = executor(store, fake)
    tick(ex, run_id)
    fake.advance(3)  # s-0..s-2 moved
    for p in range(3):
        fake.parts[("s", p)].isr = [BrokerId(0)]  # their new replica on broker 2 fell behind
    assert tick(ex, run_id).did == "wave 1: 3 of 6 done (3 at the target, not yet in sync or in their log dir)"
    fake.advance(3)
    assert tick(ex, run_id).did == "wave 1: 6 of 6 done (3 at the target, not yet in sync or in their log dir)"
    for p in range(3):
        fake.parts[("s", p)].isr.append(BrokerId(2))
    assert tick(ex, run_id).did == "wave 1 completed"


@pytest.mark.parametrize("as_a_run", [False, True], ids=["chosen partitions", "the run's cancel"])
def test_a_runs_partitions_in_flight_cancelled_as_a_run_end_it_and_otherwise_it_goes_on(
    store: Store, as_a_run: bool
) -> None:
    """Wave 1 of 2 (s-0..s-2) with s-0 moved: cancelling s-1 and s-2 as chosen partitions leaves the
    run to send wave 2 and complete, naming them; the run's own cancel (Runs page, ``cancel --run``)
    of the same partitions ends it cancelled, wave 2 never sent."""
    fake = six_partitions()
    run_id = start(store, fake, SIX, rate=100_000, limits=WaveLimits(moves_per_broker=3))
    ex = executor(store, fake)
    tick(ex, run_id)
    fake.advance(1)
    assert tick(ex, run_id).did == "wave 1: 1 of 3 done"
    ours = store.runs.active_partitions(fake.cluster_id)
    keys = [k for k, r in ours.items() if r == run_id]
    cancel_service.cancel_seen(
        store,
        fake,
        Identity.cli("bob"),
        fake.cluster_id,
        plan_cancel(fake.snapshot(), keys, ours),
        ours,
        wait_s=5,
        whole_runs={run_id} if as_a_run else (),
    )
    steps = run_to_end(ex, fake, run_id)

    run = store.runs.require(run_id)
    cancelled = [o.name for o in store.runs.outcomes(run_id) if o.code == "PARTITION_CANCELLED"]
    assert cancelled == ["s-1", "s-2"]
    if as_a_run:
        assert run.state is RunState.CANCELLED and waves(store, run_id) == [WaveState.COMPLETED, WaveState.CANCELLED]
        assert steps[-1].did == "run cancelled by bob; 2 partitions cancelled: s-1, s-2"
        assert sent(fake) == [("s", 0), ("s", 1), ("s", 2)]
        assert history.record_line(run, store.runs.outcomes(run_id)) == (
            "Cancelled, 2 partitions cancelled: s-1, s-2: back on their brokers before the run (each one's order below)."
        )
    else:
        assert run.state is RunState.PARTLY_CANCELLED and waves(store, run_id) == [WaveState.COMPLETED] * 2
        assert steps[-1].did == "run completed, 2 partitions cancelled: s-1, s-2"
        assert sent(fake) == [("s", p) for p in range(6)]
    assert configs(fake) == ({}, {}) and store.runs.ledger(run_id) == []
    (sending,) = [e for e in audit(store) if (e.action, e.outcome) == ("cancel", "sending")]
    assert json.loads(sending.request).get("runs_cancelled") == ([run_id] if as_a_run else None)


def test_a_cancel_of_a_run_that_is_not_taken_leaves_the_run_going(store: Store) -> None:
    """The run's cancel is recorded before it is sent; when the controller takes none of it, the
    run goes on as it was (it is not ended by a cancel that did not happen)."""
    fake = six_partitions()
    run_id = start(store, fake, SIX[:2], rate=None, limits=WaveLimits(moves_per_broker=6))
    ex = executor(store, fake)
    tick(ex, run_id)
    ours = store.runs.active_partitions(fake.cluster_id)
    fake.fail_next("alter_reassignments", ClusterUnavailable("No controller answered.", "Retry."))
    with pytest.raises(ClusterUnavailable):
        cancel_service.cancel_seen(
            store,
            fake,
            Identity.cli("bob"),
            fake.cluster_id,
            plan_cancel(fake.snapshot(), list(ours), ours),
            ours,
            wait_s=5,
            whole_runs={run_id},
        )
    assert store.runs.cancel_asked(run_id) is None
    assert run_to_end(ex, fake, run_id)[-1].run.state is RunState.COMPLETED


# -- 4. controller errors ------------------------------------------------------------------------------------
def test_an_unavailable_controller_is_retried_at_the_next_tick_without_sending_twice(store: Store) -> None:
    fake = cluster()
    run_id = start(store, fake)
    fake.fail_next("alter_reassignments", ClusterUnavailable("No controller answered.", "Retry."), times=2)
    ex = executor(store, fake)

    steps = run_to_end(ex, fake, run_id)

    assert [s.did for s in steps[:3]] == ["retrying: No controller answered."] * 2 + ["wave 1 submitted (1 partition)"]
    assert steps[-1].run.state is RunState.COMPLETED and waves(store, run_id) == [WaveState.COMPLETED] * 2
    assert len(fake.calls_to("alter_reassignments")) == 4 and sent(fake) == [("t", 0), ("t", 1)]
    assert len(fake.calls_to("alter_configs")) == 4  # wave 1 throttled once, not once per attempt
    assert configs(fake) == BEFORE
    intents = [e for e in audit(store) if e.action == "submit-wave" and e.outcome == "sending"]
    answered = {e.ref for e in audit(store) if e.action == "submit-wave" and e.ref is not None}
    assert len(intents) == 4
    # Found by this test (fixed): a request that raised (ClusterUnavailable, AuthorizationFailed, ...)
    # left its "sending" intent without an answer, so the audit log could not tell a request that
    # failed from one whose worker died holding the answer.
    assert [e.id for e in intents if e.id not in answered] == [], "failed attempts have no answer in the audit log"


def test_an_authorization_failure_fails_the_run_with_the_reason_and_takes_its_throttles_off(store: Store) -> None:
    fake = cluster()
    run_id = start(store, fake)
    fake.fail_next(
        "alter_reassignments",
        AuthorizationFailed("Not authorised to alter partition reassignments.", "Grant ALTER on the CLUSTER resource."),
    )
    steps = run_to_end(executor(store, fake), fake, run_id)

    assert len(steps) == 1 and steps[0].did.startswith("run failed: Not authorised")
    assert store.runs.require(run_id).state is RunState.FAILED
    assert waves(store, run_id) == [WaveState.FAILED, WaveState.FAILED]
    assert sent(fake) == [] and len(fake.calls_to("alter_reassignments")) == 1
    assert configs(fake) == BEFORE and store.runs.ledger(run_id) == []
    entries = audit(store)
    assert [(e.action, e.outcome) for e in entries if (e.action, e.outcome) != ("submit-wave", "failed")][1:] == [
        ("throttle-set", "sending"),
        ("throttle-set", "applied"),
        ("submit-wave", "sending"),
        ("throttle-removed", "sending"),
        ("throttle-removed", "applied"),
        ("run-failed", "failed"),
    ]
    assert "Grant ALTER on the CLUSTER resource." in (entries[-1].response or "")
    assert "Not authorised" in (entries[-1].response or "")


# -- 5. one partition rejected --------------------------------------------------------------------------------
def test_a_partition_the_controller_rejects_is_recorded_and_the_rest_completes(store: Store) -> None:
    fake = cluster()
    run_id = start(store, fake, ONE_WAVE, limits=WaveLimits())
    fake.stop_broker(3)  # t-0 is to add a replica on broker 3, down since the run was recorded
    assert len(store.runs.waves(run_id)) == 1

    # the guardrail that pauses a run before it copies onto a dead broker is off: the controller's answer
    # is what this test is about (tests/unit/test_guard_runs.py: with it on, nothing is sent)
    off = GuardrailSettings(destination_gone=False)
    steps = run_to_end(Executor(store, fake, "ann", settle_s=0, poll_s=0, guardrails=off), fake, run_id)

    assert steps[-1].run.state is RunState.COMPLETED and waves(store, run_id) == [WaveState.COMPLETED]
    (t0, t1) = store.runs.outcomes(run_id)
    assert (t0.key, t0.accepted, t0.code) == (("t", 0), False, "INVALID_REPLICA_ASSIGNMENT")
    assert "not alive" in (t0.message or "")
    assert (t1.key, t1.accepted, t1.code) == (("t", 1), True, None)
    state = fake.snapshot()
    assert [p.replicas for p in state.partitions[:2]] == [ids(0, 1), ids(0, 2)]
    assert sent(fake) == [("t", 1)] and len(fake.calls_to("alter_reassignments")) == 1
    assert ("submit-wave", "partly accepted") in actions(store)
    assert configs(fake) == BEFORE and store.runs.ledger(run_id) == []


# -- 6. abandon, leftovers and the sweeper -------------------------------------------------------------------
def test_an_abandoned_run_leaves_no_throttle_and_the_sweeper_removes_what_nothing_needs(store: Store) -> None:
    fake = cluster()
    run_id = start(store, fake)
    ex = executor(store, fake)
    tick_until(ex, fake, run_id, 1, WaveState.RUNNING)
    assert configs(fake) != BEFORE  # wave 1 is throttled

    step, _ = run_service.abandon(store, fake, Identity.cli("ann"), run_id, why="the topic's owner asked")

    assert step.run.state is RunState.ABANDONED
    assert waves(store, run_id)[1] is WaveState.SKIPPED  # never sent
    assert not any(w.open for w in waves(store, run_id))
    assert configs(fake) == BEFORE and store.runs.ledger(run_id) == []
    p = fake.snapshot().partition("t", 0)
    assert p is not None and p.reassigning  # what the run started is left as it is
    assert actions(store)[-3:] == [
        ("throttle-removed", "sending"),
        ("throttle-removed", "applied"),
        ("run-abandoned", "abandoned"),
    ]
    with pytest.raises(IllegalTransition, match="nothing to abandon"):
        run_service.abandon(store, fake, Identity.cli("ann"), run_id)
    assert tick(ex, run_id).did == "abandoned" and sent(fake) == [("t", 0)]

    # throttles someone left behind: broker 2 (in no moving partition) and topic u (nothing moving)
    fake.broker_configs[BrokerId(2)] = {FOLLOWER_RATE: "777"}
    fake.topic_configs["u"] = {LEADER_LIST: "0:2"}
    left = leftover_throttles(fake.snapshot())
    assert {(lo.kind, lo.name, lo.key) for lo in left} == {("broker", "2", FOLLOWER_RATE), ("topic", "u", LEADER_LIST)}
    run_service.sweep(store, fake, Identity.cli("ann"), left)
    assert configs(fake) == BEFORE  # t is moving and broker 1 takes part: theirs stay
    assert actions(store)[-2:] == [("throttle-sweep", "sending"), ("throttle-sweep", "removed")]
    assert leftover_throttles(fake.snapshot()) == []


def test_a_throttle_on_a_broker_that_is_down_is_kept_in_the_ledger_and_swept_later(store: Store) -> None:
    fake = cluster()
    run_id = start(store, fake, [("t", 0, (3, 1))])
    ex = executor(store, fake)
    tick_until(ex, fake, run_id, 1, WaveState.RUNNING)
    fake.advance(10)  # copied: t-0 is on (3, 1) now; broker 0 held the old replica
    fake.stop_broker(0)
    steps = run_to_end(ex, fake, run_id)
    assert steps[-1].run.state is RunState.COMPLETED
    assert {(e.name, e.key) for e in store.runs.ledger(run_id)} == {("0", LEADER_RATE), ("0", FOLLOWER_RATE)}
    fake.start_broker(0)
    assert configs(fake)[0][0] == {LEADER_RATE: "1000", FOLLOWER_RATE: "1000"}
    left = leftover_throttles(fake.snapshot())
    run_service.sweep(store, fake, Identity.cli("ann"), [lo for lo in left if lo.kind == "broker" and lo.name == "0"])
    assert configs(fake) == BEFORE and store.runs.ledger(run_id) == []


# -- 7. pause, stop and illegal transitions -------------------------------------------------------------------
def _first_wave_sent(store: Store) -> tuple[FakeCluster, int, Executor]:
    fake = cluster()
    run_id = start(store, fake)
    ex = executor(store, fake)
    tick(ex, run_id)
    return fake, run_id, ex


def test_pause_holds_the_next_wave_until_resume(store: Store) -> None:
    fake, run_id, ex = _first_wave_sent(store)
    run_service.pause(store, Identity.cli("ann"), run_id)
    for _ in range(20):
        step = tick(ex, run_id)
        fake.advance(1)
    assert step.did == "paused" and waves(store, run_id) == [WaveState.COMPLETED, WaveState.PENDING]
    assert sent(fake) == [("t", 0)] and configs(fake) == BEFORE  # nothing throttled while it waits

    run_service.resume(store, Identity.cli("ann"), run_id)
    assert run_to_end(ex, fake, run_id)[-1].run.state is RunState.COMPLETED
    assert sent(fake) == [("t", 0), ("t", 1)] and configs(fake) == BEFORE
    kinds = [a for a, _ in actions(store)]
    last_submit = max(i for i, k in enumerate(kinds) if k == "submit-wave")
    assert kinds.index("run-paused") < kinds.index("run-running") < last_submit  # wave 2 went after the resume

    before = len(store.audit.entries())
    for change in (run_service.resume, run_service.pause, run_service.stop):
        with pytest.raises(IllegalTransition, match=f"Run {run_id} is completed"):
            change(store, Identity.cli("ann"), run_id)
    refused = store.audit.entries()[before:]  # a refused change writes its refusal, and nothing else
    assert [(e.action, e.outcome) for e in refused] == [
        ("resume", "refused"),
        ("pause", "refused"),
        ("stop", "refused"),
    ]
    with pytest.raises(IllegalTransition, match="its throttle cannot change"):
        run_service.change_throttle(store, fake, Identity.cli("ann"), run_id, 2 * RATE)


def test_stop_lets_the_current_wave_finish_and_skips_the_rest(store: Store) -> None:
    fake, run_id, ex = _first_wave_sent(store)
    run_service.stop(store, Identity.cli("ann"), run_id)
    steps = run_to_end(ex, fake, run_id)

    assert steps[-1].run.state is RunState.STOPPED
    assert waves(store, run_id) == [WaveState.COMPLETED, WaveState.SKIPPED]
    assert sent(fake) == [("t", 0)] and configs(fake) == BEFORE and store.runs.ledger(run_id) == []
    kinds = [a for a, _ in actions(store)]
    assert kinds[-3:] == ["throttle-removed", "wave-complete", "run-stopped"] and "run-stopping" in kinds
    with pytest.raises(IllegalTransition):
        run_service.resume(store, Identity.cli("ann"), run_id)
    with pytest.raises(IllegalTransition):
        run_service.pause(store, Identity.cli("ann"), run_id)


# -- 8. a request applied in part ----------------------------------------------------------------------------
def test_a_partially_applied_request_is_recorded_and_the_next_tick_sends_only_the_rest(store: Store) -> None:
    fake = cluster()
    run_id = start(store, fake, ONE_WAVE, limits=WaveLimits())
    fake.fail_next("alter_reassignments", PartiallyApplied(ClusterUnavailable("The controller moved.", "Retry."), {}))
    ex = executor(store, fake)

    with pytest.raises(ClusterUnavailable, match="The controller moved"):
        ex.tick(run_id)
    assert [(o.key, o.accepted) for o in store.runs.outcomes(run_id)] == [(("t", 0), True)]
    assert waves(store, run_id) == [WaveState.SUBMITTING]
    assert actions(store)[-1] == ("submit-wave", "partly sent")

    assert ex.tick(run_id).did == "wave 1 submitted (2 partitions)"
    assert [c.args[0] for c in fake.calls_to("alter_reassignments")][1] == {("t", 1): ids(0, 2)}
    assert run_to_end(ex, fake, run_id)[-1].run.state is RunState.COMPLETED
    assert sorted(sent(fake)) == [("t", 0), ("t", 1)] and configs(fake) == BEFORE
    assert [(o.key, o.accepted) for o in store.runs.outcomes(run_id)] == [(("t", 0), True), (("t", 1), True)]


# -- more: the znode path, the rate, and a snapshot without configs -------------------------------------------
def test_a_cluster_without_the_api_is_sent_through_the_znode_when_zookeeper_is_known(store: Store) -> None:
    fake = cluster(has_zookeeper=True)
    run_id = start(store, fake)
    fake.fail_next("alter_reassignments", UnsupportedByCluster("AlterPartitionReassignments needs Kafka 2.4."))
    assert run_to_end(executor(store, fake), fake, run_id)[-1].run.state is RunState.COMPLETED
    assert store.runs.require(run_id).path is SubmitPath.ZOOKEEPER
    assert [list(c.args[0]) for c in fake.calls_to("create_legacy_reassignment")] == [[("t", 0)], [("t", 1)]]
    assert len(fake.calls_to("alter_reassignments")) == 1 and configs(fake) == BEFORE
    assert ("submit-wave", "unsupported: using the znode path") in actions(store)

    plain, second = cluster(), Store(store.path.with_name("other.db"))  # no ZooKeeper: nothing else to try
    other = start(second, plain)
    plain.fail_next("alter_reassignments", UnsupportedByCluster("AlterPartitionReassignments needs Kafka 2.4."))
    assert run_to_end(executor(second, plain), plain, other)[-1].run.state is RunState.FAILED
    assert configs(plain) == BEFORE and plain.calls_to("create_legacy_reassignment") == []
    second.close()


def test_a_new_rate_reaches_the_running_wave_and_the_end_restores_what_was_before(store: Store) -> None:
    fake = cluster()
    run_id = start(store, fake)
    ex = executor(store, fake)
    tick(ex, run_id)
    run_service.change_throttle(store, fake, Identity.cli("ann"), run_id, 4 * RATE)
    assert configs(fake)[0][3] == {LEADER_RATE: "4000", FOLLOWER_RATE: "4000"}
    fake.advance(1)  # 4,000 bytes/s now: copied in one second
    p = fake.snapshot().partition("t", 0)
    assert p is not None and not p.reassigning
    assert run_to_end(ex, fake, run_id)[-1].run.state is RunState.COMPLETED
    assert configs(fake) == BEFORE
    wave2 = fake.calls_to("alter_configs")[3].args[0]
    assert isinstance(wave2, dict) and wave2[3] == {LEADER_RATE: "4000", FOLLOWER_RATE: "4000"}


def test_a_snapshot_without_configs_when_the_wave_ends_does_not_lose_the_topic_throttle(store: Store) -> None:
    # Found by this test (fixed): the topic lists were read from a snapshot without checking that
    # its configs part answered; when DescribeConfigs failed the snapshot showed no throttle, the
    # topic entries were taken as "already removed" and closed, and the run's entries stayed on the
    # topic for good.
    fake = cluster()
    run_id = start(store, fake, [("t", 0, (3, 1))])
    ex = executor(store, fake)
    tick_until(ex, fake, run_id, 1, WaveState.RUNNING)
    fake.advance(10)
    fake.fail_next("snapshot:configs", ClusterUnavailable("DescribeConfigs timed out."), times=2)
    tick(ex, run_id)
    assert run_to_end(ex, fake, run_id)[-1].run.state is RunState.COMPLETED
    assert configs(fake) == BEFORE


def test_throttles_a_driver_before_this_one_took_off_are_not_sent_again(store: Store) -> None:
    """A driver took a wave's throttles off and lost the run before it recorded it (paused past its
    lease): the one that takes over reads the configs as they were before and closes the ledger
    without sending the removal a second time."""
    fake = cluster()
    run_id = start(store, fake, [("t", 0, (3, 1))])
    ex = executor(store, fake)
    tick_until(ex, fake, run_id, 1, WaveState.RUNNING)
    fake.advance(10)  # copied
    brokers_now, topics_now = configs(fake)
    before_brokers, before_topics = BEFORE
    fake.alter_configs(  # what the earlier driver sent: everything as it was before the run
        {BrokerId(b): {k: before_brokers.get(b, {}).get(k) for k in c} for b, c in brokers_now.items()},
        {t: {k: before_topics.get(t, {}).get(k) for k in c} for t, c in topics_now.items()},
    )
    sent_before = len(fake.calls_to("alter_configs"))
    assert run_to_end(ex, fake, run_id)[-1].run.state is RunState.COMPLETED
    assert len(fake.calls_to("alter_configs")) == sent_before  # nothing sent again
    assert ("throttle-removed", "sending") not in actions(store)
    assert configs(fake) == BEFORE and store.runs.ledger(run_id) == []


def test_a_throttle_the_cluster_already_shows_is_not_sent_again(store: Store) -> None:
    """A wave's throttle a driver before this one set and could not record (it lost the run): the
    cluster shows the run's rate and lists already, so the wave goes out without a second
    IncrementalAlterConfigs; the end still restores what was there before the run."""
    fake = cluster()
    run_id = start(store, fake, [("t", 0, (3, 1))])
    for b in (0, 1, 3):  # as the earlier driver left them
        fake.broker_configs.setdefault(BrokerId(b), {}).update({LEADER_RATE: str(RATE), FOLLOWER_RATE: str(RATE)})
    fake.topic_configs["t"] = {LEADER_LIST: "0:0,0:1,9:9", FOLLOWER_LIST: "0:3"}
    ex = executor(store, fake)
    tick_until(ex, fake, run_id, 1, WaveState.RUNNING)
    assert ("throttle-set", "sending") not in actions(store)
    assert effects(fake) == ["alter_reassignments"]  # the wave, and nothing before it


# -- runs that can never finish end, or say why they wait -----------------------------------------------
def test_a_run_whose_topic_is_deleted_mid_run_ends_with_the_reason(store: Store) -> None:
    fake = cluster()
    run_id = start(store, fake, [("t", 0, (0, 3)), ("u", 0, (2, 3))], limits=WaveLimits(moves_per_broker=5))
    ex = executor(store, fake)
    tick_until(ex, fake, run_id, 1, WaveState.RUNNING)
    fake.delete_topic("t")
    steps = run_to_end(ex, fake, run_id)
    assert steps[-1].run.state is RunState.COMPLETED
    gone = [o for o in store.runs.outcomes(run_id) if o.code == "PARTITION_GONE"]
    assert [(o.name, o.message) for o in gone] == [("t-0", "its topic was deleted")]
    assert ("partitions-gone", "no longer waited for") in actions(store)
    assert (
        configs(fake) == ({1: {LEADER_RATE: "5000"}}, {}) and store.runs.ledger(run_id) == []
    )  # t's configs went with it
    # the Runs page says it is gone, not that the controller rejected it
    outcomes = store.runs.outcomes(run_id)
    assert history.rejected_rows(outcomes) == []
    assert history.gone_rows(outcomes) == [{"wave": 1, "partition": "t-0", "why": "its topic was deleted"}]


def test_a_run_that_makes_no_progress_is_flagged_stuck_naming_the_broker(store: Store) -> None:
    fake = cluster()
    run_id = start(store, fake, [("t", 0, (0, 3))])
    ex = Executor(store, fake, "ann", settle_s=0, poll_s=0, stuck_after_s=60)
    tick_until(ex, fake, run_id, 1, WaveState.RUNNING)
    fake.stop_broker(3)
    for _ in range(10):
        tick(ex, run_id)
        fake.advance(10)
    why = store.runs.stuck(run_id)
    assert why is not None and "broker 3 is down" in why and "t-0" in why, why
    assert [a for a, _ in actions(store)].count("run-stuck") == 1  # audited once, when it became stuck
    fake.start_broker(3)
    run_to_end(ex, fake, run_id)
    assert store.runs.require(run_id).state is RunState.COMPLETED


def test_abandon_can_cancel_the_runs_reassignments_too(store: Store) -> None:
    fake = cluster(copy_rate=1)
    run_id = start(store, fake, [("t", 0, (0, 3))])
    ex = executor(store, fake)
    tick_until(ex, fake, run_id, 1, WaveState.RUNNING)
    step, report = run_service.abandon(
        store, fake, Identity.cli("ann"), run_id, why="broker 3 is being retired", cancel_reassignments=True
    )
    assert step.run.state is RunState.ABANDONED and report is not None
    assert next(r["outcome"] for r in report.rows()).startswith("cancel")
    p = fake.snapshot().partition("t", 0)
    assert p is not None and not p.reassigning and p.replicas == (0, 1)
    assert configs(fake) == BEFORE and store.runs.ledger(run_id) == []


def test_no_throttle_is_recorded_from_a_read_that_missed_the_configs(store: Store) -> None:
    """A partial DescribeConfigs (a broker down, a timeout) never becomes "what was there before"."""
    fake = cluster()
    run_id = start(store, fake)
    ex = executor(store, fake)
    fake.fail_next("snapshot:configs", ClusterUnavailable("DescribeConfigs timed out"))
    step = tick(ex, run_id)
    assert step.did.startswith("retrying: The throttles in force could not be read"), step.did
    assert fake.calls_to("snapshot")[-1].args == (0.0, "full")  # a step that may send a wave reads in full
    assert store.runs.ledger(run_id) == [] and not fake.calls_to("alter_configs")  # nothing recorded, nothing set
    run_to_end(ex, fake, run_id)
    assert configs(fake) == BEFORE  # what was there before is back, exactly


def test_the_steps_that_send_a_wave_read_in_full_and_those_that_watch_one_read_what_is_in_flight(store: Store) -> None:
    """A step's read carries the sizes and topic configs of what is not in flight over (between two
    full reads of the cluster); the step that throttles and sends a wave reads everything now (its
    guardrails and the throttle lists it merges into see the cluster as it is), and so does the
    clean up of a wave's throttles."""
    fake = cluster()
    run_id = start(store, fake)
    ex = executor(store, fake)
    steps: list[tuple[str, list[str]]] = []
    for _ in range(60):
        seen = len(fake.calls)
        step = tick(ex, run_id)
        said = [
            "full read" if c.args[1:] == ("full",) else "read" if c.method == "snapshot" else c.method
            for c in fake.calls[seen:]
            if c.method in ("snapshot", "alter_configs", "alter_reassignments")
        ]
        steps.append((step.did, said))
        if step.run.state.terminal:
            break
        fake.advance(1.0)
    watching = ("wave 1: 0 of 1 done", ["read"])
    assert steps == [
        ("wave 1 submitted (1 partition)", ["full read", "alter_configs", "alter_reassignments"]),
        watching,
        watching,
        watching,
        ("wave 1 completed", ["read", "full read", "alter_configs"]),  # its throttles off, as they are now
        ("wave 2 submitted (1 partition)", ["full read", "alter_configs", "alter_reassignments"]),
        *[("wave 2: 0 of 1 done", ["read"])] * 3,
        ("wave 2 completed", ["read", "full read", "alter_configs"]),
        ("run completed", ["read"]),
    ]
