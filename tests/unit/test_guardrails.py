"""The guardrails' rules, pure, on the fake cluster: each with the decision it must take and the one
it must not (the cure, a rate lowered by a person, a lagging replica on a dead broker)."""

from __future__ import annotations

import random
from dataclasses import replace

from console.core.limits import FOLLOWER_LIST, FOLLOWER_RATE, LEADER_RATE
from console.core.model import (
    Broker,
    BrokerId,
    ClusterState,
    Partition,
    ReadStatus,
    ReplicaLog,
    SourceStatus,
    TopicPartition,
)
from console.moves.guardrails import (
    Action,
    Approved,
    Rule,
    RunView,
    destinations_gone,
    isr_concerns,
    read_concern,
    throttle_changes,
    throttle_overruns,
)
from console.moves.progress import BrokerIntake
from console.plans.plan import PlanEntry
from tests.fakes.cluster import FakeCluster


def B(*ids: int) -> tuple[BrokerId, ...]:
    return tuple(BrokerId(i) for i in ids)


def five() -> FakeCluster:
    """Five brokers; t-0..t-3 on 0,1,2 (min ISR 2); u-0 on 3,4."""
    f = FakeCluster.of(5, {"t": [(0, 1, 2)] * 4, "u": [(3, 4)]}, size=10_000, copy_rate=100)
    f.min_isr["t"] = 2
    return f


def view(f: FakeCluster, current: list[PlanEntry], *later: list[PlanEntry]) -> RunView:
    state = f.snapshot()
    keys = [e.key for e in current] + [e.key for w in later for e in w]
    before = {k: state.partition_index[k].replicas for k in keys}
    return RunView(tuple(current), tuple((n + 2, tuple(w)) for n, w in enumerate(later)), before)


# -- a destination is gone ----------------------------------------------------------------------------
def test_a_dead_destination_of_a_later_wave_pauses_the_run_and_names_the_broker_and_its_waves() -> None:
    f = five()
    v = view(f, [PlanEntry("t", 0, B(0, 1, 3))], [PlanEntry("t", 1, B(0, 1, 4))], [PlanEntry("t", 2, B(0, 1, 4))])
    f.alter_reassignments({("t", 0): B(0, 1, 3)})
    assert destinations_gone(f.snapshot(), v) is None  # every destination alive: nothing to say
    f.stop_broker(4)
    concern = destinations_gone(f.snapshot(), v)
    assert concern is not None and concern.action is Action.PAUSE and concern.brokers == B(4)
    assert concern.text == "broker 4, a destination of waves 2–3, is offline"
    assert concern.partitions == ()  # nothing in flight onto it yet


def test_partitions_in_flight_onto_a_dead_destination_are_named_as_unable_to_finish() -> None:
    f = five()
    f.kafka4 = True  # a stopped broker stays registered, fenced
    v = view(f, [PlanEntry("t", 0, B(0, 1, 3)), PlanEntry("t", 1, B(0, 1, 4))])
    f.alter_reassignments({("t", 0): B(0, 1, 3), ("t", 1): B(0, 1, 4)})
    f.stop_broker(3)
    concern = destinations_gone(f.snapshot(), v)
    assert concern is not None and concern.partitions == (("t", 0),)
    assert concern.text == (
        "broker 3, a destination of the wave in flight, is fenced. In flight onto it: t-0 (cannot finish while it is gone)"
    )


def test_a_move_off_a_dead_broker_is_not_held_back_a_cure_not_a_risk() -> None:
    f = five()
    f.stop_broker(2)  # t-0's replica on 2 is dead: the run moves it to 3
    v = view(f, [PlanEntry("t", 0, B(0, 1, 3))])
    f.alter_reassignments({("t", 0): B(0, 1, 3)})
    assert destinations_gone(f.snapshot(), v) is None  # 2 is a source being dropped, not a destination
    assert isr_concerns(f.snapshot(), v) == []  # t-0 is under min ISR? it has a dead replica: not counted


# -- min ISR ----------------------------------------------------------------------------------------------
def test_a_partition_the_copy_touches_under_min_isr_with_no_replica_offline_pauses() -> None:
    f = five()
    f.min_isr["t"] = 3  # RF 3, min ISR 3: one follower out of the ISR is enough
    v = view(f, [PlanEntry("u", 0, B(3, 0))])  # the run copies u-0 onto broker 0
    f.alter_reassignments({("u", 0): B(3, 0)})
    assert isr_concerns(f.snapshot(), v) == []
    f.parts[("t", 2)].isr = [BrokerId(0), BrokerId(1)]  # a follower on live broker 2 fell behind
    (concern,) = isr_concerns(f.snapshot(), v)
    assert concern.rule is Rule.UNDER_MIN_ISR and concern.action is Action.PAUSE
    assert concern.partitions == (("t", 2),)  # not the run's own: it has a replica on broker 0
    assert concern.text.startswith("1 partition the copy touches is under min ISR with no replica offline: t-2")


def test_a_partition_at_min_isr_slows_the_later_waves_and_a_partition_elsewhere_is_not_watched() -> None:
    f = five()
    v = view(f, [PlanEntry("t", 0, B(0, 1, 3))])
    f.alter_reassignments({("t", 0): B(0, 1, 3)})
    f.parts[("t", 1)].isr = [BrokerId(0), BrokerId(1)]  # RF 3, min ISR 2: no replica to spare
    (concern,) = isr_concerns(f.snapshot(), v)
    assert (concern.rule, concern.action, concern.partitions) == (Rule.AT_MIN_ISR, Action.SLOW, (("t", 1),))
    # a partition on brokers the run does not touch is none of its business
    f.parts[("t", 1)].isr = [BrokerId(0), BrokerId(1), BrokerId(2)]
    w = view(f, [PlanEntry("t", 3, B(0, 1, 2))])  # nothing moves
    f.parts[("u", 0)].isr = [BrokerId(3)]
    assert isr_concerns(f.snapshot(), w) == []


def test_a_replication_factor_one_topic_at_min_isr_one_is_not_at_risk() -> None:
    f = FakeCluster.of(3, {"c": [(0,), (1,)]}, size=10_000)
    v = view(f, [PlanEntry("c", 0, B(2))])
    f.alter_reassignments({("c", 0): B(2)})
    assert isr_concerns(f.snapshot(), v) == []


def test_a_move_done_while_its_old_replica_is_still_listed_is_not_at_min_isr() -> None:
    """The controller has completed c-0's move onto 2 (nothing in flight), while the Metadata read
    still lists the old replica out of the ISR, as a broker behind the controller shows it: the
    move's target is in sync, nothing is at risk (it slowed the run's later waves, audited)."""
    f = FakeCluster.of(3, {"c": [(0,), (1,)]}, size=10_000)
    v = view(f, [PlanEntry("c", 0, B(2))])
    f.parts[("c", 0)].replicas = [BrokerId(2), BrokerId(0)]
    f.parts[("c", 0)].isr = [BrokerId(2)]
    assert isr_concerns(f.snapshot(), v) == []
    f.parts[("c", 0)].isr = [BrokerId(0)]  # the target out of sync: that is still watched
    assert [c.rule for c in isr_concerns(f.snapshot(), v)] == [Rule.AT_MIN_ISR]


# -- the cluster does not answer ---------------------------------------------------------------------------
def test_an_unread_cluster_holds_the_next_wave_then_pauses_past_the_grace() -> None:
    f = five()
    state = f.snapshot()
    assert read_concern(state, None, 30.0) is None
    unread = replace(state, status=replace(state.status, reassignments=SourceStatus.UNAVAILABLE))
    held = read_concern(unread, unread.taken_at - 10, 30.0)
    assert held is not None and held.action is Action.HOLD
    assert held.text == "ListPartitionReassignments did not answer; no wave is sent until it does"
    paused = read_concern(unread, unread.taken_at - 31, 30.0)
    assert paused is not None and paused.action is Action.PAUSE
    assert paused.text == "ListPartitionReassignments did not answer for more than the 30 s allowed"


def test_a_cluster_that_answers_only_past_the_grace_pauses_the_run_at_that_read() -> None:
    f = five()
    state = f.snapshot()  # every part answered, after 63 s (two of three controllers paused, met the slow way)
    assert read_concern(state, None, 30.0, read_s=29.0) is None
    paused = read_concern(state, None, 30.0, read_s=63.0)  # not answered in time for 63 s: past the grace already
    assert paused is not None and paused.action is Action.PAUSE
    assert paused.text == "the cluster has not answered in time for more than the 30 s allowed (it took 63 s)"


def test_the_time_a_failed_read_took_counts_toward_the_grace() -> None:
    f = five()
    state = f.snapshot()
    unread = replace(state, status=replace(state.status, reassignments=SourceStatus.UNAVAILABLE))
    held = read_concern(unread, None, 30.0, read_s=20.0)  # timed out after 20 s: held, 10 s of grace left
    assert held is not None and held.action is Action.HOLD
    paused = read_concern(unread, unread.taken_at - 20 - 11, 30.0, read_s=20.0)  # a second one, 31 s since
    assert paused is not None and paused.action is Action.PAUSE


# -- throttles ----------------------------------------------------------------------------------------------
APPROVED = (
    Approved("broker", "3", LEADER_RATE, "10000"),
    Approved("broker", "3", FOLLOWER_RATE, "10000"),
    Approved("topic", "u", FOLLOWER_LIST, "0:3"),
)


def throttled(f: FakeCluster, rate: str = "10000", follower: str | None = None, listed: str = "0:3") -> None:
    f.alter_configs(
        {BrokerId(3): {LEADER_RATE: rate, FOLLOWER_RATE: follower if follower is not None else rate}},
        {"u": {FOLLOWER_LIST: listed}},
    )


def test_a_rate_raised_or_removed_by_someone_else_is_set_back_and_a_list_emptied_too() -> None:
    f = five()
    throttled(f)
    assert throttle_changes(f.snapshot(), APPROVED) == []
    throttled(f, rate="50000000", listed="")
    fixes = throttle_changes(f.snapshot(), APPROVED)
    assert [(x.approved.key, x.seen, x.action) for x in fixes] == [
        (LEADER_RATE, "50000000", Action.RESTORE),
        (FOLLOWER_RATE, "50000000", Action.RESTORE),
        (FOLLOWER_LIST, "", Action.RESTORE),
    ]
    assert fixes[0].text == (
        "broker 3's leader.replication.throttled.rate set to 50.0 MB/s by someone else: set back to the 10.0 KB/s approved"
    )
    f.alter_configs({BrokerId(3): {LEADER_RATE: None}}, {})
    (removed, *_) = throttle_changes(f.snapshot(), APPROVED)
    assert removed.seen is None and removed.action is Action.RESTORE and "removed by someone else" in removed.text


def test_a_rate_lowered_by_a_person_is_adopted_never_raised_back() -> None:
    f = five()
    throttled(f, rate="10000", follower="2000")
    (fix,) = throttle_changes(f.snapshot(), APPROVED)
    assert (fix.approved.key, fix.action) == (FOLLOWER_RATE, Action.ADOPT)
    assert fix.text == (
        "broker 3's follower.replication.throttled.rate lowered by a person to 2.0 KB/s (approved at 10.0 KB/s): kept"
    )


def test_the_throttle_is_not_holding_only_where_its_configs_read_back_right() -> None:
    f = five()
    throttled(f)
    state = f.snapshot()
    assert throttle_overruns({BrokerId(3): 14_000.0}, state, APPROVED, 1.5, slack=0) == []
    assert throttle_overruns({BrokerId(3): 16_000.0}, state, APPROVED, 1.5, slack=0) == [BrokerId(3)]
    throttled(f, rate="50000000")  # raised by someone: that is restored, not "not holding"
    assert throttle_overruns({BrokerId(3): 16_000.0}, f.snapshot(), APPROVED, 1.5, slack=0) == []


def test_a_low_throttle_passing_what_kafkas_quota_lets_through_is_holding() -> None:
    """A 500 B/s throttle passes about 2.6 KB/s (a whole fetch each time the quota window's average
    falls below the rate): CI met a run paused as "not holding" for that on the sandbox."""
    f = five()
    throttled(f, rate="500", follower="500")
    approved = (Approved("broker", "3", FOLLOWER_RATE, "500"),)
    state = f.snapshot()
    assert throttle_overruns({BrokerId(3): 2_600.0}, state, approved, 1.5) == []
    assert throttle_overruns({BrokerId(3): 1_049_000.0}, state, approved, 1.5) == []
    assert throttle_overruns({BrokerId(3): 147_000_000.0}, state, approved, 1.5) == [BrokerId(3)]  # not holding


# -- the guard: what it remembers between polls ------------------------------------------------------------
def test_the_guard_says_each_concern_once_and_names_what_cleared() -> None:
    from console.runs.guard import Guard

    f = five()
    v = view(f, [PlanEntry("t", 0, B(0, 1, 3))], [PlanEntry("t", 1, B(0, 1, 4))])
    guard = Guard()
    assert guard.check(1, f.snapshot(), v, ()).concerns == ()
    f.stop_broker(4)
    first = guard.check(1, f.snapshot(), v, ())
    assert first.pause and first.hold and [c.rule for c in first.new] == [Rule.DESTINATION_GONE]
    again = guard.check(1, f.snapshot(), v, (), paused=True)
    assert again.pause and again.new == ()  # said once
    f.start_broker(4)
    back = guard.check(1, f.snapshot(), v, (), paused=True)
    assert back.concerns == () and back.cleared == (Rule.DESTINATION_GONE,) and not back.resume  # a person resumes


def test_the_cluster_not_answering_holds_then_pauses_past_the_grace() -> None:
    from console.moves.guardrails import GuardrailSettings
    from console.runs.guard import Guard

    f = five()
    v = view(f, [PlanEntry("t", 0, B(0, 1, 3))])
    guard = Guard(GuardrailSettings(unread_grace_s=30.0))
    state = f.snapshot()
    unread = replace(state, status=replace(state.status, metadata=SourceStatus.UNAVAILABLE))
    assert guard.check(1, unread, v, ()).hold and not guard.check(1, unread, v, ()).pause
    later = replace(unread, taken_at=unread.taken_at + 31)
    assert guard.check(1, later, v, ()).pause
    assert guard.check(1, replace(state, taken_at=later.taken_at + 1), v, ()).concerns == ()


def test_a_throttle_not_holding_pauses_only_after_two_polls_in_a_row() -> None:
    from console.moves.guardrails import GuardrailSettings
    from console.runs.guard import Guard

    f = five()
    f.copy_rate = 100_000  # far above the 10 KB/s the run set: the throttle does not hold
    throttled(f)
    v = view(f, [PlanEntry("u", 0, B(3, 4, 0))])
    f.alter_reassignments({("u", 0): B(3, 4, 0)})
    guard = Guard(GuardrailSettings(overrun_slack=0))  # the fake's figures are small
    approved = (Approved("broker", "0", FOLLOWER_RATE, "10000"),)
    f.alter_configs({BrokerId(0): {FOLLOWER_RATE: "10000"}}, {})
    verdicts = []
    for _ in range(3):
        f.advance(0.01)  # 1 KB of the 10 KB copied at each poll
        verdicts.append(guard.check(1, f.snapshot(), v, approved))
    assert [x.pause for x in verdicts] == [False, False, True]  # measured at the 2nd, held at the 3rd
    (concern,) = verdicts[-1].concerns
    assert concern.rule is Rule.THROTTLE_NOT_HOLDING and concern.brokers == B(0)


def test_automatic_resume_only_where_allowed_and_after_the_cause_stayed_clear() -> None:
    from console.moves.guardrails import GuardrailSettings
    from console.runs.guard import Guard

    f = five()
    v = view(f, [PlanEntry("t", 0, B(0, 1, 3))])
    for allowed in (False, True):
        guard = Guard(GuardrailSettings(auto_resume=allowed, clear_for_s=60.0))
        state = f.snapshot()
        assert not guard.check(1, state, v, (), paused=True).resume  # clear from now on
        assert not guard.check(1, replace(state, taken_at=state.taken_at + 30), v, (), paused=True).resume
        assert guard.check(1, replace(state, taken_at=state.taken_at + 61), v, (), paused=True).resume is allowed


def test_a_rule_turned_off_in_the_settings_says_nothing() -> None:
    from console.moves.guardrails import GuardrailSettings
    from console.runs.guard import Guard

    f = five()
    v = view(f, [PlanEntry("t", 0, B(0, 1, 3))], [PlanEntry("t", 1, B(0, 1, 4))])
    f.stop_broker(4)
    assert Guard(GuardrailSettings(destination_gone=False)).check(1, f.snapshot(), v, ()).concerns == ()


# -- the fast paths find what walking every partition finds ---------------------------------------------
def _walked(state: ClusterState, view: RunView) -> tuple[list[TopicPartition], list[TopicPartition], list[int]]:
    """Under min ISR, at min ISR and the destinations gone, found by walking every partition and
    every entry (what the rules said before they looked only where an answer can be)."""
    index = state.partition_index
    live = {b.id for b in state.brokers if b.live}
    own = [e.key for e in view.current] + [e.key for _, w in view.later for e in w]
    touched: set[int] = set()
    for e in view.current:
        p = index.get(e.key)
        if p is not None and p.reassigning:
            touched |= set(p.adding) | set(p.removing) | ({p.leader} if p.leader is not None else set())
    for _, w in view.later:
        for e in w:
            before = list(view.before.get(e.key, ()))
            touched |= (set(before) ^ set(e.replicas)) | set(before[:1])
    under, at = [], []
    for p in state.partitions:
        m = state.min_insync_index.get(p.topic)
        if (p.key not in own and touched.isdisjoint(p.replicas)) or m is None or not set(p.replicas) <= live:
            continue
        rf = len(p.replicas) - len(p.adding)
        if len(p.isr) < min(m, rf):
            under.append(p.key)
        elif len(p.isr) == min(m, rf) < rf:
            at.append(p.key)
    onto = {b for e in view.current if (p := index.get(e.key)) is not None for b in p.adding}
    onto |= {b for _, w in view.later for e in w for b in set(e.replicas) - set(view.before.get(e.key, ()))}
    return sorted(under), sorted(at), sorted(onto - live)


def _random_run(seed: int) -> tuple[ClusterState, RunView]:
    """A small cluster (some brokers down, some followers out of the ISR, some partitions moving)
    and a run on it (its wave in flight, two later waves)."""
    rnd = random.Random(seed)
    n = rnd.randint(3, 7)
    brokers = tuple(Broker(BrokerId(i), registered=rnd.random() > 0.15, fenced=rnd.random() < 0.1) for i in range(n))
    parts, current, later = [], [], []
    for i in range(rnd.randint(1, 40)):
        topic, rf = f"t{i % 4}", rnd.randint(1, min(3, n))
        replicas = tuple(BrokerId(b) for b in rnd.sample(range(n), rf))
        isr = tuple(b for b in replicas if rnd.random() > 0.25)
        adding: tuple[BrokerId, ...] = ()
        removing: tuple[BrokerId, ...] = ()
        if rf < n and rnd.random() < 0.3:  # moving: one replica more, the last one out
            new = BrokerId(rnd.choice([b for b in range(n) if b not in replicas]))
            adding, removing, replicas = (new,), replicas[-1:], (*replicas, new)
        parts.append(Partition(topic, i, replicas, isr, isr[0] if isr else None, adding, removing))
        target = tuple(b for b in replicas if b not in removing)
        if adding and rnd.random() < 0.8:
            current.append(PlanEntry(topic, i, target))
        elif not adding and rnd.random() < 0.3:
            later.append(PlanEntry(topic, i, tuple(BrokerId(b) for b in rnd.sample(range(n), rf))))
    state = ClusterState(
        1.0,
        brokers,
        tuple(parts),
        min_insync=tuple((f"t{k}", rnd.randint(1, 4)) for k in range(4) if rnd.random() > 0.2),
    )
    before = {p.key: tuple(b for b in p.replicas if b not in p.adding) for p in parts}
    half = len(later) // 2
    return state, RunView(tuple(current), ((2, tuple(later[:half])), (3, tuple(later[half:]))), before)


def test_the_rules_looking_only_where_an_answer_can_be_find_what_walking_every_partition_finds() -> None:
    found = {"under": 0, "at": 0, "gone": 0}
    for seed in range(400):
        state, v = _random_run(seed)
        under, at, gone = _walked(state, v)
        said = {c.rule: c for c in isr_concerns(state, v)}
        assert list(said[Rule.UNDER_MIN_ISR].partitions if Rule.UNDER_MIN_ISR in said else ()) == under, seed
        assert list(said[Rule.AT_MIN_ISR].partitions if Rule.AT_MIN_ISR in said else ()) == at, seed
        concern = destinations_gone(state, v)
        assert list(concern.brokers if concern is not None else ()) == gone, seed
        found["under"] += bool(under)
        found["at"] += bool(at)
        found["gone"] += bool(gone)
    assert min(found.values()) > 20, found  # each answer was met often, not only "nothing"


def _copying(at: float, copied: dict[tuple[int, int], int]) -> ClusterState:
    """Partitions t-p moving from broker 0 onto broker b, ``copied[(p, b)]`` bytes on b so far."""
    parts = tuple(
        Partition(
            "t",
            p,
            B(0, b),
            B(0),
            BrokerId(0),
            adding=B(b),
            removing=B(0),
            logs=(ReplicaLog(BrokerId(0), "/d", 10**9), ReplicaLog(BrokerId(b), "/d", n)),
        )
        for (p, b), n in sorted(copied.items())
    )
    status = ReadStatus(SourceStatus.OK, SourceStatus.OK, SourceStatus.OK, SourceStatus.OK)
    return ClusterState(at, tuple(Broker(BrokerId(i), registered=True) for i in range(3)), parts, status=status)


def test_a_brokers_intake_is_what_its_copies_grew_by_over_the_window() -> None:
    intake = BrokerIntake(window_s=10.0)
    assert intake.observe(_copying(0.0, {(0, 1): 0, (1, 1): 500, (2, 2): 0}))
    assert intake.rates() == {}  # one look: nothing measured yet
    assert not intake.observe(_copying(0.0, {(0, 1): 5_000}))  # not newer: ignored
    intake.observe(_copying(1.0, {(0, 1): 1_000, (1, 1): 1_500, (2, 2): 300, (3, 2): 9_000}))
    assert intake.rates() == {1: 2_000.0, 2: 300.0}  # t-3 onto 2 seen once: it adds nothing yet
    intake.observe(_copying(2.0, {(0, 1): 100, (1, 1): 2_500, (2, 2): 600, (3, 2): 9_300}))
    assert intake.rates() == {1: 1_500.0, 2: 450.0}  # t-0 started over: its drop is no intake
    for at in range(3, 20):
        intake.observe(_copying(float(at), {(1, 1): 2_500 + 100 * (at - 2)}))
    assert intake.rates() == {1: 100.0}  # only the last 10 s or so count
    assert not intake.observe(replace(_copying(30.0, {}), status=ReadStatus()))  # no log sizes: ignored
