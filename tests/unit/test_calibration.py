"""Calibrated ETAs (pure): the rate each destination broker showed in the past, or the throttle."""

from __future__ import annotations

import pytest

from console.core.calibration import BrokerRate, Calibration, Estimate, receive_time
from console.core.model import BrokerId
from console.moves.progress import estimate_run, estimate_seconds
from console.moves.waves import plan_waves
from console.plans.plan import parse_plan
from tests.unit.timeline import T0, part, snap

B = BrokerId


def test_a_broker_rate_under_a_throttle() -> None:
    seen = BrokerRate(B(4), moves=37, throughput_bps=800.0, throttle_ratio=0.9, throttled_moves=30)
    assert seen.rate(1000) == pytest.approx(900.0)
    assert seen.rate(None) == 800.0
    unthrottled = BrokerRate(B(4), moves=3, throughput_bps=800.0)
    assert unthrottled.rate(500) == 500.0 and unthrottled.rate(None) == 800.0


def test_receive_time_is_the_slowest_broker() -> None:
    cal = Calibration("c1", {B(3): BrokerRate(B(3), 5, 100.0), B(4): BrokerRate(B(4), 2, 50.0)})
    assert receive_time({B(3): 1000, B(4): 1000}, None, cal) == (20.0, {B(3), B(4)})
    assert receive_time({B(3): 1000, B(2): 1000}, 20, cal) == (50.0, {B(3)}), "broker 2 at the throttle"
    assert receive_time({B(2): 1000}, None, cal) is None
    assert receive_time({B(3): 1000}, None, None) is None


def test_estimate_says_what_it_rests_on() -> None:
    assert Estimate(60.0).basis == "at the throttle"
    assert Estimate(60.0, 37, (B(4),)).basis == "calibrated from 37 past moves to broker 4"
    assert Estimate(60.0, 1, (B(3), B(4))).basis == "calibrated from 1 past move to brokers 3,4"


def test_a_plan_estimate_uses_history_where_it_exists() -> None:
    state = snap(
        T0,
        [
            part("a", 0, [1, 2], [1, 2], 1, sizes={1: 10_000, 2: 10_000}),
            part("a", 1, [2, 1], [2, 1], 2, sizes={1: 4_000, 2: 4_000}),
        ],
    )
    plan = parse_plan(
        '{"version":1,"partitions":[{"topic":"a","partition":0,"replicas":[3,2]},'
        '{"topic":"a","partition":1,"replicas":[2,4]}]}'
    )
    waves = plan_waves(state, plan)
    # broker 3 takes in 10,000 B at 100 B/s: the bottleneck (not 14,000 B over two brokers' throttles)
    assert estimate_seconds(state, waves, 100) == pytest.approx(10_000 / 100)
    cal = Calibration("c1", {B(3): BrokerRate(B(3), 7, 50.0, 0.5, 7)})
    est = estimate_run(state, waves, 100, cal)
    assert est is not None and est.seconds == pytest.approx(10_000 / 50) and est.basis.endswith("to broker 3")
    assert estimate_run(state, waves, None, cal) is None, "broker 4 has neither history nor a throttle"
