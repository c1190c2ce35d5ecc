"""Notifications that could not be delivered (after their retries), for the Runs page and the
metrics; each is audited as well (``notification-failed``)."""

from __future__ import annotations

import builtins
import time
from dataclasses import dataclass

from console.storage.db import StorePart

SCHEMA = """
CREATE TABLE IF NOT EXISTS notification_failures (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    at          REAL NOT NULL,
    cluster     TEXT NOT NULL,
    run_id      INTEGER,
    event       TEXT NOT NULL,
    destination TEXT NOT NULL,
    attempts    INTEGER NOT NULL,
    error       TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS notification_failures_cluster ON notification_failures (cluster, at);
"""


@dataclass(frozen=True)
class NotificationFailure:
    id: int
    at: float
    cluster: str
    run_id: int | None
    event: str
    destination: str
    """The URL with its secrets hidden."""
    attempts: int
    error: str


class NotificationFailures(StorePart):
    def add(self, cluster: str, run_id: int | None, event: str, destination: str, attempts: int, error: str) -> int:
        return self.db.execute(
            "INSERT INTO notification_failures (at, cluster, run_id, event, destination, attempts, error) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            (time.time(), cluster, run_id, event, destination, attempts, error[:2000]),
        )

    def list(self, cluster: str | None = None, limit: int = 50) -> builtins.list[NotificationFailure]:
        """The latest first."""
        where, args = ("WHERE cluster = ?", (cluster,)) if cluster is not None else ("", ())
        rows = self.db.query(
            "SELECT id, at, cluster, run_id, event, destination, attempts, error FROM notification_failures "
            f"{where} ORDER BY id DESC LIMIT ?",
            (*args, limit),
        )
        return [NotificationFailure(*r) for r in rows]

    def counts(self) -> dict[tuple[str, str], int]:
        """(cluster, event) → failures recorded."""
        rows = self.db.query("SELECT cluster, event, COUNT(*) FROM notification_failures GROUP BY cluster, event")
        return {(str(c), str(e)): int(n) for c, e, n in rows}
