"""Live's headline ETA is the time until the last copy in flight is done (its bottleneck broker),
not the total bytes left over the total rate (issue: 1 min 51 s while the per-partition ETAs said
2 min 36 s; with dir moves 6 min 19 s while the dir copies alone took 13 min more)."""

from __future__ import annotations

import pytest

from console.core.calibration import BrokerRate, Calibration
from console.core.model import BrokerId, ReplicaLog
from console.moves.eta import Basis, Side, in_flight_eta
from console.present import live
from tests.unit.timeline import T0, part, snap, throttled

B = BrokerId
KB = 1000


def four_onto_one(dir_left: int | None = None):  # type: ignore[no-untyped-def]
    """t-0..3 copying onto broker 3, t-4 onto broker 4, 100 KB left each; throttles 40 KB/s."""
    parts = [
        part("t", i, [1 + i % 2, 3], [1 + i % 2], 1 + i % 2, [3], sizes={1 + i % 2: 100 * KB, 3: 0}) for i in range(4)
    ]
    parts.append(part("t", 4, [2, 4], [2], 2, [4], sizes={2: 100 * KB, 4: 0}))
    if dir_left is not None:  # broker 2 copies u-0 to another dir of its own
        from dataclasses import replace

        u = part("u", 0, [2], [2], 2, sizes={2: 2 * dir_left})
        u = replace(u, logs=(ReplicaLog(B(2), "/a", 2 * dir_left), ReplicaLog(B(2), "/b", dir_left, True)))
        parts.append(u)
    th = throttled(40 * KB, "t", ["*"], ["*"], [1, 2, 3, 4])
    return snap(T0, parts, throttles=th)


RATES = {**{("t", i, B(3)): 10 * KB for i in range(4)}, ("t", 4, B(4)): 40 * KB}


def test_the_headline_is_the_busiest_broker_not_the_total_over_the_total_rate() -> None:
    state = four_onto_one()
    view = live.summary(state, RATES, None, {})
    assert view.total.eta_s == pytest.approx(500 / 80)  # the old headline: 6 s
    assert view.eta.seconds == pytest.approx(400 / 40)  # broker 3 takes in 400 KB at 40 KB/s
    assert view.eta.bottleneck is not None and view.eta.bottleneck.broker == B(3)
    assert view.eta.bottleneck.side is Side.TAKES_IN and view.eta_text == "10 s"
    assert "broker 3 takes in" in view.eta.basis


def test_before_any_rate_is_observed_the_throttle_gives_the_eta_and_says_so() -> None:
    state = four_onto_one()
    eta = in_flight_eta(state, {}, {})
    assert eta.seconds == pytest.approx(10.0) and eta.bottleneck is not None
    assert eta.bottleneck.basis is Basis.THROTTLE and "(the throttle)" in eta.basis


def test_history_where_a_broker_has_it() -> None:
    cal = Calibration("c1", {B(3): BrokerRate(B(3), 12, 20 * KB, 0.5, 12)})
    eta = in_flight_eta(four_onto_one(), {}, {}, cal)
    assert eta.seconds == pytest.approx(400 / 20) and eta.history_moves == 12
    assert "12 past moves" in eta.basis


def test_a_dir_copy_at_its_log_dir_throttle_can_be_the_last() -> None:
    state = four_onto_one(dir_left=60 * KB)
    from dataclasses import replace

    from console.core.model import Throttles

    brokers = {b: dict(c) for b, c in state.throttles.brokers}
    brokers["2"]["replica.alter.log.dirs.io.max.bytes.per.second"] = str(5 * KB)
    state = replace(state, throttles=Throttles.of(brokers, {t: dict(c) for t, c in state.throttles.topics}))
    dir_rates = {("u", 0, B(2)): 12 * KB}  # a burst above the 5 KB/s throttle: capped at it
    view = live.summary(state, RATES, None, dir_rates)
    assert view.eta.seconds == pytest.approx(60 / 5)
    assert view.eta.bottleneck is not None and view.eta.bottleneck.side is Side.COPIES_BETWEEN_DIRS


def test_a_copy_that_does_not_grow_has_no_eta() -> None:
    state = four_onto_one()
    eta = in_flight_eta(state, {**RATES, ("t", 4, B(4)): 0.0}, {})
    assert eta.seconds is None and "broker 4 takes in" in eta.stalled


def test_a_broker_held_back_by_a_leader_at_its_throttle_goes_by_the_leader() -> None:
    # broker 1 leads four partitions, two copied to broker 2 and two to broker 3, 100 KB left each;
    # the leader sends 40 KB/s, shared unevenly (broker 2 gets 10 KB/s now): the leader is the bottleneck
    parts = [part("t", i, [1, 2 + i % 2], [1], 1, [2 + i % 2], sizes={1: 100 * KB, 2 + i % 2: 0}) for i in range(4)]
    state = snap(T0, parts, throttles=throttled(40 * KB, "t", ["*"], ["*"], [1, 2, 3]))
    rates = {("t", 0, B(2)): 5 * KB, ("t", 2, B(2)): 5 * KB, ("t", 1, B(3)): 15 * KB, ("t", 3, B(3)): 15 * KB}
    eta = in_flight_eta(state, rates, {})
    assert eta.seconds == pytest.approx(400 / 40)  # not broker 2's 200 KB at 10 KB/s: 20 s
    assert eta.bottleneck is not None and eta.bottleneck.side is Side.SENDS_OUT and eta.bottleneck.broker == B(1)


def test_a_partition_eta_never_says_later_than_the_headline_when_copies_share_a_broker() -> None:
    """Four copies onto broker 3 of 50, 100, 150 and 200 KB at 10 KB/s each now (its 40 KB/s
    throttle shared): the rate now says 20 s for the largest, but once the others are done it has
    the whole 40 KB/s; the headline (500 KB at 40 KB/s: 12.5 s) is when it is done. Each row's ETA
    is the share model's (walk: 8 min 18 s in the table under a 4 min 33 s headline)."""
    sizes = [50, 100, 150, 200]
    parts = [part("t", i, [1, 3], [1], 1, [3], sizes={1: kb * KB, 3: 0}) for i, kb in enumerate(sizes)]
    state = snap(T0, parts, throttles=throttled(40 * KB, "t", ["*"], ["*"], [1, 3]))
    rates = {("t", i, B(3)): 10 * KB for i in range(4)}
    view = live.summary(state, rates, None, {})
    assert view.eta.seconds == pytest.approx(500 / 40)
    rows = {r["partition"]: r["ETA"] for r in live.partition_rows(state, parts, rates=rates, finish=view.eta.finish)}
    # 50 KB: all four copy 50 KB each (200 KB at 40 KB/s); 100 KB: 50 + 3 x 100 = 350 KB; ...
    assert rows == {"t-0": "5 s", "t-1": "9 s", "t-2": "11 s", "t-3": "12 s"}
    old = {r["partition"]: r["ETA"] for r in live.partition_rows(state, parts, rates=rates)}
    assert old["t-3"] == "20 s"  # bytes left over the rate now: later than the headline


def test_a_dir_copy_eta_is_the_headline_share_of_its_broker() -> None:
    state = four_onto_one(dir_left=60 * KB)
    dir_rates = {("u", 0, B(2)): 5 * KB}
    view = live.summary(state, RATES, None, dir_rates)
    [row] = live.dir_move_rows(state, dir_rates, view.eta.dir_finish)
    # alone between broker 2's dirs (no log-dir throttle): at the rate observed, as the headline counts it
    assert view.eta.dir_finish[("u", 0, B(2))] == pytest.approx(60 / 5)
    assert row["ETA"] == "12 s"
