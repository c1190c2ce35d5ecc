"""The rows Live shows for log dir moves in flight, in units a person reads: each replica being
copied between the dirs of its broker (from, to, copied, progress, left, rate, ETA), and the total
left to copy with those copies."""

from __future__ import annotations

from dataclasses import replace

import pytest

from console.core.model import BrokerId
from console.moves.progress import CopyTracker
from console.plans.logdirs import DirMoveProgress
from console.present import live
from tests.fakes.cluster import FakeCluster

pytestmark = pytest.mark.unit
MB = 1000 * 1000  # as human_bytes counts (decimal)
D1, D2 = "/k/d1", "/k/d2"


def moving_dir() -> FakeCluster:
    """t-0 on brokers 0,1 (10 MB, in D1); broker 0 copying it to D2 at 1 MB/s, 3 MB copied."""
    fake = FakeCluster.of(4, {"t": [[0, 1]]}, size=10 * MB, copy_rate=MB, log_dirs=(D1, D2))
    fake.alter_replica_log_dirs({("t", 0, BrokerId(0)): D2})
    fake.advance(3)
    return fake


def test_a_dir_move_row_says_from_to_copied_progress_and_left() -> None:
    assert live.dir_move_rows(moving_dir().snapshot()) == [
        {
            "partition": "t-0",
            "broker": 0,
            "from": D1,
            "to": D2,
            "copied": "3.0 MB of 10.0 MB",
            "progress": 30.0,
            "left to copy": "7.0 MB",
        }
    ]


def test_a_dir_move_row_has_the_copy_rate_observed_and_its_eta() -> None:
    fake = moving_dir()
    tracker = CopyTracker()
    tracker.observe(fake.snapshot())
    first = live.dir_move_rows(fake.snapshot(), tracker.dir_rates())
    assert (first[0]["copy rate"], first[0]["ETA"]) == ("measuring…", "measuring…")
    fake.advance(2)
    state = fake.snapshot()
    tracker.observe(state)
    assert tracker.dir_rates() == {("t", 0, BrokerId(0)): pytest.approx(MB)}
    assert tracker.rates() == {}  # no adding replica
    row = live.dir_move_rows(state, tracker.dir_rates())[0]
    assert (row["copied"], row["progress"], row["left to copy"]) == ("5.0 MB of 10.0 MB", 50.0, "5.0 MB")
    assert (row["copy rate"], row["ETA"]) == ("1.0 MB/s", "5 s")
    # the totals count it: 5 MB left between dirs, at 1 MB/s
    n = live.counts(state)
    assert (n.dir_moves, n.dir_bytes_to_copy, n.bytes_to_copy) == (1, 5 * MB, 0)
    total = live.total_estimate(state, tracker.rates(), tracker.dir_rates())
    assert (total.phase, total.left, total.eta_text) == (live.CopyPhase.COPYING, 5 * MB, "5 s")
    assert live.summary(state, tracker.rates(), None, tracker.dir_rates()).total.eta_s == pytest.approx(5.0)
    # without the dir rates (as before), nothing is in flight
    assert live.total_estimate(state, tracker.rates()).phase is live.CopyPhase.NOTHING


def test_a_dir_move_not_growing_or_of_unknown_size_has_no_eta() -> None:
    m = DirMoveProgress("t", 0, BrokerId(0), D1, D2, 3 * MB, 10 * MB)
    stalled = live.dir_estimate(m, {m.key: 0.0})
    assert stalled is not None and (stalled.rate_text, stalled.eta_text) == ("0 B/s", "no progress")
    unknown = live.dir_estimate(replace(m, size=None), {m.key: float(MB)})
    assert unknown is not None and (unknown.left_text, unknown.eta_text) == ("unknown", "unknown")
    done = live.dir_estimate(replace(m, copied_bytes=10 * MB), {})
    assert done is not None and done.eta_text == "copied"
    assert live.dir_estimate(m, None) is None


def test_no_dir_move_no_row_and_the_totals_as_before() -> None:
    state = FakeCluster.of(4, {"t": [[0, 1]]}, size=10 * MB, log_dirs=(D1, D2)).snapshot()
    assert live.dir_move_rows(state, {}) == []
    n = live.counts(state)
    assert (n.dir_moves, n.dir_bytes_to_copy) == (0, 0)
    assert live.total_estimate(state, {}, {}).phase is live.CopyPhase.NOTHING
