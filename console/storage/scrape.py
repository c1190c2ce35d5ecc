"""What the metrics read of the runs at scrape time: a few grouped queries, bounded, read only."""

from __future__ import annotations

import builtins
from dataclasses import dataclass

import msgspec

from console.core.states import ACTIVE_RUN_STATES, WaveState
from console.storage.db import StorePart, in_clause

MAX_RUNS = 500
"""Active runs described one by one at most (the oldest first); the counts by state cover all."""

_ACTIVE = in_clause(ACTIVE_RUN_STATES)
_UNSENT = in_clause((WaveState.PENDING, WaveState.SKIPPED))


@dataclass(frozen=True)
class ActiveRun:
    id: int
    cluster: str
    state: str
    owner: str | None
    """The worker holding its lease, if any."""
    lease_until: float | None
    stuck: bool
    waves: int
    waves_sent: int
    """Waves that reached the controller (submitting, running or past)."""
    partitions_left: int
    """Partitions of its waves not completed."""


class ScrapeReads(StorePart):
    def runs_by_state(self) -> dict[tuple[str, str], int]:
        """(cluster, state) → runs."""
        rows = self.db.query("SELECT cluster, state, COUNT(*) FROM runs GROUP BY cluster, state")
        return {(str(c), str(s)): int(n) for c, s, n in rows}

    def active_runs(self) -> builtins.list[ActiveRun]:
        rows = self.db.query(
            "SELECT r.id, r.cluster, r.state, r.owner, r.lease_until, p.stuck IS NOT NULL, "
            "(SELECT COUNT(*) FROM waves w WHERE w.run_id = r.id), "
            f"(SELECT COUNT(*) FROM waves w WHERE w.run_id = r.id AND w.state NOT IN {_UNSENT}) "
            f"FROM runs r LEFT JOIN run_progress p ON p.run_id = r.id WHERE r.state IN {_ACTIVE} ORDER BY r.id LIMIT ?",
            (MAX_RUNS,),
        )
        left = self._partitions_left([int(r[0]) for r in rows])
        return [
            ActiveRun(
                int(i),
                str(c),
                str(s),
                o,
                None if u is None else float(u),
                bool(st),
                int(n),
                int(sent),
                left.get(int(i), 0),
            )
            for i, c, s, o, u, st, n, sent in rows
        ]

    def _partitions_left(self, run_ids: builtins.list[int]) -> dict[int, int]:
        """Per run, the partitions of its waves that are not completed."""
        out: dict[int, int] = {}
        if not run_ids:
            return out
        marks = ", ".join("?" for _ in run_ids)
        for run_id, entries in self.db.query(
            f"SELECT run_id, entries_json FROM waves WHERE run_id IN ({marks}) AND state != ?",
            (*run_ids, WaveState.COMPLETED.value),
        ):
            out[int(run_id)] = out.get(int(run_id), 0) + len(msgspec.json.decode(entries)["partitions"])
        return out

    def throttles_set(self) -> dict[str, int]:
        """Per cluster, the throttle settings the console's runs set and have not taken off."""
        rows = self.db.query(
            "SELECT r.cluster, COUNT(*) FROM throttle_ledger l JOIN runs r ON r.id = l.run_id "
            "WHERE l.restored_at IS NULL GROUP BY r.cluster"
        )
        return {str(c): int(n) for c, n in rows}
