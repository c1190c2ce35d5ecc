"""Decommission flows: which brokers, where the flow stands, the drain plan and run it follows,
and why it cannot go on (when it cannot). One row per flow; the flow resumes from it after a
reload or a restart (:mod:`console.services.decommission` moves it on)."""

from __future__ import annotations

import builtins
import json
import time
from dataclasses import dataclass

from console.core.model import BrokerId
from console.core.states import DecommissionStep
from console.storage.db import StorePart

SCHEMA = """
CREATE TABLE IF NOT EXISTS decommissions (
    id         INTEGER PRIMARY KEY,
    cluster    TEXT NOT NULL,
    brokers    TEXT NOT NULL,
    step       TEXT NOT NULL,
    author     TEXT NOT NULL,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    plan_id    INTEGER,
    plan_hash  TEXT,
    planned_at REAL,
    run_id     INTEGER,
    blocked    TEXT,
    notes      TEXT NOT NULL DEFAULT '[]'
);
CREATE INDEX IF NOT EXISTS decommissions_cluster ON decommissions (cluster, step);
"""

_COLUMNS = (
    "id, cluster, brokers, step, author, created_at, updated_at, plan_id, plan_hash, planned_at, run_id, blocked, notes"
)


@dataclass(frozen=True)
class Decommission:
    """One decommission flow as stored."""

    id: int
    cluster: str
    brokers: tuple[BrokerId, ...]
    step: DecommissionStep
    author: str
    created_at: float
    updated_at: float
    plan_id: int | None = None
    """The saved drain plan (from :attr:`DecommissionStep.REVIEW` on)."""
    plan_hash: str | None = None
    """Its hash: the run submitted from it carries the same."""
    planned_at: float | None = None
    run_id: int | None = None
    """The drain run (from :attr:`DecommissionStep.DRAIN` on)."""
    blocked: str | None = None
    """Why the flow cannot go on at its step now, and what to do; None when it can."""
    notes: tuple[str, ...] = ()
    """What each step did, oldest first (shown with the flow)."""

    @property
    def open(self) -> bool:
        return self.step.open


def _row(r: tuple[object, ...]) -> Decommission:
    return Decommission(
        id=int(str(r[0])),
        cluster=str(r[1]),
        brokers=tuple(BrokerId(int(b)) for b in json.loads(str(r[2]))),
        step=DecommissionStep(str(r[3])),
        author=str(r[4]),
        created_at=float(str(r[5])),
        updated_at=float(str(r[6])),
        plan_id=None if r[7] is None else int(str(r[7])),
        plan_hash=None if r[8] is None else str(r[8]),
        planned_at=None if r[9] is None else float(str(r[9])),
        run_id=None if r[10] is None else int(str(r[10])),
        blocked=None if r[11] is None else str(r[11]),
        notes=tuple(str(n) for n in json.loads(str(r[12]))),
    )


class DecommissionStore(StorePart):
    def create(self, cluster: str, brokers: tuple[BrokerId, ...], author: str) -> int:
        now = time.time()
        return self.db.execute(
            "INSERT INTO decommissions (cluster, brokers, step, author, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)",
            (cluster, json.dumps(sorted(int(b) for b in brokers)), DecommissionStep.CORDON.value, author, now, now),
        )

    def get(self, flow_id: int) -> Decommission | None:
        row = self.db.one(f"SELECT {_COLUMNS} FROM decommissions WHERE id = ?", (flow_id,))
        return None if row is None else _row(tuple(row))

    def list(self, cluster: str | None = None, open_only: bool = False) -> builtins.list[Decommission]:
        """Flows, newest first (of one cluster, or all; only those not done or abandoned)."""
        sql = f"SELECT {_COLUMNS} FROM decommissions" + (" WHERE cluster = ?" if cluster is not None else "")
        flows = [_row(tuple(r)) for r in self.db.query(sql + " ORDER BY id DESC", (cluster,) if cluster else ())]
        return [f for f in flows if f.open] if open_only else flows

    def update(
        self,
        flow_id: int,
        *,
        step: DecommissionStep | None = None,
        blocked: str | None = None,
        note: str | None = None,
        plan: tuple[int, str] | None = None,
        run_id: int | None = None,
    ) -> None:
        """Move the flow on (``step``), say why it cannot go on (``blocked``; None clears it), add a
        ``note``, link its drain ``plan`` (id, hash: clears the run) or its ``run_id``."""
        with self.db.transaction() as db:
            row = db.one("SELECT notes FROM decommissions WHERE id = ?", (flow_id,))
            if row is None:
                return
            notes = json.loads(str(row[0])) + ([note] if note else [])
            sets = ["updated_at = ?", "blocked = ?", "notes = ?"]
            args: list[object] = [time.time(), blocked, json.dumps(notes)]
            if step is not None:
                sets.append("step = ?")
                args.append(step.value)
            if plan is not None:
                sets += ["plan_id = ?", "plan_hash = ?", "planned_at = ?", "run_id = NULL"]
                args += [plan[0], plan[1], time.time()]
            if run_id is not None:
                sets.append("run_id = ?")
                args.append(run_id)
            db.execute(f"UPDATE decommissions SET {', '.join(sets)} WHERE id = ?", (*args, flow_id))
