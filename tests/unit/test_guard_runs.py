"""The guardrails at work in the executor, on the fake cluster: a run stops feeding a sick cluster,
holds the rate it was approved at, and says why (one audit entry, one notification, the hold kept
for every surface); each with what it must do and what it must not."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from console.access.auth import Identity
from console.core.errors import ClusterUnavailable
from console.core.limits import FOLLOWER_RATE, LEADER_RATE
from console.core.model import BrokerId, SourceStatus
from console.core.states import RunState, WaveState
from console.moves.guardrails import GuardrailSettings
from console.moves.throttles import leftover_throttles
from console.moves.waves import WaveLimits
from console.plans.plan import Plan, PlanEntry, parse_plan
from console.runs.executor import Executor
from console.runs.reading import BoundedReads
from console.runs.steps import Step
from console.services import runs as run_service
from console.storage.store import Store
from tests.fakes.cluster import FakeCluster
from tests.support import wait_for

RATE = 1_000
ANN = Identity.cli("ann")


def B(*ids: int) -> tuple[BrokerId, ...]:
    return tuple(BrokerId(i) for i in ids)


def five(copy_rate: int = 10 * RATE) -> FakeCluster:
    """Five brokers; t-0..t-3 on (0, 1), each 10 KB; min ISR 1."""
    return FakeCluster.of(5, {"t": [(0, 1)] * 4}, size=10_000, copy_rate=copy_rate)


def start(store: Store, fake: FakeCluster, moves: list[tuple[int, tuple[int, ...]]], rate: int | None = RATE) -> int:
    plan = Plan.of(PlanEntry("t", p, B(*r)) for p, r in moves)
    limits = WaveLimits(moves_per_broker=1, partitions=1)  # a wave a partition
    return run_service.start_run(
        store,
        fake,
        fake.snapshot(),
        run_service.RunRequest(ANN, plan, "r", run_service.RunSettings(rate=rate, limits=limits)),
        users=None,
    )


def executor(store: Store, fake: FakeCluster, **settings: object) -> Executor:
    return Executor(store, fake, "worker", settle_s=0, poll_s=0, guardrails=GuardrailSettings(**settings))  # type: ignore[arg-type]


def ticks(ex: Executor, fake: FakeCluster, run_id: int, n: int, step_s: float = 1.0) -> Step:
    step = ex.tick(run_id)
    for _ in range(n - 1):
        fake.advance(step_s)
        step = ex.tick(run_id)
    return step


def run_to_end(ex: Executor, fake: FakeCluster, run_id: int) -> Step:
    for _ in range(200):
        step = ex.tick(run_id)
        if step.run.state.terminal:
            return step
        fake.advance(1.0)
    raise AssertionError(f"run {run_id} did not end: {step.did}")


def guardrail_entries(store: Store) -> list[dict[str, object]]:
    return [{**json.loads(e.request), "outcome": e.outcome} for e in store.audit.entries() if e.action == "guardrail"]


def waves(store: Store, run_id: int) -> list[WaveState]:
    return [w.state for w in store.runs.waves(run_id)]


def test_a_destination_killed_between_waves_gets_nothing_the_run_pauses_and_goes_on_once_resumed(
    store: Store,
) -> None:
    fake = five()
    run_id = start(store, fake, [(0, (0, 3)), (1, (0, 4))])  # wave 1 onto 3, wave 2 onto 4
    ex = executor(store, fake)
    ticks(ex, fake, run_id, 2)
    fake.stop_broker(4)
    step = ticks(ex, fake, run_id, 20)
    assert store.runs.require(run_id).state is RunState.PAUSED and waves(store, run_id)[1] is WaveState.PENDING
    assert step.did == "paused: broker 4, a destination of wave 2, is offline"
    assert not [c for c in fake.calls_to("alter_reassignments") if ("t", 1) in c.args[0]]  # nothing onto 4
    (said,) = guardrail_entries(store)  # told once, however many polls
    assert (said["rule"], said["did"], said["saw"]) == ("destination_gone", "paused", step.did.removeprefix("paused: "))
    held = store.holds.held([run_id])[run_id]
    assert [c["rule"] for c in held.concerns] == ["destination_gone"] and held.concerns[0]["brokers"] == [4]
    fake.start_broker(4)
    ticks(ex, fake, run_id, 3)
    assert store.runs.require(run_id).state is RunState.PAUSED  # by default a person resumes
    assert store.holds.held([run_id]) == {}  # nothing holds it any more: the pages offer Resume
    run_service.resume(store, ANN, run_id)
    assert run_to_end(ex, fake, run_id).run.state is RunState.COMPLETED
    assert [p.replicas for p in fake.snapshot().partitions[:2]] == [B(0, 3), B(0, 4)]  # as planned
    assert leftover_throttles(fake.snapshot()) == []


def test_a_partition_under_min_isr_pauses_the_run_and_a_person_resuming_over_it_is_not_overridden(
    store: Store,
) -> None:
    fake = FakeCluster.of(5, {"t": [(0, 1, 2)] * 2, "u": [(3, 4, 0)]}, size=10_000, copy_rate=10 * RATE)
    fake.min_isr["u"] = 3
    run_id = start(store, fake, [(0, (0, 1, 3)), (1, (0, 1, 4))])
    ex = executor(store, fake)
    ticks(ex, fake, run_id, 2)
    fake.parts[("u", 0)].isr = [BrokerId(3), BrokerId(4)]  # broker 0, a source of the copy, fell behind on u-0
    ticks(ex, fake, run_id, 2)
    run = store.runs.require(run_id)
    assert run.state is RunState.PAUSED
    (said,) = guardrail_entries(store)
    assert said["rule"] == "under_min_isr" and "u-0" in str(said["saw"])
    run_service.resume(store, ANN, run_id)  # the person knows, and goes on
    step = run_to_end(ex, fake, run_id)
    assert step.run.state is RunState.COMPLETED and len(guardrail_entries(store)) == 1  # not paused again for it


def test_a_rate_raised_by_someone_else_is_set_back_and_one_lowered_by_a_person_is_kept(store: Store) -> None:
    fake = five(copy_rate=RATE // 10)  # slow: the wave copies for a while
    run_id = start(store, fake, [(0, (0, 3))])
    ex = executor(store, fake)
    ticks(ex, fake, run_id, 2)
    fake.alter_configs({BrokerId(3): {FOLLOWER_RATE: "50000000"}}, {})  # someone, by hand
    ex.tick(run_id)
    assert fake.broker_configs[BrokerId(3)][FOLLOWER_RATE] == str(RATE)  # set back at the next poll
    (restored,) = [e for e in guardrail_entries(store) if e["outcome"] == "restored"]
    assert (restored["seen"], restored["set"], restored["key"]) == ("50000000", str(RATE), FOLLOWER_RATE)
    fake.alter_configs({BrokerId(0): {LEADER_RATE: "200"}}, {})  # a person slows it down
    ticks(ex, fake, run_id, 3)
    assert fake.broker_configs[BrokerId(0)][LEADER_RATE] == "200"  # never raised back
    (adopted,) = [e for e in guardrail_entries(store) if e["outcome"] == "adopted"]
    assert (adopted["before"], adopted["after"]) == (str(RATE), "200")
    assert store.runs.require(run_id).state is RunState.RUNNING
    fake.copy_rate = 10 * RATE
    assert run_to_end(ex, fake, run_id).run.state is RunState.COMPLETED
    assert leftover_throttles(fake.snapshot()) == []  # the lowered rate was the run's: it came off too


def test_a_cluster_that_does_not_answer_gets_no_wave_and_pauses_past_the_grace(store: Store) -> None:
    fake = five()
    run_id = start(store, fake, [(0, (0, 3)), (1, (0, 4))])
    ex = executor(store, fake, unread_grace_s=5.0)
    ticks(ex, fake, run_id, 2)
    assert waves(store, run_id) == [WaveState.RUNNING, WaveState.PENDING]
    from console.core.errors import ClusterUnavailable

    fake.advance(30)  # wave 1 copied: wave 2 would go next
    fake.fail_next("snapshot", ClusterUnavailable("no answer", ""), times=10)
    step = ticks(ex, fake, run_id, 8)
    assert waves(store, run_id)[1] is WaveState.PENDING and store.runs.require(run_id).state is RunState.PAUSED
    assert "did not answer for more than the 5 s allowed" in step.did
    assert [e["did"] for e in guardrail_entries(store)] == ["held", "paused"]
    ticks(ex, fake, run_id, 5)  # it answers again: the run waits for a person
    assert store.runs.require(run_id).state is RunState.PAUSED and waves(store, run_id)[1] is WaveState.PENDING
    assert ex.tick(run_id).run.state is RunState.PAUSED and store.holds.held([run_id]) == {}


def test_a_partition_at_min_isr_cuts_the_next_wave_to_one_adding_move_per_broker(store: Store) -> None:
    fake = FakeCluster.of(5, {"t": [(0, 1)] * 4, "u": [(0, 1, 2)]}, size=10_000, copy_rate=10 * RATE)
    fake.min_isr["u"] = 2
    plan = Plan.of([PlanEntry("t", 0, B(0, 3)), PlanEntry("t", 1, B(0, 3)), PlanEntry("t", 2, B(1, 4))])
    run_id = run_service.start_run(
        store,
        fake,
        fake.snapshot(),
        run_service.RunRequest(
            ANN, plan, "r", run_service.RunSettings(rate=RATE, limits=WaveLimits(moves_per_broker=2))
        ),
        users=None,
    )
    assert [len(json.loads(w.entries_json)["partitions"]) for w in store.runs.waves(run_id)] == [3]
    fake.parts[("u", 0)].isr = [BrokerId(0), BrokerId(1)]  # RF 3, min ISR 2: nothing to spare; on brokers 0, 1
    ex = executor(store, fake)
    ex.tick(run_id)
    sent = [len(json.loads(w.entries_json)["partitions"]) for w in store.runs.waves(run_id)]
    assert sent == [2, 1]  # t-0 onto 3 and t-2 onto 4 now; t-1 (onto 3 again) in the next wave
    assert [e["did"] for e in guardrail_entries(store)] == ["slowed"]
    fake.parts[("u", 0)].isr = [BrokerId(0), BrokerId(1), BrokerId(2)]
    assert run_to_end(ex, fake, run_id).run.state is RunState.COMPLETED


def test_a_run_a_guardrail_paused_resumes_by_itself_only_where_the_settings_allow_it(store: Store) -> None:
    fake = five()
    run_id = start(store, fake, [(0, (0, 3)), (1, (0, 4))])
    ex = executor(store, fake, auto_resume=True, clear_for_s=10.0)
    ticks(ex, fake, run_id, 2)
    fake.stop_broker(4)
    ticks(ex, fake, run_id, 3)
    assert store.runs.require(run_id).state is RunState.PAUSED
    fake.start_broker(4)
    ticks(ex, fake, run_id, 5)
    assert store.runs.require(run_id).state is RunState.PAUSED  # clear for 4 s of the 10 asked
    step = run_to_end(ex, fake, run_id)
    assert step.run.state is RunState.COMPLETED
    assert [e["did"] for e in guardrail_entries(store)] == ["paused", "resumed"]
    # a run a person paused is never resumed by a guardrail
    other = start(store, fake, [(2, (0, 2))])
    run_service.pause(store, ANN, other)
    ticks(ex, fake, other, 30)
    assert store.runs.require(other).state is RunState.PAUSED


def test_a_worker_taking_a_held_run_over_clears_what_no_longer_holds_it(store: Store) -> None:
    """The worker that paused the run stopped (a server restarted); its cause cleared meanwhile. The
    next worker remembers nothing of it, and must not leave the store saying the run is held for it."""
    fake = five()
    run_id = start(store, fake, [(0, (0, 3)), (1, (0, 4))])
    first = executor(store, fake)
    ticks(first, fake, run_id, 2)
    fake.stop_broker(4)
    ticks(first, fake, run_id, 2)
    store.runs.release(run_id, first.owner)
    assert [c["rule"] for c in store.holds.held([run_id])[run_id].concerns] == ["destination_gone"]
    fake.start_broker(4)
    ticks(executor(store, fake), fake, run_id, 2)
    assert store.holds.held([run_id]) == {}  # nothing holds it now
    held = store.holds.get(run_id)
    assert held is not None and held.paused  # a guardrail paused it: it still waits for a person
    assert store.runs.require(run_id).state is RunState.PAUSED


def test_a_destination_stopped_while_a_throttled_wave_copies_onto_it_pauses_the_run_and_nothing_is_sent_to_it(
    store: Store,
) -> None:
    """Met on the sandbox: broker 3 stopped while the wave copied onto it; its configs could not be
    read, its throttle was taken as removed by someone, and setting it back on the broker that was
    down failed at every step: the run was never paused."""
    fake = five(copy_rate=RATE // 10)  # the wave copies for a while
    run_id = start(store, fake, [(0, (0, 3)), (1, (0, 4))])
    ex = executor(store, fake)
    ticks(ex, fake, run_id, 2)
    fake.stop_broker(3)
    assert ticks(ex, fake, run_id, 3).run.state is RunState.PAUSED
    (said,) = guardrail_entries(store)  # no throttle set back on a broker that is down
    assert said["did"] == "paused" and str(said["saw"]).startswith("broker 3, a destination of the wave in flight")
    fake.start_broker(3)
    ticks(ex, fake, run_id, 2)
    run_service.resume(store, ANN, run_id)
    fake.copy_rate = 10 * RATE
    assert run_to_end(ex, fake, run_id).run.state is RunState.COMPLETED
    assert leftover_throttles(fake.snapshot()) == []


def test_a_throttle_that_cannot_be_set_back_does_not_keep_the_other_guardrails_from_acting(store: Store) -> None:
    fake = five(copy_rate=RATE // 10)
    run_id = start(store, fake, [(0, (0, 3)), (1, (0, 4))])
    ex = executor(store, fake)
    ticks(ex, fake, run_id, 2)
    fake.alter_configs({BrokerId(3): {FOLLOWER_RATE: "50000000"}}, {})  # someone, by hand
    fake.fail_next("alter_configs", ClusterUnavailable("Timed out.", "Try again."))  # the set back fails
    fake.stop_broker(4)  # and a destination of wave 2 is gone
    fake.advance(1.0)
    step = ex.tick(run_id)
    assert step.run.state is RunState.PAUSED
    said = [(e["rule"], e["outcome"]) for e in guardrail_entries(store)]
    assert said == [("throttle_changed", "sending"), ("throttle_changed", "failed"), ("destination_gone", "paused")]
    fake.advance(1.0)
    ex.tick(run_id)  # tried again at the next step
    assert guardrail_entries(store)[-1]["outcome"] == "restored"


def test_the_runs_waves_are_parsed_for_the_guardrails_only_when_they_change(store: Store, monkeypatch) -> None:
    from console.runs import guarding

    parsed: list[int] = []
    real = parse_plan

    def counting(text: str) -> Plan:
        parsed.append(len(text))
        return real(text)

    monkeypatch.setattr(guarding, "parse_plan", counting)
    fake = five(copy_rate=RATE // 10)  # slow: the first wave copies for a while
    run_id = start(store, fake, [(0, (0, 3)), (1, (0, 4))])
    ex = executor(store, fake)
    ticks(ex, fake, run_id, 2)
    assert waves(store, run_id) == [WaveState.RUNNING, WaveState.PENDING]
    seen = len(parsed)
    ticks(ex, fake, run_id, 5)  # the same waves: nothing parsed again
    assert len(parsed) == seen and waves(store, run_id) == [WaveState.RUNNING, WaveState.PENDING]
    fake.copy_rate = 10 * RATE
    assert run_to_end(ex, fake, run_id).run.state is RunState.COMPLETED
    assert len(parsed) > seen  # wave 1 done, wave 2 sent: read again


def test_a_throttle_a_person_changes_with_the_throttle_command_is_the_runs_own_and_never_set_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from console import cli
    from console.cli import run_control
    from tests.fakes.cluster import FakeReader

    monkeypatch.setenv("CONSOLE_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("USER", "ann")
    fake = five(copy_rate=RATE // 10)  # slow: the wave copies for a while
    monkeypatch.setattr(run_control, "connect", lambda args: FakeReader(fake))
    store = Store()
    run_id = start(store, fake, [(0, (0, 3))])
    ex = executor(store, fake)
    ticks(ex, fake, run_id, 2)
    assert fake.broker_configs[BrokerId(3)][FOLLOWER_RATE] == str(RATE)
    for faster in (5 * RATE, 7 * RATE):  # once, then again: each the rate the run goes at
        assert cli.main(["throttle", "--run", str(run_id), "--rate", str(faster)]) == 0
        ticks(ex, fake, run_id, 3)
        assert fake.broker_configs[BrokerId(3)][FOLLOWER_RATE] == str(faster)  # not set back
        assert fake.broker_configs[BrokerId(0)][LEADER_RATE] == str(faster)
    assert guardrail_entries(store) == []  # nothing seen as someone else's change
    fake.alter_configs({BrokerId(3): {FOLLOWER_RATE: "50000000"}}, {})  # someone else, by hand
    ex.tick(run_id)
    assert fake.broker_configs[BrokerId(3)][FOLLOWER_RATE] == str(7 * RATE)  # back to the person's rate
    (restored,) = [e for e in guardrail_entries(store) if e["outcome"] == "restored"]
    assert (restored["seen"], restored["set"]) == ("50000000", str(7 * RATE))
    fake.copy_rate = 10 * RATE
    assert run_to_end(ex, fake, run_id).run.state is RunState.COMPLETED
    assert leftover_throttles(fake.snapshot()) == []


class SlowReads:
    """The executor's clock, with every snapshot read taking ``read_s`` seconds (none while 0)."""

    def __init__(self) -> None:
        self.now, self.read_s, self.reading = 0.0, 0.0, False

    def __call__(self) -> float:
        self.reading = not self.reading
        self.now += 0.0 if self.reading else self.read_s
        return self.now


def test_a_cluster_that_answers_only_after_the_grace_gets_no_wave_on_that_picture_and_pauses_the_run(
    store: Store,
) -> None:
    fake = five()
    run_id = start(store, fake, [(0, (0, 3)), (1, (0, 4))])
    ex = executor(store, fake, unread_grace_s=30.0)
    ex.read_clock = reads = SlowReads()
    ticks(ex, fake, run_id, 2)
    fake.advance(30)  # wave 1 copied: wave 2 would go next
    ex.tick(run_id)
    assert waves(store, run_id) == [WaveState.COMPLETED, WaveState.PENDING]
    reads.read_s = 63.0  # every part answers, the picture 63 s old (two voters of three paused)
    sent = len(fake.calls)
    step = ex.tick(run_id)
    assert waves(store, run_id)[1] is WaveState.PENDING
    assert [c.method for c in fake.calls[sent:]] == ["snapshot"]  # nothing but the read: not even the throttle
    assert [e["did"] for e in guardrail_entries(store)] == ["paused"], step.did  # not answered in time for 63 s
    assert store.runs.require(run_id).state is RunState.PAUSED
    reads.read_s = 0.0  # it answers in time again: the run stays paused until a person resumes it
    assert ex.tick(run_id).did == "paused" and waves(store, run_id)[1] is WaveState.PENDING


# -- a cluster that hangs: each step's read bounded in time ------------------------------------------------
WITHIN_S = 0.2
"""The steps' deadline here (real seconds): the fake hangs in real time."""


@pytest.fixture
def hung() -> Iterator[FakeCluster]:
    """Five brokers (as :func:`five`) whose snapshots can hang; whatever a test leaves hung answers after it."""
    fake = five()
    yield fake
    fake.answer()


def read_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("cluster-read-")]


def test_reads_of_a_hung_cluster_come_back_by_their_deadline_one_thread_and_one_request_at_most(
    hung: FakeCluster,
) -> None:
    reads = BoundedReads(hung.snapshot, "fake", within_s=WITHIN_S)
    assert reads.read().answered and not reads.in_flight
    hung.hang()
    before = len(read_threads())
    for _ in range(20):
        began = time.monotonic()
        read = reads.read()
        assert time.monotonic() - began < WITHIN_S + 0.5  # given up by its deadline
        assert not read.answered and read.state.status.metadata is SourceStatus.UNAVAILABLE
        assert read.state.status.reassignments is SourceStatus.UNAVAILABLE and not read.state.partitions
        assert len(read_threads()) <= max(before, 1)  # the read given up is the one still in flight
    assert len(hung.calls_to("snapshot")) == 2  # one before, one sent to the hung cluster: never one per read
    assert read.seconds >= 20 * WITHIN_S  # measured from when that read began, not from this step
    hung.answer()
    wait_for(lambda: not reads.in_flight, timeout=10, what="the read given up answered")
    fresh = reads.read()  # the one that came back while no step waited is too old to act on: read afresh
    assert fresh.answered and fresh.state.status.reassignments is SourceStatus.OK
    assert len(hung.calls_to("snapshot")) == 3
    wait_for(lambda: not read_threads(), timeout=10, what="no read thread left")


def test_a_full_read_asked_while_a_narrow_one_hangs_waits_for_it_and_says_it_was_not_full(hung: FakeCluster) -> None:
    """One read at a time, whatever its kind: a step that asks for a full read while the read a step
    gave up is still under way gets that one (not full: it does not send a wave on it), then a full one."""
    reads = BoundedReads(hung.snapshot, "fake", within_s=WITHIN_S, full_source=lambda: hung.snapshot(full=True))
    assert reads.read(full=True).full and not reads.read().full
    hung.hang()
    assert not reads.read().answered  # a narrow read given up, still under way
    assert not reads.read(full=True).answered  # the same one waited for: no second read sent
    hung.answer()
    wait_for(lambda: not reads.in_flight, timeout=10, what="the read given up answered")
    assert reads.read(full=True).full
    assert [c.args for c in hung.calls_to("snapshot")] == [(0.0, "full"), (0.0,), (0.0,), (0.0, "full")]


def test_a_quorum_lost_holds_the_next_wave_by_the_deadline_and_pauses_at_the_grace_from_when_it_stopped(
    store: Store, hung: FakeCluster
) -> None:
    fake = hung
    run_id = start(store, fake, [(0, (0, 3)), (1, (0, 4))])
    ex = executor(store, fake, unread_grace_s=10.0)
    ex.reads.within_s, ex.reads.wall = WITHIN_S, lambda: fake.clock
    ticks(ex, fake, run_id, 2)
    fake.advance(30)  # wave 1 copied: wave 2 would go next
    stopped, sent = fake.clock, len(fake.calls)
    fake.hang()
    began = time.monotonic()
    step = ex.tick(run_id)
    assert time.monotonic() - began < WITHIN_S + 2.0  # the hold decided within the deadline
    assert step.did.startswith("waiting: Metadata and ListPartitionReassignments did not answer; no wave is sent")
    assert [e["did"] for e in guardrail_entries(store)] == ["held"]
    held = store.holds.held([run_id])[run_id]
    assert [c["rule"] for c in held.concerns] == ["cluster_unread"] and not held.paused
    while store.runs.require(run_id).state is RunState.RUNNING and fake.clock - stopped < 20:
        fake.advance(3)  # a poll every 3 s: each step waits for the same read, given up again
        step = ex.tick(run_id)
    assert fake.clock - stopped == 12  # past the 10 s grace from when the cluster stopped answering
    assert store.runs.require(run_id).state is RunState.PAUSED
    assert "did not answer for more than the 10 s allowed" in step.did
    assert [e["did"] for e in guardrail_entries(store)] == ["held", "paused"]
    assert store.holds.held([run_id])[run_id].paused
    assert [c.method for c in fake.calls[sent:]] == ["snapshot"]  # one read sent, nothing else: no throttle, no wave
    fake.answer()
    wait_for(lambda: not ex.reads.in_flight, timeout=10, what="the read given up answered")
    ticks(ex, fake, run_id, 2)
    assert store.runs.require(run_id).state is RunState.PAUSED and waves(store, run_id)[1] is WaveState.PENDING
    run_service.resume(store, ANN, run_id)
    assert run_to_end(ex, fake, run_id).run.state is RunState.COMPLETED


def test_a_slow_read_given_up_by_one_step_is_the_next_steps_picture(store: Store) -> None:
    fake = five()
    run_id = start(store, fake, [(0, (0, 3)), (1, (0, 4))])
    ex = executor(store, fake)
    ex.reads.within_s = WITHIN_S
    ticks(ex, fake, run_id, 2)
    fake.advance(30)
    fake.read_takes_s = 5 * WITHIN_S  # slow, well within the grace: held once, then acted on
    sent = len(fake.calls)
    assert "did not answer" in ex.tick(run_id).did
    # the next step waits long enough for the rest of that same read whatever the machine's load (at
    # 2 x WITHIN_S and the same wait, the second step timed out too on a loaded machine, or came after
    # the read had ended and read again)
    ex.reads.within_s = 25 * WITHIN_S
    step = ex.tick(run_id)
    methods = [c.method for c in fake.calls[sent:]]
    assert methods[0] == "snapshot" and methods[1] != "snapshot", methods  # the same read: acted on
    assert waves(store, run_id)[0] is WaveState.COMPLETED and "did not answer" not in step.did, step.did
    fake.read_takes_s = 0.0
    assert run_to_end(ex, fake, run_id).run.state is RunState.COMPLETED
