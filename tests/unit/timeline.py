"""Snapshots of a small cluster over time, for the pipeline's tests: partitions written as
(R, I, leader, AR, RR, bytes per broker) at each tick."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

from console.core.model import (
    Broker,
    BrokerId,
    ClusterState,
    Partition,
    ReadStatus,
    ReplicaLog,
    SourceStatus,
    Throttles,
)

T0 = 1_790_000_000.0
"""2026-09-21 (UTC), a whole number of seconds."""
EVERY = 10.0
"""Seconds between the snapshots of :func:`timeline`."""


def ids(xs: Iterable[int]) -> tuple[BrokerId, ...]:
    return tuple(BrokerId(x) for x in xs)


def part(
    topic: str,
    number: int,
    replicas: Iterable[int],
    isr: Iterable[int],
    leader: int | None,
    adding: Iterable[int] = (),
    removing: Iterable[int] = (),
    sizes: Mapping[int, int] | None = None,
) -> Partition:
    return Partition(
        topic,
        number,
        ids(replicas),
        ids(isr),
        None if leader is None else BrokerId(leader),
        ids(adding),
        ids(removing),
        logs=tuple(ReplicaLog(BrokerId(b), f"/data/{b}", s) for b, s in (sizes or {}).items()),
    )


def snap(
    taken_at: float,
    partitions: Iterable[Partition],
    brokers: int = 4,
    throttles: Throttles | None = None,
    cluster_id: str = "c1",
    name: str = "demo",
) -> ClusterState:
    return ClusterState(
        taken_at=taken_at,
        brokers=tuple(
            Broker(BrokerId(i), "h", 9092 + i, f"r{i % 2}", registered=True, in_api=True) for i in range(1, brokers + 1)
        ),
        partitions=tuple(sorted(partitions, key=lambda p: p.key)),
        cluster_id=cluster_id,
        name=name,
        throttles=throttles or Throttles(),
        status=ReadStatus(SourceStatus.OK, SourceStatus.OK, SourceStatus.OK, SourceStatus.OK),
    )


def throttled(
    rate: int, topic: str, leaders: Iterable[str], followers: Iterable[str], brokers: Iterable[int]
) -> Throttles:
    """Throttles as ``--throttle`` sets them: ``rate`` on each broker, the lists on ``topic``."""
    return Throttles.of(
        {
            str(b): {"leader.replication.throttled.rate": str(rate), "follower.replication.throttled.rate": str(rate)}
            for b in brokers
        },
        {
            topic: {
                "leader.replication.throttled.replicas": ",".join(leaders),
                "follower.replication.throttled.replicas": ",".join(followers),
            }
        },
    )


def timeline() -> list[ClusterState]:
    """Twelve snapshots 10 s apart of a 4-broker cluster:

    * a-0 moves 1 → 3 (ticks 2–5, 250 B per tick under a 100 B/s throttle, 1000 B), then completes;
    * b-0 starts adding 4 at tick 2 and is cancelled at tick 4;
    * c-0 adds 4 at tick 3 and never grows: stuck at the end;
    * d-0 adds 3 at tick 9, still growing at the end: in flight;
    * e-0 moves to 2 twice (ticks 1–2 and 6–7), completing each time (back on 1 at ticks 4–5);
    * f-0 loses broker 2 from its ISR at ticks 5–7 (truly under-replicated), not moving.
    """
    out = []
    for i in range(12):
        ps = []
        if i < 2:
            ps.append(part("a", 0, [1, 2], [1, 2], 1, sizes={1: 1000, 2: 1000}))
        elif i < 6:
            ps.append(
                part("a", 0, [3, 2, 1], [2, 1], 1, adding=[3], removing=[1], sizes={1: 1000, 2: 1000, 3: (i - 2) * 250})
            )
        else:
            ps.append(part("a", 0, [3, 2], [3, 2], 3, sizes={3: 1000, 2: 1000}))
        if 2 <= i < 4:
            ps.append(part("b", 0, [4, 1, 2], [1, 2], 1, adding=[4], removing=[2], sizes={1: 50, 2: 50, 4: 5 * i}))
        else:
            ps.append(part("b", 0, [1, 2], [1, 2], 1, sizes={1: 50, 2: 50}))
        if i >= 3:
            ps.append(part("c", 0, [4, 1], [1], 1, adding=[4], sizes={1: 50, 4: 7}))
        else:
            ps.append(part("c", 0, [1], [1], 1, sizes={1: 50}))
        if i >= 9:
            ps.append(part("d", 0, [3, 1], [1], 1, adding=[3], sizes={1: 900, 3: (i - 8) * 100}))
        else:
            ps.append(part("d", 0, [1], [1], 1, sizes={1: 900}))
        if i in (1, 2, 6, 7):
            ps.append(part("e", 0, [2, 1], [1], 1, adding=[2], sizes={1: 40, 2: 20}))
        elif i == 3 or i >= 8:
            ps.append(part("e", 0, [2], [2], 2, sizes={2: 40}))
        else:
            ps.append(part("e", 0, [1], [1], 1, sizes={1: 40}))
        ps.append(part("f", 0, [1, 2], [1] if 5 <= i < 8 else [1, 2], 1, sizes={1: 10, 2: 10}))
        thr = throttled(100, "a", ["0:1", "0:2"], ["0:3"], [1, 2, 3]) if 2 <= i < 6 else None
        out.append(snap(T0 + EVERY * i, ps, throttles=thr))
    return out


def write_states(root: Path, states: Iterable[ClusterState]) -> Path:
    """``states`` appended to the snapshot directory ``root``, as ``collect`` does; returns ``root``."""
    from console.pipeline.collect import SnapshotWriter

    writer = SnapshotWriter(root)
    for s in states:
        writer.write(s)
    return root
