"""Do the estimates come true? Five plan shapes carried out on a sandbox, each announced duration
and each ETA at 25 % done against the duration the run took.

    PYTHONPATH=. .venv/bin/python bench/bench_estimates.py [--rate 25000] [--kb 300] [--only even,...] [--out FILE]

A Kafka 4.x KRaft sandbox of three brokers (two log dirs each). For each shape, its topic is
created and filled (``--kb`` KB per partition), the plan submitted with ``python -m console submit
--throttle RATE --yes`` (the run carried out to the end, as an operator would), and meanwhile the
cluster read every second, as the Live page reads it:

* **announced**: the submit's estimate (:func:`console.services.preflight.preflight`, the one Review, the
  submit dialog, the CLI and Runs show); **old**: the estimate before it counted the bottleneck
  (a wave's bytes over the throttle times the fewer of its senders and receivers);
* **ETA at 25 %**: when a quarter of the plan's bytes are copied, the Live page's headline ETA
  (the last copy in flight, :func:`console.moves.eta.in_flight_eta`) plus the waves not started yet
  (as Runs adds them); **old**: the total bytes left over the total rate observed;
* **actual**: the run's first wave submitted to its last wave completed (the store's times); for
  the ETA, from the 25 % moment to that end.

The shapes: *even* (each broker takes in and sends out the same); *one taking most* (four
partitions onto one broker, one onto another); *one sending most* (one leader sends four
partitions); *dir copies* (two replicas moved between the log dirs of one broker, at the log-dir
throttle); *two waves* (six partitions onto one broker, three adding replicas per wave). Goal: every
figure within ±20 % of the actual. Prints one line per shape and a JSON summary (``--out``).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Shape:
    name: str
    assignment: list[list[int]]
    """Partition ``i`` starts on ``assignment[i]`` (one replica)."""
    target: Callable[[int, list[int]], list[int]]
    """Partition ``i``'s target replicas."""
    moves_per_broker: int = 5
    dirs: bool = False
    """Move partition 0's and 1's replicas to broker 0's other log dir (same broker)."""
    kb_factor: float = 1.0


SHAPES = [
    Shape("even", [[0], [1], [2]], lambda i, now: [(now[0] + 1) % 3], kb_factor=3.0),
    Shape("one taking most", [[0], [0], [1], [1], [0]], lambda i, now: [2] if i < 4 else [1]),
    Shape("one sending most", [[0], [0], [0], [0]], lambda i, now: [1] if i % 2 == 0 else [2]),
    Shape("dir copies", [[0], [0]], lambda i, now: now, dirs=True, kb_factor=1.5),
    Shape("two waves", [[0], [0], [0], [1], [1], [1]], lambda i, now: [2], moves_per_broker=3, kb_factor=0.7),
]


def old_announced(state, waves, rate):  # type: ignore[no-untyped-def]
    """The estimate before the bottleneck: a wave's bytes over the throttle times the fewer of its
    senders and receivers; its dir copies at the throttle, the wave the longer of the two."""
    from console.moves.progress import wave_load

    total = 0.0
    for w in waves:
        load = wave_load(state, w)
        if load is None:
            return None
        seconds = load.copy / (rate * max(1, min(len(load.senders), len(load.receivers)))) if load.copy else 0.0
        if load.dir_copies:
            seconds = max(seconds, max(load.dir_copies.values()) / rate)
        total += seconds
    return total


def one_shape(sb, shape: Shape, rate: int, kb: int, data: Path) -> dict[str, object]:  # type: ignore[no-untyped-def]
    from console.access.settings import ConnectionSettings
    from console.core.format import human_duration
    from console.moves.eta import in_flight_eta
    from console.moves.progress import CopyTracker, bytes_left, estimate_run
    from console.moves.waves import WaveLimits
    from console.plans.logdirs import dir_moves_in_flight
    from console.plans.plan import parse_plan
    from console.present import live
    from console.sandbox.demo import create_assigned_topic, fill
    from console.services.preflight import preflight
    from console.state.reader import ClusterReader
    from console.storage.store import Store

    topic = "est-" + shape.name.replace(" ", "-")
    create_assigned_topic(sb.bootstrap_servers, topic, shape.assignment)
    fill(sb.bootstrap_servers, topic, len(shape.assignment), int(kb * shape.kb_factor))
    with ClusterReader(
        ConnectionSettings({"bootstrap.servers": sb.bootstrap_servers}, name="sandbox", timeout_s=5.0)
    ) as reader:
        for _ in range(60):  # the sizes, once every log is read
            state = reader.snapshot(info=True)
            sizes = [
                state.partition_index[(topic, i)].size_on(state.partition_index[(topic, i)].leader)
                for i in range(len(shape.assignment))
            ]
            if all(s and s >= kb * shape.kb_factor * 1000 * 0.9 for s in sizes):
                break
            time.sleep(1)
        entries = []
        for i, now in enumerate(shape.assignment):
            p = state.partition_index[(topic, i)]
            entry: dict[str, object] = {"topic": topic, "partition": i, "replicas": shape.target(i, now)}
            if shape.dirs and i < 2:
                b = state.broker(p.replicas[0])
                assert b is not None
                current = next(log.log_dir for log in p.logs if log.broker == b.id and not log.is_future)
                entry["log_dirs"] = [next(d.path for d in b.log_dirs if d.path != current)]
            entries.append(entry)
        plan_file = data / f"{topic}.json"
        plan_file.write_text(json.dumps({"version": 1, "partitions": entries}))
        plan = parse_plan(plan_file.read_text())
        limits = WaveLimits(moves_per_broker=shape.moves_per_broker)
        pre = preflight(state, plan, limits, rate)
        announced = pre.eta_s
        old = old_announced(state, pre.waves, rate)
        total = pre.bytes_to_copy + pre.dir_bytes_to_copy
        wave_keys = [[e.key for e in w] for w in pre.waves]
        started = time.time()
        proc = subprocess.Popen(
            [
                sys.executable, "-m", "console", "submit",
                "--bootstrap-server", sb.bootstrap_servers,
                "--reassignment-json-file", str(plan_file),
                "--throttle", str(rate),
                "--max-moves-per-broker", str(shape.moves_per_broker),
                "--name", topic, "--yes", "--no-elect-leaders",
            ],
            cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        )  # fmt: skip
        tracker = CopyTracker()
        at25: dict[str, float] | None = None
        while proc.poll() is None:
            time.sleep(1.0)
            now_state = reader.snapshot()
            tracker.observe(now_state)
            if at25 is not None:
                continue
            moving = {p.key for p in now_state.in_flight} | {
                (m.topic, m.partition) for m in dir_moves_in_flight(now_state)
            }
            started_waves = [w for w in wave_keys if any(k in moving for k in w)]
            if not started_waves:
                continue
            current = next(i for i, w in enumerate(wave_keys) if any(k in moving for k in w))
            later = pre.waves[current + 1 :]
            left_now = bytes_left(now_state, wave_keys[current])
            later_bytes = sum(x for w in later if (x := _load(now_state, w)) is not None)
            if left_now is None:
                continue
            done = 1 - (left_now + later_bytes) / total if total else 1.0
            if done < 0.25:
                continue
            rates, dir_rates = tracker.rates(), tracker.dir_rates()
            eta = in_flight_eta(now_state, rates, dir_rates, None, wave_keys[current])
            after = estimate_run(now_state, later, rate)
            old_live = live.total_estimate(now_state, rates, dir_rates)
            after_s = after.seconds if after else 0.0
            at25 = {
                "at": time.time(),
                "done": done,
                "eta": (eta.seconds or 0.0) + after_s if eta.seconds is not None else -1.0,
                "old_eta": (old_live.eta_s or 0.0) + after_s if old_live.eta_s is not None else -1.0,
                "basis": 0.0,
            }
            print(f"  {shape.name}: {done:.0%} done, ETA {human_duration(at25['eta'])} ({eta.basis})", flush=True)
        err = proc.stderr.read().decode() if proc.stderr else ""
        if proc.returncode != 0:
            raise SystemExit(f"{shape.name}: submit exited {proc.returncode}:\n{err[-2000:]}")
    run = next(r for r in Store().runs.list() if r.name == topic)
    waves = Store().runs.waves(run.id)
    first = min(w.submitted_at for w in waves if w.submitted_at)
    last = max(w.completed_at for w in waves if w.completed_at)
    actual = last - first
    row: dict[str, object] = {
        "shape": shape.name,
        "waves": len(pre.waves),
        "bytes": total,
        "announced_s": announced,
        "old_announced_s": old,
        "actual_s": actual,
        "wall_s": time.time() - started,
    }
    if at25 is not None:
        remaining = last - at25["at"]
        row |= {"eta25_s": at25["eta"], "old_eta25_s": at25["old_eta"], "remaining25_s": remaining}
    return row


def _load(state, wave) -> int | None:  # type: ignore[no-untyped-def]
    from console.moves.progress import wave_load

    load = wave_load(state, wave)
    return None if load is None else load.copy + load.dir_copy


def err(x: object, y: object) -> str:
    if not isinstance(x, float | int) or not isinstance(y, float | int) or not y or x < 0:
        return "n/a"
    return f"{(x / y - 1):+.0%}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rate", type=int, default=25_000, help="the throttle, bytes/s (default 25000)")
    ap.add_argument("--kb", type=int, default=300, help="KB per partition (default 300, times each shape's factor)")
    ap.add_argument("--only", help="comma-separated shape names")
    ap.add_argument("--out", help="write the rows as JSON here")
    args = ap.parse_args()
    data = Path(tempfile.mkdtemp(prefix="bench-estimates-"))
    os.environ["CONSOLE_DATA_DIR"] = str(data / "console")
    from console.sandbox import cluster

    sb = cluster.up(data / "sandbox", brokers=3, log=lambda m: None)
    rows = []
    try:
        for shape in SHAPES:
            if args.only and shape.name not in args.only.split(","):
                continue
            row = one_shape(sb, shape, args.rate, args.kb, data)
            rows.append(row)
            print(
                f"{shape.name:18} {row['waves']} wave(s) {int(row['bytes']) // 1000:6} KB  actual {row['actual_s']:6.1f} s  "  # type: ignore[call-overload]
                f"announced {row['announced_s']:6.1f} s ({err(row['announced_s'], row['actual_s'])}; old "
                f"{err(row['old_announced_s'], row['actual_s'])})  ETA at 25 %: {err(row.get('eta25_s'), row.get('remaining25_s'))} "
                f"(old {err(row.get('old_eta25_s'), row.get('remaining25_s'))})",
                flush=True,
            )
    finally:
        cluster.down(data / "sandbox", log=lambda m: None)
    errors = [abs(float(r["announced_s"]) / float(r["actual_s"]) - 1) for r in rows if r["announced_s"]]  # type: ignore[arg-type]
    if errors:
        print(f"median |announced error| {statistics.median(errors):.0%}; load average {os.getloadavg()}")
    if args.out:
        Path(args.out).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
