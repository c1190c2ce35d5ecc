"""Plan generators over random clusters (hypothesis) and known cases."""

from __future__ import annotations

import json
import random
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings

from console.core.errors import ConfigError, GoalImpossible
from console.core.model import BrokerId, ClusterState, replicas_in_dir
from console.plans.generate import Generated, generate
from console.plans.generators.options import GenerateOptions, Goal, Metric, chosen_topics
from console.plans.kafka_assign import rack_aware, rack_unaware
from console.plans.plan import ANY
from console.plans.validate import errors, validate
from console.state.document import load_state, state_json
from tests.unit.strategies import Shape, cluster, shapes


def goals(state: ClusterState, rnd: random.Random) -> list[GenerateOptions]:
    ids = [b.id for b in state.brokers]
    live = [b.id for b in state.brokers if b.eligible]
    fillable = [b.id for b in state.brokers if b.eligible and not b.cordoned] or live
    excluded = tuple(rnd.sample(ids, 1)) if len(ids) > 3 and rnd.random() < 0.5 else ()
    with_dirs = [b for b in state.brokers if b.log_dirs]
    drain = (
        [
            GenerateOptions(
                Goal.DRAIN_LOG_DIR,
                (int((b := rnd.choice(with_dirs)).id),),
                log_dir=rnd.choice(b.log_dirs).path,
                exclude_brokers=excluded,
            )
        ]
        if with_dirs
        else []
    )
    return [
        GenerateOptions(
            Goal.DECOMMISSION, tuple(rnd.sample(ids, min(len(ids), rnd.choice([1, 1, 2])))), exclude_brokers=excluded
        ),
        GenerateOptions(Goal.DECOMMISSION, (rnd.choice(ids),), topics=(rnd.choice(state.topics),)),
        GenerateOptions(Goal.ADD_BROKERS, (fillable[-1],)),
        GenerateOptions(Goal.REBALANCE, metric=Metric.COUNT, exclude_brokers=excluded),
        GenerateOptions(Goal.REBALANCE, metric=Metric.BYTES, max_moves=rnd.choice([None, 5])),
        GenerateOptions(Goal.REBALANCE, metric=Metric.LEADERS),
        GenerateOptions(
            Goal.REPLICATION_FACTOR, replication_factor=rnd.randint(1, 4), topics=(state.partitions[0].topic,)
        ),
        GenerateOptions(Goal.FIX_RACKS, exclude_topics="t3"),
        GenerateOptions(Goal.OFFICIAL, brokers=tuple(live), topics=state.topics[:2], seed=rnd.randint(0, 9)),
        *drain,
    ]


def racks_of(state: ClusterState, replicas: tuple[int, ...]) -> set[str | None]:
    return {state.broker_index[BrokerId(b)].rack if BrokerId(b) in state.broker_index else None for b in replicas}


def check(state: ClusterState, options: GenerateOptions, made: Generated) -> None:
    plan, report = made.plan, made.report
    index = state.partition_index
    eligible = {b.id for b in state.brokers if b.eligible}
    cordoned = {b.id for b in state.brokers if b.cordoned}
    drained = set(options.brokers) if options.goal is Goal.DECOMMISSION else set()
    for e in plan.entries:
        p = index[e.key]
        new, old = set(e.replicas), set(p.replicas)
        assert len(new) == len(e.replicas), "a broker twice"
        assert not p.reassigning and p.leader is not None, "a partition in flight or offline was touched"
        if options.goal is Goal.REPLICATION_FACTOR:
            assert len(e.replicas) == options.replication_factor
        else:
            assert len(e.replicas) == len(p.replicas), "the replication factor changed"
        arrived = new - old
        assert arrived <= eligible, "a replica went to a broker that is not eligible"
        assert not arrived & cordoned, "a cordoned broker received a replica"
        assert not arrived & set(options.exclude_brokers), "an excluded broker received a replica"
        if options.exclude_topics:
            assert e.topic != options.exclude_topics
        if options.topics and options.goal is not Goal.OFFICIAL:
            assert e.topic in options.topics
        if drained:
            assert not new & drained, "a drained broker still holds a replica"
            assert old - drained <= new, "a decommission moved a replica off a broker that is not drained"
        if (
            options.goal in (Goal.DECOMMISSION, Goal.REBALANCE, Goal.ADD_BROKERS, Goal.FIX_RACKS, Goal.DRAIN_LOG_DIR)
            and state.brokers[0].rack
        ):
            assert (
                len(racks_of(state, e.replicas)) >= min(len(racks_of(state, p.replicas)), len(e.replicas)) or drained
            ), "a move lowered the number of racks a partition spans"
    if options.goal is Goal.DRAIN_LOG_DIR:
        check_dir_drain(state, options, made)
    if drained:  # judged on the topics chosen: the others are said as left out, never a reason not to reach it
        rows = {e.key: e for e in plan.entries}
        chosen = chosen_topics(options, state.topics)
        for p in state.partitions:
            if p.topic in chosen and not p.reassigning and p.leader is not None and p.key not in rows:
                assert not set(p.replicas) & drained, f"{p.name} was left on a drained broker"
        left = [p for p in state.partitions if p.topic not in chosen and set(p.target) & drained]
        assert ("left-out-by-filter" in {f.code for f in report.findings}) == bool(left)
    # the report tells the truth, cordons included
    said = " ".join(f.message for f in report.findings)
    for b in cordoned & eligible:
        assert f"Broker {b} is cordoned: never a destination." in said
    for b in state.brokers:
        if b.eligible and b.cordoned is False and b.cordoned_dirs:
            assert f"Broker {b.id} has {len(b.cordoned_dirs)} of {len(b.log_dirs)} log dirs cordoned" in said
    assert report.partitions_changed == len(plan)
    assert report.lower_bound_replicas <= report.moved_replicas
    assert report.lower_bound_bytes <= report.moved_bytes
    after = {b.broker: b for b in report.brokers_after}
    for b in drained if not options.topics else ():  # (a topic filter leaves the other topics' leaders)
        assert after[b].leaders == 0 or any(p.reassigning or p.leader is None for p in state.partitions)
    if options.goal is Goal.REBALANCE:
        measure = {"count": "replicas", "bytes": "bytes", "leaders": "leaders"}[options.metric.value]
        was, now = report.spreads["before"][measure], report.spreads["after"][measure]
        assert now.max - now.min <= was.max - was.min
        assert now.stddev <= was.stddev + 1e-6
        if options.metric is Metric.LEADERS:
            assert report.moved_replicas == 0
    if options.max_moves is not None and options.goal is Goal.REBALANCE and options.metric is not Metric.LEADERS:
        assert report.moved_replicas <= options.max_moves
    # no validation error from the console's own checks (warnings may remain: e.g. racks when RF > racks)
    if len(plan):
        assert not errors(validate(state, plan)), [f.message for f in errors(validate(state, plan))][:3]


def check_dir_drain(state: ClusterState, options: GenerateOptions, made: Generated) -> None:
    """Only replicas in the dir move: to another dir of the broker with room (never the dir itself, a
    cordoned or an offline one), else in place to another broker; what may move does, unless the
    report says what stays; the bound is what leaves the dir."""
    b, path = BrokerId(options.brokers[0]), options.log_dir
    assert path is not None
    broker = state.broker_index[b]
    drained = next(x for x in broker.log_dirs if x.path == path)
    inside = {p.key for p in replicas_in_dir(state.partitions, broker, path)}
    landed: Counter[str] = Counter()
    moved = 0
    for e in made.plan.entries:
        p = state.partition_index[e.key]
        assert e.key in inside, f"{p.name} has no replica in the dir drained"
        assert not any(g.broker == b and g.is_future for g in p.logs), "a replica moving between dirs was touched"
        if e.replicas == p.replicas:  # between the broker's dirs
            assert e.log_dirs is not None
            chosen = {r: d for r, d in zip(e.replicas, e.log_dirs, strict=True) if d != ANY}
            assert set(chosen) == {b}
            d = next(x for x in broker.log_dirs if x.path == chosen[b])
            assert d.path != path and not d.offline and not broker.dir_cordoned(d.path) and d.usable_bytes is not None
            assert broker.eligible and b not in options.exclude_brokers and not drained.offline
            landed[d.path] += max(p.size or 0, p.size_on(b) or 0)
        else:  # to another broker, in the same place
            assert e.log_dirs is None
            swapped = [(x, y) for x, y in zip(p.replicas, e.replicas, strict=True) if x != y]
            assert len(swapped) == 1 and swapped[0][0] == b
        moved += 1
    for d in broker.log_dirs:
        if landed[d.path]:
            assert landed[d.path] <= (d.usable_bytes or 0), f"{d.path} receives more than its room"
    said = {f.code for f in made.report.findings}
    may = [
        p
        for p in state.partitions
        if p.key in inside
        and not p.reassigning
        and p.leader is not None
        and not any(g.broker == b and g.is_future for g in p.logs)
    ]
    if "drain-dir-no-room" not in said:
        assert len(may) == moved, "a replica that may move stayed in the dir, unsaid"
    assert made.report.lower_bound_replicas == made.report.moved_replicas == moved
    assert made.report.reached == (moved == len(inside))


def test_the_random_goals_cover_every_goal_and_clusters_have_min_isr_above_some_replication_factors() -> None:
    """The property below holds every generator to its own review: every goal is drawn, on clusters
    whose topics may have min.insync.replicas above a partition's replication factor (a drain of
    such a partition was refused by Review)."""
    state = cluster(Shape(6, 3, 0, 40, 1, 0.0, 7, log_dirs=2, min_isr=2))
    assert {o.goal for o in goals(state, random.Random(1))} == set(Goal)
    assert dict(state.min_insync) == {"t0": 2, "t2": 2}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(shapes)
def test_every_goal_keeps_the_rules_on_random_clusters(shape: Shape) -> None:
    """Every goal on random clusters: the generator's rules, and no plan its own review refuses
    (``check``: validate finds no error)."""
    state = cluster(shape)
    for options in goals(state, random.Random(shape.seed)):
        try:
            made = generate(state, options)
        except GoalImpossible as e:
            assert e.message and e.hint is not None
            continue
        check(state, options, made)
        again = generate(state, options)
        assert again.plan.to_json() == made.plan.to_json(), "not deterministic"
        assert {**again.report.to_dict(), "seconds": 0} == {**made.report.to_dict(), "seconds": 0}


@settings(max_examples=40, deadline=None)
@given(shapes)
def test_a_saved_snapshot_reads_back_as_the_same_snapshot(shape: Shape) -> None:
    state = cluster(shape)
    assert load_state(json.dumps(state_json(state))) == state


def test_decommission_moves_exactly_what_is_on_the_drained_broker_and_keeps_racks() -> None:
    state = cluster(Shape(brokers=9, racks=3, down=0, partitions=200, rf=3, in_flight=0.0, seed=7))
    made = generate(state, GenerateOptions(Goal.DECOMMISSION, (4,)))
    on_4 = [p for p in state.partitions if 4 in p.replicas]
    assert made.report.moved_replicas == made.report.lower_bound_replicas == len(on_4)
    assert made.report.ratio_replicas == 1.0
    assert {e.key for e in made.plan.entries} == {p.key for p in on_4}
    assert made.report.rack_violations_after <= made.report.rack_violations_before


def test_a_replication_factor_below_min_isr_is_refused_as_review_would_refuse_it() -> None:
    state = cluster(Shape(4, 0, 0, 8, 3, 0.0, 3, min_isr=2))
    with pytest.raises(GoalImpossible) as e:
        generate(state, GenerateOptions(Goal.REPLICATION_FACTOR, replication_factor=1, topics=("t0",)))
    assert "fewer than min.insync.replicas=2 of topic t0" in e.value.message
    made = generate(state, GenerateOptions(Goal.REPLICATION_FACTOR, replication_factor=2, topics=("t0",)))
    assert len(made.plan) and not errors(validate(state, made.plan))


def test_impossible_goals_name_the_reason() -> None:
    state = cluster(Shape(brokers=3, racks=0, down=0, partitions=30, rf=3, in_flight=0.0, seed=1))
    with pytest.raises(GoalImpossible, match="fewer than the 3 replicas"):
        generate(state, GenerateOptions(Goal.DECOMMISSION, (0,)))
    with pytest.raises(GoalImpossible, match="no eligible broker"):
        generate(state, GenerateOptions(Goal.DECOMMISSION, (0,), exclude_brokers=(1, 2)))
    with pytest.raises(GoalImpossible, match="needs 5 eligible brokers"):
        generate(state, GenerateOptions(Goal.REPLICATION_FACTOR, replication_factor=5, topics=("t0",)))


@pytest.mark.parametrize(
    "options, words",
    [
        (GenerateOptions(Goal.DECOMMISSION, (99,)), "no broker 99"),
        (GenerateOptions(Goal.REBALANCE, topics=("nope",)), "No topic nope"),
        (GenerateOptions(Goal.REBALANCE, exclude_topics="("), "not a regular expression"),
        (GenerateOptions(Goal.REPLICATION_FACTOR, replication_factor=0, topics=("t0",)), "1 or more"),
        (GenerateOptions(Goal.REPLICATION_FACTOR, replication_factor=2), "Name the topics"),
        (GenerateOptions(Goal.REBALANCE, max_moves=-1), "--max-moves"),
        (GenerateOptions(Goal.REBALANCE, metric=Metric.BYTES, tolerance=5), "fraction of the mean"),
    ],
)
def test_unusable_input_is_refused_with_a_message(options: GenerateOptions, words: str) -> None:
    state = cluster(Shape(brokers=4, racks=2, down=0, partitions=20, rf=2, in_flight=0.0, seed=3))
    with pytest.raises(ConfigError, match=words):
        generate(state, options)


def test_rebalance_within_a_budget_moves_no_more_than_allowed_and_still_helps() -> None:
    state = cluster(Shape(brokers=12, racks=3, down=0, partitions=400, rf=3, in_flight=0.0, seed=5))
    free = generate(state, GenerateOptions(Goal.REBALANCE, metric=Metric.COUNT))
    capped = generate(state, GenerateOptions(Goal.REBALANCE, metric=Metric.COUNT, max_moves=10))
    assert free.report.reached and free.report.moved_replicas > 10
    assert capped.report.moved_replicas == 10 and not capped.report.reached
    before, after = capped.report.spreads["before"]["replicas"], capped.report.spreads["after"]["replicas"]
    assert after.stddev < before.stddev
    assert any(f.code == "balance-not-reached" for f in capped.report.findings)
    by_bytes = generate(state, GenerateOptions(Goal.REBALANCE, metric=Metric.BYTES, max_bytes=5000))
    assert by_bytes.report.moved_bytes <= 5000


def test_partitions_in_flight_are_left_alone_and_said_so() -> None:
    state = cluster(Shape(brokers=8, racks=0, down=0, partitions=100, rf=2, in_flight=0.3, seed=11))
    made = generate(state, GenerateOptions(Goal.REBALANCE, metric=Metric.COUNT))
    flying = {p.key for p in state.in_flight}
    assert flying and not flying & {e.key for e in made.plan.entries}
    assert any(f.code == "in-flight-left-alone" for f in made.report.findings)


def test_the_public_surface_has_the_generators() -> None:
    import console

    state = cluster(Shape(brokers=5, racks=0, down=0, partitions=20, rf=2, in_flight=0.0, seed=9))
    made = console.generate(state, console.GenerateOptions(console.Goal.DECOMMISSION, (1,)))
    assert made.report.moved_replicas == sum(1 in p.replicas for p in state.partitions)
    with pytest.raises(console.GoalImpossible):
        console.generate(
            state, console.GenerateOptions(console.Goal.REPLICATION_FACTOR, replication_factor=9, topics=("t0",))
        )


def test_official_matches_kafkas_assignment_for_a_fixed_start() -> None:
    """AdminUtils' own test cases (fixed start index 0, so replica shift 0)."""

    class Fixed(random.Random):
        def randrange(self, *a: int, **k: int) -> int:  # type: ignore[override]
            return 0

    assert rack_unaware([0, 1, 2, 3, 4], 10, 3, Fixed()) == [
        [0, 1, 2],
        [1, 2, 3],
        [2, 3, 4],
        [3, 4, 0],
        [4, 0, 1],
        [0, 2, 3],
        [1, 3, 4],
        [2, 4, 0],
        [3, 0, 1],
        [4, 1, 2],
    ]
    racks = {0: 1, 1: 3, 2: 3, 3: 2, 4: 2, 5: 1}  # rack1..rack3 as codes
    assert rack_aware(list(racks), racks, 7, 3, Fixed()) == [
        [0, 3, 1],
        [3, 1, 5],
        [1, 5, 4],
        [5, 4, 2],
        [4, 2, 0],
        [2, 0, 3],
        [0, 4, 2],
    ]


def test_report_round_trips_and_reads_as_text() -> None:
    from console.plans.quality import Report

    state = cluster(Shape(brokers=6, racks=3, down=1, partitions=60, rf=3, in_flight=0.1, seed=2))
    made = generate(state, GenerateOptions(Goal.REBALANCE, metric=Metric.COUNT))
    d = made.report.to_dict()
    for key in (
        "goal",
        "moved_replicas",
        "moved_bytes",
        "lower_bound_replicas",
        "lower_bound_bytes",
        "brokers_before",
        "brokers_after",
        "rack_violations_before",
        "rack_violations_after",
        "seconds",
    ):
        assert key in d
    assert set(d["brokers_after"][0]) >= {"replicas", "leaders", "bytes"}
    assert Report.from_dict(json.loads(json.dumps(d))).to_dict() == d
    text = made.report.text()
    assert "lower bound" in text and "rebalance count" in text


def test_a_rack_is_drained_as_its_brokers_are() -> None:
    state = cluster(Shape(brokers=9, racks=3, down=1, partitions=80, rf=2, in_flight=0.1, seed=5))
    on_r1 = tuple(int(b.id) for b in state.brokers if b.rack == "r1")
    by_rack = generate(state, GenerateOptions(Goal.DECOMMISSION, racks=("r1",)))
    by_ids = generate(state, GenerateOptions(Goal.DECOMMISSION, on_r1))
    assert by_rack.plan == by_ids.plan and by_rack.report.moved_replicas == by_ids.report.moved_replicas > 0
    assert by_rack.report.goal == f"decommission rack r1 ({','.join(map(str, on_r1))})"
    with pytest.raises(ConfigError, match=r"No broker on rack r9 in this cluster .its racks: r0, r1, r2"):
        generate(state, GenerateOptions(Goal.DECOMMISSION, racks=("r9",)))
    with pytest.raises(ConfigError, match="decommission goal only"):
        generate(state, GenerateOptions(Goal.REBALANCE, racks=("r1",)))
