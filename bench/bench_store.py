"""The store on both back ends: a run of 10,000 partitions in 20 waves recorded as the executor
records it and read back, and the audit log at 1M entries read and exported as the Runs page does.

    PYTHONPATH=. .venv/bin/python bench/bench_store.py [--partitions 10000] [--waves 20] [--audit 1000000] [--only sqlite|postgresql]

SQLite: a file in a temporary directory. PostgreSQL: a throwaway local cluster (Debian's server,
as the tests start it: ``tests/postgres.py``), over TCP on 127.0.0.1. Prints one line per figure.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from console.core.model import Outcome
from console.core.states import WaveState
from console.present import history
from console.storage.runs import NewRun, RunLimits
from console.storage.store import Store

T = TypeVar("T")
CLUSTER = "bench"


def timed(label: str, fn: Callable[[], T]) -> T:
    start = time.perf_counter()
    out = fn()
    print(f"  {label:<46} {time.perf_counter() - start:8.2f} s", flush=True)
    return out


def record_run(store: Store, partitions: int, waves: int) -> int:
    """The run as start_run records it, then each wave as the executor takes it: intent, answers,
    throttle ledger, progress, completion, with their audit entries."""
    per = partitions // waves
    entries = [
        [{"topic": f"t{p // 100}", "partition": p % 100, "replicas": [1, 2, 3]} for p in range(w * per, (w + 1) * per)]
        for w in range(waves)
    ]
    wave_json = [json.dumps({"version": 1, "partitions": e}) for e in entries]
    plan = json.dumps({"version": 1, "partitions": [x for e in entries for x in e]})
    keys = [(x["topic"], x["partition"]) for e in entries for x in e]
    run_id = store.runs.create(
        NewRun(CLUSTER, "big", "ann", plan, plan, "h", wave_json, keys, 10**7, RunLimits(5, 500, None))
    )
    for n, wave in enumerate(entries, start=1):
        with store.transaction():
            store.runs.ledger_add(run_id, n, "broker", "1", "leader.replication.throttled.rate", None, "10000000")
            store.audit.record("ann", CLUSTER, "throttle-set", {"run": run_id, "wave": n}, "sending")
        with store.transaction():
            store.runs.set_wave(run_id, n, WaveState.SUBMITTING)
            intent = store.audit.record("ann", CLUSTER, "submit-wave", {"run": run_id, "wave": n}, "sending")
        with store.transaction():
            store.runs.add_outcomes(run_id, n, [Outcome(x["topic"], x["partition"], True, None, None) for x in wave])
            store.audit.record("ann", CLUSTER, "submit-wave", {}, "accepted", ref=intent)
            store.runs.set_wave(run_id, n, WaveState.RUNNING)
        for k in range(5):
            store.runs.note_progress(run_id, f"{n}:{k}", time.time())
        with store.transaction():
            store.runs.set_wave(run_id, n, WaveState.COMPLETED)
            store.audit.record("ann", CLUSTER, "wave-complete", {"run": run_id, "wave": n}, "completed")
    return run_id


def fill_audit(store: Store, n: int) -> None:
    row = ("ann", CLUSTER, "submit-wave", "h", '{"run": 1, "wave": 3}', None, "sending")
    batch = 10_000
    for start in range(0, n, batch):
        with store.transaction():
            store.db.executemany(
                "INSERT INTO audit (at, user, cluster, action, plan_hash, request, response, outcome) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [(time.time(), *row) for _ in range(min(batch, n - start))],
            )


def bench(location: str, args: argparse.Namespace) -> None:
    store = Store(location)
    run_id = timed(
        f"run: {args.partitions:,} partitions in {args.waves} waves recorded",
        lambda: record_run(store, args.partitions, args.waves),
    )
    detail = timed("run read back (waves and outcomes)", lambda: store.runs.detail(run_id))
    assert len(detail.outcomes) == args.partitions and len(detail.waves) == args.waves
    timed("runs list (the Runs page)", lambda: store.runs.list(CLUSTER))
    timed(f"audit log: {args.audit:,} entries written (batches of 10k)", lambda: fill_audit(store, args.audit))
    entries = timed("audit log read (the Runs page's query)", lambda: store.audit.entries(clusters=(CLUSTER, "*")))
    assert len(entries) >= args.audit
    csv = timed("audit log exported as CSV", lambda: history.audit_csv(entries, {}))
    timed("audit log exported as JSON", lambda: history.audit_json(entries, {}))
    print(f"  CSV: {len(csv) / 1e6:.0f} MB", flush=True)
    store.close()


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--partitions", type=int, default=10_000)
    p.add_argument("--waves", type=int, default=20)
    p.add_argument("--audit", type=int, default=1_000_000)
    p.add_argument("--only", choices=("sqlite", "postgresql"))
    args = p.parse_args()
    print(f"load average: {' '.join(f'{x:.1f}' for x in os.getloadavg())}", flush=True)
    if args.only != "postgresql":
        with tempfile.TemporaryDirectory() as tmp:
            print("SQLite (a file, WAL, synchronous=FULL)", flush=True)
            bench(str(Path(tmp) / "console.db"), args)
    if args.only != "sqlite":
        from tests import postgres

        server = postgres.start(durable=True)
        try:
            print(f"PostgreSQL {postgres.bin_dir().parts[-2]} (local, TCP, fsync on)", flush=True)
            bench(server.new_database("bench"), args)
        finally:
            server.stop()
    print(f"load average: {' '.join(f'{x:.1f}' for x in os.getloadavg())}", flush=True)


if __name__ == "__main__":
    main()
