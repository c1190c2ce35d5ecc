"""Snapshots of a small cluster over time, for the pipeline's tests: partitions written as
(R, I, leader, AR, RR, bytes per broker) at each tick."""

from __future__ import annotations

from typing import Iterable, Mapping

from console.core.model import (Broker, BrokerId, ClusterState, Partition, ReadStatus, ReplicaLog, SourceStatus,
                                Throttles)

T0 = 1_790_000_000.0
"""2026-09-21 (UTC), a whole number of seconds."""


def ids(xs: Iterable[int]) -> tuple[BrokerId, ...]:
    return tuple(BrokerId(x) for x in xs)


def part(topic: str, number: int, replicas: Iterable[int], isr: Iterable[int], leader: int | None,
         adding: Iterable[int] = (), removing: Iterable[int] = (), sizes: Mapping[int, int] | None = None) -> Partition:
    return Partition(topic, number, ids(replicas), ids(isr), None if leader is None else BrokerId(leader), ids(adding),
                     ids(removing), logs=tuple(ReplicaLog(BrokerId(b), f"/data/{b}", s) for b, s in (sizes or {}).items()))


def snap(taken_at: float, partitions: Iterable[Partition], brokers: int = 4, throttles: Throttles | None = None,
         cluster_id: str = "c1", name: str = "demo") -> ClusterState:
    return ClusterState(
        taken_at=taken_at, brokers=tuple(Broker(BrokerId(i), "h", 9092 + i, f"r{i % 2}", registered=True, in_api=True)
                                         for i in range(1, brokers + 1)),
        partitions=tuple(sorted(partitions, key=lambda p: p.key)), cluster_id=cluster_id, name=name,
        throttles=throttles or Throttles(),
        status=ReadStatus(SourceStatus.OK, SourceStatus.OK, SourceStatus.OK, SourceStatus.OK))


def throttled(rate: int, topic: str, leaders: Iterable[str], followers: Iterable[str], brokers: Iterable[int]) -> Throttles:
    """Throttles as ``--throttle`` sets them: ``rate`` on each broker, the lists on ``topic``."""
    return Throttles.of({str(b): {"leader.replication.throttled.rate": str(rate),
                                  "follower.replication.throttled.rate": str(rate)} for b in brokers},
                        {topic: {"leader.replication.throttled.replicas": ",".join(leaders),
                                 "follower.replication.throttled.replicas": ",".join(followers)}})
