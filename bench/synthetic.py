"""Synthetic Admin API and ZooKeeper views of a big cluster (for benchmarks of the pure core)."""

from __future__ import annotations

import random

from console.adapters.records import ApiView, BrokerInfo, BrokerLogDirs, PartitionMeta, Reassignment, TopicZnode, ZkView
from console.core.model import BrokerId, ClusterState, LogDir, SourceStatus
from console.core.perf import without_gc


def views(
    partitions: int = 100_000,
    brokers: int = 50,
    rf: int = 3,
    per_topic: int = 100,
    reassigning: float = 0.02,
    seed: int = 1,
    in_flight: int | None = None,
) -> tuple[ApiView, ZkView]:
    """``reassigning``: the share of partitions in flight, drawn at random; ``in_flight``: exactly
    that many instead (chosen at random)."""
    rnd = random.Random(seed)
    moving = set(random.Random(seed + 1).sample(range(partitions), in_flight)) if in_flight is not None else None
    binfo = tuple(BrokerInfo(BrokerId(i), f"10.0.0.{i}", 9092, f"rack-{i % 5}") for i in range(brokers))
    parts: dict[tuple[str, int], PartitionMeta] = {}
    lpr: dict[tuple[str, int], Reassignment] = {}
    topics: dict[str, TopicZnode] = {}
    logs: dict[int, list[tuple[str, int, str, int, bool]]] = {i: [] for i in range(brokers)}
    for n in range(partitions):
        t, p = f"topic-{n // per_topic:05d}", n % per_topic
        r = tuple(BrokerId(b) for b in rnd.sample(range(brokers), rf))
        adding: tuple[BrokerId, ...] = ()
        removing: tuple[BrokerId, ...] = ()
        replicas = r
        if (n in moving) if moving is not None else rnd.random() < reassigning:
            new = BrokerId(rnd.choice([b for b in range(brokers) if b not in r]))
            adding, removing = (new,), (r[-1],)
            replicas = (new, *r)
            lpr[(t, p)] = Reassignment(replicas, adding, removing)
        parts[(t, p)] = PartitionMeta(replicas, r, r[0])
        z = topics.setdefault(t, TopicZnode(3, "id", {}, {}, {}))
        z.partitions[p] = replicas
        if adding:
            z.adding[p], z.removing[p] = adding, removing
        size = rnd.randint(1, 10**9)
        for b in replicas:
            logs[b].append((t, p, f"/data/{b % 2}", size if b not in adding else size // 2, False))
    dirs = tuple(
        BrokerLogDirs(BrokerId(b), (LogDir("/data/0", None, 10**12, 5 * 10**11),), tuple(v)) for b, v in logs.items()
    )
    api = ApiView(
        cluster_id="bench",
        controller=BrokerId(0),
        brokers=binfo,
        partitions=parts,
        reassignments=lpr,
        log_dirs=dirs,
        metadata_status=SourceStatus.OK,
    )
    states = dict(parts.items())
    zk = ZkView(controller=BrokerId(0), brokers=binfo, topics=topics, states=states)
    return api, zk


@without_gc
def cluster_state(
    partitions: int = 100_000,
    brokers: int = 50,
    rf: int = 3,
    racks: int = 5,
    per_topic: int = 100,
    pareto: float = 1.2,
    skew: float = 0.0,
    empty: int = 0,
    seed: int = 1,
) -> ClusterState:
    """A snapshot built directly (no merge): partition sizes from a Pareto distribution (a few huge,
    most small), replicas rack-spread at random, ``skew`` of the partitions' first replica pinned to
    the lowest brokers (a lopsided cluster), and ``empty`` brokers with nothing on them (just added)."""
    from console.core.model import Broker, ClusterState, Partition, ReadStatus, ReplicaLog

    rnd = random.Random(seed)
    bl = tuple(
        Broker(BrokerId(i), "10.0.0.1", 9092, f"rack-{i % racks}" if racks else None, registered=True, in_api=True)
        for i in range(brokers)
    )
    filled = list(range(brokers - empty))
    crowded = filled[: max(rf * max(racks, 1), len(filled) // 4)]
    filled_racks, crowded_racks = _racks_of(filled, racks), _racks_of(crowded, racks)
    parts = []
    for n in range(partitions):
        t, p = f"topic-{n // per_topic:05d}", n % per_topic
        r = _spread(rnd, crowded_racks if skew and rnd.random() < skew else filled_racks, rf)
        size = int(min(rnd.paretovariate(pareto) * 10**7, 10**12))
        logs = tuple(ReplicaLog(BrokerId(b), "/data", size) for b in r)
        ids_ = tuple(BrokerId(b) for b in r)
        parts.append(Partition(t, p, ids_, ids_, ids_[0], logs=logs))
    status = ReadStatus(SourceStatus.OK, SourceStatus.OK, SourceStatus.OK, SourceStatus.OK, SourceStatus.NOT_CONFIGURED)
    return ClusterState(0.0, bl, tuple(parts), cluster_id="synthetic", status=status, name="synthetic")


def _spread(rnd: random.Random, by_rack: dict[int, list[int]], rf: int) -> list[int]:
    """``rf`` brokers on different racks (``by_rack``: rack → its brokers) while racks last."""
    chosen: list[int] = []
    order = rnd.sample(sorted(by_rack), len(by_rack))
    while len(chosen) < rf:
        for k in order:
            if len(chosen) < rf:
                b = rnd.choice(by_rack[k])
                if b not in chosen:
                    chosen.append(b)
    return chosen


def _racks_of(pool: list[int], racks: int) -> dict[int, list[int]]:
    out: dict[int, list[int]] = {}
    for b in pool:
        out.setdefault(b % racks if racks else 0, []).append(b)
    return out
