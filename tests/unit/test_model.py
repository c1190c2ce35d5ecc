from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from console.core.model import Partition, PartitionHealth, ReplicaLog, ReplicaRole, Source, partitions_of
from tests.unit.builders import ids
from tests.unit.strategies import cluster, clusters, shapes


def part(r, i, leader, a=(), d=(), logs=()):
    return Partition("t", 0, ids(*r), ids(*i), leader, ids(*a), ids(*d), logs=tuple(logs))


def test_original_and_target_follow_kip455_example():
    # ORS {1,2,3} -> TRS [4,5,6]: RS = [4,5,6,1,2,3], AR = [4,5,6], RR = [1,2,3]
    p = part([4, 5, 6, 1, 2, 3], [1, 2, 3], 1, a=[4, 5, 6], d=[1, 2, 3])
    assert p.original == ids(1, 2, 3)
    assert p.target == ids(4, 5, 6)
    assert p.reassigning and not p.complete


def test_adding_replicas_never_count_as_under_replicated():
    p = part([4, 5, 6, 1, 2, 3], [1, 2, 3], 1, a=[4, 5, 6], d=[1, 2, 3])
    assert not p.under_replicated
    assert p.health is PartitionHealth.REASSIGNING


def test_original_replica_out_of_isr_is_true_urp_while_reassigning():
    p = part([4, 1, 2, 3], [1, 2], 1, a=[4], d=[3])
    assert p.under_replicated
    assert p.health is PartitionHealth.UNDER_REPLICATED


def test_urp_without_reassignment_and_offline():
    assert part([1, 2, 3], [1, 2], 1).under_replicated
    assert not part([1, 2, 3], [3, 2, 1], 1).under_replicated
    assert part([1, 2], [], None).health is PartitionHealth.OFFLINE


def test_complete_when_target_in_isr():
    p = part([4, 5, 6, 1, 2, 3], [1, 2, 3, 4, 5, 6], 1, a=[4, 5, 6], d=[1, 2, 3])
    assert p.complete


def test_roles():
    p = part([4, 1, 2, 3], [1, 2], 1, a=[4], d=[3])
    assert p.role(1) is ReplicaRole.LEADER
    assert p.role(2) is ReplicaRole.IN_SYNC
    assert p.role(3) is ReplicaRole.REMOVING
    assert p.role(4) is ReplicaRole.ADDING
    assert p.role(9) is None
    assert part([1, 2], [1], 1).role(2) is ReplicaRole.OUT_OF_SYNC


def test_progress_from_log_sizes():
    logs = [ReplicaLog(1, "/d", 1000), ReplicaLog(4, "/d", 250)]
    p = part([4, 1, 2], [1, 2], 1, a=[4], d=[], logs=logs)
    (prog,) = p.progress()
    assert prog.copied_bytes == 250 and prog.leader_bytes == 1000
    assert prog.fraction == 0.25
    # log not yet created on the new broker: 0 copied when sizes were read, unknown otherwise
    p2 = part([4, 1, 2], [1, 2], 1, a=[4], logs=[ReplicaLog(1, "/d", 1000)])
    assert p2.progress(logs_known=True)[0].fraction == 0.0
    assert p2.progress(logs_known=False)[0].fraction is None
    # in the ISR: done, whatever the sizes say
    p3 = part([4, 1, 2], [1, 2, 4], 1, a=[4], logs=[ReplicaLog(1, "/d", 1000), ReplicaLog(4, "/d", 990)])
    assert p3.progress()[0].fraction == 1.0


brokers_st = st.lists(st.integers(0, 20), min_size=1, max_size=6, unique=True)


@given(original=brokers_st, target=brokers_st, isr_frac=st.floats(0, 1))
def test_controller_algebra_roundtrip(original, target, isr_frac):
    """R = (target ++ original).distinct, AR = R - original, RR = R - target (KIP-455)."""
    full = list(dict.fromkeys(target + original))
    adding = [b for b in full if b not in original]
    removing = [b for b in full if b not in target]
    isr = original[: max(1, int(len(original) * isr_frac))]
    p = part(full, isr, isr[0], a=adding, d=removing)
    assert list(p.original) == [b for b in full if b in original]
    assert set(p.original) == set(original)
    assert list(p.target) == target
    assert p.reassigning == (set(original) != set(target))
    # true URP never counts adding replicas
    assert p.under_replicated == (not set(original) <= set(isr))


def test_partitions_built_field_by_field_are_the_constructed_ones():
    fields = (
        ["a", "b"],
        [0, 7],
        [ids(1, 2), ids(3)],
        [ids(2), ids(3)],
        [ids(1)[0], None],
        [(), ids(3)],
        [ids(1), ()],
        [None, Source.API],
        [(ReplicaLog(ids(1)[0], "/d", 5),), ()],
    )
    built = partitions_of(*fields)
    assert built == list(map(Partition, *fields))
    assert hash(built[0]) == hash(Partition(*(f[0] for f in fields))) and built[1].elr == ()
    with pytest.raises(ValueError):
        partitions_of(*fields[:-1], [()])


@settings(max_examples=30, deadline=None)
@given(shapes, st.booleans())
def test_in_flight_and_under_replicated_are_those_of_the_partitions(shape, reverse):
    state = cluster(shape)
    if reverse:  # an ISR in another order than R is still complete
        state = replace(state, partitions=tuple(replace(p, isr=p.isr[::-1]) for p in state.partitions))
    assert state.in_flight == tuple(p for p in state.partitions if p.reassigning)
    assert state.under_replicated == tuple(p for p in state.partitions if p.under_replicated)


@settings(max_examples=60, deadline=None)
@given(clusters())
def test_broker_totals_count_each_replica_leader_and_byte_on_disk(state):
    """Every registered broker and every broker a replica list or a log names; future logs (a move
    between dirs) are not on disk yet; a partition without a leader is led by no one."""
    expect: dict[int, list[int]] = {b.id: [0, 0, 0] for b in state.brokers}
    for p in state.partitions:
        for b in p.replicas:
            expect.setdefault(b, [0, 0, 0])[0] += 1
        if p.leader is not None:
            expect.setdefault(p.leader, [0, 0, 0])[1] += 1
        for log in p.logs:
            if not log.is_future:
                expect.setdefault(log.broker, [0, 0, 0])[2] += log.size
    assert state.broker_totals == {b: tuple(t) for b, t in expect.items()}
