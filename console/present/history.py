"""View models of runs and the audit log (pure): rows for the Runs page, CSV and JSON exports."""

from __future__ import annotations

import csv
import io
import json
import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence

from console.core.format import human_rate, plural, table_text, timestamp
from console.core.model import DIR_OFFLINE, PARTITION_CANCELLED, BrokerId, ClusterState
from console.core.states import RunState, WaveState
from console.moves.cancel import cancelled_text
from console.moves.progress import wave_bytes_done
from console.plans.plan import PlanEntry, parse_plan
from console.present.guardrails import Hold, HoldNotice
from console.present.outcomes import group_outcomes
from console.storage.audit import AuditEntry
from console.storage.clusters import name_of
from console.storage.runs import ELECTION_WAVE, Run, Wave, WaveOutcome


def waves_done(waves: list[Wave]) -> str:
    """``2/3``: waves completed of all."""
    return f"{sum(w.state is WaveState.COMPLETED for w in waves)}/{len(waves)}"


def run_json(
    run: Run,
    waves: list[Wave],
    stuck: str | None = None,
    problems: str = "",
    names: Mapping[str, str] | None = None,
    cancelled: Sequence[str] = (),
    held: HoldNotice | None = None,
) -> dict[str, object]:
    """One run as ``python -m console runs --json`` prints it (``stuck``: why an active run makes no
    progress; ``problems``: what of it did not reach where the plan asked, :func:`problems_text`;
    ``cluster``: the key runs are stored under, its id; ``cluster_name``: the name the pages know it
    by, the key where none is known; ``cancelled``: its partitions an operator cancelled, by name;
    ``held``: what the guardrails hold it for, as ``held_by``, and whether one paused it)."""
    return {
        "run": run.id,
        "cluster": run.cluster,
        "cluster_name": name_of(run.cluster, names or {}),
        "name": run.name,
        "author": run.author,
        "state": run.state.value,
        "waves": waves_done(waves),
        "rate": run.rate,
        "plan_hash": run.plan_hash,
        "created_at": run.created_at,
        "path": run.path.value,
        "stuck": stuck,
        "elect_leaders": run.elect_leaders,
        "problems": problems or None,
        "cancelled": list(cancelled),
        "held_by": held.held_by() if held is not None else [],
        "paused_by_guardrail": held is not None and held.hold is Hold.PAUSED,
    }


def throttle_text(rate: int | None) -> str:
    """A run's throttle as the pages and the CLI print it: ``9.5 MB/s``, or ``not throttled``."""
    return human_rate(rate) if rate else "not throttled"


def run_rows(runs: Iterable[Run], waves: dict[int, list[Wave]]) -> list[dict[str, object]]:
    """The Runs page's table of runs (every cell text or a number)."""
    return [
        {
            "run": r.id,
            "name": r.name,
            "author": r.author,
            "state": r.state.value,
            "waves": waves_done(waves.get(r.id, [])),
            "throttle": throttle_text(r.rate),
            "started": timestamp(r.created_at),
            "updated": timestamp(r.updated_at),
            "plan hash": r.plan_hash,
        }
        for r in runs
    ]


def runs_text(
    runs: Iterable[tuple[Run, list[Wave], str | None]],
    problems: Mapping[int, str] | None = None,
    names: Mapping[str, str] | None = None,
    held: Mapping[int, HoldNotice] | None = None,
) -> str:
    """``python -m console runs`` without ``--json``: (run, its waves, why it is stuck) per line;
    a ``problems`` column (what of a run did not reach where its plan asked, by run id) when a run
    has some; the cluster by the name the pages know it by (``names``), its id where none is known;
    a run a guardrail holds (``held``, by run id) marked in its state (``paused (guardrail)``), with
    what holds it on a line under it."""
    problems, held = problems or {}, held or {}
    listed = list(runs)
    rows = [
        {
            "run": r.id,
            "cluster": name_of(r.cluster, names or {}),
            "name": r.name,
            "author": r.author,
            "state": held[r.id].state_text if r.id in held else r.state.value,
            "waves": waves_done(w),
            "throttle": throttle_text(r.rate),
            "stuck": stuck or "",
            "problems": problems.get(r.id, ""),
        }
        for r, w, stuck in listed
    ]
    columns = ["run", "cluster", "name", "author", "state", "waves", "throttle", "stuck"]
    if any(r["problems"] for r in rows):
        columns.append("problems")
    if not rows:
        return "No runs."
    table = table_text(rows, columns)
    lines = table.splitlines()
    if len(lines) != len(rows) + 1:  # a cell of several lines: what holds each run after the table
        return "\n".join([table, *(held[r.id].line for r, _, _ in listed if r.id in held)])
    out = lines[:1]
    for (r, _, _), line in zip(listed, lines[1:], strict=True):
        out += [line, f"  {held[r.id].words}"] if r.id in held else [line]
    return "\n".join(out)


def gone_rows(outcomes: Iterable[WaveOutcome]) -> list[dict[str, object]]:
    """Partitions a wave was accepted for that no longer exist (their topic deleted, or the
    partitions changed): the run no longer waits for them."""
    return [{"wave": o.wave, "partition": o.name, "why": o.message} for o in group_outcomes(outcomes).gone]


def rejected_rows(outcomes: Iterable[WaveOutcome]) -> list[dict[str, object]]:
    """Partitions a wave's request was refused for (the closing election's outcomes and the
    replicas left out of their log dir left out)."""
    return [{"wave": o.wave, "partition": o.name, "error": o.message} for o in group_outcomes(outcomes).rejected]


def not_in_dir_rows(outcomes: Iterable[WaveOutcome]) -> list[dict[str, object]]:
    """Replicas the run left out of the log dir its plan asked, because a dir went offline during
    the move (the broker and the dir are named in "what happened", with what to do)."""
    return [
        {"wave": o.wave, "partition": o.name, "what happened": o.message} for o in group_outcomes(outcomes).not_in_dir
    ]


def not_in_dir_text(outcomes: Iterable[WaveOutcome]) -> str:
    """``1 replica not in its log dir (a dir went offline)``, or empty."""
    n = sum(1 for o in outcomes if o.code == DIR_OFFLINE)
    return f"{plural(n, 'replica')} not in its log dir (a dir went offline)" if n else ""


def cancelled_keys(outcomes: Iterable[WaveOutcome]) -> list[tuple[str, int]]:
    """A run's partitions an operator cancelled while it ran (back to their original replicas)."""
    return sorted({o.key for o in outcomes if o.code == PARTITION_CANCELLED})


def problems_text(outcomes: Iterable[WaveOutcome]) -> str:
    """What of a run did not reach where its plan asked, or empty: the runs list's ``problems``
    (``1 partition cancelled: t-5; 1 replica not in its log dir (a dir went offline)``)."""
    listed = list(outcomes)
    return "; ".join(t for t in (cancelled_text(cancelled_keys(listed)), not_in_dir_text(listed)) if t)


def cancelled_rows(outcomes: Iterable[WaveOutcome]) -> list[dict[str, object]]:
    """Partitions an operator cancelled while the run went on, and where they are now."""
    return [
        {"wave": o.wave, "partition": o.name, "what happened": o.message} for o in group_outcomes(outcomes).cancelled
    ]


def record_line(run: Run, outcomes: Iterable[WaveOutcome]) -> str | None:
    """What became of a run some of whose partitions were cancelled, in a sentence ("Completed,
    1 partition cancelled: t-5."); None when none was."""
    keys = cancelled_keys(outcomes)
    if not keys:
        return None
    said = cancelled_text(keys)
    back = "back on their brokers before the run (each one's order below)"
    if run.state is RunState.PARTLY_CANCELLED:
        return f"Completed, {said}: {back}; every other partition reached its target."
    if run.active:
        return f"{said[:1].upper()}{said[1:]}: {back}; the run goes on with the rest."
    return f"{run.state.value.capitalize()}, {said}: {back}."


def not_elected_rows(outcomes: Iterable[WaveOutcome]) -> list[dict[str, object]]:
    """Partitions whose preferred leader the run's closing election did not make lead, and why."""
    return [{"partition": o.name, "code": o.code, "error": o.message} for o in group_outcomes(outcomes).not_elected]


def election_line(run: Run, outcomes: Iterable[WaveOutcome]) -> str | None:
    """What the run's closing preferred leader election did (or is to do); None for a run without one."""
    if not run.elect_leaders:
        return None
    mine = [o for o in outcomes if o.wave == ELECTION_WAVE]
    elected = sum(1 for o in mine if o.accepted)
    if run.state in (RunState.COMPLETED, RunState.PARTLY_CANCELLED):
        of = " (of the partitions that moved; not of those cancelled)" if run.state is RunState.PARTLY_CANCELLED else ""
        return (
            f"Preferred leader election{of}: {elected} elected, {len(mine) - elected} not."
            if mine
            else f"Preferred leader election{of}: every preferred replica led already."
        )
    if run.active:
        return "Ends with a preferred leader election of its partitions, after the last wave."
    return "No preferred leader election: the run did not complete."


def wave_rows(
    state: ClusterState | None,
    waves: Iterable[Wave],
    outcomes: Iterable[WaveOutcome],
    before: Mapping[tuple[str, int], Sequence[BrokerId]] | None = None,
) -> list[dict[str, object]]:
    """Per wave: its partitions, how many are at their target now, the rejected ones, those an
    operator cancelled, and its progress in bytes copied
    (:func:`console.moves.progress.wave_bytes_done`; ``before``: the partitions' replicas before
    the run, as its rollback holds them)."""
    got = group_outcomes(outcomes)
    rejected = Counter(o.wave for o in got.rejected)
    cancelled = Counter(o.wave for o in got.cancelled)
    rows: list[dict[str, object]] = []
    index = state.partition_index if state is not None else {}
    for w in waves:
        entries = parse_plan(w.entries_json).entries
        done = sum(
            1 for e in entries if (p := index.get(e.key)) is not None and not p.reassigning and p.replicas == e.replicas
        )
        rows.append(
            {
                "wave": w.number,
                "state": w.state.value,
                "partitions": len(entries),
                "at target": done if state is not None else "—",
                "rejected": rejected.get(w.number, 0),
                "cancelled": cancelled.get(w.number, 0),
                "progress": _wave_progress(state, w, entries, before),
                "submitted": timestamp(w.submitted_at),
                "completed": timestamp(w.completed_at),
            }
        )
    return rows


def _wave_progress(
    state: ClusterState | None,
    w: Wave,
    entries: Sequence[PlanEntry],
    before: Mapping[tuple[str, int], Sequence[BrokerId]] | None,
) -> float | None:
    """A wave's percent of bytes copied: 100 once done, 0 before it starts; None without a snapshot."""
    if state is None or not entries:
        return None
    if w.state is WaveState.COMPLETED:
        return 100.0
    if w.state is WaveState.PENDING:
        return 0.0
    got = wave_bytes_done(state, entries, before)
    return None if got is None else math.floor(got)


def _audit_dicts(entries: Iterable[AuditEntry], names: Mapping[str, str]) -> list[dict[str, object]]:
    """The audit entries as the JSON export writes them (None where nothing was recorded); the
    cluster by its name where ``names`` knows it (cluster key → name), else by its key (its id)."""
    return [
        {
            "id": a.id,
            "ref": a.ref,
            "at": timestamp(a.at),
            "user": a.user,
            "cluster": name_of(a.cluster, names),
            "action": a.action,
            "outcome": a.outcome,
            "plan hash": a.plan_hash,
            "request": a.request,
            "response": a.response,
        }
        for a in entries
    ]


def audit_rows(entries: Iterable[AuditEntry], names: Mapping[str, str] | None = None) -> list[dict[str, object]]:
    """The audit log's table (and CSV): an empty cell where nothing was recorded (``ref`` is text,
    so the column has one type); the cluster by name where ``names`` knows it."""
    return [
        {k: "" if v is None else (str(v) if k == "ref" else v) for k, v in r.items()}
        for r in _audit_dicts(entries, names or {})
    ]


def audit_csv(entries: Iterable[AuditEntry], names: Mapping[str, str] | None = None) -> str:
    rows = audit_rows(entries, names)
    out = io.StringIO()
    writer = csv.DictWriter(
        out, fieldnames=["id", "ref", "at", "user", "cluster", "action", "outcome", "plan hash", "request", "response"]
    )
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue()


def audit_json(entries: Iterable[AuditEntry], names: Mapping[str, str] | None = None) -> str:
    """The export: each entry's cluster by name (``cluster``) and by the key it is stored under (``cluster_id``)."""
    listed = list(entries)
    return json.dumps(
        [
            {
                **r,
                "cluster_id": a.cluster,
                "request": json.loads(str(r["request"])),
                "response": json.loads(str(r["response"])) if r["response"] else None,
            }
            for a, r in zip(listed, _audit_dicts(listed, names or {}), strict=True)
        ]
    )


def min_isr_warnings(entries: Iterable[AuditEntry], run_id: int) -> list[str]:
    """What a run saw change in its topics' ``min.insync.replicas`` (its ``min-isr-changed`` audit
    entries), in words, oldest first."""
    out = []
    for e in entries:
        if e.action != "min-isr-changed" or json.loads(e.request).get("run") != run_id or not e.response:
            continue
        said = json.loads(e.response)
        changes = ", ".join(f"{t} {c['was']} → {c['now']}" for t, c in said.get("changed", {}).items())
        out.append(f"{timestamp(e.at)}: min.insync.replicas changed ({changes}). {said['why']}")
    return out
