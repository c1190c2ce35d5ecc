"""First fit (the waves a run cuts) is the same as trying every wave in order, on random moves and
limits: one adding broker or several (now and then the same twice), none (a reorder or shrink),
bytes limits or none, limits of zero."""

from __future__ import annotations

import random
from collections.abc import Sequence

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from console.core.limits import REQUEST_LIMIT
from console.moves.waves import WaveLimits, first_fit, first_fit_flat


def reference(moves: Sequence[tuple[Sequence[int], int]], limits: WaveLimits) -> list[int]:
    """Each move in the first wave, in creation order, with room for it; else a new wave."""
    per_request = max(1, min(limits.partitions, REQUEST_LIMIT))
    count: list[int] = []
    load: list[dict[int, int]] = []
    size: list[int] = []
    out = []
    for adding, copy in moves:
        for w in range(len(count)):
            if (
                count[w] < per_request
                and all(load[w].get(b, 0) < limits.moves_per_broker for b in adding)
                and (limits.bytes is None or not count[w] or size[w] + copy <= limits.bytes)
            ):
                break
        else:
            count.append(0)
            load.append({})
            size.append(0)
            w = len(count) - 1
        count[w] += 1
        size[w] += copy
        for b in adding:
            load[w][b] = load[w].get(b, 0) + 1
        out.append(w)
    return out


def random_case(seed: int) -> tuple[list[tuple[list[int], int]], WaveLimits]:
    rnd = random.Random(seed)
    brokers = rnd.randint(1, 12)
    moves = []
    for _ in range(rnd.randint(0, 300)):
        k = rnd.choice([0, 1, 1, 1, 1, 2, 2, 3])
        adding = (
            [rnd.randrange(brokers) for _ in range(k)]
            if rnd.random() < 0.1
            else rnd.sample(range(brokers), min(k, brokers))
        )
        copy = rnd.choice([0, rnd.randint(0, 100), rnd.randint(0, 10_000)])
        moves.append((adding, copy))
    limits = WaveLimits(
        moves_per_broker=rnd.choice([0, 1, 1, 2, 3, 5]),
        partitions=rnd.choice([0, 1, 2, 3, 7, 20, 500, REQUEST_LIMIT + 5]),
        bytes=rnd.choice([None, None, 0, 50, 200, 1_000, 20_000]),
    )
    return moves, limits


@pytest.mark.parametrize("seed", range(400))
def test_first_fit_is_the_wave_by_wave_search(seed: int) -> None:
    moves, limits = random_case(seed)
    assert first_fit(moves, limits) == reference(moves, limits)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(st.lists(st.integers(0, 6), max_size=3), st.integers(0, 300)),
        max_size=120,
    ),
    st.integers(0, 4),
    st.integers(0, 12),
    st.one_of(st.none(), st.integers(0, 800)),
)
def test_first_fit_on_drawn_moves(
    moves: list[tuple[list[int], int]], most: int, partitions: int, cap: int | None
) -> None:
    limits = WaveLimits(moves_per_broker=most, partitions=partitions, bytes=cap)
    assert first_fit(moves, limits) == reference(moves, limits)


def test_first_fit_flat_takes_columns_as_a_job_collects_them() -> None:
    moves, limits = random_case(7)
    lengths = np.array([len(a) for a, _ in moves], np.int64)
    starts = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    flat = np.array([b for a, _ in moves for b in a], np.int64)
    copies = np.array([c for _, c in moves], np.int64)
    got = first_fit_flat(starts.tolist(), flat.tolist(), copies.tolist(), limits)
    assert got == reference(moves, limits)


def test_a_big_plan_in_few_brokers_fills_waves_per_broker() -> None:
    # three brokers, five moves each per wave: 15 moves a wave, and the search starts where each broker has room
    moves = [([b % 3], 1) for b in range(3_000)]
    got = first_fit(moves, WaveLimits())
    assert got == reference(moves, WaveLimits())
    assert max(got) == 199
