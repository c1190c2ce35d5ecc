"""The guardrails acting on a real cluster (5 brokers, Kafka 4.4, KRaft), each on a run the console
drives (``start_run`` and the executor's steps): a destination killed hard between waves, a
partition of the run put under its min ISR with ``kafka-configs`` while no replica is offline, one
at its min ISR, a broker rate raised by hand with ``kafka-configs`` during a long wave, one lowered
by hand, and the controller quorum paused. Each test asserts the decision, that the run says why,
and ends with the run completed as planned and no throttle left.

A partition under its min ISR with no replica offline needs a follower that is online and out of
the ISR: on Kafka 4 a ``min.insync.replicas`` above the replication factor counts as equal to it,
and Kafka never throttles an in-sync follower. The follower is paused (SIGSTOP) while records are
written (:func:`~tests.integration.helpers.lagging`): it leaves the ISR after the sandbox's lag time
(5 s), and stays registered and unfenced because this sandbox's brokers have a session timeout
longer than the pause (Kafka's default, 9 s, would fence it first). A broker killed hard is fenced
after that timeout too.
"""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

import pytest

from console.access.auth import Identity
from console.core.errors import ConsoleError
from console.core.limits import FOLLOWER_RATE, LEADER_RATE
from console.core.model import ClusterState, SourceStatus
from console.core.states import RunState, WaveState
from console.moves.guardrails import GuardrailSettings
from console.moves.progress import CopyTracker
from console.moves.waves import WaveLimits
from console.plans.plan import Plan, PlanEntry, parse_plan
from console.present.estimate import wave_eta
from console.runs.executor import Executor
from console.sandbox.cluster import Sandbox
from console.services import runs as run_service
from console.state.reader import ClusterReader
from console.storage.store import Store
from tests.integration.helpers import (
    LAG_SESSION_S,
    clear_throttles,
    in_flight,
    lagging,
    live,
    make_topic,
    reassign,
    seen_without,
    servers,
)
from tests.support import kafka_configs, own_sandbox, settings_for, wait_for

ANN = Identity.cli("ann")
BROKERS = [0, 1, 2, 3, 4]
"""0, 1 and 2 are also the controllers (the quorum's voters); 3 and 4 are brokers only."""


@pytest.fixture(scope="module")
def guarded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sandbox]:
    yield from own_sandbox(
        tmp_path_factory,
        "sandbox-guardrails",
        brokers=5,
        broker_config={"broker.session.timeout.ms": LAG_SESSION_S * 1000},
    )


@pytest.fixture
def killable(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sandbox]:
    """A cluster of the kill test's own, with Kafka's default session timeout: a broker killed hard
    is fenced 9 s later, as on a real cluster (the module's cluster waits LAG_SESSION_S for it)."""
    yield from own_sandbox(tmp_path_factory, "sandbox-guardrails-kill", brokers=5)


@pytest.fixture
def killable_reader(killable: Sandbox, tmp_path, monkeypatch: pytest.MonkeyPatch) -> Iterator[ClusterReader]:
    monkeypatch.setenv("CONSOLE_DATA_DIR", str(tmp_path))
    with ClusterReader(settings_for(killable)) as r:
        yield r


@pytest.fixture
def reader(guarded: Sandbox, tmp_path, monkeypatch: pytest.MonkeyPatch) -> Iterator[ClusterReader]:
    """The console on the module's cluster (its store in ``tmp_path``); after the test, whatever it
    left (a test that failed half-way) is cleared for the next: every broker up, nothing in flight,
    no throttle."""
    monkeypatch.setenv("CONSOLE_DATA_DIR", str(tmp_path))
    with ClusterReader(settings_for(guarded)) as r:
        yield r
        for b in BROKERS:
            if not guarded.proc(f"broker-{b}").alive():
                guarded.start(f"broker-{b}")
        wait_for(lambda: settled(r) or _cancel_all(guarded), timeout=180, every=2, what="the cluster left clean")
        state = r.snapshot()
        clear_throttles(guarded.bootstrap_servers, BROKERS, [t for t, _ in state.throttles.topics])


def _cancel_all(sb: Sandbox) -> bool:
    """Cancel every reassignment in flight (a test that failed half-way); False: look again."""
    moving = in_flight(sb.bootstrap_servers)
    if moving:
        reassign(sb.bootstrap_servers, dict.fromkeys(moving))
    return False


# -- helpers ------------------------------------------------------------------------------------------
def start(
    reader: ClusterReader,
    moves: list[tuple[str, int, tuple[int, ...]]],
    rate: int | None,
    guardrails: GuardrailSettings | None = None,
    limits: WaveLimits | None = None,
) -> tuple[Executor, int]:
    """A run of ``moves`` (a wave a partition unless ``limits`` say otherwise) and its executor."""
    store = Store()
    plan = Plan.of(PlanEntry(t, p, r) for t, p, r in moves)  # type: ignore[misc]
    run_id = run_service.start_run(
        store,
        reader.gateway(),
        reader.snapshot(),
        run_service.RunRequest(
            ANN,
            plan,
            "guarded",
            run_service.RunSettings(rate=rate, limits=limits or WaveLimits(moves_per_broker=1, partitions=1)),
        ),
        users=None,
    )
    return Executor(store, reader.gateway(), "worker", poll_s=0.5, guardrails=guardrails), run_id


def tick(ex: Executor, run_id: int) -> str:
    """One step of the run (the cluster not answering is a step too: the next one tries again)."""
    try:
        return ex.tick(run_id).did
    except ConsoleError as e:
        return f"retrying: {e.message}"


def ticks_until(ex: Executor, run_id: int, cond: Callable[[], bool], what: str, timeout: float = 120) -> None:
    """Steps of the run until ``cond()``; on a timeout, what the last steps did is said."""
    did: list[str] = []

    def step() -> bool:
        did.append(tick(ex, run_id))
        return cond()

    try:
        wait_for(step, timeout=timeout, every=0.5, what=what)
    except AssertionError as e:
        raise AssertionError(f"{e}; the last steps: {did[-3:]}") from None


def waves(ex: Executor, run_id: int) -> list[WaveState]:
    return [w.state for w in ex.store.runs.waves(run_id)]


def sent(ex: Executor, run_id: int) -> list[int]:
    """The waves whose submit was written (the intent precedes the request)."""
    return sorted(
        json.loads(e.request)["wave"]
        for e in ex.store.audit.entries(action="submit-wave")
        if e.ref is None and json.loads(e.request).get("run") == run_id
    )


def throttled(ex: Executor, run_id: int) -> list[int]:
    """The waves whose throttle was written (the intent precedes the config change)."""
    return sorted(
        json.loads(e.request)["wave"]
        for e in ex.store.audit.entries(action="throttle-set")
        if e.ref is None and json.loads(e.request).get("run") == run_id
    )


def said(ex: Executor, unread: bool = False, at: bool = False) -> list[dict[str, object]]:
    """The guardrails' audit entries: what each saw and did (intents and answers of a throttle set back too).
    Without ``unread``, those of a read the loaded machine's cluster did not answer in time (a wave
    held, then let go: right, and not what the other tests are about) are left out. ``at``: with
    when each was written."""
    got = [
        {**json.loads(e.request), "outcome": e.outcome, "id": e.id, "ref": e.ref, **({"at": e.at} if at else {})}
        for e in ex.store.audit.entries(action="guardrail")
    ]
    return [e for e in got if unread or e.get("rule") != "cluster_unread"]


def holds(ex: Executor, run_id: int) -> list[dict[str, object]]:
    held = ex.store.holds.get(run_id)
    return [] if held is None else held.concerns


def configs(sb: Sandbox, *args: str, without: int | None = None) -> None:
    """``kafka-configs`` of the sandbox's release, as an operator would run it by hand. With a broker
    paused (``without``): bootstrapped from the others, and a request it does not answer given up
    after 3 s for another broker (the tool's admin client may pick any broker it learns of)."""
    if without is None:
        done = kafka_configs(sb, "--alter", *args)
    else:
        impatient = Path(sb.data_dir) / "config" / "impatient-tool.properties"
        impatient.write_text(
            "request.timeout.ms=3000\nsocket.connection.setup.timeout.ms=3000\n"
            "socket.connection.setup.timeout.max.ms=3000\n"
        )
        others = replace(sb, bootstrap_servers=servers(sb, without))
        done = kafka_configs(others, "--command-config", str(impatient), "--alter", *args)
    assert done.returncode == 0, done.stderr


def broker_rate(state: ClusterState, broker: int, key: str = FOLLOWER_RATE) -> str | None:
    return state.throttles.broker_map().get(str(broker), {}).get(key)


@contextmanager
def paused(sb: Sandbox, *brokers: int) -> Iterator[None]:
    """``brokers`` stopped with SIGSTOP (their sockets open, nothing answering), resumed on leaving."""
    pids = [sb.proc(f"broker-{b}").pid for b in brokers]
    for pid in pids:
        os.kill(pid, signal.SIGSTOP)
    try:
        yield
    finally:
        for pid in pids:
            os.kill(pid, signal.SIGCONT)


def completes(
    ex: Executor, reader: ClusterReader, run_id: int, planned: dict[tuple[str, int], tuple[int, ...]]
) -> None:
    """The run completes, every partition as planned, having taken off every throttle it set."""
    assert ex.drive(run_id, every=0.5, timeout=240).state is RunState.COMPLETED
    state = reader.snapshot()
    assert {k: state.partition(*k).replicas for k in planned} == planned  # type: ignore[union-attr]
    assert not ex.store.runs.ledger(run_id)


def no_throttle_left(reader: ClusterReader) -> None:
    seen: list[object] = []

    def none() -> bool:
        seen.append(reader.snapshot().throttles)
        return not seen[-1]

    try:
        wait_for(none, timeout=30, what="no throttle left")
    except AssertionError as e:
        raise AssertionError(f"{e}: {seen[-1]}") from None


def finish(ex: Executor, reader: ClusterReader, run_id: int, planned: dict[tuple[str, int], tuple[int, ...]]) -> None:
    """The run completes, every partition as planned, and no throttle is left."""
    completes(ex, reader, run_id, planned)
    no_throttle_left(reader)


def settled(reader: ClusterReader) -> bool:
    """Every broker live, the reassignments listed and nothing in flight."""
    s = reader.snapshot()
    return (
        s.status.reassignments is SourceStatus.OK
        and all(b is not None and b.live for b in map(s.broker, BROKERS))  # type: ignore[arg-type]
        and not s.in_flight
    )


# -- the tests ------------------------------------------------------------------------------------------
def test_a_destination_killed_hard_between_waves_gets_nothing_and_the_run_completes_as_planned_once_it_is_back(
    killable: Sandbox, killable_reader: ClusterReader
) -> None:
    guarded, reader = killable, killable_reader
    bs = guarded.bootstrap_servers
    make_topic(bs, "g-dest", 2, 1, 100, assignment=[[0], [1]])
    ex, run_id = start(reader, [("g-dest", 0, (3,)), ("g-dest", 1, (4,))], rate=1_000_000)
    ticks_until(ex, run_id, lambda: waves(ex, run_id)[0] is WaveState.COMPLETED, "wave 1 (onto 3) completed")
    guarded.stop("broker-4", hard=True)  # kill -9, between wave 1 and wave 2 (onto 4)
    try:
        wait_for(lambda: not live(reader, 4), timeout=120, every=1, what="broker 4 fenced")
        for _ in range(4):  # the next polls: paused at the first, nothing sent at any
            tick(ex, run_id)
        assert ex.store.runs.require(run_id).state is RunState.PAUSED
        assert waves(ex, run_id) == [WaveState.COMPLETED, WaveState.PENDING] and sent(ex, run_id) == [1]
        assert ("g-dest", 1) not in in_flight(bs)
        (entry,) = said(ex)
        assert (entry["rule"], entry["did"]) == ("destination_gone", "paused")
        assert entry["saw"] in (
            "broker 4, a destination of wave 2, is fenced",
            "broker 4, a destination of wave 2, is offline",
        )
        (held,) = holds(ex, run_id)
        assert (held["rule"], held["brokers"], held["text"]) == ("destination_gone", [4], entry["saw"])
    finally:
        guarded.start("broker-4")
    wait_for(lambda: live(reader, 4), timeout=120, every=2, what="broker 4 back")
    tick(ex, run_id)
    assert ex.store.runs.require(run_id).state is RunState.PAUSED and not holds(ex, run_id)  # a person resumes
    run_service.resume(ex.store, ANN, run_id)
    finish(ex, reader, run_id, {("g-dest", 0): (3,), ("g-dest", 1): (4,)})


def test_a_partition_of_the_run_under_its_min_isr_with_no_replica_offline_pauses_it_until_the_setting_is_put_back(
    guarded: Sandbox, reader: ClusterReader
) -> None:
    bs = guarded.bootstrap_servers
    make_topic(bs, "g-under", 2, 3, 100, assignment=[[0, 1, 2], [0, 1, 3]])
    ex, run_id = start(
        reader,
        [("g-under", 0, (0, 1, 4)), ("g-under", 1, (0, 1, 4))],
        rate=1_000_000,
        # a read that waits on the paused broker is slow, not late: the grace is not what is shown here
        guardrails=GuardrailSettings(auto_resume=True, clear_for_s=3.0, unread_grace_s=120.0),
    )
    ticks_until(ex, run_id, lambda: waves(ex, run_id)[0] is WaveState.COMPLETED, "wave 1 completed")
    with lagging(guarded, "g-under", 1):  # g-under-1's follower on broker 3 out of the ISR, online
        set_min_isr = ("--entity-type", "topics", "--entity-name", "g-under")
        configs(guarded, *set_min_isr, "--add-config", "min.insync.replicas=3", without=3)
        # each read of the cluster waits on the paused broker (10 to 15 s): generous
        ticks_until(ex, run_id, lambda: ex.store.runs.require(run_id).state is RunState.PAUSED, "paused", 90)
        held = holds(ex, run_id)
        assert waves(ex, run_id) == [WaveState.COMPLETED, WaveState.PENDING] and sent(ex, run_id) == [1]
        configs(guarded, *set_min_isr, "--delete-config", "min.insync.replicas", without=3)
        ticks_until(ex, run_id, lambda: not holds(ex, run_id), "the hold cleared by the setting put back", 90)
        still = seen_without(guarded, "g-under", 1, without=3)
        assert still is not None and 3 not in still.isr and 3 in still.brokers  # what cleared it: the setting
    ticks_until(ex, run_id, lambda: ex.store.runs.require(run_id).state is RunState.RUNNING, "resumed", 60)
    entries = said(ex)
    assert [(e["rule"], e["did"]) for e in entries] == [("under_min_isr", "paused"), ("resume", "resumed")], entries
    entry = entries[0]
    assert entry["saw"] == (
        "1 partition the copy touches is under min ISR with no replica offline: g-under-1 "
        "(writes with acks=all are refused)"
    )
    assert [(c["rule"], c["partitions"], c["text"]) for c in held] == [("under_min_isr", ["g-under-1"], entry["saw"])]
    finish(ex, reader, run_id, {("g-under", 0): (0, 1, 4), ("g-under", 1): (0, 1, 4)})


def test_a_partition_the_copy_touches_at_its_min_isr_cuts_the_next_wave_to_one_adding_move_per_broker(
    guarded: Sandbox, reader: ClusterReader
) -> None:
    bs = guarded.bootstrap_servers
    make_topic(bs, "g-at", 2, 1, 100, assignment=[[0], [0]])
    make_topic(bs, "g-spare", 1, 3, 10, assignment=[[2, 4, 3]])  # led by 2, with a replica on 4
    configs(guarded, "--entity-type", "topics", "--entity-name", "g-spare", "--add-config", "min.insync.replicas=2")
    ex, run_id = start(
        reader,
        [("g-at", 0, (4,)), ("g-at", 1, (4,))],
        rate=1_000_000,
        guardrails=GuardrailSettings(unread_grace_s=120.0),  # reads wait on the paused broker: slow, not late
        limits=WaveLimits(moves_per_broker=2),
    )
    assert [len(parse_plan(w.entries_json).entries) for w in ex.store.runs.waves(run_id)] == [2]
    with lagging(guarded, "g-spare", 0):  # g-spare-0 (on 4, the destination): no spare in-sync replica
        ticks_until(ex, run_id, lambda: sent(ex, run_id) == [1], "wave 1 sent", 90)
    assert [len(parse_plan(w.entries_json).entries) for w in ex.store.runs.waves(run_id)] == [1, 1]
    assert sent(ex, run_id) == [1] and ex.store.runs.require(run_id).state is RunState.RUNNING
    entries = said(ex)
    assert [(e["rule"], e["did"]) for e in entries] == [("at_min_isr", "slowed")], entries
    entry = entries[0]
    assert "no in-sync replica to spare: g-spare-0" in str(entry["saw"])
    cut = [json.loads(e.request) for e in ex.store.audit.entries(action="wave-cut")]
    assert cut == [{"run": run_id, "wave": 1, "kept": 1}]
    finish(ex, reader, run_id, {("g-at", 0): (4,), ("g-at", 1): (4,)})


def test_a_broker_rate_raised_by_hand_during_a_long_wave_is_set_back_within_two_polls_and_audited(
    guarded: Sandbox, reader: ClusterReader
) -> None:
    bs = guarded.bootstrap_servers
    make_topic(bs, "g-raise", 1, 1, 2000, assignment=[[0]])
    rate = 20_000  # 2 MB at 20 KB/s: a wave of about 100 s
    ex, run_id = start(reader, [("g-raise", 0, (3,))], rate=rate)
    ticks_until(ex, run_id, lambda: waves(ex, run_id) == [WaveState.RUNNING], "the wave copying")
    configs(guarded, "--entity-type", "brokers", "--entity-name", "3", "--add-config", f"{FOLLOWER_RATE}=900000000")
    polls = 0
    while not [e for e in said(ex) if e["outcome"] == "restored"] and polls < 2:
        tick(ex, run_id)
        polls += 1
    intent, answer = said(ex)
    assert (intent["outcome"], intent["rule"], intent["where"], intent["key"]) == (
        "sending",
        "throttle_changed",
        "broker 3",
        FOLLOWER_RATE,
    )
    assert (intent["seen"], intent["set"]) == ("900000000", str(rate))
    assert (answer["outcome"], answer["ref"]) == ("restored", intent["id"])
    wait_for(lambda: broker_rate(reader.snapshot(), 3) == str(rate), timeout=30, what="broker 3 back at the rate")
    assert waves(ex, run_id) == [WaveState.RUNNING] and ex.store.runs.require(run_id).state is RunState.RUNNING
    run_service.change_throttle(ex.store, reader.gateway(), ANN, run_id, 50_000_000)  # a person speeds it up
    finish(ex, reader, run_id, {("g-raise", 0): (3,)})
    assert len(said(ex)) == 2  # the person's change was the run's own: nothing set back


def test_a_broker_rate_lowered_by_hand_is_kept_and_the_eta_grows(guarded: Sandbox, reader: ClusterReader) -> None:
    bs = guarded.bootstrap_servers
    make_topic(bs, "g-lower", 1, 1, 3000, assignment=[[0]])
    rate = 100_000  # 3 MB at 100 KB/s: half a minute; lowered to 10 KB/s: five
    ex, run_id = start(reader, [("g-lower", 0, (3,))], rate=rate)
    ticks_until(ex, run_id, lambda: waves(ex, run_id) == [WaveState.RUNNING], "the wave copying")
    copies = CopyTracker()

    def eta() -> float | None:
        """The wave's ETA as the Runs page and ``submit`` say it, from the copy rates observed so far."""
        tick(ex, run_id)
        now = reader.snapshot()
        copies.observe(now)
        run = ex.store.runs.require(run_id)
        got = wave_eta(now, run.state, [("g-lower", 0)], list, run.rate, copies.rates(), copies.dir_rates(), None)
        return got.seconds

    before = wait_for(lambda: eta(), timeout=60, what="an ETA at the rate approved")
    configs(guarded, "--entity-type", "brokers", "--entity-name", "0", "--add-config", f"{LEADER_RATE}=10000")
    after = wait_for(lambda: (s := eta()) is not None and s > 3 * before and s, timeout=60, what="the ETA grown")
    for _ in range(3):
        tick(ex, run_id)
    assert broker_rate(reader.snapshot(), 0, LEADER_RATE) == "10000"  # kept: never raised back
    (entry,) = said(ex)
    assert (entry["rule"], entry["outcome"], entry["before"], entry["after"]) == (
        "throttle_changed",
        "adopted",
        str(rate),
        "10000",
    )
    assert "broker 0's leader.replication.throttled.rate lowered by a person to" in str(entry["saw"])
    assert ex.store.runs.require(run_id).state is RunState.RUNNING and after > before
    run_service.change_throttle(ex.store, reader.gateway(), ANN, run_id, 50_000_000)
    finish(ex, reader, run_id, {("g-lower", 0): (3,)})


def test_a_paused_quorum_gets_no_wave_and_the_run_pauses_past_the_grace(
    guarded: Sandbox, reader: ClusterReader
) -> None:
    """Each step's read is given up after its deadline (5 s): the hold is recorded within 10 s of the
    SIGSTOP and the pause within the grace (10 s here, shorter than the 30 s default to keep the
    test short) plus 10 s, stepping at the worker's poll (1 s); one read at a time meanwhile."""
    bs = guarded.bootstrap_servers
    make_topic(bs, "g-quorum", 2, 1, 100, assignment=[[0], [0]])
    grace = 10.0
    ex, run_id = start(
        reader,
        [("g-quorum", 0, (3,)), ("g-quorum", 1, (4,))],
        rate=1_000_000,
        guardrails=GuardrailSettings(unread_grace_s=grace),
    )
    ticks_until(ex, run_id, lambda: waves(ex, run_id)[0] is WaveState.COMPLETED, "wave 1 completed")
    reading: list[int] = []
    did: list[str] = []

    def decided(did_then: str) -> bool:
        did.append(tick(ex, run_id))
        reading.append(sum(t.name.startswith("cluster-read-") for t in threading.enumerate()))
        return any(e["rule"] == "cluster_unread" and e["did"] == did_then for e in said(ex, unread=True))

    with paused(guarded, 1, 2):  # two of the three voters: no quorum
        stopped = time.time()
        wait_for(lambda: decided("held"), timeout=60, every=1.0, what="held")
        wait_for(lambda: decided("paused"), timeout=grace + 60, every=1.0, what="paused")
        at = {e["did"]: e["at"] for e in said(ex, unread=True, at=True) if e["rule"] == "cluster_unread"}
        held_s, paused_s = float(at["held"]) - stopped, float(at["paused"]) - stopped  # type: ignore[arg-type]
        print(f"\nquorum lost -> hold {held_s:.1f} s, -> pause {paused_s:.1f} s (grace {grace:.0f} s)")
        assert held_s < 10.0, did
        assert paused_s < grace + 10.0, did
        assert max(reading) <= 1, reading  # one read in flight at most, however many steps gave it up
        assert ex.store.runs.require(run_id).state is RunState.PAUSED
        assert f"did not answer for more than the {grace:.0f} s allowed" in did[-1], did[-1]
        (held,) = holds(ex, run_id)
        assert held["rule"] == "cluster_unread" and "did not answer" in str(held["text"])
        tick(ex, run_id)
        assert waves(ex, run_id) == [WaveState.COMPLETED, WaveState.PENDING] and sent(ex, run_id) == [1]
        assert throttled(ex, run_id) == [1]  # not even wave 2's throttle was sent
    # the worker goes on stepping the paused run while the quorum comes back (the read it gave up answers)
    ticks_until(ex, run_id, lambda: not ex.reads.in_flight and settled(reader), "the quorum back", 180)
    run_service.resume(ex.store, ANN, run_id)
    completes(ex, reader, run_id, {("g-quorum", 0): (3,), ("g-quorum", 1): (4,)})
    no_throttle_left(reader)
