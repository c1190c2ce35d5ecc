"""Reads that do not load the cluster, on the real sandbox: between two full reads a snapshot asks
DescribeLogDirs (and DescribeConfigs of topics) only for the partitions in flight, carries every
other partition's size over, and once a move completes shows its sizes right."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from console.adapters.kafka import KafkaGateway
from console.adapters.kafka.requests import Api, Sent
from console.core.model import BrokerId, ClusterState, ReadTimes, ReplicaLog
from console.sandbox.cluster import Sandbox
from console.sandbox.demo import set_broker_rates
from console.state.merge import merge
from console.state.reader import ClusterReader
from tests.integration.helpers import BROKERS, clear_throttles, in_flight, make_topic, reassign, throttle_topic_all
from tests.support import settings_for, wait_for

MOVING, STILL = "light-moving", "light-still"


@pytest.fixture
def topics(sandbox: Sandbox) -> Iterator[str]:
    """A partition of 2 MB on broker 0 to move, three of 100 KB that stay; the throttles taken off after."""
    bs = sandbox.bootstrap_servers
    make_topic(bs, MOVING, 1, 1, 2_000, assignment=[[0]])
    make_topic(bs, STILL, 3, 1, 100, assignment=[[0], [1], [2]])
    yield bs
    set_broker_rates(bs, BROKERS, 50_000_000)
    wait_for(lambda: not in_flight(bs, MOVING), timeout=60, what="the move completed")
    clear_throttles(bs, BROKERS, [MOVING])


def logs(state: ClusterState, topic: str) -> dict[tuple[str, int], tuple[ReplicaLog, ...]]:
    return {p.key: tuple(sorted(p.logs)) for p in state.partitions if p.topic == topic}


def asked_of(told: list[Sent], api: Api) -> list[Sent]:
    return [s for s in told if s.api is api]


def test_between_full_reads_only_what_is_in_flight_is_asked_and_the_rest_carried(sandbox: Sandbox, topics: str) -> None:
    bs = topics
    with ClusterReader(settings_for(sandbox, zookeeper=False)) as reader:
        assert reader.settings.sizes_every_s == 60.0  # the default
        told: list[Sent] = []
        reader.kafka.requests.listen(told.append)
        first = reader.snapshot()
        assert first.read_at == ReadTimes.at(first.taken_at)  # the first read is a full one
        everything = len(first.partitions)
        assert [s.items for s in asked_of(told, Api.DESCRIBE_LOG_DIRS)] == [everything] * 3  # every broker, all
        still = logs(first, STILL)
        assert len(still) == 3 and all(still.values())

        # another tool moves the partition to broker 1, throttled so that it stays in flight
        set_broker_rates(bs, BROKERS, 10_000)
        throttle_topic_all(bs, MOVING)
        reassign(bs, {(MOVING, 0): [1]})
        wait_for(lambda: in_flight(bs, MOVING), what="the move in flight")
        told.clear()
        second = reader.snapshot()
        assert [p.key for p in second.in_flight] == [(MOVING, 0)]
        # each broker was asked for the one partition in flight (and its dirs), its topic's configs only
        assert [(s.items, s.broker) for s in asked_of(told, Api.DESCRIBE_LOG_DIRS)] == [(1, b) for b in BROKERS]
        topic_configs = [s for s in asked_of(told, Api.DESCRIBE_CONFIGS) if s.broker is None]
        assert [s.items for s in topic_configs] == [1]
        assert second.read_at == ReadTimes(second.taken_at, first.taken_at, first.taken_at)
        assert logs(second, STILL) == still  # carried over
        moving = second.partition(MOVING, 0)
        assert moving is not None and {log.broker for log in moving.logs} == {BrokerId(0), BrokerId(1)}
        (copy,) = moving.progress(second.logs_known)  # the copy's progress, read now
        assert copy.broker == BrokerId(1) and copy.leader_bytes and copy.leader_bytes > 1_000_000
        assert second.throttles.topic_map()[MOVING]  # the moving topic's throttle, read now

        # the move completes: the next read asks for it once more, and shows it where it is now
        set_broker_rates(bs, BROKERS, 50_000_000)
        wait_for(lambda: not in_flight(bs, MOVING), timeout=60, what="the move completed")
        told.clear()
        third = reader.snapshot()
        assert [s.items for s in asked_of(told, Api.DESCRIBE_LOG_DIRS)] == [1, 1, 1]
        assert third.read_at.sizes == first.taken_at
        kafka = KafkaGateway(settings_for(sandbox, zookeeper=False))
        try:
            truth = merge(kafka.read(), None)  # a full read of its own
        finally:
            kafka.close()
        done = logs(third, MOVING)[(MOVING, 0)]
        assert [log.broker for log in done] == [BrokerId(1)] and done == logs(truth, MOVING)[(MOVING, 0)]
        assert logs(third, STILL) == logs(truth, STILL)

        # the next full read (as a submit asks for) reads every partition again, and agrees
        told.clear()
        full = reader.snapshot(full=True)
        assert full.read_at == ReadTimes.at(full.taken_at)
        assert [s.items for s in asked_of(told, Api.DESCRIBE_LOG_DIRS)] == [len(full.partitions)] * 3
        assert logs(full, MOVING) == logs(truth, MOVING) and logs(full, STILL) == still
