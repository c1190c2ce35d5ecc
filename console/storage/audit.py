"""The audit log: every change the console makes to a cluster, who made it and when.

The intent is written before the request is sent and the answer after (``ref`` points at the
intent). Append-only, enforced by triggers. Operations write their entry in the same
transaction as the state change it records (:meth:`console.storage.db.Database.transaction`).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

import msgspec

from console.storage.db import StorePart

SCHEMA = """
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
CREATE TRIGGER IF NOT EXISTS audit_append_only_update BEFORE UPDATE ON audit
BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;
CREATE TRIGGER IF NOT EXISTS audit_append_only_delete BEFORE DELETE ON audit
BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;
"""

INDEXES = """
CREATE INDEX IF NOT EXISTS audit_ref ON audit (ref);
CREATE INDEX IF NOT EXISTS audit_cluster_action ON audit (cluster, action, at);
"""
"""An answer found by its intent, and a cluster's requests of one kind since a moment, without
reading the whole log (:meth:`AuditLog.unanswered`)."""

_COLUMNS = "id, ref, at, user, cluster, action, plan_hash, request, response, outcome"


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


class AuditLog(StorePart):
    def record(
        self,
        user: str,
        cluster: str,
        action: str,
        request: object,
        outcome: str,
        *,
        ref: int | None = None,
        plan_hash: str | None = None,
        response: object = None,
    ) -> int:
        """Append an entry (durably: it is written before the request it announces); returns its id."""
        return self.db.execute(
            "INSERT INTO audit (ref, at, user, cluster, action, plan_hash, request, response, outcome) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                ref,
                time.time(),
                user,
                cluster,
                action,
                plan_hash,
                msgspec.json.encode(request).decode(),
                None if response is None else msgspec.json.encode(response).decode(),
                outcome,
            ),
        )

    def entries(
        self, cluster: str | None = None, action: str | None = None, *, clusters: Sequence[str] = ()
    ) -> list[AuditEntry]:
        """Entries oldest first, of one cluster (or any of ``clusters``) and/or action, or all."""
        where: list[str] = []
        args: list[object] = []
        for col, val in (("cluster", cluster), ("action", action)):
            if val is not None:
                where.append(f"{col} = ?")
                args.append(val)
        if clusters:
            where.append("cluster IN (" + ",".join("?" * len(clusters)) + ")")
            args.extend(clusters)
        rows = self.db.query(
            f"SELECT {_COLUMNS} FROM audit" + (" WHERE " + " AND ".join(where) if where else "") + " ORDER BY id",
            args,
        )
        return [AuditEntry(*r) for r in rows]

    def latest_id(self, clusters: Sequence[str]) -> int:
        """The id of the newest entry of any of ``clusters`` (0: none): what changed since a page
        drew the log is told by this one number."""
        row = self.db.one(
            "SELECT MAX(id) FROM audit WHERE cluster IN (" + ",".join("?" * len(clusters)) + ")", tuple(clusters)
        )
        return int(row[0]) if row is not None and row[0] is not None else 0

    def unanswered(self, cluster: str, action: str, since: float) -> list[AuditEntry]:
        """``cluster``'s intents of ``action`` written at or after ``since`` that no entry answers
        (their ``ref``), oldest first."""
        rows = self.db.query(
            f"SELECT {_COLUMNS} FROM audit a WHERE cluster = ? AND action = ? AND at >= ? "
            "AND outcome = 'sending' AND NOT EXISTS (SELECT 1 FROM audit b WHERE b.ref = a.id) ORDER BY id",
            (cluster, action, since),
        )
        return [AuditEntry(*r) for r in rows]
