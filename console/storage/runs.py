"""Runs, their waves and per-partition outcomes, the leases that let one worker drive a run, and
the throttle ledger (what the console set on brokers and topics, and what was there before).

Every state is written before the side effect it announces, and every state change is checked
against :mod:`console.core.states` in the same transaction.
"""

from __future__ import annotations

import builtins
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

import msgspec

from console.core.errors import ConsoleError, RunOverlap
from console.core.model import (
    DIR_OFFLINE,
    PARTITION_CANCELLED,
    PARTITION_GONE,
    BrokerId,
    DirOutcome,
    Keyed,
    Outcome,
    TopicPartition,
)
from console.core.states import ACTIVE_RUN_STATES, RunState, SubmitPath, WaveState, check_run, check_wave
from console.storage.db import Database, StorePart, in_clause

if TYPE_CHECKING:
    import pandas as pd

SCHEMA = """
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
    lease_until      REAL,
    elect_leaders    INTEGER NOT NULL DEFAULT 0
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
"""
PROGRESS_SCHEMA = """
-- When each active run last made progress, and why it is stuck when it is (the executor writes it).
CREATE TABLE IF NOT EXISTS run_progress (
    run_id      INTEGER PRIMARY KEY REFERENCES runs(id),
    progress_at REAL NOT NULL,
    mark        TEXT NOT NULL,
    stuck       TEXT
);
-- Each AlterReplicaLogDirs answer of a run, per replica (a dir is asked for once per answer kind).
CREATE TABLE IF NOT EXISTS dir_moves (
    run_id    INTEGER NOT NULL REFERENCES runs(id),
    wave      INTEGER NOT NULL,
    topic     TEXT NOT NULL,
    partition INTEGER NOT NULL,
    broker    INTEGER NOT NULL,
    log_dir   TEXT NOT NULL,
    code      TEXT,
    at        REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS dir_moves_run ON dir_moves (run_id, wave);
"""
_ACTIVE = in_clause(ACTIVE_RUN_STATES)
_OPEN_WAVES = in_clause((WaveState.SUBMITTING, WaveState.RUNNING))
_ADDED_COLUMNS = (("runs", "elect_leaders", "INTEGER NOT NULL DEFAULT 0"),)
"""Columns added after their table was first released: a store created before gets them when opened."""

DRIVEN_BY = "ALTER TABLE runs ADD COLUMN driven_by TEXT;"
"""Migration 2: the worker that last drove each run (the audit log names both sides of a hand-over)."""

CANCEL_ASKED = "ALTER TABLE runs ADD COLUMN cancel_asked_by TEXT;"
"""Migration 6: who cancelled each run as a run (its cancel on the Runs page, ``cancel --run``,
everything in flight), written before the cancel is sent: the run sends no further wave and ends
cancelled when its wave ends (a cancel of some of its partitions leaves it to go on with the rest)."""

ELECTION_WAVE = 0
"""The wave number under which a run's closing preferred leader election keeps its per-partition
outcomes (waves are numbered from 1, so it never clashes with one)."""


def migrate(db: Database) -> None:
    """Add the columns of :data:`_ADDED_COLUMNS` an older store lacks (looked up and added in one
    ``BEGIN IMMEDIATE`` transaction, so two processes opening the store at once add each once)."""

    def missing() -> bool:
        return any(
            column not in {str(r[1]) for r in db.query(f"PRAGMA table_info({table})")}
            for table, column, _ in _ADDED_COLUMNS
        )

    if not missing():  # the usual case: no write lock taken just to open the store
        return
    with db.transaction() as tx:
        for table, column, decl in _ADDED_COLUMNS:
            if column not in {str(r[1]) for r in tx.query(f"PRAGMA table_info({table})")}:
                tx.execute(f"ALTER TABLE {table} ADD COLUMN {column} {decl}")


@dataclass(frozen=True)
class Lease:
    """What taking a run's lease found."""

    holder: str | None
    """The worker that holds it (None: taken)."""
    took_from: str | None
    """When taken: the worker that drove the run before, when it was another (a hand-over)."""


@dataclass(frozen=True)
class RunLimits:
    """How a run cuts its plan into waves (kept with the run)."""

    moves_per_broker: int
    per_request: int
    bytes_per_wave: int | None


@dataclass(frozen=True)
class Run:
    id: int
    cluster: str
    name: str
    author: str
    created_at: float
    updated_at: float
    state: RunState
    plan_json: str
    rollback_json: str
    plan_hash: str
    rate: int | None
    """The replication throttle in bytes/s, or None when the run is not throttled."""
    limits: RunLimits
    path: SubmitPath = SubmitPath.API
    elect_leaders: bool = False
    """The run ends with a preferred leader election of its partitions (outcomes in wave
    :data:`ELECTION_WAVE`)."""

    @property
    def active(self) -> bool:
        return self.state.active


@dataclass(frozen=True)
class Wave:
    run_id: int
    number: int
    state: WaveState
    entries_json: str
    """The wave's partitions, as plan JSON."""
    submitted_at: float | None
    completed_at: float | None


@dataclass(frozen=True)
class RunDetail:
    """A run with its waves and what the cluster answered for each partition (a notebook's view)."""

    run: Run
    waves: tuple[Wave, ...]
    outcomes: tuple[WaveOutcome, ...]

    def __repr__(self) -> str:
        return (
            f"<Run {self.run.id} {self.run.name!r}: {self.run.state.value}, {len(self.waves)} waves, "
            f"cluster {self.run.cluster}>"
        )

    def to_pandas(self) -> pd.DataFrame:
        """One row per wave: state, partitions, rejected partitions, those an operator cancelled,
        when submitted and completed."""
        import pandas as pd

        rejected: dict[int, int] = {}
        cancelled: dict[int, int] = {}
        for o in self.outcomes:
            if o.code == PARTITION_CANCELLED:
                cancelled[o.wave] = cancelled.get(o.wave, 0) + 1
            elif not o.accepted and o.code not in (DIR_OFFLINE, PARTITION_GONE):  # not refusals
                rejected[o.wave] = rejected.get(o.wave, 0) + 1
        return pd.DataFrame(
            [
                (
                    w.number,
                    w.state.value,
                    len(msgspec.json.decode(w.entries_json).get("partitions", ())),
                    rejected.get(w.number, 0),
                    cancelled.get(w.number, 0),
                    pd.to_datetime(w.submitted_at, unit="s", utc=True),
                    pd.to_datetime(w.completed_at, unit="s", utc=True),
                )
                for w in self.waves
            ],
            columns=["wave", "state", "partitions", "rejected", "cancelled", "submitted_at", "completed_at"],
        )


class _WaveOutcome(NamedTuple):
    wave: int
    topic: str
    partition: int
    accepted: bool
    code: str | None
    message: str | None


class WaveOutcome(_WaveOutcome, Keyed):
    """One partition's recorded answer in a wave."""

    __slots__ = ()


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
class NewRun:
    """What is recorded when a run starts."""

    cluster: str
    name: str
    author: str
    plan_json: str
    rollback_json: str
    plan_hash: str
    waves: list[str]
    """Each wave's entries as plan JSON."""
    keys: list[TopicPartition]
    """Every partition the run moves (the conflict check)."""
    rate: int | None
    limits: RunLimits
    path: SubmitPath = SubmitPath.API
    elect_leaders: bool = False


_RUN_COLS = (
    "id, cluster, name, author, created_at, updated_at, state, plan_json, rollback_json, plan_hash, "
    "rate, moves_per_broker, per_request, bytes_per_wave, path, elect_leaders"
)
_LEDGER_COLS = "id, run_id, wave, kind, name, key, before, added, set_at, restored_at"


def _run(row: tuple[Any, ...]) -> Run:
    (
        i,
        cluster,
        name,
        author,
        created,
        updated,
        state,
        plan_json,
        rollback_json,
        digest,
        rate,
        moves,
        per_request,
        per_wave,
        path,
        elect,
    ) = row
    return Run(
        i,
        cluster,
        name,
        author,
        created,
        updated,
        RunState(state),
        plan_json,
        rollback_json,
        digest,
        rate,
        RunLimits(moves, per_request, per_wave),
        SubmitPath(path),
        bool(elect),
    )


class RunStore(StorePart):
    # -- runs ----------------------------------------------------------------------------------
    def create(self, new: NewRun) -> int:
        """Record a run and its waves, refusing when an active run of the same cluster already
        moves one of its partitions (checked in the same transaction)."""
        now = time.time()
        wanted = set(new.keys)
        with self.db.transaction() as db:
            for run_id, run_name, author, entries in db.query(
                "SELECT r.id, r.name, r.author, w.entries_json FROM runs r JOIN waves w ON w.run_id = r.id "
                f"WHERE r.cluster = ? AND r.state IN {_ACTIVE}",
                (new.cluster,),
            ):
                clash = wanted & {(e["topic"], e["partition"]) for e in msgspec.json.decode(entries)["partitions"]}
                if clash:
                    t, p = sorted(clash)[0]
                    raise RunOverlap(
                        f"Run #{run_id} ({run_name}, by {author}) is already moving {t}-{p}"
                        + (f" and {len(clash) - 1} more of this plan's partitions" if len(clash) > 1 else "")
                        + ".",
                        "Wait until that run ends (or cancel it), then review the plan again.",
                    )
            run_id = db.execute(
                f"INSERT INTO runs ({_RUN_COLS.replace('id, ', '', 1)}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    new.cluster,
                    new.name,
                    new.author,
                    now,
                    now,
                    RunState.RUNNING.value,
                    new.plan_json,
                    new.rollback_json,
                    new.plan_hash,
                    new.rate,
                    new.limits.moves_per_broker,
                    new.limits.per_request,
                    new.limits.bytes_per_wave,
                    new.path.value,
                    int(new.elect_leaders),
                ),
            )
            db.executemany(
                "INSERT INTO waves (run_id, number, state, entries_json) VALUES (?, ?, ?, ?)",
                [(run_id, i + 1, WaveState.PENDING.value, w) for i, w in enumerate(new.waves)],
            )
            return run_id

    def get(self, run_id: int) -> Run | None:
        row = self.db.one(f"SELECT {_RUN_COLS} FROM runs WHERE id = ?", (run_id,))
        return _run(row) if row else None

    def require(self, run_id: int) -> Run:
        run = self.get(run_id)
        if run is None:
            raise ConsoleError(f"Run {run_id} is not in the store.", "List the runs with `python -m console runs`.")
        return run

    def detail(self, run_id: int) -> RunDetail:
        """The run with its waves and outcomes (:class:`ConsoleError` when it is not in the store)."""
        return RunDetail(self.require(run_id), tuple(self.waves(run_id)), tuple(self.outcomes(run_id)))

    def list(self, cluster: str | None = None, active_only: bool = False) -> builtins.list[Run]:
        """Runs, newest first."""
        where = [w for w, on in (("cluster = ?", cluster is not None), (f"state IN {_ACTIVE}", active_only)) if on]
        rows = self.db.query(
            f"SELECT {_RUN_COLS} FROM runs" + (" WHERE " + " AND ".join(where) if where else "") + " ORDER BY id DESC",
            (cluster,) if cluster is not None else (),
        )
        return [_run(r) for r in rows]

    def of_plan(self, cluster: str, plan_hash: str) -> builtins.list[Run]:
        """The runs of this cluster that carried out a plan of this content (its ``plan_hash``), newest first."""
        rows = self.db.query(
            f"SELECT {_RUN_COLS} FROM runs WHERE cluster = ? AND plan_hash = ? ORDER BY id DESC", (cluster, plan_hash)
        )
        return [_run(r) for r in rows]

    def set_state(self, run_id: int, new: RunState) -> RunState:
        """Move the run to ``new`` (checked against the allowed transitions); returns the old state."""
        with self.db.transaction() as db:
            old = RunState(self.require(run_id).state)
            check_run(run_id, old, new)
            db.execute("UPDATE runs SET state = ?, updated_at = ? WHERE id = ?", (new.value, time.time(), run_id))
            return old

    def ask_cancel(self, run_id: int, who: str) -> bool:
        """Record that ``who`` cancels the run as a run (see :data:`CANCEL_ASKED`), before the cancel
        is sent; True when the run is active and nobody had asked yet."""
        return bool(
            self.db.changes(
                f"UPDATE runs SET cancel_asked_by = ? WHERE id = ? AND cancel_asked_by IS NULL AND state IN {_ACTIVE}",
                (who, run_id),
            )
        )

    def drop_cancel_ask(self, run_id: int, who: str) -> None:
        """Take back :meth:`ask_cancel` of ``who``: the cancel was not taken for any of the run's partitions."""
        self.db.execute("UPDATE runs SET cancel_asked_by = NULL WHERE id = ? AND cancel_asked_by = ?", (run_id, who))

    def cancel_asked(self, run_id: int) -> str | None:
        """Who cancelled the run as a run (None: nobody; its partitions cancelled one by one do not count)."""
        row = self.db.one("SELECT cancel_asked_by FROM runs WHERE id = ?", (run_id,))
        return None if row is None or row[0] is None else str(row[0])

    def set_rate(self, run_id: int, rate: int | None) -> None:
        """The run's throttle in bytes/s (None: not throttled)."""
        self.db.execute("UPDATE runs SET rate = ?, updated_at = ? WHERE id = ?", (rate, time.time(), run_id))

    def set_path(self, run_id: int, path: SubmitPath) -> None:
        self.db.execute("UPDATE runs SET path = ?, updated_at = ? WHERE id = ?", (path.value, time.time(), run_id))

    def active_partitions(self, cluster: str) -> dict[TopicPartition, int]:
        """Partitions the active runs of ``cluster`` move (submitted waves), and their run."""
        out: dict[TopicPartition, int] = {}
        for run_id, entries in self.db.query(
            "SELECT r.id, w.entries_json FROM runs r JOIN waves w ON w.run_id = r.id "
            f"WHERE r.cluster = ? AND r.state IN {_ACTIVE} AND w.state IN {_OPEN_WAVES}",
            (cluster,),
        ):
            for e in msgspec.json.decode(entries)["partitions"]:
                out[(e["topic"], e["partition"])] = int(run_id)
        return out

    # -- leases ----------------------------------------------------------------------------------
    def claim(self, run_id: int, owner: str, ttl_s: float) -> str | None:
        """Take (or renew) the lease on a run for ``ttl_s`` seconds so that one worker at a time
        drives it. Returns None when taken, else the worker holding it."""
        now = time.time()
        with self.db.transaction() as db:
            if db.changes(
                "UPDATE runs SET owner = ?, lease_until = ? WHERE id = ? AND "
                "(owner IS NULL OR owner = ? OR lease_until < ?)",
                (owner, now + ttl_s, run_id, owner, now),
            ):
                return None
            row = db.one("SELECT owner FROM runs WHERE id = ?", (run_id,))
            return str(row[0]) if row else "nobody (no such run)"

    def take(self, run_id: int, owner: str, ttl_s: float) -> Lease:
        """Take (or renew) the lease to drive the run, as :meth:`claim`; the lease says who holds it
        when another does, and who drove the run before when it changed hands (the hand-over)."""
        now = time.time()
        with self.db.transaction() as db:
            row = db.one("SELECT owner, lease_until, driven_by FROM runs WHERE id = ?", (run_id,))
            if row is None:
                return Lease("nobody (no such run)", None)
            holder, until, before = row
            if holder is not None and holder != owner and until is not None and until >= now:
                return Lease(str(holder), None)
            db.execute(
                "UPDATE runs SET owner = ?, lease_until = ?, driven_by = ? WHERE id = ?",
                (owner, now + ttl_s, owner, run_id),
            )
            return Lease(None, str(before) if before is not None and before != owner else None)

    def renew(self, run_id: int, owner: str, ttl_s: float) -> bool:
        """The heartbeat, and the check before a request: True when ``owner`` still holds the
        lease (nobody took it over since it was taken; it is extended by ``ttl_s``)."""
        return bool(
            self.db.changes(
                "UPDATE runs SET lease_until = ? WHERE id = ? AND owner = ?", (time.time() + ttl_s, run_id, owner)
            )
        )

    def release(self, run_id: int, owner: str) -> None:
        self.db.execute("UPDATE runs SET owner = NULL, lease_until = NULL WHERE id = ? AND owner = ?", (run_id, owner))

    # -- waves and outcomes ----------------------------------------------------------------------
    def waves(self, run_id: int) -> builtins.list[Wave]:
        rows = self.db.query(
            "SELECT run_id, number, state, entries_json, submitted_at, completed_at FROM waves "
            "WHERE run_id = ? ORDER BY number",
            (run_id,),
        )
        return [Wave(int(r), int(n), WaveState(s), str(e), a, b) for r, n, s, e, a, b in rows]

    def set_wave(self, run_id: int, number: int, new: WaveState) -> None:
        """Move a wave to ``new`` (checked against the allowed transitions)."""
        stamp = {WaveState.RUNNING: "submitted_at"}.get(new, "completed_at" if not new.open else None)
        with self.db.transaction() as db:
            row = db.one("SELECT state FROM waves WHERE run_id = ? AND number = ?", (run_id, number))
            if row is None:
                raise ConsoleError(
                    f"Run {run_id} has no wave {number}.", "List the runs with `python -m console runs`."
                )
            check_wave(run_id, number, WaveState(row[0]), new)
            db.execute(
                "UPDATE waves SET state = ?" + (f", {stamp} = ?" if stamp else "") + " WHERE run_id = ? AND number = ?",
                (new.value, time.time(), run_id, number) if stamp else (new.value, run_id, number),
            )

    def split_wave(self, run_id: int, number: int, first: str, rest: str) -> None:
        """Pending wave ``number`` keeps the entries ``first`` (a plan's JSON); ``rest`` becomes the
        wave after it, the later waves numbered one up (a guardrail cut the wave)."""
        with self.db.transaction() as db:
            later = db.query(
                "SELECT number FROM waves WHERE run_id = ? AND number > ? ORDER BY number DESC", (run_id, number)
            )
            for (n,) in later:
                db.execute("UPDATE waves SET number = ? WHERE run_id = ? AND number = ?", (int(n) + 1, run_id, n))
            db.execute("UPDATE waves SET entries_json = ? WHERE run_id = ? AND number = ?", (first, run_id, number))
            db.execute(
                "INSERT INTO waves (run_id, number, state, entries_json) VALUES (?, ?, ?, ?)",
                (run_id, number + 1, WaveState.PENDING.value, rest),
            )

    def add_outcomes(self, run_id: int, wave: int, outcomes: Iterable[Outcome]) -> None:
        now = time.time()
        self.db.executemany(
            "INSERT INTO outcomes (run_id, wave, topic, partition, accepted, code, message, at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [(run_id, wave, o.topic, o.partition, o.accepted, o.code, o.message, now) for o in outcomes],
        )

    def add_dir_moves(self, run_id: int, wave: int, answers: Iterable[DirOutcome]) -> None:
        """AlterReplicaLogDirs answers of a wave, per replica."""
        now = time.time()
        self.db.executemany(
            "INSERT INTO dir_moves (run_id, wave, topic, partition, broker, log_dir, code, at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [(run_id, wave, a.topic, a.partition, int(a.broker), a.log_dir, a.code, now) for a in answers],
        )

    def dir_moves(self, run_id: int, wave: int | None = None) -> builtins.list[DirOutcome]:
        """A run's (a wave's) AlterReplicaLogDirs answers, oldest first."""
        rows = self.db.query(
            "SELECT topic, partition, broker, log_dir, code FROM dir_moves WHERE run_id = ?"
            + (" AND wave = ?" if wave is not None else "")
            + " ORDER BY at, rowid",
            (run_id, wave) if wave is not None else (run_id,),
        )
        return [
            DirOutcome(str(t), int(p), BrokerId(int(b)), str(d), None if c is None else str(c))
            for t, p, b, d, c in rows
        ]

    def outcomes(self, run_id: int, wave: int | None = None) -> builtins.list[WaveOutcome]:
        rows = self.db.query(
            "SELECT wave, topic, partition, accepted, code, message FROM outcomes WHERE run_id = ?"
            + (" AND wave = ?" if wave is not None else "")
            + " ORDER BY wave, topic, partition",
            (run_id,) if wave is None else (run_id, wave),
        )
        return [WaveOutcome(int(w), str(t), int(p), bool(a), c, m) for w, t, p, a, c, m in rows]

    # -- throttle ledger -------------------------------------------------------------------------
    def ledger_add(self, run_id: int, wave: int, kind: str, name: str, key: str, before: str | None, added: str) -> int:
        return self.db.execute(
            "INSERT INTO throttle_ledger (run_id, wave, kind, name, key, before, added, set_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (run_id, wave, kind, name, key, before, added, time.time()),
        )

    def ledger(self, run_id: int | None = None, open_only: bool = True) -> builtins.list[LedgerEntry]:
        where = [w for w, on in (("run_id = ?", run_id is not None), ("restored_at IS NULL", open_only)) if on]
        rows = self.db.query(
            f"SELECT {_LEDGER_COLS} FROM throttle_ledger"
            + (" WHERE " + " AND ".join(where) if where else "")
            + " ORDER BY id",
            (run_id,) if run_id is not None else (),
        )
        return [LedgerEntry(*r) for r in rows]

    def ledger_adopt(self, entry_id: int, value: str) -> None:
        """The run goes on at ``value`` (a person lowered the rate it set, or changed the run's throttle), and
        takes it off at its end."""
        self.db.execute("UPDATE throttle_ledger SET added = ? WHERE id = ?", (value, entry_id))

    def ledger_restored(self, entry_id: int, hand_over_to: int | None = None, before: str | None = None) -> None:
        """Mark an entry restored; with ``hand_over_to``, another open entry of the same key takes
        over what was there before (it will restore that instead)."""
        with self.db.transaction() as db:
            db.execute("UPDATE throttle_ledger SET restored_at = ? WHERE id = ?", (time.time(), entry_id))
            if hand_over_to is not None:
                db.execute("UPDATE throttle_ledger SET before = ? WHERE id = ?", (before, hand_over_to))

    # -- progress (is a run stuck?) --------------------------------------------------------------
    def note_progress(self, run_id: int, mark: str, now: float) -> float:
        """Record what the run's progress looks like now (``mark``: e.g. bytes copied and partitions
        done); returns when it last changed."""
        with self.db.transaction() as db:
            row = db.one("SELECT progress_at, mark FROM run_progress WHERE run_id = ?", (run_id,))
            if row is not None and row[1] == mark:
                return float(row[0])
            db.execute(
                "INSERT INTO run_progress (run_id, progress_at, mark, stuck) VALUES (?, ?, ?, NULL) "
                "ON CONFLICT(run_id) DO UPDATE SET progress_at = excluded.progress_at, mark = excluded.mark, "
                "stuck = NULL",
                (run_id, now, mark),
            )
            return now

    def set_stuck(self, run_id: int, why: str | None) -> None:
        """Why the run makes no progress (None: it does, or it ended)."""
        self.db.execute("UPDATE run_progress SET stuck = ? WHERE run_id = ?", (why, run_id))

    def stuck(self, run_id: int) -> str | None:
        row = self.db.one("SELECT stuck FROM run_progress WHERE run_id = ?", (run_id,))
        return None if row is None or row[0] is None else str(row[0])
