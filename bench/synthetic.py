"""Synthetic Admin API and ZooKeeper views of a big cluster (for benchmarks of the pure core)."""

from __future__ import annotations

import random

from console.core.model import BrokerId, SourceStatus
from console.adapters.records import ApiView, BrokerInfo, BrokerLogDirs, PartitionMeta, Reassignment, TopicZnode, ZkView
from console.core.model import LogDir


def views(partitions: int = 100_000, brokers: int = 50, rf: int = 3, per_topic: int = 100,
          reassigning: float = 0.02, seed: int = 1) -> tuple[ApiView, ZkView]:
    rnd = random.Random(seed)
    binfo = tuple(BrokerInfo(BrokerId(i), "10.0.0.%d" % i, 9092, f"rack-{i % 5}") for i in range(brokers))
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
        if rnd.random() < reassigning:
            new = BrokerId(rnd.choice([b for b in range(brokers) if b not in r]))
            adding, removing = (new,), (r[-1],)
            replicas = (new,) + r
            lpr[(t, p)] = Reassignment(replicas, adding, removing)
        parts[(t, p)] = PartitionMeta(replicas, r, r[0])
        z = topics.setdefault(t, TopicZnode(3, "id", {}, {}, {}))
        z.partitions[p] = replicas
        if adding:
            z.adding[p], z.removing[p] = adding, removing
        size = rnd.randint(1, 10**9)
        for b in replicas:
            logs[b].append((t, p, f"/data/{b % 2}", size if b not in adding else size // 2, False))
    dirs = tuple(BrokerLogDirs(BrokerId(b), (LogDir("/data/0", None, 10**12, 5 * 10**11),), tuple(v)) for b, v in logs.items())
    api = ApiView(cluster_id="bench", controller=BrokerId(0), brokers=binfo, partitions=parts, reassignments=lpr,
                  log_dirs=dirs, metadata_status=SourceStatus.OK)
    states = {k: v for k, v in parts.items()}
    zk = ZkView(controller=BrokerId(0), brokers=binfo, topics=topics, states=states)
    return api, zk
