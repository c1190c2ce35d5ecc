"""Runs' observed copy rate counts what grew, per broker (a throttle is per broker), never bytes
that were already there; its wave progress counts bytes, not partitions (issue: 38.3 KB/s
observed for a run capped near 20 KB/s)."""

from __future__ import annotations

import pytest

from console.core.model import BrokerId
from console.core.states import WaveState
from console.moves.progress import Progress, wave_bytes_done
from console.plans.plan import PlanEntry
from console.present import history
from console.storage.runs import Wave
from tests.unit.timeline import T0, part, snap

B = BrokerId
KB = 1000


def test_a_replica_that_joins_with_bytes_already_there_adds_no_rate() -> None:
    keys = [("t", 0), ("t", 1)]
    first = snap(
        T0,
        [part("t", 0, [1, 3], [1], 1, [3], sizes={1: 100 * KB, 3: 0}), part("t", 1, [2], [2], 2, sizes={2: 100 * KB})],
    )
    # ten seconds later t-0 grew 20 KB; t-1's move started onto broker 4, which held 80 KB of it already
    second = snap(
        T0 + 10,
        [
            part("t", 0, [1, 3], [1], 1, [3], sizes={1: 100 * KB, 3: 20 * KB}),
            part("t", 1, [2, 4], [2], 2, [4], sizes={2: 100 * KB, 4: 80 * KB}),
        ],
    )
    p = Progress()
    p.update(first, keys)
    p.update(second, keys)
    assert p.rate() == pytest.approx(2 * KB)
    assert p.broker_rates() == {(False, B(3)): pytest.approx(2 * KB)}


def test_a_replica_done_between_refreshes_takes_no_rate_away_and_the_same_snapshot_counts_once() -> None:
    keys = [("t", 0), ("t", 1)]
    a = snap(T0, [part("t", i, [1, 3], [1], 1, [3], sizes={1: 100 * KB, 3: 50 * KB}) for i in range(2)])
    b = snap(
        T0 + 10,
        [
            part("t", 0, [1, 3], [1, 3], 1, [3], sizes={1: 100 * KB, 3: 100 * KB}),  # in the ISR now
            part("t", 1, [1, 3], [1], 1, [3], sizes={1: 100 * KB, 3: 60 * KB}),
        ],
    )
    p = Progress()
    for s in (a, a, b, b):
        p.update(s, keys)
    assert len(p.samples) == 2 and p.rate() == pytest.approx(1 * KB)


def test_wave_progress_counts_bytes() -> None:
    # a 900 KB partition half copied, a 100 KB one at its target: 55 % of the bytes (50 % of the partitions)
    state = snap(
        T0,
        [
            part("t", 0, [1, 3], [1], 1, [3], sizes={1: 900 * KB, 3: 450 * KB}),
            part("t", 1, [3], [3], 3, sizes={3: 100 * KB}),
        ],
    )
    entries = (PlanEntry("t", 0, (B(3),)), PlanEntry("t", 1, (B(3),)))
    before = {("t", 0): (B(1),), ("t", 1): (B(1),)}
    assert wave_bytes_done(state, entries, before) == pytest.approx(55.0)
    from console.plans.plan import Plan

    wave = Wave(1, 1, WaveState.RUNNING, Plan.of(list(entries)).to_json(), T0, None)
    assert history.wave_rows(state, [wave], [], before)[0]["progress"] == 55
