"""A plan's announced duration comes from its bottleneck: per wave, the broker that must take in
the most (follower throttle), send out the most (leader throttle) or copy the most between its
log dirs (log-dir throttle), the waves added up (issue: four partitions onto one broker and one
onto another at 40 KB/s were announced at 39 s and took 68 s)."""

from __future__ import annotations

import pytest

from console.core.calibration import BrokerRate, Calibration
from console.core.model import BrokerId
from console.moves.progress import WaveLoad, estimate_waves, wave_seconds
from console.moves.waves import WaveLimits, plan_waves
from console.plans.plan import parse_plan
from console.services.preflight import preflight
from tests.unit.timeline import T0, part, snap

B = BrokerId
KB = 1000
RATE = 40 * KB


def plan_of(*moves: tuple[str, int, list[int]]) -> str:
    body = ",".join(f'{{"topic":"{t}","partition":{p},"replicas":{r}}}' for t, p, r in moves)
    return f'{{"version":1,"partitions":[{body}]}}'


def test_four_partitions_onto_one_broker_take_as_long_as_that_broker_needs() -> None:
    # five partitions of 500 KB led by brokers 1 and 2; four move onto broker 3, one onto broker 4
    sizes = 500 * KB
    parts = [part("t", i, [1 + i % 2], [1 + i % 2], 1 + i % 2, sizes={1 + i % 2: sizes}) for i in range(5)]
    state = snap(T0, parts)
    plan = parse_plan(plan_of(*[("t", i, [3]) for i in range(4)], ("t", 4, [4])))
    pre = preflight(state, plan, WaveLimits(moves_per_broker=5), RATE)
    assert len(pre.waves) == 1
    assert pre.estimate is not None
    # broker 3 takes in 4 × 500 KB at 40 KB/s: 50 s (the old figure, 2.5 MB over two brokers: 31 s)
    assert pre.estimate.seconds == pytest.approx(4 * sizes / RATE)


def test_one_leader_sending_most_is_the_bottleneck() -> None:
    # broker 1 leads all four partitions; each goes to a different broker: broker 1 sends 4 × 100 KB
    parts = [part("t", i, [1], [1], 1, sizes={1: 100 * KB}) for i in range(4)]
    state = snap(T0, parts, brokers=6)
    plan = parse_plan(plan_of(*[("t", i, [2 + i]) for i in range(4)]))
    pre = preflight(state, plan, WaveLimits(moves_per_broker=5), RATE)
    assert pre.estimate is not None and pre.estimate.seconds == pytest.approx(4 * 100 * KB / RATE)


def test_waves_add_up_and_dir_copies_take_the_log_dir_throttle() -> None:
    w1 = WaveLoad(300, {B(1): 300}, {B(2): 200, B(3): 100})
    w2 = WaveLoad(0, {}, {}, {B(2): 500})
    assert wave_seconds(w1, 100) == (3.0, set())  # broker 1 sends 300 B at 100 B/s
    est = estimate_waves([w1, w2], 100)
    assert est is not None and est.seconds == pytest.approx(3.0 + 5.0)


def test_history_calibrates_the_receivers_and_the_leader_throttle_still_binds() -> None:
    cal = Calibration("c1", {B(2): BrokerRate(B(2), 9, 50.0, 0.5, 9)})
    w = WaveLoad(300, {B(1): 300}, {B(2): 100, B(3): 200})
    took = wave_seconds(w, 100, cal)
    assert took == (3.0, {B(2)})  # broker 2: 100 B at 50 B/s = 2 s; broker 1 sends 300 B at 100 B/s = 3 s
    slow = Calibration("c1", {B(3): BrokerRate(B(3), 4, 20.0, 0.2, 4)})
    assert wave_seconds(w, 100, slow) == (10.0, {B(3)})


def test_the_same_plan_shape_is_estimated_the_same_from_the_pipeline_columns() -> None:
    import numpy as np

    from console.pipeline.review_waves import waves_eta as _waves_eta

    # two entries in one wave: both led by broker 1 (400 B and 100 B), added to broker 2 and 3
    eta = _waves_eta(
        np.array([0, 0]),
        1,
        np.array([1, 1]),
        np.array([2, 3]),
        np.array([400, 100]),
        np.array([400, 100]),
        np.array([True, True]),
        np.array([1, 1]),
        np.array([True, True]),
        100,
    )
    assert eta == pytest.approx(5.0)  # broker 1 sends 500 B at 100 B/s


def test_plan_waves_unchanged() -> None:
    state = snap(T0, [part("t", 0, [1], [1], 1, sizes={1: 10})])
    assert len(plan_waves(state, parse_plan(plan_of(("t", 0, [2]))))) == 1
