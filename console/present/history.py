"""View models of runs and the audit log (pure): rows for the Runs page, CSV and JSON exports."""

from __future__ import annotations

import csv
import io
import json
from typing import Iterable

from console.core.format import timestamp
from console.core.model import ClusterState
from console.plans.plan import parse_plan
from console.core.states import WaveState
from console.storage.audit import AuditEntry
from console.storage.runs import Run, Wave, WaveOutcome


def waves_done(waves: list[Wave]) -> str:
    """``2/3``: waves completed of all."""
    return f"{sum(w.state is WaveState.COMPLETED for w in waves)}/{len(waves)}"


def run_json(run: Run, waves: list[Wave]) -> dict[str, object]:
    """One run as ``python -m console runs --json`` prints it."""
    return {"run": run.id, "cluster": run.cluster, "name": run.name, "author": run.author, "state": run.state.value,
            "waves": waves_done(waves), "rate": run.rate, "plan_hash": run.plan_hash, "created_at": run.created_at,
            "path": run.path.value}


def run_rows(runs: Iterable[Run], waves: dict[int, list[Wave]]) -> list[dict[str, object]]:
    return [{"run": r.id, "name": r.name, "author": r.author, "state": r.state.value,
             "waves": waves_done(waves.get(r.id, [])),
             "throttle B/s": r.rate, "started": timestamp(r.created_at), "updated": timestamp(r.updated_at),
             "plan hash": r.plan_hash} for r in runs]


def wave_rows(state: ClusterState | None, waves: Iterable[Wave], outcomes: Iterable[WaveOutcome]) -> list[dict[str, object]]:
    """Per wave: its partitions, how many are at their target now, and the rejected ones."""
    rejected: dict[int, int] = {}
    for o in outcomes:
        if not o.accepted:
            rejected[o.wave] = rejected.get(o.wave, 0) + 1
    rows: list[dict[str, object]] = []
    index = state.partition_index if state is not None else {}
    for w in waves:
        entries = parse_plan(w.entries_json).entries
        done = sum(1 for e in entries if (p := index.get(e.key)) is not None and not p.reassigning
                   and p.replicas == e.replicas)
        rows.append({"wave": w.number, "state": w.state.value, "partitions": len(entries),
                     "at target": done if state is not None else None, "rejected": rejected.get(w.number, 0),
                     "progress": round(100 * done / len(entries)) if entries and state is not None else None,
                     "submitted": timestamp(w.submitted_at), "completed": timestamp(w.completed_at)})
    return rows


def audit_rows(entries: Iterable[AuditEntry]) -> list[dict[str, object]]:
    return [{"id": a.id, "ref": a.ref, "at": timestamp(a.at), "user": a.user, "cluster": a.cluster, "action": a.action,
             "outcome": a.outcome, "plan hash": a.plan_hash, "request": a.request, "response": a.response}
            for a in entries]


def audit_csv(entries: Iterable[AuditEntry]) -> str:
    rows = audit_rows(entries)
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=["id", "ref", "at", "user", "cluster", "action", "outcome", "plan hash",
                                             "request", "response"])
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue()


def audit_json(entries: Iterable[AuditEntry]) -> str:
    return json.dumps([{**r, "request": json.loads(str(r["request"])),
                        "response": json.loads(str(r["response"])) if r["response"] else None}
                       for r in audit_rows(entries)])
