"""Where each audit stream's sink has got to: the id of the last audit entry it took (a cursor per
sink), so a shipper that restarts resumes after it, in order, losing nothing."""

from __future__ import annotations

import time

from console.storage.audit import AuditEntry
from console.storage.db import StorePart

SCHEMA = """
CREATE TABLE IF NOT EXISTS audit_stream_cursors (
    sink     TEXT PRIMARY KEY,
    last_id  INTEGER NOT NULL,
    at       REAL NOT NULL
);
"""


class StreamCursors(StorePart):
    def get(self, sink: str) -> int:
        """The id of the last entry ``sink`` took; 0 before its first."""
        row = self.db.one("SELECT last_id FROM audit_stream_cursors WHERE sink = ?", (sink,))
        return int(row[0]) if row else 0

    def advance(self, sink: str, last_id: int) -> None:
        """``sink`` took every entry up to ``last_id`` (a cursor never goes back)."""
        with self.db.transaction() as db:
            if (
                not db.changes(
                    "UPDATE audit_stream_cursors SET last_id = ?, at = ? WHERE sink = ? AND last_id < ?",
                    (last_id, time.time(), sink, last_id),
                )
                and db.one("SELECT 1 FROM audit_stream_cursors WHERE sink = ?", (sink,)) is None
            ):
                db.execute(
                    "INSERT INTO audit_stream_cursors (sink, last_id, at) VALUES (?, ?, ?)",
                    (sink, last_id, time.time()),
                )

    def entries_after(self, last_id: int, limit: int) -> list[AuditEntry]:
        """At most ``limit`` audit entries with an id above ``last_id``, oldest first."""
        rows = self.db.query(
            "SELECT id, ref, at, user, cluster, action, plan_hash, request, response, outcome FROM audit "
            "WHERE id > ? ORDER BY id LIMIT ?",
            (last_id, limit),
        )
        return [AuditEntry(*r) for r in rows]
