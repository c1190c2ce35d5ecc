"""Runs, pure parts: waves within their limits, throttle lists merged and taken away exactly, and
the store's run records (conflicts, ledger hand-over)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from console.core.errors import RunOverlap
from console.core.limits import FOLLOWER_LIST, LEADER_LIST
from console.core.model import BrokerId
from console.core.states import RunState
from console.moves.throttles import merged, unmerged, wave_throttle
from console.moves.waves import WaveLimits, plan_waves
from console.plans.diff import change_of
from console.plans.plan import Plan, PlanEntry
from console.present.review import ran_text
from console.state.merge import merge
from console.storage.runs import NewRun, RunLimits
from console.storage.store import Store
from tests.unit.builders import api, ids, snapshot


def cluster(n_partitions: int = 12, nbrokers: int = 6):
    meta = {("t", p): ([p % 3, (p + 1) % 3], [p % 3, (p + 1) % 3], p % 3) for p in range(n_partitions)}
    return merge(api(meta, lpr={}, nbrokers=nbrokers), None)


@settings(max_examples=100, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 11), st.lists(st.integers(0, 5), min_size=1, max_size=3, unique=True)),
        min_size=1,
        max_size=12,
        unique_by=lambda x: x[0],
    ),
    st.integers(1, 4),
    st.integers(1, 5),
)
def test_waves_hold_every_moving_entry_once_within_the_limits(entries, per_broker, per_request):
    state = cluster()
    plan = Plan.of(PlanEntry("t", p, ids(*r)) for p, r in entries)
    waves = plan_waves(state, plan, WaveLimits(per_broker, per_request))
    moving = [e for e in plan.entries if change_of(state.partition(*e.key), e).kind.value not in ("no change",)]
    assert sorted(e.key for w in waves for e in w) == sorted(e.key for e in moving)
    for w in waves:
        assert 1 <= len(w) <= per_request
        load: dict[int, int] = {}
        for e in w:
            for b in change_of(state.partition(*e.key), e).adding:
                load[b] = load.get(b, 0) + 1
        assert all(v <= per_broker for v in load.values())


def test_bytes_per_wave_and_unchanged_entries():
    state = snapshot({("t", p): [p % 3, (p + 1) % 3] for p in range(3)}, nbrokers=6)  # 1000 bytes each
    plan = Plan.of([PlanEntry("t", 0, ids(0, 1)), PlanEntry("t", 1, ids(4, 5)), PlanEntry("t", 2, ids(3, 4))])
    waves = plan_waves(state, plan, WaveLimits(5, 100, bytes=2500))
    assert [[e.key for e in w] for w in waves] == [[("t", 1)], [("t", 2)]]  # t-0 changes nothing


def test_throttle_lists_follow_the_official_tool():
    state = cluster(3)
    need = wave_throttle(state, [PlanEntry("t", 1, ids(1, 4)), PlanEntry("t", 2, ids(2, 0))])
    assert need.topics["t"][LEADER_LIST] == {"1:1", "1:2"}  # every current replica of t-1
    assert need.topics["t"][FOLLOWER_LIST] == {"1:4"}  # its adding replica; t-2 only reorders
    assert need.brokers == {1, 2, 4}


def test_merge_keeps_what_is_set_and_removal_takes_only_what_was_added():
    assert merged(None, {"0:1", "10:2"}) == "0:1,10:2"
    assert merged("2:1,0:1", {"0:1"}) is None  # already there
    assert merged("*", {"0:1"}) is None  # everything is throttled already
    assert merged("2:1", {"0:1"}) == "0:1,2:1"
    assert unmerged("0:1,2:1", ["0:1"]) == (True, "2:1")
    assert unmerged("0:1", ["0:1"]) == (True, None)  # nothing left: delete the key
    assert unmerged("2:1", ["0:1"]) == (False, None)  # someone removed it already


def test_store_refuses_a_second_run_on_the_same_partitions_and_hands_over_rates(tmp_path):
    store = Store(tmp_path / "c.db")
    wave = Plan.of([PlanEntry("t", 0, ids(1, 2))]).to_json()
    first = store.runs.create(
        NewRun("c1", "a", "ann", wave, wave, "h", [wave], [("t", 0)], 1000, RunLimits(5, 500, None))
    )
    with pytest.raises(RunOverlap, match=r"Run #1 \(a, by ann\) is already moving t-0"):
        store.runs.create(NewRun("c1", "b", "bob", wave, wave, "h", [wave], [("t", 0)], None, RunLimits(5, 500, None)))
    store.runs.create(
        NewRun("c2", "b", "bob", wave, wave, "h", [wave], [("t", 0)], None, RunLimits(5, 500, None))
    )  # another cluster
    store.runs.set_state(first, RunState.COMPLETED)
    second = store.runs.create(
        NewRun("c1", "b", "bob", wave, wave, "h", [wave], [("t", 0)], None, RunLimits(5, 500, None))
    )
    assert [w.state for w in store.runs.waves(second)] == ["pending"]
    a = store.runs.ledger_add(first, 1, "broker", "0", "leader.replication.throttled.rate", None, "1000")
    b = store.runs.ledger_add(second, 1, "broker", "0", "leader.replication.throttled.rate", "1000", "2000")
    store.runs.ledger_restored(a, hand_over_to=b, before=None)
    (left,) = store.runs.ledger()
    assert left.id == b and left.before is None


def test_leftover_throttles_are_those_nothing_in_flight_needs():
    from dataclasses import replace

    from console.core.model import Throttles
    from console.moves.throttles import leftover_throttles

    meta = {("t", 0): ([1, 2, 0], [1, 0], 1), ("u", 0): ([0, 1], [0, 1], 0)}
    state = merge(api(meta, lpr={("t", 0): ([1, 2, 0], [2], [0])}, nbrokers=4), None)
    state = replace(
        state,
        throttles=Throttles.of(
            {"1": {"leader.replication.throttled.rate": "100"}, "3": {"follower.replication.throttled.rate": "100"}},
            {
                "t": {"leader.replication.throttled.replicas": "0:1"},
                "u": {"follower.replication.throttled.replicas": "*"},
            },
        ),
    )
    left = {(lo.kind, lo.name, lo.key) for lo in leftover_throttles(state)}
    assert left == {
        ("broker", "3", "follower.replication.throttled.rate"),
        ("topic", "u", "follower.replication.throttled.replicas"),
    }


def test_eta_before_the_run_and_progress_during_it():
    from console.core.format import human_duration
    from console.moves.progress import Progress, bytes_left, estimate_seconds

    state = snapshot({("t", p): [p % 3] for p in range(4)}, nbrokers=4, sizes={("t", p): 4000 for p in range(4)})
    plan = Plan.of([PlanEntry("t", p, ids(3)) for p in range(4)])  # 4 × 4000 bytes from brokers 0,1,2 to 3
    waves = plan_waves(state, plan, WaveLimits(5))
    assert estimate_seconds(state, waves, None) is None
    assert estimate_seconds(state, waves, 1000) == 16.0  # one receiver: 16,000 bytes at 1,000 B/s
    assert human_duration(75) == "1 min 15 s" and human_duration(7300) == "2 h 1 min"
    assert human_duration(0.08) == "under a second"
    progress = Progress(stuck_after_s=10)
    assert progress.rate() is None and bytes_left(state, [("t", 0)]) == 0  # not moving
    from console.adapters.records import BrokerLogDirs
    from console.core.model import LogDir
    from console.state.merge import merge as merge_views

    def moving(t: float, copied: int):
        meta = {("t", 0): ([3, 0], [0], 0)}
        logs = tuple(
            BrokerLogDirs(
                BrokerId(b), (LogDir("/d", None, 10**9, 10**9),), (("t", 0, "/d", 4000 if b == 0 else copied, False),)
            )
            for b in (0, 3)
        )
        return merge_views(api(meta, lpr={("t", 0): ([3, 0], [3], [0])}, nbrokers=4, log_dirs=logs), None, taken_at=t)

    for t, copied in ((100.0, 1000), (102.0, 3000), (120.0, 3000)):
        progress.update(moving(t, copied), [("t", 0)])
    assert progress.rate() == 2000 / 20  # over the samples kept
    assert bytes_left(moving(120.0, 3000), [("t", 0)]) == 1000
    assert progress.stuck(moving(120.0, 3000)) == ["t-0 on broker 3 (no progress for 18 s)"]


def test_review_says_a_plan_ran_and_which_run(tmp_path):
    """Review names the newest run of a plan: running, or how it ended; a store's runs of a plan are
    found by the plan's content (its hash) on its cluster."""
    store = Store(tmp_path / "c.db")
    wave = Plan.of([PlanEntry("t", 0, ids(1, 2))]).to_json()
    first = store.runs.create(
        NewRun("c1", "a", "ann", wave, wave, "h", [wave], [("t", 0)], None, RunLimits(5, 9, None))
    )
    said = ran_text(store.runs.of_plan("c1", "h"))
    assert said.startswith(f"These moves are running: run #{first} “a”, running, by ann"), said
    assert ran_text(store.runs.of_plan("c1", "other")) is None and not store.runs.of_plan("c2", "h")
    store.runs.set_state(first, RunState.CANCELLED)
    again = store.runs.create(
        NewRun("c1", "b", "bob", wave, wave, "h", [wave], [("t", 0)], None, RunLimits(5, 9, None))
    )
    store.runs.set_state(again, RunState.COMPLETED)
    done = ran_text(store.runs.of_plan("c1", "h"))
    # found by content, not by which saved plan: said of "these moves", with the run's name (met in the
    # browser: a new plan with the moves of an earlier one was said to have run)
    assert done is not None and done.startswith(f"These moves ran: run #{again} “b”, completed, by bob")
    assert "(and 1 earlier run)" in done


def test_the_review_picker_says_a_plan_s_minute_once():
    from datetime import datetime

    from console.present.review import plan_choice
    from console.storage.plans import PlanSummary

    at = datetime(2026, 11, 28, 22, 10).timestamp()
    generated = PlanSummary(3, "rebalance · 2026-11-28 22:10", "c", "alice", at, at, 30, None)
    assert plan_choice(generated) == "#3 rebalance · 2026-11-28 22:10 · 30 partitions · alice"
    edited = PlanSummary(4, "rebalance · 2026-11-28 22:10", "c", "bob", at, at + 3600, 1, None)
    assert plan_choice(edited) == "#4 rebalance · 2026-11-28 22:10 · 1 partition · bob · 2026-11-28 23:10"
    named = PlanSummary(5, "drain 7", "c", "bob", at, at, 2, None)
    assert plan_choice(named) == "#5 drain 7 · 2 partitions · bob · 2026-11-28 22:10"
