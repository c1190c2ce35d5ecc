"""The pieces the balance goals' loop is built from: moves applied at once, and the racks read
from bit masks, each against the plain rule it stands for (random clusters, hypothesis)."""

from __future__ import annotations

import random
from bisect import bisect_left
from dataclasses import replace
from unittest.mock import patch

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from console.plans.columns import padded, widen
from console.plans.generate import generate
from console.plans.generators import candidates as candidates_module
from console.plans.generators.candidates import WINDOW, Candidates, pick, rack_masks
from console.plans.generators.context import what_moved
from console.plans.generators.options import GenerateOptions, Goal, Metric
from console.plans.layout import Layout
from tests.unit.strategies import Shape, cluster, shapes


@settings(max_examples=60, deadline=None)
@given(shapes)
def test_moves_applied_at_once_leave_the_layout_as_moves_one_by_one(shape: Shape) -> None:
    state = cluster(shape)
    one, many = Layout.of(state), Layout.of(state)
    rnd = random.Random(shape.seed)
    rows, old, new = [], [], []
    for row in rnd.sample(range(len(one.reps)), len(one.reps) // 2):
        free = [b for b in one.ids if b not in one.reps[row]]
        if one.reps[row] and free:
            o, n = rnd.choice(one.reps[row]), rnd.choice(free)
            one.move(row, o, n)
            rows.append(row)
            old.append(o)
            new.append(n)
    many.move_many(rows, old, new)
    assert many.reps == one.reps
    assert many.dirty == one.dirty
    for a, b in ((many.count, one.count), (many.leaders, one.leaders), (many.bytes, one.bytes)):
        assert a.tolist() == b.tolist()
    assert many.loads()[0].tolist() == one.count.tolist()


many_racks = shapes.map(lambda s: replace(s, brokers=80, racks=70, partitions=min(s.partitions, 40)))
"""Beyond 61 racks the bits are Python ints (object arrays), not int64."""


@settings(max_examples=60, deadline=None)
@given(st.one_of(shapes, many_racks))
def test_the_rack_bits_say_what_the_racks_say(shape: Shape) -> None:
    """A move from sb to db (on another rack) lowers the partition's racks when db's rack is among
    its other replicas and sb's is not: the bit masks say so exactly when the racks do."""
    lay = Layout.of(cluster(shape))
    m, _ = lay.matrix()
    bits, every, twice = rack_masks(lay, m)
    rack = dict(zip(lay.ids, lay.rack, strict=True))
    for row, r in enumerate(lay.reps):
        for sb in set(r):
            for db in lay.ids:
                if db in r or rack[db] == rack[sb]:
                    continue
                others = [b for b in r if b != sb]
                lowers = any(rack[b] == rack[db] for b in others) and not any(rack[b] == rack[sb] for b in others)
                s, d = bits[lay.position[sb]], bits[lay.position[db]]
                assert bool(every[row] & d and not twice[row] & s) == lowers, (r, sb, db)


@settings(max_examples=10, deadline=None)
@given(many_racks)
def test_balance_goals_run_on_more_racks_than_int64_has_bits(shape: Shape) -> None:
    state = cluster(shape)
    for metric in (Metric.COUNT, Metric.BYTES):
        made = generate(state, GenerateOptions(Goal.REBALANCE, metric=metric))
        assert made.report.rack_violations_after <= made.report.rack_violations_before
        assert generate(state, GenerateOptions(Goal.REBALANCE, metric=metric)).plan.to_json() == made.plan.to_json()


def _flat_pick(
    rows: list[int],
    sizes: list[int],
    fails: list[int],
    reps: list[list[int]],
    sb: int,
    db: int,
    rack: int,
    ideal: float,
    limit: int,
    room: int,
    window: int,
) -> int:
    """The candidate pick on one flat sorted list, step by step: what the blocks must give."""
    n = len(sizes)
    k = bisect_left(sizes, ideal)
    lo, hi = k - 1, k
    checked = steps = 0
    while checked < window and steps < 8 * window:
        if hi < n and (lo < 0 or sizes[hi] - ideal <= ideal - sizes[lo]):
            i = hi
            hi += 1
        elif lo >= 0:
            i = lo
            lo -= 1
        else:
            break
        steps += 1
        size = sizes[i]
        if (limit >= 0 and not 0 < size < limit) or (room >= 0 and size > room):
            continue
        checked += 1
        if fails[i] & rack:
            continue
        row = rows[i]
        if db in reps[row] or sb not in reps[row]:
            continue
        del rows[i], sizes[i], fails[i]
        return row
    return -1


def _flat_forget(rows: list[int], sizes: list[int], fails: list[int], row: int, size: int) -> None:
    for i in range(bisect_left(sizes, size), len(sizes)):
        if sizes[i] != size:
            return
        if rows[i] == row:
            del rows[i], sizes[i], fails[i]
            return


@settings(max_examples=300, deadline=None)
@given(
    st.integers(1, 9),
    st.sampled_from([1, 2, 3, 5, WINDOW]),
    st.lists(st.tuples(st.integers(0, 40), st.sampled_from([0, 2, 4, 6, 8, 12])), max_size=150),
    st.lists(
        st.tuples(
            st.booleans(),
            st.integers(0, 200),
            st.one_of(st.floats(-5, 50, allow_nan=False), st.integers(0, 40).map(float)),
            st.sampled_from([-1, -1, 0, 10, 30]),
            st.sampled_from([-1, -1, 5, 25]),
            st.sampled_from([0, 2, 4, 8]),
        ),
        max_size=120,
    ),
    st.integers(0, 2**16),
)
def test_blocked_candidates_pick_and_forget_as_one_sorted_list(
    block: int,
    window: int,
    entries: list[tuple[int, int]],
    steps: list[tuple[bool, int, float, int, int, int]],
    seed: int,
) -> None:
    """Cut in blocks (of any size: one size may span blocks), the candidates give the very picks of
    one flat sorted list walked step by step (with any window: ties and the window's end matter),
    and forget the same rows."""
    rnd = random.Random(seed)
    cands = sorted((size, row, fail) for row, (size, fail) in enumerate(entries))
    reps = {row: [1, *rnd.sample([2, 3, 4, 5], rnd.randint(0, 2))] for row in range(len(entries))}
    by_row = [reps[row] for row in range(len(entries))]  # the source is broker 1
    flat = ([r for _, r, _ in cands], [s for s, _, _ in cands], [f for _, _, f in cands])
    with patch.object(candidates_module, "BLOCK", block):
        blocked = Candidates.of(*(np.array(column, np.int64) for column in flat))
    for forget, row, ideal, limit, room, rack in steps:
        if forget:
            if row < len(entries):
                _flat_forget(*flat, row, entries[row][0])
                blocked.forget(row, entries[row][0])
        else:
            db = rnd.choice([2, 3, 6])
            want = _flat_pick(*flat, by_row, 1, db, rack, ideal, limit, room, window)
            with patch.object(candidates_module, "WINDOW", window):
                assert pick(blocked, by_row, 1, db, rack, ideal, limit, room) == want
        assert blocked.flat() == flat
        assert all(blocked.sizes) and blocked.last == [s[-1] for s in blocked.sizes]


def test_a_candidate_is_movable_from_a_broker_holding_it_to_one_that_does_not() -> None:
    """The check each pick makes of a candidate: its partition has a replica on the source and none
    on the destination; asking takes nothing out."""
    c = Candidates.of(*(np.array(column, np.int64) for column in ([0, 1], [5, 9], [0, 0])))
    reps = [[1, 2], [1, 3]]
    assert c.movable(0, 0, reps, 1, 3) == 0
    assert c.movable(0, 1, reps, 1, 3) == -1  # already on the destination
    assert c.movable(0, 0, reps, 4, 3) == -1  # not on the source
    assert c.flat() == ([0, 1], [5, 9], [0, 0])


@settings(max_examples=60, deadline=None)
@given(shapes)
def test_the_matrix_and_the_changed_rows_follow_every_edit(shape: Shape) -> None:
    """The position matrix is kept between edits and redone after each; the changed rows and the
    moved replicas, worked out on the matrices, are those of the plain definitions."""
    state = cluster(shape)
    lay = Layout.of(state)
    rnd = random.Random(shape.seed)
    for _ in range(3):
        for row in rnd.sample(range(len(lay.reps)), min(len(lay.reps), 5)):
            r = lay.reps[row]
            free = [b for b in lay.ids if b not in r]
            edit = rnd.randrange(5)
            if edit == 0 and r and free:
                lay.move(row, rnd.choice(r), rnd.choice(free))
            elif edit == 1 and free:
                lay.add(row, rnd.choice(free))
            elif edit == 2 and len(r) > 1:
                lay.drop(row, rnd.choice(r[1:]))
            elif edit == 3 and r:
                lay.lead(row, rnd.choice(r))
            elif edit == 4 and r:
                lay.move_dir(row, r[0], "/e")
        m, lens = lay.matrix()
        want = padded([[lay.position[b] for b in r] for r in lay.reps])
        width = max(m.shape[1], want[0].shape[1])
        assert widen(m, width).tolist() == widen(want[0], width).tolist()
        assert lens.tolist() == want[1].tolist()
        rows = [i for i in sorted(lay.dirty) if tuple(lay.reps[i]) != lay.original[i] or i in lay.dirs]
        assert lay.changed() == rows
        plain = [0, 0, 0, 0]
        for row in rows:
            new, old = lay.reps[row], lay.original[row]
            added = len(set(new) - set(old)) + len(lay.dir_moves(row))
            plain[0] += added
            plain[1] += added * lay.size[row]
            plain[2] += bool(new and old and new[0] != old[0])
            plain[3] += max(0, len(old) - len(new))
        assert list(what_moved(lay, rows)) == plain
