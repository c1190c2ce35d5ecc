"""The console's store: saved plans (drafts) and review notes, in SQLite (WAL) under the data dir.

One file, ``console.db``, in ``$CONSOLE_DATA_DIR`` (default ``~/.local/share/reassignment-console``).
Every plan is kept with its rollback JSON, the snapshot fingerprint it was drafted against, and
each partition's replicas at that time (the stale check). Writes are short transactions, so the
Streamlit server, the CLI and a standalone executor can share the file.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import msgspec

from console.core.errors import ConsoleError
from console.core.paths import store_file
from console.core.model import BrokerId, TopicPartition
from console.plans.plan import Plan, parse_plan

SCHEMA = """
CREATE TABLE IF NOT EXISTS plans (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    name          TEXT NOT NULL,
    cluster       TEXT NOT NULL,
    author        TEXT NOT NULL,
    created_at    REAL NOT NULL,
    updated_at    REAL NOT NULL,
    partitions    INTEGER NOT NULL,
    fingerprint   TEXT,
    plan_json     TEXT NOT NULL,
    rollback_json TEXT NOT NULL,
    basis_json    TEXT NOT NULL,
    UNIQUE (cluster, name)
);
CREATE TABLE IF NOT EXISTS plan_notes (
    id        INTEGER PRIMARY KEY AUTOINCREMENT,
    plan_id   INTEGER NOT NULL REFERENCES plans(id),
    author    TEXT NOT NULL,
    at        REAL NOT NULL,
    note      TEXT NOT NULL
);
-- Approvals of a plan (the two-person rule): of that exact content (plan_hash).
CREATE TABLE IF NOT EXISTS plan_approvals (
    plan_id   INTEGER NOT NULL REFERENCES plans(id),
    approver  TEXT NOT NULL,
    at        REAL NOT NULL,
    plan_hash TEXT NOT NULL
);
-- Every change the console makes to a cluster: the intent is written before the request is
-- sent, the answer after (ref points at the intent). Append-only, enforced.
CREATE TABLE IF NOT EXISTS audit (
    id        INTEGER PRIMARY KEY AUTOINCREMENT,
    ref       INTEGER REFERENCES audit(id),
    at        REAL NOT NULL,
    user      TEXT NOT NULL,
    cluster   TEXT NOT NULL,
    action    TEXT NOT NULL,
    plan_hash TEXT,
    request   TEXT NOT NULL,
    response  TEXT,
    outcome   TEXT NOT NULL
);
-- Runs: a plan carried out in waves. Every state is written before the side effect it announces.
CREATE TABLE IF NOT EXISTS runs (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    cluster          TEXT NOT NULL,
    name             TEXT NOT NULL,
    author           TEXT NOT NULL,
    created_at       REAL NOT NULL,
    updated_at       REAL NOT NULL,
    state            TEXT NOT NULL,
    plan_json        TEXT NOT NULL,
    rollback_json    TEXT NOT NULL,
    plan_hash        TEXT NOT NULL,
    rate             INTEGER,
    moves_per_broker INTEGER NOT NULL,
    per_request      INTEGER NOT NULL,
    bytes_per_wave   INTEGER,
    path             TEXT NOT NULL DEFAULT 'api',
    owner            TEXT,
    lease_until      REAL
);
CREATE TABLE IF NOT EXISTS waves (
    run_id       INTEGER NOT NULL REFERENCES runs(id),
    number       INTEGER NOT NULL,
    state        TEXT NOT NULL,
    entries_json TEXT NOT NULL,
    submitted_at REAL,
    completed_at REAL,
    PRIMARY KEY (run_id, number)
);
CREATE TABLE IF NOT EXISTS outcomes (
    run_id    INTEGER NOT NULL REFERENCES runs(id),
    wave      INTEGER NOT NULL,
    topic     TEXT NOT NULL,
    partition INTEGER NOT NULL,
    accepted  INTEGER NOT NULL,
    code      TEXT,
    message   TEXT,
    at        REAL NOT NULL
);
-- What the console set on brokers and topics, and what was there before.
CREATE TABLE IF NOT EXISTS throttle_ledger (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id      INTEGER NOT NULL REFERENCES runs(id),
    wave        INTEGER NOT NULL,
    kind        TEXT NOT NULL,
    name        TEXT NOT NULL,
    key         TEXT NOT NULL,
    before      TEXT,
    added       TEXT NOT NULL,
    set_at      REAL NOT NULL,
    restored_at REAL
);
CREATE TRIGGER IF NOT EXISTS audit_append_only_update BEFORE UPDATE ON audit
BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;
CREATE TRIGGER IF NOT EXISTS audit_append_only_delete BEFORE DELETE ON audit
BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;
"""


class StoreError(ConsoleError):
    """The store could not be read or written."""



@dataclass(frozen=True)
class PlanSummary:
    id: int
    name: str
    cluster: str
    author: str
    created_at: float
    updated_at: float
    partitions: int
    fingerprint: str | None


@dataclass(frozen=True)
class SavedPlan:
    summary: PlanSummary
    plan: Plan
    rollback_json: str


ACTIVE_RUN_STATES = ("running", "paused", "stopping")


class ConflictError(StoreError):
    """Another active run already moves some of the plan's partitions."""


@dataclass(frozen=True)
class Run:
    id: int
    cluster: str
    name: str
    author: str
    created_at: float
    updated_at: float
    state: str
    plan_json: str
    rollback_json: str
    plan_hash: str
    rate: int | None
    moves_per_broker: int
    per_request: int
    bytes_per_wave: int | None
    path: str = "api"
    """"api" (AlterPartitionReassignments) or "zookeeper" (the pre-2.4 znode: no cancel)."""

    @property
    def active(self) -> bool:
        return self.state in ACTIVE_RUN_STATES


@dataclass(frozen=True)
class WaveRow:
    run_id: int
    number: int
    state: str
    entries_json: str
    submitted_at: float | None
    completed_at: float | None


@dataclass(frozen=True)
class LedgerEntry:
    id: int
    run_id: int
    wave: int
    kind: str
    """"broker" or "topic"."""
    name: str
    key: str
    before: str | None
    added: str
    """Topic lists: the entries the console added (comma-separated); broker rates: the rate set."""
    set_at: float
    restored_at: float | None


@dataclass(frozen=True)
class AuditEntry:
    id: int
    ref: int | None
    at: float
    user: str
    cluster: str
    action: str
    plan_hash: str | None
    request: str
    """JSON."""
    response: str | None
    """JSON, on the entry that records the answer."""
    outcome: str


@dataclass(frozen=True)
class Note:
    author: str
    at: float
    note: str


class Store:
    """Thread-safe handle on the SQLite file (one connection per thread)."""

    def __init__(self, path: Path | str | None = None) -> None:
        self.path = Path(path) if path is not None else store_file()
        self._local = threading.local()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db().executescript(SCHEMA)  # runs in its own transaction
        except (OSError, sqlite3.Error) as e:
            raise StoreError(f"Cannot open the console's store at {self.path}: {e}.",
                             "Check that the data dir is writable (CONSOLE_DATA_DIR).") from None

    def _db(self) -> sqlite3.Connection:
        db = getattr(self._local, "db", None)
        if db is None:
            db = sqlite3.connect(self.path, timeout=30, isolation_level=None)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=FULL")  # intent is durable before the side effect
            db.execute("PRAGMA foreign_keys=ON")
            self._local.db = db
        return db

    def _tx(self) -> "_Tx":
        return _Tx(self._db())

    # -- plans ---------------------------------------------------------------------------------
    def save_plan(self, name: str, cluster: str, plan: Plan, rollback: Plan, author: str,
                  fingerprint: str | None = None) -> int:
        """Save (or overwrite, by cluster and name) a plan with its rollback; returns its id."""
        name = name.strip()
        if not name:
            raise StoreError("A saved plan needs a name.", "Type a name for the draft.")
        basis = msgspec.json.encode([(t, p, r) for (t, p), r in sorted(plan.basis.items())]).decode()
        now = time.time()
        with self._tx() as db:
            row = db.execute("SELECT id FROM plans WHERE cluster = ? AND name = ?", (cluster, name)).fetchone()
            values = (author, now, len(plan), fingerprint, plan.to_json(), rollback.to_json(), basis)
            if row is None:
                cur = db.execute(
                    "INSERT INTO plans (name, cluster, author, created_at, updated_at, partitions, fingerprint, "
                    "plan_json, rollback_json, basis_json) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (name, cluster, author, now, *values[1:]))
                return int(cur.lastrowid or 0)
            db.execute("UPDATE plans SET author = ?, updated_at = ?, partitions = ?, fingerprint = ?, plan_json = ?, "
                       "rollback_json = ?, basis_json = ? WHERE id = ?", (*values, row[0]))
            return int(row[0])

    def plans(self, cluster: str | None = None) -> list[PlanSummary]:
        sql = ("SELECT id, name, cluster, author, created_at, updated_at, partitions, fingerprint FROM plans"
               + (" WHERE cluster = ?" if cluster is not None else "") + " ORDER BY updated_at DESC")
        rows = self._db().execute(sql, (cluster,) if cluster is not None else ()).fetchall()
        return [PlanSummary(*r) for r in rows]

    def load_plan(self, plan_id: int) -> SavedPlan | None:
        row = self._db().execute(
            "SELECT id, name, cluster, author, created_at, updated_at, partitions, fingerprint, plan_json, "
            "rollback_json, basis_json FROM plans WHERE id = ?", (plan_id,)).fetchone()
        if row is None:
            return None
        basis = {(t, p): r for t, p, r in msgspec.json.decode(row[10], type=list[tuple[str, int, tuple[BrokerId, ...]]])}
        plan = parse_plan(row[8])
        return SavedPlan(PlanSummary(*row[:8]), Plan(plan.entries, basis), row[9])

    def delete_plan(self, plan_id: int) -> None:
        with self._tx() as db:
            db.execute("DELETE FROM plan_notes WHERE plan_id = ?", (plan_id,))
            db.execute("DELETE FROM plan_approvals WHERE plan_id = ?", (plan_id,))
            db.execute("DELETE FROM plans WHERE id = ?", (plan_id,))

    # -- approvals (two-person rule) -------------------------------------------------------------
    def approve(self, plan_id: int, approver: str, plan_hash: str) -> None:
        with self._tx() as db:
            db.execute("INSERT INTO plan_approvals (plan_id, approver, at, plan_hash) VALUES (?, ?, ?, ?)",
                       (plan_id, approver, time.time(), plan_hash))

    def approvals(self, plan_id: int) -> list[tuple[str, float, str]]:
        """(approver, at, plan hash) of each approval of the plan, oldest first."""
        rows = self._db().execute("SELECT approver, at, plan_hash FROM plan_approvals WHERE plan_id = ? ORDER BY at",
                                  (plan_id,)).fetchall()
        return [(str(a), float(t), str(h)) for a, t, h in rows]

    # -- review notes ----------------------------------------------------------------------------
    def add_note(self, plan_id: int, author: str, note: str) -> None:
        if not note.strip():
            return
        with self._tx() as db:
            db.execute("INSERT INTO plan_notes (plan_id, author, at, note) VALUES (?, ?, ?, ?)",
                       (plan_id, author, time.time(), note.strip()))

    def notes(self, plan_id: int) -> list[Note]:
        rows = self._db().execute("SELECT author, at, note FROM plan_notes WHERE plan_id = ? ORDER BY at, id",
                                  (plan_id,)).fetchall()
        return [Note(*r) for r in rows]

    # -- runs ----------------------------------------------------------------------------------
    _RUN_COLS = ("id, cluster, name, author, created_at, updated_at, state, plan_json, rollback_json, plan_hash, "
                 "rate, moves_per_broker, per_request, bytes_per_wave, path")

    def create_run(self, cluster: str, name: str, author: str, plan_json: str, rollback_json: str, plan_hash: str,
                   waves: list[str], keys: list[tuple[str, int]], rate: int | None, moves_per_broker: int,
                   per_request: int, bytes_per_wave: int | None, path: str = "api") -> int:
        """Record a run and its waves (each wave's entries as plan JSON), refusing when an active
        run of the same cluster already moves one of ``keys`` (checked in the same transaction)."""
        now = time.time()
        wanted = set(keys)
        with self._tx() as db:
            for run_id, run_name, author_, entries in db.execute(
                    "SELECT r.id, r.name, r.author, w.entries_json FROM runs r JOIN waves w ON w.run_id = r.id "
                    f"WHERE r.cluster = ? AND r.state IN {ACTIVE_RUN_STATES}", (cluster,)):
                clash = wanted & {(e["topic"], e["partition"]) for e in msgspec.json.decode(entries)["partitions"]}
                if clash:
                    t, p = sorted(clash)[0]
                    raise ConflictError(
                        f"Run #{run_id} ({run_name}, by {author_}) is already moving {t}-{p}"
                        + (f" and {len(clash) - 1} more of this plan's partitions" if len(clash) > 1 else "") + ".",
                        "Wait until that run ends (or cancel it), then review the plan again.")
            cur = db.execute(
                f"INSERT INTO runs ({self._RUN_COLS.replace('id, ', '', 1)}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (cluster, name, author, now, now, "running", plan_json, rollback_json, plan_hash, rate,
                 moves_per_broker, per_request, bytes_per_wave, path))
            run_id = int(cur.lastrowid or 0)
            db.executemany("INSERT INTO waves (run_id, number, state, entries_json) VALUES (?, ?, 'pending', ?)",
                           [(run_id, i + 1, w) for i, w in enumerate(waves)])
            return run_id

    def active_partitions(self, cluster: str) -> dict[tuple[str, int], int]:
        """Partitions the active runs of ``cluster`` move (submitted waves), and their run."""
        out: dict[tuple[str, int], int] = {}
        for run_id, entries in self._db().execute(
                "SELECT r.id, w.entries_json FROM runs r JOIN waves w ON w.run_id = r.id "
                f"WHERE r.cluster = ? AND r.state IN {ACTIVE_RUN_STATES} AND w.state IN ('submitting', 'running')",
                (cluster,)):
            for e in msgspec.json.decode(entries)["partitions"]:
                out[(e["topic"], e["partition"])] = run_id
        return out

    def claim(self, run_id: int, owner: str, ttl_s: float) -> str | None:
        """Take (or renew) the lease on a run for ``ttl_s`` seconds so that one worker at a time
        drives it. Returns None when taken, else the worker holding it."""
        now = time.time()
        with self._tx() as db:
            cur = db.execute("UPDATE runs SET owner = ?, lease_until = ? WHERE id = ? AND "
                             "(owner IS NULL OR owner = ? OR lease_until < ?)", (owner, now + ttl_s, run_id, owner, now))
            if cur.rowcount == 1:
                return None
            row = db.execute("SELECT owner FROM runs WHERE id = ?", (run_id,)).fetchone()
            return str(row[0]) if row else "nobody (no such run)"

    def release(self, run_id: int, owner: str) -> None:
        with self._tx() as db:
            db.execute("UPDATE runs SET owner = NULL, lease_until = NULL WHERE id = ? AND owner = ?", (run_id, owner))

    def run(self, run_id: int) -> Run | None:
        row = self._db().execute(f"SELECT {self._RUN_COLS} FROM runs WHERE id = ?", (run_id,)).fetchone()
        return Run(*row) if row else None

    def runs(self, cluster: str | None = None, active_only: bool = False) -> list[Run]:
        where = [w for w, on in (("cluster = ?", cluster is not None), (f"state IN {ACTIVE_RUN_STATES}", active_only)) if on]
        rows = self._db().execute(f"SELECT {self._RUN_COLS} FROM runs" + (" WHERE " + " AND ".join(where) if where else "")
                                  + " ORDER BY id DESC", (cluster,) if cluster is not None else ()).fetchall()
        return [Run(*r) for r in rows]

    def set_run(self, run_id: int, state: str | None = None, rate: int | None | bool = False,
                path: str | None = None) -> None:
        """Change a run's state, rate (``rate=None`` removes it; False leaves it) or path."""
        with self._tx() as db:
            if path is not None:
                db.execute("UPDATE runs SET path = ?, updated_at = ? WHERE id = ?", (path, time.time(), run_id))
            if state is not None:
                db.execute("UPDATE runs SET state = ?, updated_at = ? WHERE id = ?", (state, time.time(), run_id))
            if rate is not False:
                db.execute("UPDATE runs SET rate = ?, updated_at = ? WHERE id = ?", (rate, time.time(), run_id))

    def waves(self, run_id: int) -> list[WaveRow]:
        rows = self._db().execute("SELECT run_id, number, state, entries_json, submitted_at, completed_at FROM waves "
                                  "WHERE run_id = ? ORDER BY number", (run_id,)).fetchall()
        return [WaveRow(*r) for r in rows]

    def set_wave(self, run_id: int, number: int, state: str) -> None:
        stamp = {"running": "submitted_at", "completed": "completed_at", "cancelled": "completed_at"}.get(state)
        with self._tx() as db:
            db.execute("UPDATE waves SET state = ?" + (f", {stamp} = ?" if stamp else "") + " WHERE run_id = ? AND number = ?",
                       (state, time.time(), run_id, number) if stamp else (state, run_id, number))

    def add_outcomes(self, run_id: int, wave: int, outcomes: list[tuple[str, int, bool, str | None, str | None]]) -> None:
        now = time.time()
        with self._tx() as db:
            db.executemany("INSERT INTO outcomes (run_id, wave, topic, partition, accepted, code, message, at) "
                           "VALUES (?, ?, ?, ?, ?, ?, ?, ?)", [(run_id, wave, *o, now) for o in outcomes])

    def outcomes(self, run_id: int) -> list[tuple[int, str, int, bool, str | None, str | None]]:
        rows = self._db().execute("SELECT wave, topic, partition, accepted, code, message FROM outcomes WHERE run_id = ? "
                                  "ORDER BY wave, topic, partition", (run_id,)).fetchall()
        return [(w, t, p, bool(a), c, m) for w, t, p, a, c, m in rows]

    # -- throttle ledger -------------------------------------------------------------------------
    _LEDGER_COLS = "id, run_id, wave, kind, name, key, before, added, set_at, restored_at"

    def ledger_add(self, run_id: int, wave: int, kind: str, name: str, key: str, before: str | None, added: str) -> int:
        with self._tx() as db:
            cur = db.execute("INSERT INTO throttle_ledger (run_id, wave, kind, name, key, before, added, set_at) "
                             "VALUES (?, ?, ?, ?, ?, ?, ?, ?)", (run_id, wave, kind, name, key, before, added, time.time()))
            return int(cur.lastrowid or 0)

    def ledger(self, run_id: int | None = None, open_only: bool = True) -> list[LedgerEntry]:
        where = [w for w, on in (("run_id = ?", run_id is not None), ("restored_at IS NULL", open_only)) if on]
        rows = self._db().execute(f"SELECT {self._LEDGER_COLS} FROM throttle_ledger"
                                  + (" WHERE " + " AND ".join(where) if where else "") + " ORDER BY id",
                                  (run_id,) if run_id is not None else ()).fetchall()
        return [LedgerEntry(*r) for r in rows]

    def ledger_restored(self, entry_id: int, hand_over_to: int | None = None, before: str | None = None) -> None:
        """Mark an entry restored; with ``hand_over_to``, another open entry of the same key takes
        over what was there before (it will restore that instead)."""
        with self._tx() as db:
            db.execute("UPDATE throttle_ledger SET restored_at = ? WHERE id = ?", (time.time(), entry_id))
            if hand_over_to is not None:
                db.execute("UPDATE throttle_ledger SET before = ? WHERE id = ?", (before, hand_over_to))

    # -- audit log -----------------------------------------------------------------------------
    def record(self, user: str, cluster: str, action: str, request: object, outcome: str, *,
               ref: int | None = None, plan_hash: str | None = None, response: object = None) -> int:
        """Append to the audit log (durably: it is written before the request it announces)."""
        try:
            with self._tx() as db:
                cur = db.execute(
                    "INSERT INTO audit (ref, at, user, cluster, action, plan_hash, request, response, outcome) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (ref, time.time(), user, cluster, action, plan_hash, msgspec.json.encode(request).decode(),
                     None if response is None else msgspec.json.encode(response).decode(), outcome))
                return int(cur.lastrowid or 0)
        except sqlite3.Error as e:
            raise StoreError(f"Cannot write the audit log at {self.path}: {e}.",
                             "Nothing was sent. Check that the data dir is writable (CONSOLE_DATA_DIR).") from None

    def audit(self, cluster: str | None = None, action: str | None = None) -> list[AuditEntry]:
        where, args = [], []
        for col, val in (("cluster", cluster), ("action", action)):
            if val is not None:
                where.append(f"{col} = ?")
                args.append(val)
        rows = self._db().execute(
            "SELECT id, ref, at, user, cluster, action, plan_hash, request, response, outcome FROM audit"
            + (" WHERE " + " AND ".join(where) if where else "") + " ORDER BY id", args).fetchall()
        return [AuditEntry(*r) for r in rows]

    def close(self) -> None:
        db = getattr(self._local, "db", None)
        if db is not None:
            db.close()
            self._local.db = None


class _Tx:
    """BEGIN IMMEDIATE … COMMIT (or ROLLBACK on error) on an autocommit connection."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def __enter__(self) -> sqlite3.Connection:
        self.db.execute("BEGIN IMMEDIATE")
        return self.db

    def __exit__(self, exc_type: object, *rest: object) -> None:
        self.db.execute("ROLLBACK" if exc_type is not None else "COMMIT")

