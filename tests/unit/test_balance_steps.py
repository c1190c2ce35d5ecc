"""The pieces the balance goals' loop is built from: moves applied at once, and the racks read
from bit masks, each against the plain rule it stands for (random clusters, hypothesis)."""

from __future__ import annotations

import random
from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from console.plans.generate import GenerateOptions, Goal, Metric, _rack_masks, generate
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
    bits, every, twice = _rack_masks(lay, m)
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
