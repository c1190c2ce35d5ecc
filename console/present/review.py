"""View models of a plan review (pure): rows for the Review/Drafts pages, text and JSON for the CLI."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import asdict
from datetime import datetime
from typing import Any

from console.core.format import human_bytes, ids_text, plural, table_text
from console.core.model import BrokerId, ClusterState, Finding, Severity
from console.plans.diff import PartitionChange, PlanDiff
from console.plans.quality import Report
from console.plans.rules.codes import TIERED_LOCAL_ONLY
from console.storage.plans import PlanSummary
from console.storage.runs import Run


def tiered_moving(d: PlanDiff, tiered: Collection[str]) -> list[str]:
    """The tiered topics (``remote.storage.enable=true``) that ``d`` copies replicas of (adding
    replicas, or replicas moving to another log dir of their broker), sorted."""
    return d.copied_topics(tiered)


def local_copy_topics(findings: Iterable[Finding], d: PlanDiff, tiered: Collection[str]) -> list[str]:
    """The tiered topics a reviewed plan copies: those its findings name (replicas added) and those
    it moves between the log dirs of a broker (a dir-only move copies the local log only too)."""
    return sorted(set(local_only_topics(findings)) | set(tiered_moving(d, tiered)))


def local_only_topics(findings: Iterable[Finding]) -> list[str]:
    """The tiered topics the reviewed plan adds replicas of (from their findings), in topic order."""
    return [f.topic for f in findings if f.code == TIERED_LOCAL_ONLY and f.topic is not None]


def tiered_note(topics: Sequence[str], limit: int = 5) -> str:
    """What the bytes to copy and the estimate mean for tiered topics, in words."""
    names = ", ".join(topics[:limit]) + (f" and {len(topics) - limit} more" if len(topics) > limit else "")
    return (
        f"Tiered storage: {plural(len(topics), 'topic')} ({names}) with remote.storage.enable=true. A move copies "
        "their local log only (what DescribeLogDirs reports): the bytes to copy, the waves and the estimate count "
        "that, and the segments in remote storage are not copied."
    )


def ran_text(runs: Sequence[Run]) -> str | None:
    """What Review says of a plan whose moves are running or have run (``runs``: the runs of the same
    content, newest first, whichever saved plan they were submitted from):
    its findings are then against the cluster the run changed (a stale basis, partitions already at
    their target), not a reason the plan is wrong. None when it never ran."""
    if not runs:
        return None
    run = runs[0]
    at = datetime.fromtimestamp(run.created_at).strftime("%Y-%m-%d %H:%M")
    # runs are found by the plan's content: another saved plan with the same moves shows them too
    was = f"run #{run.id} “{run.name}”, {run.state.value}, by {run.author}, submitted {at}"
    more = f" (and {plural(len(runs) - 1, 'earlier run')})" if len(runs) > 1 else ""
    if run.active:
        return (
            f"These moves are running: {was}{more}. The findings below compare them with the cluster as the "
            "run is changing it; follow the run on the Runs page."
        )
    return (
        f"These moves ran: {was}{more}. The findings below compare them with the cluster as the run left it "
        "(partitions already at their target, a basis the run changed)."
    )


def rack_map(state: ClusterState) -> dict[BrokerId, str]:
    return {b.id: b.rack for b in state.brokers if b.rack}


def _leader(b: BrokerId | None) -> str:
    return "none" if b is None else str(b)


def change_row(c: PartitionChange, racks: Mapping[BrokerId, str]) -> dict[str, Any]:
    def rk(ids: Sequence[BrokerId]) -> str:
        return ",".join(racks.get(b, "?") for b in ids)

    note = []
    if c.in_flight:
        note.append("in flight: moves from its original replicas")
    if c.needs_election:
        note.append(f"preferred leader {c.preferred_leader} needs an election")
    return {
        "partition": c.name,
        "change": c.kind.value,
        "current": ids_text(c.current),
        "target": ids_text(c.target),
        "AR": ids_text(c.adding),
        "RR": ids_text(c.removing),
        "leader": f"{_leader(c.leader_before)} → {_leader(c.leader_after)}"
        if c.leader_before != c.leader_after
        else _leader(c.leader_after),
        "racks before": rk(c.current),
        "racks after": rk(c.target),
        "log dirs": ",".join(c.log_dirs) if c.log_dirs else "any",
        "to copy": _to_copy_text(c),
        "bytes to copy": c.bytes_to_copy,
        "bytes between dirs": c.dir_bytes_to_copy,
        "note": "; ".join(note),
    }


def _to_copy_text(c: PartitionChange) -> str:
    """``10.0 MB`` over the network, ``5.0 MB between dirs`` on a broker's disks, or both; ``?`` unknown."""
    parts = []
    if c.adding or not c.dir_copies:
        parts.append(human_bytes(c.bytes_to_copy) if c.size is not None else "?")
    if c.dir_copies:
        unknown = any(size is None for _, size in c.dir_copies)
        parts.append(("?" if unknown else human_bytes(c.dir_bytes_to_copy)) + " between dirs")
    return " + ".join(parts)


def copy_text(d: PlanDiff) -> str:
    """What the plan copies: ``10.0 MB to copy``, with ``+ 5.0 MB between dirs`` (on a broker's own
    disks, no network) when some replica changes dir, and ``(some sizes unknown)``."""
    dirs = d.dir_bytes_to_copy
    return (
        f"{human_bytes(d.bytes_to_copy)} to copy"
        + (f" + {human_bytes(dirs)} between dirs (on a broker's own disks)" if dirs else "")
        + ("" if d.sizes_known else " (some sizes unknown)")
    )


def change_rows(
    d: PlanDiff, racks: Mapping[BrokerId, str], changes: Iterable[PartitionChange] | None = None
) -> list[dict[str, Any]]:
    return [change_row(c, racks) for c in (d.changes if changes is None else changes)]


NUMERIC_BROKER_COLUMNS = ("replicas before", "replicas after", "bytes before", "bytes after")
"""Columns of :func:`broker_rows` kept as numbers for the before/after chart (the page hides them)."""


def broker_rows(d: PlanDiff) -> list[dict[str, Any]]:
    """Per broker before and after; bytes human (``copied in``: what it receives, ``copied out``:
    what it sends as leader), plus the numbers of :data:`NUMERIC_BROKER_COLUMNS` for the chart."""
    return [
        {
            "broker": b.broker,
            "rack": b.rack or "",
            "known": b.known,
            "replicas": f"{b.replicas_before} → {b.replicas_after}",
            "replicas before": b.replicas_before,
            "replicas after": b.replicas_after,
            "arriving": b.arriving,
            "leaving": b.leaving,
            "leaders before": b.leaders_before,
            "leaders after": b.leaders_after,
            "bytes before": b.bytes_before,
            "bytes after": b.bytes_after,
            "copied in": human_bytes(b.bytes_in),
            "copied out": human_bytes(b.bytes_out),
            "disk": f"{human_bytes(b.bytes_before)} → {human_bytes(b.bytes_after)}",
        }
        for b in d.brokers
    ]


def rack_rows(d: PlanDiff) -> list[dict[str, Any]]:
    """Per rack before and after, in words and human bytes."""
    return [
        {
            "rack": r.rack,
            "replicas": f"{r.replicas_before} → {r.replicas_after}",
            "arriving": r.arriving,
            "leaving": r.leaving,
            "disk": f"{human_bytes(r.bytes_before)} → {human_bytes(r.bytes_after)}",
            "copied in": human_bytes(r.bytes_in),
        }
        for r in d.racks
    ]


def flow_rows(d: PlanDiff) -> list[dict[str, Any]]:
    """Who sends to whom, in numbers (the Sankey chart and ``diff --json``)."""
    return [{"from": f.source, "to": f.destination, "replicas": f.replicas, "bytes": f.bytes} for f in d.flows]


def flow_table(d: PlanDiff) -> list[dict[str, Any]]:
    """Who sends to whom, as a person reads it (the Review page and ``diff`` text)."""
    return [
        {"from broker": f.source, "to broker": f.destination, "replicas": f.replicas, "to copy": human_bytes(f.bytes)}
        for f in d.flows
    ]


def diff_json(d: PlanDiff, racks: Mapping[BrokerId, str], tiered: Collection[str] = ()) -> dict[str, Any]:
    """``diff --json``; ``tiered``: the cluster's tiered topics (``tiered_topics`` lists those the plan
    adds replicas of: their bytes count the local log only)."""
    return {
        "summary": d.summary(),
        "tiered_topics": tiered_moving(d, tiered),
        "partitions": [
            {
                **c._asdict(),
                "kind": c.kind.value,
                "current": list(c.current),
                "target": list(c.target),
                "adding": list(c.adding),
                "removing": list(c.removing),
                "log_dirs": list(c.log_dirs) if c.log_dirs else None,
                "bytes_to_copy": c.bytes_to_copy,
                "dir_bytes_to_copy": c.dir_bytes_to_copy,
                "dir_copies": [[int(b), size] for b, size in c.dir_copies],
                "racks_before": [racks.get(b) for b in c.current],
                "racks_after": [racks.get(b) for b in c.target],
            }
            for c in d.changes
        ],
        "brokers": [asdict(b) for b in d.brokers],
        "racks": [asdict(r) for r in d.racks],
        "flows": flow_rows(d),
    }


def diff_text(d: PlanDiff, racks: Mapping[BrokerId, str], limit: int = 200, tiered: Collection[str] = ()) -> str:
    s = d.summary()
    kinds = ", ".join(f"{n} {k}" for k, n in s["kinds"].items() if n)  # type: ignore[attr-defined]

    def n(key: str) -> int:
        value = s[key]
        return value if isinstance(value, int) else 0

    head = (
        f"{plural(n('partitions'), 'partition')} in the plan ({kinds}); {plural(n('replicas_added'), 'replica')} "
        f"added, {n('replicas_removed')} removed, {plural(n('leaders_changing'), 'leader')} "
        f"{'changes' if n('leaders_changing') == 1 else 'change'}; " + copy_text(d) + "."
    )
    moving = d.changed
    rows = change_rows(d, racks, moving[:limit])
    parts = [
        head,
        "Brokers:\n"
        + table_text(
            broker_rows(d),
            ["broker", "rack", "replicas", "arriving", "leaving", "leaders before", "leaders after", "disk"],
        ),
    ]
    if rows:
        parts.append(
            "Partitions:\n"
            + table_text(
                rows,
                ["partition", "change", "current", "target", "AR", "RR", "leader", "racks after", "to copy", "note"],
            )
            + (f"\n... and {len(moving) - limit} more (use --json for all)" if len(moving) > limit else "")
        )
    if d.flows:
        parts.append(
            "Movement (leader → new replica):\n"
            + table_text(flow_table(d), ["from broker", "to broker", "replicas", "to copy"])
        )
    local_only = tiered_moving(d, tiered)
    if local_only:
        parts.append(tiered_note(local_only))
    return "\n\n".join(parts)


def plan_cells(changes: Sequence[PartitionChange]) -> list[dict[str, Any]]:
    """Cells of the before/after broker × partition picture for ``changes``."""
    out: list[dict[str, Any]] = []
    for c in changes:
        sides = (
            ("before", c.current, c.leader_before, c.removing, "leaving"),
            ("after", c.target, c.leader_after, c.adding, "arriving"),
        )
        for when, brokers, leader, moving, word in sides:
            for b in brokers:
                role = "leader" if b == leader else (word if b in moving else "kept")
                label = "L" if b == leader else ""
                out.append({"partition": c.name, "broker": str(b), "when": when, "role": role, "label": label})
    return out


def plan_choice(p: PlanSummary) -> str:
    """A saved plan in the Review picker: number, name, size, author and when it last changed (left
    out when the name already says that minute, as a generated plan's default name does)."""
    at = f"{datetime.fromtimestamp(p.updated_at):%Y-%m-%d %H:%M}"
    return " · ".join(
        [f"#{p.id} {p.name}", plural(p.partitions, "partition"), p.author] + ([] if at in p.name else [at])
    )


def generator_warning(report: Report) -> str | None:
    """What the generator warned of when it made the plan, in words (the goal not fully reached,
    its warnings with what to do), for the review's verdict to say beside its own; None when it
    warned of nothing (its information, such as the topics a filter left out, is not a warning)."""
    warned = [f for f in report.findings if f.severity is not Severity.INFO]
    if report.reached and not warned:
        return None
    return " ".join(
        ([] if report.reached else ["The goal is not fully reached" + ("." if warned else " (its findings say why).")])
        + [f"{f.message} {f.hint}".strip() for f in warned]
    )
