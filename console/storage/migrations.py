"""The store's schema, in numbered migrations the console applies when it opens the store.

One schema for both back ends: each migration is portable SQL (the store modules' ``SCHEMA``
scripts, which :mod:`console.storage.postgres` puts in PostgreSQL's types), with what one back end
needs besides (PostgreSQL's own audit triggers; the columns SQLite files made by consoles released
before the migrations lack). ``schema_version`` holds one row per migration applied. Opening a
store applies the missing migrations in one write transaction (two processes opening a store at
once apply each once), and refuses a store a newer console has migrated past what this one knows.

To change the schema, append a :class:`Migration` (never edit one released).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from console.core.errors import StoreError
from console.storage import (
    audit,
    clusters,
    decommissions,
    drafts,
    holds,
    notifications,
    plans,
    runs,
    sessions,
    signins,
    stream,
)
from console.storage.db import Database

VERSION_TABLE = """
CREATE TABLE IF NOT EXISTS schema_version (
    version    INTEGER PRIMARY KEY,
    applied_at REAL NOT NULL,
    what       TEXT NOT NULL
);
"""

_AUDIT_APPEND_ONLY_PG = (
    "CREATE OR REPLACE FUNCTION audit_append_only() RETURNS trigger LANGUAGE plpgsql AS "
    "$$ BEGIN RAISE EXCEPTION 'the audit log is append-only'; END $$",
    "DROP TRIGGER IF EXISTS audit_append_only ON audit",
    "CREATE TRIGGER audit_append_only BEFORE UPDATE OR DELETE OR TRUNCATE ON audit "
    "FOR EACH STATEMENT EXECUTE FUNCTION audit_append_only()",
)


def _older_sqlite_files(db: Database) -> None:
    """Columns and rows a SQLite file made by an earlier console lacks (PostgreSQL stores are
    made with them)."""
    if db.dialect == "sqlite":
        plans.migrate(db)
        runs.migrate(db)


@dataclass(frozen=True)
class Migration:
    version: int
    what: str
    schemas: tuple[str, ...]
    """Portable schema scripts (``CREATE … IF NOT EXISTS``)."""
    postgresql: tuple[str, ...] = ()
    """Statements for PostgreSQL only, after the scripts."""
    then: Callable[[Database], None] | None = None
    """A step in Python after the statements (e.g. bringing older SQLite files up to date)."""


MIGRATIONS: tuple[Migration, ...] = (
    Migration(
        1,
        "plans, runs, the audit log, sessions, sign-ins, drafts, decommissions, cluster names",
        (
            plans.SCHEMA,
            runs.SCHEMA,
            runs.PROGRESS_SCHEMA,
            audit.SCHEMA,
            sessions.SCHEMA,
            signins.SCHEMA,
            drafts.SCHEMA,
            decommissions.SCHEMA,
            clusters.SCHEMA,
        ),
        _AUDIT_APPEND_ONLY_PG,
        _older_sqlite_files,
    ),
    Migration(2, "the worker that last drove each run (hand-overs)", (runs.DRIVEN_BY,)),
    Migration(3, "where each sink of the audit log as a stream has got to", (stream.SCHEMA,)),
    Migration(4, "notifications given up on after their retries", (notifications.SCHEMA,)),
    Migration(5, "the audit log indexed by answer and by cluster and action (a run taken over)", (audit.INDEXES,)),
    Migration(6, "who cancelled each run as a run (it sends no further wave)", (runs.CANCEL_ASKED,)),
    Migration(7, "the guardrails holding each run", (holds.SCHEMA,)),
)
LATEST = MIGRATIONS[-1].version


def version(db: Database) -> int:
    """The store's schema version (0: a new store, or a SQLite file made before the migrations)."""
    if not db.has_table("schema_version"):
        return 0
    row = db.one("SELECT MAX(version) FROM schema_version")
    return int(row[0]) if row and row[0] is not None else 0


def _refuse_newer(db: Database, found: int) -> None:
    if found > LATEST:
        raise StoreError(
            f"The console's store at {db.where} is at schema version {found}; this console knows "
            f"versions up to {LATEST} (a newer console migrated it).",
            "Run the newer console on this store (every server and executor sharing it), or "
            "point CONSOLE_STORE_URL at another store. Nothing was changed.",
        )


def apply(db: Database, migrations: tuple[Migration, ...] = MIGRATIONS) -> int:
    """Bring the store to the latest version; returns the version it was at."""
    found = version(db)
    _refuse_newer(db, found)
    if found < migrations[-1].version:
        _migrate(db, migrations)
    _older_sqlite_files(db)  # as every open did before the migrations (reads only, unless something lacks)
    return found


def _migrate(db: Database, migrations: tuple[Migration, ...]) -> None:
    with db.transaction():
        db.ddl(VERSION_TABLE)
        found = version(db)  # again, under the write lock: another process may have migrated meanwhile
        _refuse_newer(db, found)
        for m in migrations:
            if m.version <= found:
                continue
            for script in m.schemas:
                db.ddl(script)
            if db.dialect == "postgresql":
                for statement in m.postgresql:
                    db.execute(statement)
            if m.then is not None:
                m.then(db)
            db.execute(
                "INSERT INTO schema_version (version, applied_at, what) VALUES (?, ?, ?)",
                (m.version, time.time(), m.what),
            )
