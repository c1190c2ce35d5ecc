"""What a log dir move costs: the bytes a broker copies between its own dirs (counted apart from
the network copies, "between dirs"), the waves they fill when waves are limited by bytes, and the
time they take at the log-dir throttle (the run's rate); a plan naming no dir costs what it did."""

from __future__ import annotations

import pytest

from console.core.model import BrokerId
from console.moves.progress import Progress, bytes_left, estimate_run
from console.moves.waves import WaveLimits, plan_estimate, plan_waves
from console.plans.diff import ChangeKind, change_of, diff
from console.plans.plan import Plan, PlanEntry
from console.present.review import change_row, diff_text
from tests.fakes.cluster import FakeCluster

pytestmark = pytest.mark.unit
MB = 1000 * 1000  # as human_bytes counts (decimal)
D1, D2 = "/k/d1", "/k/d2"


def b(*ids: int) -> tuple[BrokerId, ...]:
    return tuple(BrokerId(i) for i in ids)


def cluster() -> FakeCluster:
    """Brokers 0..3, two dirs each; t-0 on 0,1, t-1 on 1,2, t-2 on 0,2; 10 MB each, every replica in D1."""
    return FakeCluster.of(4, {"t": [[0, 1], [1, 2], [0, 2]]}, size=10 * MB, copy_rate=MB, log_dirs=(D1, D2))


DIR_ONLY = Plan.of(
    [
        PlanEntry("t", 0, b(0, 1), (D2, "any")),  # broker 0 copies 10 MB between its dirs
        PlanEntry("t", 1, b(1, 2), ("any", D2)),  # broker 2 copies 10 MB between its dirs
    ]
)


def test_a_dir_only_plan_copies_between_dirs_fills_waves_by_bytes_and_takes_time_at_the_log_dir_throttle() -> None:
    state = cluster().snapshot()
    d = diff(state, DIR_ONLY)
    assert d.counts()[ChangeKind.LOG_DIR.value] == 2
    assert d.bytes_to_copy == 0 and d.dir_bytes_to_copy == 20 * MB and d.sizes_known
    assert d.summary()["dir_bytes_to_copy"] == 20 * MB
    c = change_of(state.partition("t", 0), DIR_ONLY.entries[0])
    assert c.bytes_to_copy == 0 and c.dir_bytes_to_copy == 10 * MB and c.dir_copies == ((BrokerId(0), 10 * MB),)
    # one wave by default; two when a wave may copy 15 MB at most
    assert len(plan_waves(state, DIR_ONLY)) == 1
    assert len(plan_waves(state, DIR_ONLY, WaveLimits(bytes=15 * MB))) == 2
    # at 1 MB/s as the log-dir throttle: brokers 0 and 2 copy their 10 MB at once
    assert plan_estimate(state, DIR_ONLY, MB) == pytest.approx(10.0)
    assert plan_estimate(state, DIR_ONLY, MB, WaveLimits(bytes=15 * MB)) == pytest.approx(20.0)
    assert plan_estimate(state, DIR_ONLY, None) is None  # unthrottled: no estimate, as for network copies
    # in words: the review says the bytes move between dirs
    assert "20.0 MB between dirs" in diff_text(d, {})
    assert change_row(c, {})["to copy"] == "10.0 MB between dirs"
    from console.present.notebook import diff_parts

    assert "0 replicas to copy, 0 B (+ 20.0 MB between dirs)" in diff_parts(d).summary[1]


def test_one_broker_copying_two_replicas_between_its_dirs_copies_them_one_after_the_other() -> None:
    state = cluster().snapshot()
    plan = Plan.of([PlanEntry("t", 0, b(0, 1), (D2, D2)), PlanEntry("t", 1, b(1, 2), (D2, "any"))])
    assert diff(state, plan).dir_bytes_to_copy == 30 * MB
    assert plan_estimate(state, plan, MB) == pytest.approx(20.0)  # broker 1: 20 MB at 1 MB/s


def test_a_mixed_plan_counts_network_and_dir_copies_apart_and_a_wave_takes_the_longer_of_the_two() -> None:
    state = cluster().snapshot()
    plan = Plan.of(
        [
            PlanEntry("t", 0, b(0, 3), (D2, "any")),  # broker 0 between dirs (10 MB), broker 3 over the network
            PlanEntry("t", 2, b(0, 2), (D2, "any")),  # broker 0 between dirs again (10 MB)
        ]
    )
    d = diff(state, plan)
    assert d.bytes_to_copy == 10 * MB and d.dir_bytes_to_copy == 20 * MB
    assert [len(w) for w in plan_waves(state, plan)] == [2]
    assert [len(w) for w in plan_waves(state, plan, WaveLimits(bytes=25 * MB))] == [1, 1]
    # network: 10 MB from broker 0 to 3 at 1 MB/s = 10 s; between dirs: broker 0's 20 MB = 20 s
    assert plan_estimate(state, plan, MB) == pytest.approx(20.0)
    # a new replica placed in a named dir is created there: nothing copied between dirs
    placed = Plan.of([PlanEntry("t", 0, b(0, 3), ("any", D2))])
    assert diff(state, placed).dir_bytes_to_copy == 0 and plan_estimate(state, placed, MB) == pytest.approx(10.0)


def test_a_plan_naming_no_dir_costs_what_it_did() -> None:
    state = cluster().snapshot()
    plan = Plan.of([PlanEntry("t", 0, b(0, 3)), PlanEntry("t", 1, b(1, 3))])
    d = diff(state, plan)
    assert d.columns.dir_size is None  # nothing computed for dirs
    assert d.bytes_to_copy == 20 * MB and d.dir_bytes_to_copy == 0
    assert [len(w) for w in plan_waves(state, plan, WaveLimits(bytes=15 * MB))] == [1, 1]
    # broker 3 receives both (10 MB each) in two waves of 10 s
    assert plan_estimate(state, plan, MB, WaveLimits(bytes=15 * MB)) == pytest.approx(20.0)
    assert plan_estimate(state, plan, MB) == pytest.approx(20.0)  # one wave: 20 MB, one receiver
    assert "between dirs" not in diff_text(d, {})


def test_a_dir_move_in_flight_counts_in_the_bytes_left_and_the_rate_observed() -> None:
    fake = cluster()
    fake.alter_replica_log_dirs({("t", 1, BrokerId(2)): D2})
    keys = [("t", 1)]
    progress = Progress()
    start = fake.snapshot()
    progress.update(start, keys)
    copied = sum(x.size for x in start.partition("t", 1).logs if x.is_future)
    assert bytes_left(start, keys) == 10 * MB - copied
    fake.advance(2)
    later = fake.snapshot()
    progress.update(later, keys)
    now = sum(x.size for x in later.partition("t", 1).logs if x.is_future)
    assert now > copied and bytes_left(later, keys) == 10 * MB - now
    assert progress.rate() == pytest.approx((now - copied) / (later.taken_at - start.taken_at))
    # the estimate of waves to come counts their dir copies (a wave of this move, sent again)
    assert estimate_run(later, [DIR_ONLY.entries[1:]], MB) is not None


def test_the_drain_log_dir_report_estimates_the_copies_between_dirs() -> None:
    from console.plans.generate import generate
    from console.plans.generators.options import GenerateOptions, Goal

    state = cluster().snapshot()
    made = generate(state, GenerateOptions(Goal.DRAIN_LOG_DIR, (0,), log_dir=D1))
    # broker 0's two replicas (t-0, t-2) go to its other dir: 20 MB between dirs, nothing over the network
    d = diff(state, made.plan)
    assert d.bytes_to_copy == 0 and d.dir_bytes_to_copy == 20 * MB
    report = made.report.with_estimate(plan_estimate(state, made.plan, MB), MB)
    assert report.eta_seconds == pytest.approx(20.0)
    assert "Copying takes about 20 s" in report.headline()


def test_a_dir_only_move_of_a_tiered_topic_gets_the_local_log_note_and_so_does_the_generated_plans_estimate() -> None:
    from dataclasses import replace

    from console.moves.waves import tiered_copied
    from console.plans.generate import generate
    from console.plans.generators.options import GenerateOptions, Goal
    from console.plans.quality import Report
    from console.plans.validate import validate
    from console.present.review import diff_json, local_copy_topics, tiered_moving

    state = replace(cluster().snapshot(), tiered_topics=("t",))
    d = diff(state, DIR_ONLY)  # no replica added: only copies between dirs
    assert tiered_moving(d, state.tiered) == ["t"]
    assert local_copy_topics(validate(state, DIR_ONLY, d), d, state.tiered) == ["t"]
    assert "Tiered storage: 1 topic (t)" in diff_text(d, {}, tiered=state.tiered)
    assert diff_json(d, {}, state.tiered)["tiered_topics"] == ["t"]
    from console.services.preflight import preflight

    pre = preflight(state, DIR_ONLY, rate=MB)  # the submit dialog and the CLI's submit say it too
    assert pre.tiered_topics == ("t",) and pre.dir_bytes_to_copy == 20 * MB and pre.bytes_to_copy == 0
    assert pre.eta_s == pytest.approx(10.0)
    # a plan naming no tiered topic: no note
    assert tiered_moving(d, {"other"}) == [] and "Tiered storage" not in diff_text(d, {}, tiered={"other"})

    made = generate(state, GenerateOptions(Goal.DRAIN_LOG_DIR, (0,), log_dir=D1))
    assert tiered_copied(state, made.plan) == ["t"]
    report = made.report.with_estimate(plan_estimate(state, made.plan, MB), MB, tiered_copied(state, made.plan))
    headline = report.headline()
    assert "Copying takes about 20 s" in headline
    assert "Tiered storage: 1 topic (t) with remote.storage.enable=true; a move copies their local log only" in headline
    assert Report.from_dict(report.to_dict()).tiered_topics == ("t",)  # kept with a saved plan
    # without an estimate, the headline says nothing of it (the review's note does)
    assert "Tiered storage" not in made.report.headline()
    assert tiered_copied(replace(state, tiered_topics=()), made.plan) == []
