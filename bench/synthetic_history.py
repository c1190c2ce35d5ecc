"""A synthetic day of snapshots, written in the collector's format without building a
``ClusterState`` per snapshot (numpy columns, pyarrow files): the input of the pipeline's bench.

The cluster: ``partitions`` partitions of RF 3 on ``brokers`` brokers (three racks), Pareto sizes
and write rates (logs grow between snapshots and drop a segment when they pass their retention).
The day: ``events`` reassignments, each moving ``per_event`` partitions one replica each under a
throttle (the new replica's log grows at the throttle's share until it has the leader's bytes),
and one broker restart (its replicas out of the ISR for two minutes: truly under-replicated).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa

from console.pipeline.collect import HEADERS, REPLICAS, write_parquet
from console.pipeline.snapshots import HEADER_SCHEMA, REPLICA_SCHEMA, ROWS_FORMAT

DAY_START = 1_790_035_200  # 2026-09-22 00:00 UTC
SEGMENT = 64 * 2**20


@dataclass
class Day:
    partitions: int = 10_000
    brokers: int = 12
    every_s: int = 30
    hours: float = 24.0
    events: int = 4
    per_event: int = 150
    throttle: int = 20 * 2**20
    seed: int = 1

    @property
    def snapshots(self) -> int:
        return int(self.hours * 3600 / self.every_s)


def rack_spread(rng: np.random.Generator, n: int, brokers: int, rf: int) -> tuple[list[np.ndarray], np.ndarray]:
    """Brokers by rack (broker b on rack b % 3), and an assignment of ``n`` partitions whose replica
    ``j`` of partition ``p`` sits on rack ``(p + j) % 3``, on a random broker of that rack."""
    per_rack = [np.arange(brokers)[np.arange(brokers) % 3 == r] for r in range(3)]
    assign = np.zeros((n, rf), np.int64)
    for j in range(rf):
        rack = (np.arange(n) + j) % 3
        for r in range(3):
            idx = np.nonzero(rack == r)[0]
            assign[idx, j] = rng.choice(per_rack[r], size=len(idx))
    return per_rack, assign


def write_day(day: Day, root: Path, cluster: str = "bench-cluster") -> dict[str, int]:
    """Write the day under ``root`` (one file per snapshot per dataset, as ``collect`` does); returns
    counts: snapshots, replica rows, moves started."""
    rng = np.random.default_rng(day.seed)
    n, rf, nb = day.partitions, 3, day.brokers
    racks = np.array([f"rack-{'abc'[b % 3]}" for b in range(nb)])
    per_rack, assign = rack_spread(rng, n, nb, rf)
    size = (rng.pareto(1.2, n) * 50 * 2**20).astype(np.int64)
    retention = np.maximum(size, SEGMENT)
    rate = (rng.pareto(1.5, n) * 2_000).astype(np.int64)  # bytes per second written to each partition
    topics = np.array([f"topic-{i % 50:02d}" for i in range(n)])
    parts = np.arange(n) // 50
    steps = day.snapshots
    # moves: (start step, partition, replica position, destination, steps it takes)
    moves = []
    everyone = rng.choice(n, size=min(n, day.events * day.per_event), replace=False)
    for k in range(day.events):
        start = int((k + 0.5) * steps / max(day.events, 1))
        for p in everyone[k * day.per_event : (k + 1) * day.per_event]:
            pos = int(rng.integers(rf))
            old = assign[p, pos]
            same_rack = [b for b in per_rack[old % 3] if b not in assign[p]]
            if not same_rack:
                continue
            dest = int(rng.choice(same_rack))
            share = day.throttle / 5  # five moves per broker at once share its throttle
            took = max(1, int(np.ceil(size[p] / share / day.every_s)))
            moves.append((start + int(rng.integers(0, 10)), int(p), pos, dest, took))
    restart_at, restart_broker = int(steps * 0.3), int(rng.integers(nb))
    header_doc = {
        "format": 1,
        "name": cluster,
        "cluster_id": cluster,
        "controller": 0,
        "status": dict.fromkeys(("metadata", "reassignments", "log_dirs", "configs", "zookeeper"), "ok"),
        "brokers": [
            {"id": b, "host": "h", "port": 9092, "rack": str(racks[b]), "registered": True, "in_api": True}
            for b in range(nb)
        ],
        "throttles": {"brokers": {}, "topics": {}},
        "min_insync": {},
        "findings": [],
    }
    header_json = json.dumps(header_doc)
    where = Path(f"cluster={cluster}")
    active: dict[int, tuple[int, int, int, int]] = {}  # partition -> (pos, dest, start, took)
    by_start: dict[int, list[tuple[int, int, int, int]]] = {}
    for s, p, pos, dest, took in moves:
        by_start.setdefault(s, []).append((p, pos, dest, took))
    rows_total = 0
    leader = assign[:, 0].copy()
    written = np.zeros(n, np.int64)
    for i in range(steps):
        t = DAY_START + i * day.every_s
        for p, pos, dest, took in by_start.get(i, []):
            if p not in active:
                active[p] = (pos, dest, i, took)
        done = [p for p, (pos, dest, s, took) in active.items() if i >= s + took]
        for p in done:
            pos, dest, _, _ = active.pop(p)
            assign[p, pos] = dest
            leader[p] = assign[p, 0]
        # writes are uneven: each interval adds the partition's rate times a log-normal factor
        written += (rate * day.every_s * rng.lognormal(0.0, 0.5, n)).astype(np.int64)
        logs = size + written % retention
        broker = assign.reshape(-1)
        pidx = np.repeat(np.arange(n), rf)
        isr = np.ones(n * rf, bool)
        if restart_at <= i < restart_at + 4:
            isr = broker != restart_broker
        moving = np.zeros(n, bool)
        moving[list(active)] = True
        removing = np.zeros(n * rf, bool)
        for p, (pos, _dest, _s, _took) in active.items():
            removing[p * rf + pos] = True
        urp = np.zeros(n, bool)
        np.logical_or.at(urp, pidx, ~isr)
        extra_p = np.fromiter(active, np.int64, len(active))
        extra_b = np.array([active[p][1] for p in extra_p], np.int64)
        extra_bytes = np.array(
            [min(size[p], int((i - active[p][2]) * day.throttle / 5 * day.every_s)) for p in extra_p], np.int64
        )
        all_p = np.concatenate([pidx, extra_p])
        all_b = np.concatenate([broker, extra_b])
        position = np.concatenate([np.tile(np.arange(rf), n), np.full(len(extra_p), rf)]).astype(np.int16)
        adding = np.concatenate([np.zeros(n * rf, bool), np.ones(len(extra_p), bool)])
        throttled = moving[all_p]
        table = pa.table(
            {
                "taken_at": pa.array(np.full(len(all_p), t * 1000, np.int64), pa.timestamp("ms", "UTC")),
                "topic": pa.array(topics[all_p]),
                "partition": pa.array(parts[all_p].astype(np.int32)),
                "broker": pa.array(all_b.astype(np.int32)),
                "position": pa.array(position),
                "rack": pa.array(racks[all_b]),
                "leader": pa.array(leader[all_p].astype(np.int32)),
                "is_leader": pa.array(all_b == leader[all_p]),
                "in_isr": pa.array(np.concatenate([isr, extra_bytes >= size[extra_p]])),
                "adding": pa.array(adding),
                "removing": pa.array(np.concatenate([removing, np.zeros(len(extra_p), bool)])),
                "reassigning": pa.array(moving[all_p]),
                "under_replicated": pa.array(urp[all_p]),
                "source": pa.array(np.where(moving[all_p], "api", None)),
                "bytes": pa.array(np.concatenate([logs[pidx], extra_bytes])),
                "log_dir": pa.array(np.full(len(all_p), "/data/kafka")),
                "future_bytes": pa.nulls(len(all_p), pa.int64()),
                "future_log_dir": pa.nulls(len(all_p), pa.string()),
                "leader_rate": pa.array(np.full(len(all_p), day.throttle, np.int64), mask=~throttled),
                "follower_rate": pa.array(np.full(len(all_p), day.throttle, np.int64), mask=~throttled),
                "leader_throttled": pa.array(throttled),
                "follower_throttled": pa.array(throttled & adding),
            },
            schema=REPLICA_SCHEMA,
        )
        date = f"date={np.datetime64(t, 's').astype('datetime64[D]')}"
        name = f"part-{t * 1000}.parquet"
        write_parquet(table, root / REPLICAS / where / date / name)
        header = pa.Table.from_pylist(
            [
                {
                    "taken_at": t * 1000,
                    "format": ROWS_FORMAT,
                    "cluster_id": cluster,
                    "name": cluster,
                    "fingerprint": "",
                    "partitions": n,
                    "replicas": len(all_p),
                    "reassigning": int(moving.sum()),
                    "under_replicated": int(urp.sum()),
                    "offline": 0,
                    "logs_known": True,
                    "header": header_json,
                }
            ],
            schema=HEADER_SCHEMA,
        )
        write_parquet(header, root / HEADERS / where / date / name)
        rows_total += len(all_p)
    return {"snapshots": steps, "rows": rows_total, "moves": len(moves)}
