"""Saved plans (drafts) with their rollback, the basis for the stale check, review notes and
approvals (the two-person rule). Plans are keyed by cluster id, like runs and the audit log."""

from __future__ import annotations

import builtins
import time
from dataclasses import dataclass

import msgspec

from console.core.errors import StoreError
from console.core.model import BrokerId
from console.plans.plan import Plan, parse_plan
from console.storage.db import Database

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
    parent_id     INTEGER,  -- the plan this one was brought up to date from (no FK: the parent may be deleted)
    report_json   TEXT,     -- the quality report of a generated plan (NULL for a plan drafted by hand)
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
"""


@dataclass(frozen=True)
class PlanSummary:
    id: int
    name: str
    cluster: str
    """The cluster id (or the configured name when the id was not known)."""
    author: str
    created_at: float
    updated_at: float
    partitions: int
    fingerprint: str | None
    parent_id: int | None = None
    """The plan this one was brought up to date from (:func:`console.services.plans.save_rebased_plan`)."""


@dataclass(frozen=True)
class SavedPlan:
    summary: PlanSummary
    plan: Plan
    rollback_json: str
    report_json: str | None = None
    """The generator's quality report (:class:`console.plans.quality.Report` as JSON), when generated."""


@dataclass(frozen=True)
class Note:
    author: str
    at: float
    note: str


@dataclass(frozen=True)
class Approval:
    approver: str
    at: float
    plan_hash: str
    """The digest of the plan content approved (a changed plan needs a new approval)."""


_SUMMARY = "id, name, cluster, author, created_at, updated_at, partitions, fingerprint, parent_id"


_ADDED = {"parent_id": "INTEGER", "report_json": "TEXT"}
"""Columns added since the first schema, with their types."""


def migrate(db: Database) -> None:
    """Bring a store made by an older console up to :data:`SCHEMA` (columns added since). Reads
    only, unless a column is missing; checked again under the write lock (another process may be
    migrating the same file)."""

    def missing() -> list[str]:
        have = {str(r[1]) for r in db.query("PRAGMA table_info(plans)")}
        return [c for c in ("parent_id", "report_json") if c not in have]

    if missing():
        with db.transaction():
            for column in missing():
                db.execute(f"ALTER TABLE plans ADD COLUMN {column} {_ADDED[column]}")


class PlanStore:
    def __init__(self, db: Database) -> None:
        self.db = db
        migrate(db)

    def save(
        self,
        name: str,
        cluster: str,
        plan: Plan,
        rollback: Plan,
        author: str,
        fingerprint: str | None = None,
        parent_id: int | None = None,
        report_json: str | None = None,
    ) -> int:
        """Save (or overwrite, by cluster and name) a plan with its rollback; returns its id.
        ``parent_id`` links it to the plan it was brought up to date from (an overwrite without one
        keeps the link it had); ``report_json`` is a generated plan's report (an overwrite replaces it:
        a report describes one plan)."""
        name = name.strip()
        if not name:
            raise StoreError("A saved plan needs a name.", "Type a name for the draft.")
        basis = msgspec.json.encode([(t, p, r) for (t, p), r in sorted(plan.basis.items())]).decode()
        now = time.time()
        values = (author, now, len(plan), fingerprint, plan.to_json(), rollback.to_json(), basis, report_json)
        with self.db.transaction() as db:
            row = db.one("SELECT id FROM plans WHERE cluster = ? AND name = ?", (cluster, name))
            if row is None:
                return db.execute(
                    "INSERT INTO plans (name, cluster, author, created_at, updated_at, partitions, fingerprint, "
                    "plan_json, rollback_json, basis_json, report_json, parent_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (name, cluster, author, now, *values[1:], parent_id),
                )
            db.execute(
                "UPDATE plans SET author = ?, updated_at = ?, partitions = ?, fingerprint = ?, plan_json = ?, "
                "rollback_json = ?, basis_json = ?, report_json = ?, parent_id = COALESCE(?, parent_id) WHERE id = ?",
                (*values, parent_id, row[0]),
            )
            return int(row[0])

    def list(self, cluster: str | None = None) -> builtins.list[PlanSummary]:
        """Saved plans, newest first (of one cluster, or all)."""
        sql = f"SELECT {_SUMMARY} FROM plans" + (" WHERE cluster = ?" if cluster is not None else "")
        return [
            PlanSummary(*r)
            for r in self.db.query(sql + " ORDER BY updated_at DESC", (cluster,) if cluster is not None else ())
        ]

    def load(self, plan_id: int) -> SavedPlan | None:
        row = self.db.one(
            f"SELECT {_SUMMARY}, plan_json, rollback_json, basis_json, report_json FROM plans WHERE id = ?", (plan_id,)
        )
        if row is None:
            return None
        n = _SUMMARY.count(",") + 1  # the summary's columns come first
        basis = {
            (t, p): r for t, p, r in msgspec.json.decode(row[n + 2], type=list[tuple[str, int, tuple[BrokerId, ...]]])
        }
        plan = parse_plan(row[n])
        return SavedPlan(PlanSummary(*row[:n]), Plan(plan.entries, basis), row[n + 1], row[n + 3])

    def delete(self, plan_id: int) -> None:
        with self.db.transaction() as db:
            db.execute("DELETE FROM plan_notes WHERE plan_id = ?", (plan_id,))
            db.execute("DELETE FROM plan_approvals WHERE plan_id = ?", (plan_id,))
            db.execute("DELETE FROM plans WHERE id = ?", (plan_id,))

    # -- approvals (two-person rule) -------------------------------------------------------------
    def approve(self, plan_id: int, approver: str, plan_hash: str) -> None:
        self.db.execute(
            "INSERT INTO plan_approvals (plan_id, approver, at, plan_hash) VALUES (?, ?, ?, ?)",
            (plan_id, approver, time.time(), plan_hash),
        )

    def approvals(self, plan_id: int) -> builtins.list[Approval]:
        """Each approval of the plan, oldest first."""
        rows = self.db.query(
            "SELECT approver, at, plan_hash FROM plan_approvals WHERE plan_id = ? ORDER BY at", (plan_id,)
        )
        return [Approval(str(a), float(t), str(h)) for a, t, h in rows]

    # -- review notes ----------------------------------------------------------------------------
    def add_note(self, plan_id: int, author: str, note: str) -> None:
        if note.strip():
            self.db.execute(
                "INSERT INTO plan_notes (plan_id, author, at, note) VALUES (?, ?, ?, ?)",
                (plan_id, author, time.time(), note.strip()),
            )

    def notes(self, plan_id: int) -> builtins.list[Note]:
        rows = self.db.query("SELECT author, at, note FROM plan_notes WHERE plan_id = ? ORDER BY at, id", (plan_id,))
        return [Note(*r) for r in rows]
