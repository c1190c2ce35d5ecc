"""Small builders for ApiView / ZkView, and snapshots merged from them, in unit tests of the pure
core (no Kafka here)."""

from __future__ import annotations

from console.adapters.records import (
    ApiView,
    BrokerInfo,
    BrokerLogDirs,
    PartitionMeta,
    Reassignment,
    TopicZnode,
    ZkView,
)
from console.core.model import BrokerId, ClusterInfo, ClusterMode, ClusterState, Feature, LogDir, SourceStatus
from console.state.merge import merge


def ids(*b: int) -> tuple[BrokerId, ...]:
    return tuple(BrokerId(x) for x in b)


def brokers(n: int = 3) -> tuple[BrokerInfo, ...]:
    return tuple(BrokerInfo(BrokerId(i), "127.0.0.1", 9092 + i, f"r{i}") for i in range(n))


def api(
    parts: dict[tuple[str, int], tuple[list[int], list[int], int | None]],
    lpr: dict[tuple[str, int], tuple[list[int], list[int], list[int]]] | None = None,
    nbrokers: int = 3,
    controller: int = 0,
    **kw: object,
) -> ApiView:
    return ApiView(
        cluster_id="c1",
        controller=BrokerId(controller),
        brokers=brokers(nbrokers)[:nbrokers],
        partitions={
            k: PartitionMeta(ids(*r), ids(*i), BrokerId(ld) if ld is not None else None)
            for k, (r, i, ld) in parts.items()
        },
        reassignments=None
        if lpr is None
        else {k: Reassignment(ids(*r), ids(*a), ids(*d)) for k, (r, a, d) in lpr.items()},
        reassignments_status=SourceStatus.OK if lpr is not None else SourceStatus.UNAVAILABLE,
        **kw,  # type: ignore[arg-type]
    )


def zk(
    topics: dict[str, dict[int, tuple[list[int], list[int], list[int], list[int], int | None]]],
    legacy: dict[tuple[str, int], list[int]] | None = None,
    nbrokers: int = 3,
    controller: int = 0,
    **kw: object,
) -> ZkView:
    """topics: topic -> partition -> (replicas, adding, removing, isr, leader)."""
    tz, states = {}, {}
    for t, parts in topics.items():
        tz[t] = TopicZnode(
            3,
            "id",
            {p: ids(*v[0]) for p, v in parts.items()},
            {p: ids(*v[1]) for p, v in parts.items() if v[1]},
            {p: ids(*v[2]) for p, v in parts.items() if v[2]},
        )
        for p, v in parts.items():
            states[(t, p)] = PartitionMeta(ids(*v[0]), ids(*v[3]), BrokerId(v[4]) if v[4] is not None else None)
    return ZkView(
        controller=BrokerId(controller),
        brokers=brokers(nbrokers),
        topics=tz,
        states=states,
        legacy={k: ids(*v) for k, v in (legacy or {}).items()},
        **kw,  # type: ignore[arg-type]
    )


def snapshot(
    parts: dict[tuple[str, int], list[int]],
    nbrokers: int = 4,
    lpr: dict[tuple[str, int], tuple[list[int], list[int], list[int]]] | None = None,
    sizes: dict[tuple[str, int], int] | None = None,
    usable: dict[int, int] | None = None,
    min_isr: dict[str, int] | None = None,
) -> ClusterState:
    """parts: (topic, partition) -> replicas (all in sync, first leads)."""
    meta: dict[tuple[str, int], tuple[list[int], list[int], int | None]] = {
        k: (list(r), list(r), r[0]) for k, r in parts.items()
    }
    logs = []
    for b in range(nbrokers):
        reps = tuple((t, p, "/data/a", (sizes or {}).get((t, p), 1000), False) for (t, p), r in parts.items() if b in r)
        logs.append(BrokerLogDirs(BrokerId(b), (LogDir("/data/a", None, 10**9, (usable or {}).get(b, 10**9)),), reps))
    return merge(api(meta, lpr=lpr or {}, nbrokers=nbrokers, log_dirs=tuple(logs), min_insync=min_isr or {}), None)


def cluster_info(metadata_level: int | None = 33, api_version: str | None = None) -> ClusterInfo:
    """What a cluster says it is: a KRaft cluster whose brokers support ``metadata.version`` up to
    ``metadata_level`` (33: Kafka 4.4, 29: 4.2, 27: 4.1), or, with None, a cluster without it
    (ZooKeeper mode) of release ``api_version``."""
    features = () if metadata_level is None else (Feature("metadata.version", metadata_level, 7, metadata_level),)
    return ClusterInfo(
        read_at=12.0,
        api_version=api_version,
        mode=ClusterMode.KRAFT if metadata_level is not None else ClusterMode.ZOOKEEPER,
        features=features,
        versions_status=SourceStatus.OK,
        features_status=SourceStatus.OK,
    )
