"""Kafka's own replica assignment (``AdminUtils.assignReplicasToBrokers``), rack-unaware and
rack-aware, as the official tool's ``--generate`` uses it: a random first broker and shift, each
partition's replicas spread from there."""

from __future__ import annotations

import random
from collections.abc import Iterator


def replica_index(first: int, shift: int, j: int, n: int) -> int:
    return (first + 1 + (shift + j) % (n - 1)) % n if n > 1 else first


def firsts(n: int, partitions: int, rnd: random.Random) -> Iterator[tuple[int, int]]:
    """Per partition, AdminUtils' index of its first replica in the broker list and the replica
    shift: round robin from a random start, the shift growing by one every ``n`` partitions."""
    start, shift = rnd.randrange(n), rnd.randrange(n)
    for p in range(partitions):
        if p > 0 and p % n == 0:
            shift += 1
        yield (p + start) % n, shift


def rack_unaware(brokers: list[int], partitions: int, rf: int, rnd: random.Random) -> list[list[int]]:
    n = len(brokers)
    return [
        [brokers[first]] + [brokers[replica_index(first, shift, j, n)] for j in range(rf - 1)]
        for first, shift in firsts(n, partitions, rnd)
    ]


def rack_aware(
    brokers: list[int], racks: dict[int, int], partitions: int, rf: int, rnd: random.Random
) -> list[list[int]]:
    by_rack: dict[int, list[int]] = {}
    for b in sorted(brokers):
        by_rack.setdefault(racks[b], []).append(b)
    order = sorted(by_rack)  # rack codes follow rack names' order
    arranged: list[int] = []
    its = {k: iter(v) for k, v in by_rack.items()}
    k = 0
    while len(arranged) < len(brokers):
        nxt = next(its[order[k]], None)
        if nxt is not None:
            arranged.append(nxt)
        k = (k + 1) % len(order)
    n, n_racks = len(arranged), len(order)
    out = []
    for first, shift in firsts(n, partitions, rnd):
        leader = arranged[first]
        replicas, racks_with, brokers_with = [leader], {racks[leader]}, {leader}
        j = 0
        for _ in range(rf - 1):
            while True:
                b = arranged[replica_index(first, shift * n_racks, j, n)]
                j += 1
                if (racks[b] not in racks_with or len(racks_with) == n_racks) and (
                    b not in brokers_with or len(brokers_with) == n
                ):
                    replicas.append(b)
                    racks_with.add(racks[b])
                    brokers_with.add(b)
                    break
        out.append(replicas)
    return out
