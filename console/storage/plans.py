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
from console.storage.db import Database, StorePart

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
-- Approvals of a plan (the two-person rule): of that exact content (plan_hash), on that cluster.
CREATE TABLE IF NOT EXISTS plan_approvals (
    plan_id   INTEGER NOT NULL REFERENCES plans(id),
    approver  TEXT NOT NULL,
    at        REAL NOT NULL,
    plan_hash TEXT NOT NULL,
    cluster   TEXT  -- the cluster id it was given on (a store made before it: the plan's, set by migrate)
);
-- Everyone who authored a version of a plan: who saved it, who overwrote it, and the authors of
-- the plan it was brought up to date from (none of them may approve it).
CREATE TABLE IF NOT EXISTS plan_authors (
    plan_id   INTEGER NOT NULL REFERENCES plans(id),
    author    TEXT NOT NULL,
    PRIMARY KEY (plan_id, author)
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
    cluster: str
    """The cluster id it was given on: it counts only for a run on that cluster."""


_SUMMARY = "id, name, cluster, author, created_at, updated_at, partitions, fingerprint, parent_id"


_ADDED = {"parent_id": "INTEGER", "report_json": "TEXT", "cluster": "TEXT"}
"""Columns added since the first schema, with their types."""


def migrate(db: Database) -> None:
    """Bring a store made by an older console up to :data:`SCHEMA`: columns added since, the
    cluster of each approval (its plan's: a plan belongs to one cluster) and the authors of each
    plan (its author and, for a plan brought up to date, its parent's authors). Reads only, unless
    something is missing; checked again under the write lock (another process may be migrating
    the same file)."""

    def missing() -> list[tuple[str, str]]:
        have = {str(r[1]) for r in db.query("PRAGMA table_info(plans)")}
        approvals = {str(r[1]) for r in db.query("PRAGMA table_info(plan_approvals)")}
        return [("plans", c) for c in ("parent_id", "report_json") if c not in have] + (
            [] if "cluster" in approvals else [("plan_approvals", "cluster")]
        )

    def authorless() -> bool:
        return db.one("SELECT 1 FROM plans WHERE id NOT IN (SELECT plan_id FROM plan_authors) LIMIT 1") is not None

    if missing() or authorless():
        with db.transaction():
            for table, column in missing():
                db.execute(f"ALTER TABLE {table} ADD COLUMN {column} {_ADDED[column]}")
            db.execute(
                "UPDATE plan_approvals SET cluster = (SELECT cluster FROM plans WHERE plans.id = plan_id) "
                "WHERE cluster IS NULL"
            )
            _backfill_authors(db)


def _backfill_authors(db: Database) -> None:
    """The authors of plans saved before authors were kept: a plan's own author, and its parent's
    authors (parents first: a plan is saved after the plan it was brought up to date from)."""
    rows = db.query(
        "SELECT id, author, parent_id FROM plans WHERE id NOT IN (SELECT plan_id FROM plan_authors) ORDER BY id"
    )
    for plan_id, author, parent_id in rows:
        db.execute("INSERT OR IGNORE INTO plan_authors (plan_id, author) VALUES (?, ?)", (plan_id, author))
        if parent_id is not None:
            db.execute(
                "INSERT OR IGNORE INTO plan_authors (plan_id, author) SELECT ?, author FROM plan_authors "
                "WHERE plan_id = ?",
                (plan_id, parent_id),
            )


class PlanStore(StorePart):
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
        a report describes one plan). ``author`` joins the plan's authors (with the parent's); an
        overwrite by someone other than its last author clears its approvals."""
        name = name.strip()
        if not name:
            raise StoreError("A saved plan needs a name.", "Type a name for the draft.")
        basis = msgspec.json.encode([(t, p, r) for (t, p), r in sorted(plan.basis.items())]).decode()
        now = time.time()
        values = (author, now, len(plan), fingerprint, plan.to_json(), rollback.to_json(), basis, report_json)
        with self.db.transaction() as db:
            row = db.one("SELECT id, author FROM plans WHERE cluster = ? AND name = ?", (cluster, name))
            if row is None:
                plan_id = db.execute(
                    "INSERT INTO plans (name, cluster, author, created_at, updated_at, partitions, fingerprint, "
                    "plan_json, rollback_json, basis_json, report_json, parent_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (name, cluster, author, now, *values[1:], parent_id),
                )
            else:
                plan_id = int(row[0])
                db.execute(
                    "UPDATE plans SET author = ?, updated_at = ?, partitions = ?, fingerprint = ?, plan_json = ?, "
                    "rollback_json = ?, basis_json = ?, report_json = ?, parent_id = COALESCE(?, parent_id) WHERE id = ?",
                    (*values, parent_id, plan_id),
                )
                if row[1] != author:
                    db.execute("DELETE FROM plan_approvals WHERE plan_id = ?", (plan_id,))
            self._add_authors(plan_id, author, parent_id)
            return plan_id

    def _add_authors(self, plan_id: int, author: str, parent_id: int | None) -> None:
        self.db.execute("INSERT OR IGNORE INTO plan_authors (plan_id, author) VALUES (?, ?)", (plan_id, author))
        if parent_id is not None:
            self.db.execute(
                "INSERT OR IGNORE INTO plan_authors (plan_id, author) SELECT ?, author FROM plan_authors "
                "WHERE plan_id = ?",
                (plan_id, parent_id),
            )

    def authors(self, plan_id: int) -> frozenset[str]:
        """Everyone who authored a version of the plan (saved it, overwrote it, or authored the
        plan it was brought up to date from)."""
        return frozenset(
            str(a) for (a,) in self.db.query("SELECT author FROM plan_authors WHERE plan_id = ?", (plan_id,))
        )

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
            db.execute("DELETE FROM plan_authors WHERE plan_id = ?", (plan_id,))
            db.execute("DELETE FROM plans WHERE id = ?", (plan_id,))

    # -- approvals (two-person rule) -------------------------------------------------------------
    def approve(self, plan_id: int, approver: str, plan_hash: str, cluster: str) -> None:
        """``approver`` approved content ``plan_hash`` of the plan, for a run on ``cluster``."""
        self.db.execute(
            "INSERT INTO plan_approvals (plan_id, approver, at, plan_hash, cluster) VALUES (?, ?, ?, ?, ?)",
            (plan_id, approver, time.time(), plan_hash, cluster),
        )

    def approvals(self, plan_id: int) -> builtins.list[Approval]:
        """Each approval of the plan, oldest first."""
        rows = self.db.query(
            "SELECT approver, at, plan_hash, cluster FROM plan_approvals WHERE plan_id = ? ORDER BY at", (plan_id,)
        )
        return [Approval(str(a), float(t), str(h), str(c or "")) for a, t, h, c in rows]

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
