"""The column-wise diff and validation against a plain per-partition reference.

``diff`` and ``validate`` work on whole arrays (console/columns.py) so that a 100k-partition plan
is checked in well under a second. This file keeps the rules in their plain, one-partition-at-a-
time form as the oracle, and generates odd clusters and plans (partitions in flight, no leader,
unknown sizes, brokers down or fenced, racks, min ISR, duplicate / negative / huge ids, log dirs,
stale bases) to show both give the same answers.
"""

from __future__ import annotations

from collections import Counter, defaultdict

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from console.core.model import Broker, BrokerId, ClusterState, Partition, Severity
from console.plans import validate as v
from console.plans.columns import PAD, padded
from console.plans.diff import ChangeKind, change_of, diff, partition_size
from console.plans.plan import ANY, Plan, PlanEntry
from console.plans.rules import codes
from tests.unit.strategies import clusters, plans_for


# -- the reference: one partition at a time ------------------------------------------------------
def reference_brokers(state: ClusterState, plan: Plan) -> dict[int, tuple[int, ...]]:
    totals = state.broker_totals
    replicas = defaultdict(int, {b: t[0] for b, t in totals.items()})
    leaders = defaultdict(int, {b: t[1] for b, t in totals.items()})
    size = defaultdict(int, {b: t[2] for b, t in totals.items()})
    arriving, leaving, b_in, b_out = defaultdict(int), defaultdict(int), defaultdict(int), defaultdict(int)
    for e in plan.entries:
        p = state.partition_index.get(e.key)
        if p is None:
            continue
        c = change_of(p, e)
        for b in p.replicas:
            replicas[b] -= 1
        for b in c.target:
            replicas[b] += 1
        if c.leader_before != c.leader_after:
            if c.leader_before is not None:
                leaders[c.leader_before] -= 1
            if c.leader_after is not None:
                leaders[c.leader_after] += 1
        psize = c.size or 0
        for b in c.removing:
            leaving[b] += 1
            size[b] -= p.size_on(b) or psize
        for b in p.adding:
            if b not in c.target:
                size[b] -= p.size_on(b) or 0
        for b in c.adding:
            arriving[b] += 1
            size[b] += psize - (p.size_on(b) or 0)
            b_in[b] += psize
            if c.source is not None:
                b_out[c.source] += psize
    ids = sorted(set(replicas) | {b.id for b in state.brokers})
    return {b: (replicas[b], leaders[b], max(0, size[b]), arriving[b], leaving[b], b_in[b], b_out[b]) for b in ids}


def reference_findings(state: ClusterState, plan: Plan) -> list[tuple[object, ...]]:
    out = []
    topics, brokers = set(state.topics), state.broker_index
    rack_of = {b.id: b.rack for b in state.brokers if b.rack}
    known_ids = {b.id for b in state.brokers}
    available = {b.rack for b in state.brokers if b.eligible and b.rack}

    def f(code, sev, e):
        out.append((code, sev.value, e.topic, e.partition))

    for e in plan.entries:
        r = e.replicas
        if not r:
            f(codes.EMPTY_REPLICAS, Severity.ERROR, e)
        if any(b < 0 or b > 2**31 - 1 for b in r):
            f(codes.NEGATIVE_BROKER, Severity.ERROR, e)
        if len(set(r)) != len(r):
            f(codes.DUPLICATE_BROKER, Severity.ERROR, e)
        if e.log_dirs is not None and len(e.log_dirs) != len(r):
            f(codes.LOG_DIRS_LENGTH, Severity.ERROR, e)
        p = state.partition_index.get(e.key)
        if p is None:
            f(codes.UNKNOWN_TOPIC if e.topic not in topics else codes.UNKNOWN_PARTITION, Severity.ERROR, e)
            continue
        c = change_of(p, e)
        for b in c.adding:
            broker = brokers.get(b)
            if broker is None:
                f(codes.UNKNOWN_BROKER, Severity.ERROR, e)
            elif not broker.eligible:
                f(codes.BROKER_NOT_ELIGIBLE, Severity.ERROR, e)
        for b in c.adding:  # a check of its own, after the one above
            broker = brokers.get(b)
            if broker is not None and broker.cordoned:
                f(codes.CORDONED_DESTINATION, Severity.ERROR, e)
        for b, path in zip(e.replicas, e.log_dirs or (), strict=False):
            broker = brokers.get(b)
            if path != ANY and broker is not None and broker.log_dirs and path not in {d.path for d in broker.log_dirs}:
                f(codes.UNKNOWN_LOG_DIR, Severity.ERROR, e)
        for b, path in zip(e.replicas, e.log_dirs or (), strict=False):
            broker = brokers.get(b)
            if (
                path != ANY
                and broker is not None
                and path in {d.path for d in broker.log_dirs}
                and broker.dir_cordoned(path)
                and not (b in c.adding and broker.cordoned)
                and p.log_dir_on(b) != path
            ):
                f(codes.CORDONED_DESTINATION, Severity.ERROR, e)
        for b, path in zip(e.replicas, e.log_dirs or (), strict=False):
            broker = brokers.get(b)
            if (
                path != ANY
                and broker is not None
                and any(d.path == path and d.offline for d in broker.log_dirs)
                and p.log_dir_on(b) != path
            ):
                f(codes.OFFLINE_LOG_DIR, Severity.ERROR, e)
        if c.kind is ChangeKind.NONE:
            f(codes.NO_CHANGE, Severity.INFO, e)
        else:
            if c.kind is ChangeKind.REORDER:
                f(codes.REORDER_ONLY, Severity.INFO, e)
            if c.needs_election and c.kind is not ChangeKind.REORDER:
                f(codes.LEADER_NEEDS_ELECTION, Severity.INFO, e)
            if c.in_flight:
                f(codes.ALREADY_REASSIGNING, Severity.WARNING, e)
            if c.kind is not ChangeKind.REORDER and any(
                (x := brokers.get(b)) is not None and x.fenced for b in c.current
            ):
                f(codes.SOURCE_ON_FENCED, Severity.WARNING, e)
            if c.leader_before is None:
                f(codes.OFFLINE_NOW, Severity.WARNING, e)
            if len(c.target) != len(c.current):
                f(codes.RF_CHANGE, Severity.WARNING, e)
            min_isr = state.min_insync_index.get(e.topic)
            if min_isr is not None:
                if len(c.target) < min_isr and len(c.target) < len(c.current):
                    f(codes.RF_BELOW_MIN_ISR, Severity.ERROR, e)
                elif len(c.target) < min_isr:
                    f(codes.RF_STILL_BELOW_MIN_ISR, Severity.WARNING, e)
                if sum(1 for b in c.current if b in p.isr) < min_isr:
                    f(codes.BELOW_MIN_ISR_NOW, Severity.WARNING, e)
            before = {rack_of[b] for b in c.current if b in rack_of}
            after = {rack_of[b] for b in c.target if b in rack_of}
            if any(b not in known_ids for b in c.target):
                pass  # a broker the cluster does not know has no rack to count: it is the error
            elif before and len(after) < min(len(before), len(c.target)):
                f(codes.RACK_SPREAD_REDUCED, Severity.WARNING, e)
            elif available and len(after) < min(len(c.target), len(available)):
                f(codes.RACKS_UNDERUSED, Severity.WARNING, e)
        basis = plan.basis.get(e.key)
        if basis is not None and basis != p.replicas:
            f(codes.STALE, Severity.ERROR, e)
    order = {"error": 0, "warning": 1, "info": 2}
    return sorted(out, key=lambda x: order[x[1]])  # stable: plan order, then check order


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_column_wise_diff_and_validation_equal_the_per_partition_rules(data):
    state = data.draw(clusters())
    plan = data.draw(plans_for(state))
    d = diff(state, plan)
    c = d.columns
    # per entry: every column says what change_of says
    for i, e in enumerate(plan.entries):
        p = state.partition_index.get(e.key)
        ref = change_of(p, e)
        assert d.changes[i] == ref
        assert ChangeKind(tuple(ChangeKind)[c.kind[i]]) is ref.kind
        assert tuple(int(x) for x in c.target[i, c.adding[i]]) == ref.adding
        assert tuple(int(x) for x in c.current[i, c.removing[i]]) == ref.removing
        assert (None if c.leader_after[i] == PAD else int(c.leader_after[i])) == ref.leader_after
        assert (None if c.size[i] == PAD else int(c.size[i])) == (partition_size(p) if p else None)
        assert bool(c.in_flight[i]) == ref.in_flight
    # per broker and in total
    ref = reference_brokers(state, plan)
    assert {
        b.broker: (b.replicas_after, b.leaders_after, b.bytes_after, b.arriving, b.leaving, b.bytes_in, b.bytes_out)
        for b in d.brokers
    } == ref
    changes = list(d.changes)
    assert d.bytes_to_copy == sum(x.bytes_to_copy for x in changes)
    assert d.summary()["moving"] == len(d.moving) == sum(1 for x in changes if x.adding or x.removing)
    assert d.counts() == {k.value: sum(1 for x in changes if x.kind is k) for k in ChangeKind}
    flows: Counter[tuple[int, int]] = Counter()
    for x in changes:
        if x.source is not None:
            for b in x.adding:
                flows[(x.source, b)] += 1
    assert {(f.source, f.destination): f.replicas for f in d.flows} == dict(flows)
    # findings: same codes for the same partitions, in the same order
    found = [
        (f.code, f.severity.value, f.topic, f.partition) for f in v.validate(state, plan, d) if f.topic is not None
    ]
    assert found == reference_findings(state, plan)


def test_padded_keeps_order_and_gives_ids_beyond_int64_distinct_stand_ins():
    m, lens = padded([[3, 1], [], [2**40, -1, 10**30, 10**31]])
    assert lens.tolist() == [2, 0, 4]
    assert m[0, :2].tolist() == [3, 1] and (m[1] == PAD).all()
    assert m[2, :2].tolist() == [2**40, -1] and len(set(m[2].tolist())) == 4


def test_ids_beyond_int64_are_invalid_not_a_crash():
    state = ClusterState(
        0.0, (Broker(BrokerId(0), registered=True),), (Partition("t", 0, (BrokerId(0),), (BrokerId(0),), BrokerId(0)),)
    )
    found = {f.code for f in v.validate(state, Plan.of([PlanEntry("t", 0, (BrokerId(10**20), BrokerId(10**21)))]))}
    assert codes.NEGATIVE_BROKER in found and codes.UNKNOWN_BROKER in found and codes.DUPLICATE_BROKER not in found
    assert padded([[1, 2], [3, 4]])[0].tolist() == [[1, 2], [3, 4]]
    assert np.array_equal(padded([])[1], np.zeros(0, np.int64))


def test_parsed_plan_columns_follow_the_sorted_entries():
    from console.plans.plan import parse_plan

    plan = parse_plan(
        '{"partitions":[{"topic":"b","partition":1,"replicas":[5,6]},'
        '{"topic":"a","partition":3,"replicas":[1]},{"topic":"a","partition":0,"replicas":[2,3,4]}]}'
    )
    assert [e.key for e in plan.entries] == [("a", 0), ("a", 3), ("b", 1)]
    target, lens = plan.target_columns
    assert [tuple(int(x) for x in row[:n]) for row, n in zip(target, lens, strict=False)] == [
        e.replicas for e in plan.entries
    ]


# -- finding a plan's partitions by a join of (topic, partition) keys ------------------------------
_numbers = st.one_of(st.integers(0, 5), st.sampled_from([-1, 2**31 - 1, -(2**31)]))
_topics = st.sampled_from(["a", "b", "c"])


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(_topics, _numbers), max_size=12),
    st.lists(st.tuples(st.sampled_from(["a", "b", "c", "zz"]), st.one_of(_numbers, st.just(2**31), st.just(10**30)))),
    st.booleans(),
)
def test_rows_of_finds_the_partitions_the_index_finds(keys, queries, exotic):
    """Any order, the same key twice (the last one counts, as in ``partition_index``), unknown
    topics and numbers beyond int32 or int64; a snapshot with a number beyond int32 too."""
    from console.plans.columns import partitions_at, rows_of

    if exotic:
        keys = [*keys, ("b", 2**40)]
    parts = tuple(Partition(t, n, (BrokerId(1),), (BrokerId(1),), BrokerId(1)) for t, n in keys)
    state = ClusterState(0.0, (), parts)
    entries = [PlanEntry(t, n, (BrokerId(1),)) for t, n in queries]
    rows = rows_of(state, entries)
    index = state.partition_index
    assert [parts[r] if r >= 0 else None for r in rows.tolist()] == [index.get(e.key) for e in entries]
    assert all(p is index.get(e.key) for p, e in zip(partitions_at(state, rows), entries, strict=True))
    many = np.resize(rows, 5000) if len(rows) else rows  # past the size where an object array picks them
    assert partitions_at(state, many) == [parts[r] if r >= 0 else None for r in many.tolist()]


def test_snapshot_columns_share_what_repeats_and_are_read_only():
    from console.plans.columns import snapshot_columns

    b = [BrokerId(i) for i in range(4)]
    steady = ClusterState(0.0, (), (Partition("t", 0, (b[1], b[2]), (b[2], b[1]), b[1]),))
    sc = snapshot_columns(steady)
    assert sc.original is sc.replicas and sc.original_len.tolist() == [2]
    assert sc.isr is not sc.replicas and sc.isr.tolist() == [[2, 1]]  # the ISR in its own order
    in_sync = ClusterState(0.0, (), (Partition("t", 0, (b[1], b[2]), (b[1], b[2]), b[1]),))
    sc = snapshot_columns(in_sync)
    assert sc.isr is sc.replicas
    moving = ClusterState(0.0, (), (Partition("t", 0, (b[1], b[2], b[3]), (b[1], b[2]), b[1], adding=(b[3],)),))
    sc = snapshot_columns(moving)
    assert sc.original.tolist() == [[1, 2, PAD]] and sc.original_len.tolist() == [2]
    for name, a in vars(sc).items():
        assert not a.flags.writeable, name
