"""The guardrails holding each active run (:mod:`console.runs.guarding` writes them): what they saw,
since when, and what a person acknowledged by resuming the run while it was so (the run is not
paused again for that, only for something new)."""

from __future__ import annotations

import json
from dataclasses import dataclass

from console.storage.db import StorePart

SCHEMA = """
CREATE TABLE IF NOT EXISTS run_holds (
    run_id       INTEGER PRIMARY KEY REFERENCES runs(id),
    since        REAL NOT NULL,
    concerns     TEXT NOT NULL,
    acknowledged TEXT NOT NULL,
    paused       INTEGER NOT NULL
);
"""
"""Migration 7."""


@dataclass(frozen=True)
class Held:
    """What holds a run, as the guardrails last said it."""

    run_id: int
    since: float
    """When the guardrails started holding it (the first concern of this hold)."""
    concerns_json: str
    """The concerns holding it now: a JSON list of ``Concern.to_dict()`` (empty: none now)."""
    acknowledged_json: str
    """The concerns a person resumed the run over: a JSON list of ``[rule, text]``."""
    paused: bool = False
    """A guardrail paused the run (and no one resumed it since): it may resume it, where allowed."""

    @property
    def concerns(self) -> list[dict[str, object]]:
        found: list[dict[str, object]] = json.loads(self.concerns_json)
        return found

    @property
    def acknowledged(self) -> set[tuple[str, str]]:
        return {(str(rule), str(text)) for rule, text in json.loads(self.acknowledged_json)}


class RunHolds(StorePart):
    def get(self, run_id: int) -> Held | None:
        row = self.db.one(
            "SELECT run_id, since, concerns, acknowledged, paused FROM run_holds WHERE run_id = ?", (run_id,)
        )
        return None if row is None else Held(int(row[0]), float(row[1]), str(row[2]), str(row[3]), bool(row[4]))

    def held(self, run_ids: list[int]) -> dict[int, Held]:
        """The runs among ``run_ids`` that guardrails hold now."""
        return {h.run_id: h for h in self._of(run_ids) if h.concerns}

    def shown(self, run_ids: list[int]) -> dict[int, Held]:
        """What the pages and the CLI say of the runs among ``run_ids`` (one query): those that
        guardrails hold now, and those a guardrail paused that no one has resumed since (what
        paused them may have cleared: the run still waits)."""
        return {h.run_id: h for h in self._of(run_ids) if h.concerns or h.paused}

    def _of(self, run_ids: list[int]) -> list[Held]:
        if not run_ids:
            return []
        marks = ",".join("?" * len(run_ids))
        rows = self.db.query(
            f"SELECT run_id, since, concerns, acknowledged, paused FROM run_holds WHERE run_id IN ({marks})", run_ids
        )
        return [Held(int(r), float(s), str(c), str(a), bool(p)) for r, s, c, a, p in rows]

    def hold(self, run_id: int, concerns: list[dict[str, object]], now: float, paused: bool = False) -> Held:
        """The concerns holding ``run_id`` now (since ``now`` unless it was held already); ``paused``:
        a guardrail paused it now (kept until someone or something resumes it)."""
        before = self.get(run_id)
        since = before.since if before is not None and before.concerns else now
        acknowledged = before.acknowledged_json if before is not None else "[]"
        paused = paused or (before is not None and before.paused)
        text = json.dumps(concerns)
        with self.db.transaction() as db:
            db.execute("DELETE FROM run_holds WHERE run_id = ?", (run_id,))
            db.execute(
                "INSERT INTO run_holds (run_id, since, concerns, acknowledged, paused) VALUES (?, ?, ?, ?, ?)",
                (run_id, since, text, acknowledged, int(paused)),
            )
        return Held(run_id, since, text, acknowledged, paused)

    def acknowledge(self, run_id: int) -> None:
        """A person resumed the run: what holds it now is acknowledged (not held for again)."""
        before = self.get(run_id)
        if before is None:
            return
        seen = sorted(before.acknowledged | {(str(c["rule"]), str(c["text"])) for c in before.concerns})
        with self.db.transaction() as db:
            db.execute(
                "UPDATE run_holds SET concerns = ?, acknowledged = ?, paused = 0 WHERE run_id = ?",
                ("[]", json.dumps([list(x) for x in seen]), run_id),
            )

    def clear(self, run_id: int, resumed: bool = False) -> None:
        """Nothing holds the run any more (``resumed``: and it goes on, or it ended)."""
        sql = "UPDATE run_holds SET concerns = ?" + (", paused = 0" if resumed else "") + " WHERE run_id = ?"
        self.db.execute(sql, ("[]", run_id))
