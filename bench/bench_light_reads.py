"""What a minute of Live refreshes asks of the brokers, reading every size each time and reading
them once a minute (the reads in between ask only for the partitions in flight).

On a Kafka 4.4 sandbox of three brokers with ``--topics`` × ``--partitions`` partitions (30 × 300
by default, replication factor 1), ``--moving`` of them in flight (30, of ``--moving-topics``
topics: 3; filled first and throttled so that they stay in flight), one
:class:`~console.state.reader.ClusterReader` takes a snapshot every ``--every`` seconds (the Live
page's refresh, shared by its viewers) for ``--seconds``, in the same run: with ``sizes_every_s`` 0
(every snapshot reads every partition's sizes and every topic's configs: before) and 60 (the
default: after), in the order before, after, after, before (medians of the two rounds of each),
then a window with nothing reading (the brokers' own CPU). Counted through the gateway's request
listeners (:mod:`console.adapters.kafka.requests`): the requests by API and the partitions
DescribeLogDirs named; from this process's own TCP connections to the brokers (``ss -ti``): the
bytes sent and received; the wall time of each refresh; the brokers' CPU (utime + stime of their
processes, /proc). Figures per minute, and after / before.

``PYTHONPATH=. .venv/bin/python bench/bench_light_reads.py [--data-dir DIR] [--topics 30]
[--partitions 300] [--moving 30] [--moving-topics 3] [--seconds 60] [--every 5] [--rounds 2]
[--reuse] [--keep] [--out FILE]``
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.bench_viewers import cpu_s
from console.access.settings import ConnectionSettings
from console.adapters.kafka import KafkaGateway
from console.adapters.kafka.requests import Api, Sent
from console.core.limits import TOPIC_THROTTLE_KEYS
from console.core.model import BrokerId
from console.sandbox import cluster
from console.sandbox.cluster import Sandbox
from console.sandbox.demo import create_assigned_topic, fill, set_broker_rates
from console.state.reader import ClusterReader

THROTTLE = 1_000
"""Bytes/s each broker copies at while measuring: what is moving stays in flight."""


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def topic_name(t: int) -> str:
    return f"light-{t:02d}"


def settings(sb: Sandbox, sizes_every_s: float) -> ConnectionSettings:
    return ConnectionSettings(
        {"bootstrap.servers": sb.bootstrap_servers}, name="light", timeout_s=30.0, sizes_every_s=sizes_every_s
    )


# -- the cluster -------------------------------------------------------------------------------------------
def build(data: Path, topics: int, partitions: int) -> tuple[Sandbox, float]:
    """The sandbox and its topics (partition p on broker p % 3), every log created; how long it took."""
    t0 = time.monotonic()
    sb = cluster.up(data, brokers=3, log=log, timeout=600)
    for t in range(topics):
        create_assigned_topic(sb.bootstrap_servers, topic_name(t), [[p % 3] for p in range(partitions)])
    kafka = KafkaGateway(settings(sb, 0))
    try:
        while True:
            _, _, _, parts = kafka.reads.read_metadata()
            if (
                sum(1 for k, m in parts.items() if k[0].startswith("light-") and m.leader is not None)
                >= topics * partitions
            ):
                break
            time.sleep(2)
    finally:
        kafka.close()
    return sb, time.monotonic() - t0


def put_in_flight(sb: Sandbox, topics: int, moving: int) -> list[tuple[str, int]]:
    """``moving`` partitions of the first ``topics`` topics (spread over them, each on broker 0 with
    200 KB) moved to broker 1 by another client, throttled to :data:`THROTTLE` so that they stay in
    flight."""
    bs = sb.bootstrap_servers
    keys = [(topic_name(i % topics), 3 * (i // topics)) for i in range(moving)]  # partitions on broker 0
    for t in sorted({t for t, _ in keys}):
        fill(bs, t, 1 + max(p for tt, p in keys if tt == t), 200, timeout_s=600)
    set_broker_rates(bs, [0, 1, 2], THROTTLE)
    kafka = KafkaGateway(settings(sb, 0))
    try:
        kafka.alter_configs({}, {t: dict.fromkeys(TOPIC_THROTTLE_KEYS, "*") for t in {t for t, _ in keys}})
        out = kafka.alter_reassignments({k: (BrokerId(1),) for k in keys})
        assert all(o.accepted for o in out.values()), [o for o in out.values() if not o.accepted][:3]
    finally:
        kafka.close()
    return keys


def take_back(sb: Sandbox, keys: list[tuple[str, int]]) -> None:
    """Cancel what :func:`put_in_flight` moved and take its throttles off."""
    kafka = KafkaGateway(settings(sb, 0))
    try:
        kafka.alter_reassignments(dict.fromkeys(keys))
        kafka.alter_configs(
            {
                BrokerId(b): dict.fromkeys(("leader.replication.throttled.rate", "follower.replication.throttled.rate"))
                for b in range(3)
            },
            {t: dict.fromkeys(TOPIC_THROTTLE_KEYS) for t in {t for t, _ in keys}},
        )
    finally:
        kafka.close()


# -- what this process sent and received ----------------------------------------------------------------------
def socket_bytes(ports: set[int]) -> tuple[int, int]:
    """Bytes this process sent and received on its open TCP connections to ``ports`` (``ss -ti``)."""
    out = subprocess.run(["ss", "-tinpH"], capture_output=True, text=True, check=True).stdout
    sent = received = 0
    me = f"pid={os.getpid()},"
    mine = False
    for line in out.splitlines():
        if not line[:1].isspace():  # a connection; its figures on the indented line under it
            cols = line.split()
            peer = cols[4].rsplit(":", 1)[-1] if len(cols) > 4 else ""
            mine = me in line and peer.isdigit() and int(peer) in ports
            continue
        if mine:
            sent += sum(int(x) for x in re.findall(r"bytes_sent:(\d+)", line))
            received += sum(int(x) for x in re.findall(r"bytes_received:(\d+)", line))
            mine = False
    return sent, received


def minute_of_refreshes(sb: Sandbox, sizes_every_s: float, seconds: float, every: float) -> dict[str, Any]:
    """One reader refreshing every ``every`` seconds for ``seconds``: what it asked, sent, received,
    how long each refresh took, the brokers' CPU; scaled to a minute."""
    told: list[Sent] = []
    ports = {int(hp.rsplit(":", 1)[1]) for hp in sb.bootstrap_servers.split(",")}
    pids = [p.pid for p in sb.procs if p.pid]
    reader = ClusterReader(settings(sb, sizes_every_s))
    reader.kafka.requests.listen(told.append)
    cpu0 = sum(cpu_s(pid) for pid in pids)
    took: list[float] = []
    in_flight = 0
    t0 = time.monotonic()
    try:
        while time.monotonic() - t0 < seconds:
            started = time.monotonic()
            state = reader.snapshot()
            took.append(time.monotonic() - started)
            in_flight = len(state.in_flight)
            time.sleep(max(0.0, every - (time.monotonic() - started)))
        sent, received = socket_bytes(ports)  # the reader's connections, before they close
    finally:
        reader.close()
    span = time.monotonic() - t0
    per_min = 60.0 / span
    apis = Counter(s.api.value for s in told)
    return {
        "sizes_every_s": sizes_every_s,
        "refreshes": len(took),
        "in_flight": in_flight,
        "log_dirs_partitions_per_min": round(sum(s.items for s in told if s.api is Api.DESCRIBE_LOG_DIRS) * per_min),
        "topic_configs_per_min": round(
            sum(s.items for s in told if s.api is Api.DESCRIBE_CONFIGS and s.broker is None) * per_min
        ),
        "requests_per_min": {k: round(v * per_min, 1) for k, v in sorted(apis.items())},
        "bytes_sent_per_min": round(sent * per_min),
        "bytes_received_per_min": round(received * per_min),
        "refresh_s": {
            "median": round(statistics.median(took), 3),
            "first": round(took[0], 3),
            "max": round(max(took), 3),
        },
        "brokers_cpu_s_per_min": round((sum(cpu_s(pid) for pid in pids) - cpu0) * per_min, 2),
    }


def idle_cpu(sb: Sandbox, seconds: float) -> float:
    """The brokers' CPU seconds per minute with nothing reading them."""
    pids = [p.pid for p in sb.procs if p.pid]
    cpu0, t0 = sum(cpu_s(pid) for pid in pids), time.monotonic()
    time.sleep(seconds)
    return round((sum(cpu_s(pid) for pid in pids) - cpu0) * 60 / (time.monotonic() - t0), 2)


def medians(rounds: list[dict[str, Any]]) -> dict[str, Any]:
    """The rounds of one setting as one: each figure's median (the counts are the same in each)."""
    first = rounds[0]
    out = dict(first)
    for key in ("bytes_sent_per_min", "bytes_received_per_min", "brokers_cpu_s_per_min", "log_dirs_partitions_per_min"):
        out[key] = statistics.median(r[key] for r in rounds)
    out["refresh_s"] = {k: statistics.median(r["refresh_s"][k] for r in rounds) for k in first["refresh_s"]}
    return out


def ratios(before: dict[str, Any], after: dict[str, Any]) -> dict[str, float]:
    keys = ("log_dirs_partitions_per_min", "topic_configs_per_min", "bytes_sent_per_min", "bytes_received_per_min")
    out = {k: round(after[k] / before[k], 3) for k in keys if before[k]}
    out["refresh_median_s"] = round(after["refresh_s"]["median"] / before["refresh_s"]["median"], 3)
    if before["brokers_cpu_s_per_min"]:
        out["brokers_cpu_s_per_min"] = round(after["brokers_cpu_s_per_min"] / before["brokers_cpu_s_per_min"], 3)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-dir", type=Path, default=Path(tempfile.gettempdir()) / "bench-light-reads")
    ap.add_argument("--topics", type=int, default=30)
    ap.add_argument("--partitions", type=int, default=300)
    ap.add_argument("--moving", type=int, default=30)
    ap.add_argument("--moving-topics", type=int, default=3, help="how many topics the partitions in flight are of")
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--every", type=float, default=5.0)
    ap.add_argument("--rounds", type=int, choices=(1, 2), default=2, help="2: before, after, after, before")
    ap.add_argument("--reuse", action="store_true", help="measure on the sandbox already running in --data-dir")
    ap.add_argument("--keep", action="store_true", help="leave the sandbox running")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    data = args.data_dir.resolve()
    results: dict[str, Any] = {"machine": {"cpus": os.cpu_count(), "load": os.getloadavg()}}
    if args.reuse:
        found = cluster.status(data)
        assert found is not None, f"no sandbox runs in {data}"
        sb = found
    else:
        sb, results["build_s"] = build(data, args.topics, args.partitions)
        log(f"built in {results['build_s']:.0f} s")
    keys: list[tuple[str, int]] = []
    try:
        keys = put_in_flight(sb, min(args.moving_topics, args.topics), args.moving)
        rounds: dict[str, list[dict[str, Any]]] = {"before": [], "after": []}
        for label in ("before", "after", "after", "before")[: 2 * args.rounds]:  # ABBA: a drift in load cancels
            got = minute_of_refreshes(sb, 0.0 if label == "before" else 60.0, args.seconds, args.every)
            rounds[label].append(got)
            log(f"{label}: {json.dumps(got)}")
        for label, got in rounds.items():
            results[label] = medians(got)
        results["rounds"] = rounds
        results["after_over_before"] = ratios(results["before"], results["after"])
        results["idle_brokers_cpu_s_per_min"] = idle_cpu(sb, args.seconds)  # last: the fill has settled
        log(f"idle: brokers' CPU {results['idle_brokers_cpu_s_per_min']} s/min")
        results["machine"]["load_after"] = os.getloadavg()
    finally:
        print(json.dumps(results, indent=2))
        if args.out:
            args.out.write_text(json.dumps(results, indent=2))
        if keys:
            take_back(sb, keys)
        if not args.keep:
            cluster.down(data, log=log)


if __name__ == "__main__":
    main()
