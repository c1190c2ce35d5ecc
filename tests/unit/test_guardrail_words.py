"""What the guardrails hold a run for, in the words every surface shows (Live, Runs, ``runs``) and
as ``runs --json``'s ``held_by``; the guardrails' audit entries in a sentence each. Each from what
the executor really stored on the fake cluster, and the cases it cannot easily reach built by hand."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import datetime

from console.access.auth import Identity
from console.core.limits import FOLLOWER_RATE
from console.core.model import BrokerId
from console.core.states import RunState
from console.moves.guardrails import Action, Concern, GuardrailSettings, Rule
from console.moves.waves import WaveLimits
from console.plans.plan import Plan, PlanEntry
from console.present.guardrails import (
    SHOWN_AT_MOST,
    Hold,
    HoldNotice,
    audit_words,
    hold_notice,
    hold_notices,
    more_text,
    when,
)
from console.runs.executor import Executor
from console.services import runs as run_service
from console.storage.holds import Held
from console.storage.runs import Run
from console.storage.store import Store
from tests.fakes.cluster import FakeCluster

ANN = Identity.cli("ann")
NOW = datetime(2025, 6, 2, 10, 42, 13).timestamp()


def B(*ids: int) -> tuple[BrokerId, ...]:
    return tuple(BrokerId(i) for i in ids)


def started(store: Store, fake: FakeCluster, moves: list[tuple[int, tuple[int, ...]]]) -> int:
    plan = Plan.of(PlanEntry("t", p, B(*r)) for p, r in moves)
    limits = WaveLimits(moves_per_broker=1, partitions=1)  # a wave a partition
    return run_service.start_run(
        store,
        fake,
        fake.snapshot(),
        run_service.RunRequest(ANN, plan, "move t", run_service.RunSettings(rate=1_000, limits=limits)),
        users=None,
    )


def executor(store: Store, fake: FakeCluster) -> Executor:
    return Executor(store, fake, "worker", settle_s=0, poll_s=0, guardrails=GuardrailSettings())


def a_run(store: Store) -> Run:
    fake = FakeCluster.of(3, {"t": [(0, 1)]})
    return store.runs.require(started(store, fake, [(0, (0, 2))]))


def held(run: Run, *concerns: Concern, paused: bool = False, since: float = NOW) -> Held:
    return Held(run.id, since, json.dumps([c.to_dict() for c in concerns]), "[]", paused)


GONE = Concern(
    Rule.DESTINATION_GONE,
    Action.PAUSE,
    "broker 4, a destination of waves 3–4, is offline. In flight onto it: t-2 (cannot finish while it is gone)",
    B(4),
    (("t", 2),),
)
AT_MIN = Concern(Rule.AT_MIN_ISR, Action.SLOW, "1 partition the copy touches has no in-sync replica to spare: u-0")
UNREAD = Concern(Rule.CLUSTER_UNREAD, Action.HOLD, "Metadata did not answer; no wave is sent until it does")


def test_a_run_a_destination_gone_paused_is_said_with_the_partitions_that_cannot_finish(store: Store) -> None:
    fake = FakeCluster.of(5, {"t": [(0, 1)] * 2}, size=10_000, copy_rate=100)
    run_id = started(store, fake, [(0, (0, 3)), (1, (0, 4))])  # wave 1 onto 3, wave 2 onto 4
    ex = executor(store, fake)
    ex.tick(run_id)  # wave 1 sent: t-0 copies onto 3
    fake.stop_broker(3)
    ex.tick(run_id)
    run = store.runs.require(run_id)
    assert run.state is RunState.PAUSED
    notice = hold_notice(run, store.holds.shown([run_id])[run_id], fake.clock)
    assert notice is not None and notice.hold is Hold.PAUSED and notice.resumable
    assert notice.words == (
        f"Paused by a guardrail since {when(fake.clock, fake.clock)}: broker 3, a destination of the wave in "
        "flight, is offline. In flight onto it: t-0 (cannot finish while it is gone)."
    )
    assert notice.line.startswith(f"Run {run_id} (move t) paused by a guardrail since ")
    assert notice.stranded == (("t", 0),) and notice.state_text == "paused (guardrail)"
    assert notice.held_by() == [
        {
            "rule": "destination_gone",
            "action": "pause",
            "text": notice.concerns[0].text,
            "brokers": [3],
            "partitions": ["t-0"],
            "since": fake.clock,
        }
    ]

    fake.start_broker(3)  # back: what paused it has cleared, the run still waits for a person
    ex.tick(run_id)
    assert store.holds.held([run_id]) == {}
    notice = hold_notice(store.runs.require(run_id), store.holds.shown([run_id])[run_id], fake.clock)
    assert notice is not None and notice.held_by() == [] and notice.stranded == ()
    assert notice.words.endswith("; what paused it has cleared since.") and notice.resumable

    run_service.resume(store, ANN, run_id)  # a person resumed it: nothing more to say
    assert store.holds.shown([run_id]) == {}


def test_held_and_slowed_runs_are_said_so_strongest_concern_first_and_offer_no_resume(store: Store) -> None:
    run = a_run(store)
    assert run.state is RunState.RUNNING
    notice = hold_notice(run, held(run, AT_MIN, UNREAD), NOW)
    assert notice is not None and notice.hold is Hold.HELD and not notice.resumable
    assert notice.words == f"Held by a guardrail since 10:42:13: {UNREAD.text}; {AT_MIN.text}."
    assert [c.rule for c in notice.concerns] == ["cluster_unread", "at_min_isr"]
    notice = hold_notice(run, held(run, AT_MIN), NOW)
    assert notice is not None and notice.hold is Hold.SLOWED and notice.stranded == ()
    assert notice.words.startswith("Slowed by a guardrail since 10:42:13: 1 partition the copy touches")
    assert notice.state_text == "running (guardrail)"


def test_a_run_a_person_paused_that_a_guardrail_also_holds_is_held_with_resume_offered(store: Store) -> None:
    run = replace(a_run(store), state=RunState.PAUSED)
    notice = hold_notice(run, held(run, GONE, paused=False), NOW)
    assert notice is not None and notice.hold is Hold.HELD and notice.resumable
    assert notice.stranded == (("t", 2),)


def test_nothing_is_said_of_a_run_nothing_holds(store: Store) -> None:
    run = a_run(store)
    assert hold_notice(run, None, NOW) is None
    assert hold_notice(run, held(run), NOW) is None  # cleared, and no guardrail paused it
    stopping = replace(run, state=RunState.STOPPING)  # a guardrail paused it, then a person stopped it
    assert hold_notice(stopping, held(run, paused=True), NOW) is None
    ended = replace(run, state=RunState.COMPLETED)
    assert hold_notice(ended, held(run, GONE, paused=True), NOW) is None
    assert hold_notices([run, stopping], {run.id: held(run, GONE)}, NOW)[0].run_id == run.id


def test_the_time_has_its_date_only_on_another_day() -> None:
    at = datetime(2025, 6, 2, 9, 5, 1).timestamp()
    assert when(at, NOW) == "09:05:01"
    assert when(at, NOW + 86_400) == "2025-06-02 09:05:01"


def test_past_a_few_held_runs_the_rest_are_counted(store: Store) -> None:
    run = a_run(store)
    one = hold_notice(run, held(run, GONE), NOW)
    assert one is not None
    notices: list[HoldNotice] = [replace(one, run_id=n) for n in range(SHOWN_AT_MOST + 3)]
    assert more_text(notices[:SHOWN_AT_MOST]) is None
    assert more_text(notices) == "And 3 more runs held by guardrails: each is said on its Runs page."


def test_the_guardrails_audit_entries_read_as_sentences(store: Store) -> None:
    fake = FakeCluster.of(5, {"t": [(0, 1)] * 2}, size=10_000, copy_rate=100)
    run_id = started(store, fake, [(0, (0, 3)), (1, (0, 4))])
    ex = executor(store, fake)
    ex.tick(run_id)
    fake.alter_configs({BrokerId(3): {FOLLOWER_RATE: "50000000"}}, {})  # raised by someone else
    fake.advance(1.0)
    ex.tick(run_id)
    fake.stop_broker(4)
    fake.advance(1.0)
    ex.tick(run_id)
    said = [audit_words(e) for e in store.audit.entries() if e.action == "guardrail"]
    assert said == [
        f"Run {run_id}, throttle changed: broker 3's {FOLLOWER_RATE} found 50.0 MB/s; setting it back to 1.0 KB/s.",
        f"Run {run_id}, throttle changed: broker 3's {FOLLOWER_RATE} set back to 1.0 KB/s (it was 50.0 MB/s).",
        f"Run {run_id}, destination gone: broker 4, a destination of wave 2, is offline (paused).",
    ]
    assert {audit_words(e) for e in store.audit.entries() if e.action != "guardrail"} == {""}
