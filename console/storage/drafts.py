"""Autosaved drafts: the Drafts page's draft and its undo steps, per user and cluster.

A user's draft for a cluster is a stack of steps: the draft is the top step, the steps below
are what Undo goes back to. Steps have absolute positions, so the page writes one step per
change (a new draft pushes a step, Undo drops the top one) instead of the whole stack. A step
with no plan is "no draft" (where the first draft started from). Plans are stored with their
basis (for the stale check), zlib-compressed.
"""

from __future__ import annotations

import time
import zlib
from dataclasses import dataclass

import msgspec

from console.core.model import BrokerId
from console.plans.plan import Plan, PlanEntry
from console.storage.db import StorePart

SCHEMA = """
CREATE TABLE IF NOT EXISTS draft_steps (
    user       TEXT NOT NULL,
    cluster    TEXT NOT NULL,
    pos        INTEGER NOT NULL,
    saved_at   REAL NOT NULL,
    partitions INTEGER NOT NULL,
    plan       BLOB,
    PRIMARY KEY (user, cluster, pos)
);
-- The last plan Generate made for a user on a cluster, with its report (kept across reloads).
CREATE TABLE IF NOT EXISTS generated_plans (
    user        TEXT NOT NULL,
    cluster     TEXT NOT NULL,
    saved_at    REAL NOT NULL,
    plan        BLOB NOT NULL,
    report_json TEXT NOT NULL,
    PRIMARY KEY (user, cluster)
);
"""


class _Stored(msgspec.Struct, array_like=True):
    entries: list[tuple[str, int, tuple[int, ...], tuple[str, ...] | None]]
    basis: list[tuple[str, int, tuple[int, ...]]]


def encode_plan(plan: Plan) -> bytes:
    stored = _Stored(
        [(e.topic, e.partition, e.replicas, e.log_dirs) for e in plan.entries],
        [(t, p, r) for (t, p), r in plan.basis.items()],
    )
    return zlib.compress(msgspec.msgpack.encode(stored), 1)


def decode_plan(blob: bytes) -> Plan:
    stored = msgspec.msgpack.decode(zlib.decompress(blob), type=_Stored)
    entries = [PlanEntry(t, p, tuple(BrokerId(b) for b in r), d) for t, p, r, d in stored.entries]
    return Plan.of(entries, {(t, p): tuple(BrokerId(b) for b in r) for t, p, r in stored.basis})


@dataclass(frozen=True)
class Autosaved:
    """A user's autosaved draft for a cluster: ``steps[-1]`` is the draft, the others its undo
    history (oldest first); ``base`` is the position of ``steps[0]``."""

    base: int
    steps: list[Plan | None]
    saved_at: float

    @property
    def draft(self) -> Plan | None:
        return self.steps[-1]

    @property
    def history(self) -> list[Plan | None]:
        return self.steps[:-1]


class DraftStore(StorePart):
    def push(self, user: str, cluster: str, pos: int, plan: Plan | None, keep: int) -> None:
        """Make ``plan`` the step at ``pos`` (the top: steps above it are dropped) and keep at
        most ``keep`` steps below it."""
        blob = None if plan is None else encode_plan(plan)
        with self.db.transaction() as db:
            db.execute(
                "DELETE FROM draft_steps WHERE user = ? AND cluster = ? AND (pos >= ? OR pos < ?)",
                (user, cluster, pos, pos - keep),
            )
            db.execute(
                "INSERT INTO draft_steps (user, cluster, pos, saved_at, partitions, plan) VALUES (?, ?, ?, ?, ?, ?)",
                (user, cluster, pos, time.time(), 0 if plan is None else len(plan), blob),
            )

    def drop_above(self, user: str, cluster: str, pos: int) -> None:
        """Undo: the step at ``pos`` becomes the top."""
        self.db.execute("DELETE FROM draft_steps WHERE user = ? AND cluster = ? AND pos > ?", (user, cluster, pos))

    def replace(self, user: str, cluster: str, steps: list[Plan | None], base: int = 0) -> None:
        """The whole stack at once (``steps[-1]`` the draft), at positions from ``base``."""
        now = time.time()
        with self.db.transaction() as db:
            db.execute("DELETE FROM draft_steps WHERE user = ? AND cluster = ?", (user, cluster))
            db.executemany(
                "INSERT INTO draft_steps (user, cluster, pos, saved_at, partitions, plan) VALUES (?, ?, ?, ?, ?, ?)",
                [
                    (user, cluster, base + i, now, 0 if p is None else len(p), None if p is None else encode_plan(p))
                    for i, p in enumerate(steps)
                ],
            )

    def clear(self, user: str, cluster: str) -> None:
        self.db.execute("DELETE FROM draft_steps WHERE user = ? AND cluster = ?", (user, cluster))

    def load(self, user: str, cluster: str) -> Autosaved | None:
        """The autosaved stack, or None when there is none or its top is no draft."""
        rows = self.db.query(
            "SELECT pos, saved_at, plan FROM draft_steps WHERE user = ? AND cluster = ? ORDER BY pos", (user, cluster)
        )
        if not rows or rows[-1][2] is None:
            return None
        first = len(rows) - 1  # the steps that run without a gap up to the top (two tabs may leave gaps)
        while first > 0 and rows[first - 1][0] == rows[first][0] - 1:
            first -= 1
        rows = rows[first:]
        return Autosaved(
            int(rows[0][0]),
            [None if blob is None else decode_plan(bytes(blob)) for _, _, blob in rows],
            float(rows[-1][1]),
        )

    def steps(self, user: str, cluster: str) -> list[tuple[int, int]]:
        """(position, partitions) of each stored step, bottom first."""
        rows = self.db.query(
            "SELECT pos, partitions FROM draft_steps WHERE user = ? AND cluster = ? ORDER BY pos", (user, cluster)
        )
        return [(int(p), int(n)) for p, n in rows]

    def keep_generated(self, user: str, cluster: str, plan: Plan, report_json: str) -> None:
        """The last plan Generate made for ``user`` on the cluster, with its report (the one before goes)."""
        self.db.execute(
            "INSERT INTO generated_plans (user, cluster, saved_at, plan, report_json) VALUES (?, ?, ?, ?, ?) "
            "ON CONFLICT(user, cluster) DO UPDATE SET saved_at = excluded.saved_at, plan = excluded.plan, "
            "report_json = excluded.report_json",
            (user, cluster, time.time(), encode_plan(plan), report_json),
        )

    def forget_generated(self, user: str, cluster: str) -> None:
        self.db.execute("DELETE FROM generated_plans WHERE user = ? AND cluster = ?", (user, cluster))

    def generated(self, user: str, cluster: str) -> tuple[Plan, str] | None:
        """The last generated plan and its report (JSON), or None."""
        row = self.db.one(
            "SELECT plan, report_json FROM generated_plans WHERE user = ? AND cluster = ?", (user, cluster)
        )
        return None if row is None else (decode_plan(bytes(row[0])), str(row[1]))
