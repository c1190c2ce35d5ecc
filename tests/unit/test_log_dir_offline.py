"""A log dir that goes offline during a log dir move (KAFKA-19571: a transient I/O error during a
move between dirs can mark a whole dir offline): the fake cluster models it as Kafka does, and a
run whose move's source or target dir goes offline records it, audits it and does not wait for it."""

from __future__ import annotations

import pytest

from console.core.model import BrokerId, replicas_in_dir
from console.plans.logdirs import current_dir, dir_moves_in_flight, future_dir
from console.state.merge import LOG_DIR_OFFLINE
from tests.fakes.cluster import FakeCluster

pytestmark = [pytest.mark.unit, pytest.mark.usefixtures("no_sleep")]
D1, D2 = "/k/d1", "/k/d2"


def two_dirs() -> FakeCluster:
    """Brokers 0..3, two dirs each; t-0 on 0,1 and t-1 on 1,2, every replica in the first dir."""
    return FakeCluster.of(4, {"t": [[0, 1], [1, 2]]}, size=10_000, copy_rate=10, log_dirs=(D1, D2))


def test_the_fake_takes_a_dir_offline_as_kafka_does_and_a_restart_brings_it_back() -> None:
    fake = two_dirs()
    fake.alter_replica_log_dirs({("t", 1, BrokerId(2)): D2})  # a copy into D2 of broker 2
    fake.advance(1)
    fake.fail_log_dir(1, D1)  # t-0 and t-1 have their replica of broker 1 there
    fake.fail_log_dir(2, D2)  # the copy into it is dropped
    state = fake.snapshot()
    b1 = state.broker(BrokerId(1))
    assert [(d.path, d.offline) for d in b1.log_dirs] == [(D1, True), (D2, False)]
    assert "KAFKA_STORAGE_ERROR" in (b1.log_dirs[0].error or "")
    for n in (0, 1):
        p = state.partition("t", n)
        assert BrokerId(1) not in p.isr and p.leader != BrokerId(1)
        assert current_dir(p, BrokerId(1)) is None  # an offline dir lists nothing
    assert [p.name for p in replicas_in_dir(state.partitions, b1, D1)] == ["t-0", "t-1"]
    warned = [f for f in state.findings if f.code == LOG_DIR_OFFLINE]
    assert [(f.broker, D1 in f.message or D2 in f.message) for f in warned] == [(1, True), (2, True)]
    assert "t-0" in warned[0].message and "KAFKA-19571" in warned[0].hint
    assert not dir_moves_in_flight(state)
    assert current_dir(state.partition("t", 1), BrokerId(2)) == D1  # stays where it was
    # nothing can be put in it, nor moved out of a replica in it
    answers = fake.alter_replica_log_dirs({("t", 1, BrokerId(2)): D2, ("t", 0, BrokerId(1)): D2})
    assert [a.code for a in answers] == ["KAFKA_STORAGE_ERROR", "KAFKA_STORAGE_ERROR"]
    fake.stop_broker(1)
    fake.start_broker(1)
    back = fake.snapshot()
    assert not back.broker(BrokerId(1)).log_dirs[0].offline
    assert BrokerId(1) in back.partition("t", 0).isr
    assert [f.broker for f in back.findings if f.code == LOG_DIR_OFFLINE] == [2]


def test_a_copy_out_of_a_dir_that_goes_offline_stops_where_it_was() -> None:
    fake = two_dirs()
    fake.alter_replica_log_dirs({("t", 1, BrokerId(2)): D2})
    fake.advance(1)
    fake.fail_log_dir(2, D1)  # the source of the copy
    fake.advance(100)
    state = fake.snapshot()
    p = state.partition("t", 1)
    assert current_dir(p, BrokerId(2)) is None and future_dir(p, BrokerId(2)) == D2
    assert [(m.to_dir, m.copied_bytes) for m in dir_moves_in_flight(state)] == [(D2, 10)]  # copies nothing more
    assert fake.dir_of(("t", 1), 2) == D1
