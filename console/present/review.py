"""View models of a plan review (pure): rows for the Review/Drafts pages, text and JSON for the CLI."""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict
from typing import Any, Iterable, Mapping, Sequence

from console.plans.diff import PartitionChange, PlanDiff
from console.core.format import human_bytes, ids_text, table_text
from console.core.model import BrokerId, ClusterState, Finding, Severity

def rack_map(state: ClusterState) -> dict[BrokerId, str]:
    return {b.id: b.rack for b in state.brokers if b.rack}


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
        "leader": f"{c.leader_before} → {c.leader_after}" if c.leader_before != c.leader_after else str(c.leader_after),
        "racks before": rk(c.current),
        "racks after": rk(c.target),
        "log dirs": ",".join(c.log_dirs) if c.log_dirs else "any",
        "to copy": human_bytes(c.bytes_to_copy) if c.size is not None else "?",
        "bytes to copy": c.bytes_to_copy,
        "note": "; ".join(note),
    }


def change_rows(d: PlanDiff, racks: Mapping[BrokerId, str], changes: Iterable[PartitionChange] | None = None
                ) -> list[dict[str, Any]]:
    return [change_row(c, racks) for c in (d.changes if changes is None else changes)]


def broker_rows(d: PlanDiff) -> list[dict[str, Any]]:
    return [
        {
            "broker": b.broker, "rack": b.rack or "", "known": b.known,
            "replicas": f"{b.replicas_before} → {b.replicas_after}",
            "replicas before": b.replicas_before, "replicas after": b.replicas_after,
            "arriving": b.arriving, "leaving": b.leaving,
            "leaders before": b.leaders_before, "leaders after": b.leaders_after,
            "bytes before": b.bytes_before, "bytes after": b.bytes_after,
            "bytes in": b.bytes_in, "bytes out": b.bytes_out,
            "disk": f"{human_bytes(b.bytes_before)} → {human_bytes(b.bytes_after)}",
        }
        for b in d.brokers
    ]


def rack_rows(d: PlanDiff) -> list[dict[str, Any]]:
    return [asdict(r) for r in d.racks]


def flow_rows(d: PlanDiff) -> list[dict[str, Any]]:
    return [{"from": f.source, "to": f.destination, "replicas": f.replicas, "bytes": f.bytes} for f in d.flows]




def diff_json(d: PlanDiff, racks: Mapping[BrokerId, str]) -> dict[str, Any]:
    return {
        "summary": d.summary(),
        "partitions": [
            {**c._asdict(), "kind": c.kind.value, "current": list(c.current), "target": list(c.target),
             "adding": list(c.adding), "removing": list(c.removing),
             "log_dirs": list(c.log_dirs) if c.log_dirs else None, "bytes_to_copy": c.bytes_to_copy,
             "racks_before": [racks.get(b) for b in c.current], "racks_after": [racks.get(b) for b in c.target]}
            for c in d.changes
        ],
        "brokers": [asdict(b) for b in d.brokers],
        "racks": rack_rows(d),
        "flows": flow_rows(d),
    }


def diff_text(d: PlanDiff, racks: Mapping[BrokerId, str], limit: int = 200) -> str:
    s = d.summary()
    kinds = ", ".join(f"{n} {k}" for k, n in s["kinds"].items() if n)  # type: ignore[attr-defined]
    head = (f"{s['partitions']} partitions in the plan ({kinds}); {s['replicas_added']} replicas added, "
            f"{s['replicas_removed']} removed, {s['leaders_changing']} leaders change; "
            f"{human_bytes(d.bytes_to_copy)} to copy" + ("" if d.sizes_known else " (some sizes unknown)") + ".")
    moving = d.changed
    rows = change_rows(d, racks, moving[:limit])
    parts = [head, "Brokers:\n" + table_text(broker_rows(d), ["broker", "rack", "replicas", "arriving", "leaving",
                                                             "leaders before", "leaders after", "disk"])]
    if rows:
        parts.append("Partitions:\n" + table_text(rows, ["partition", "change", "current", "target", "AR", "RR",
                                                        "leader", "racks after", "to copy", "note"])
                     + (f"\n... and {len(moving) - limit} more (use --json for all)" if len(moving) > limit else ""))
    if d.flows:
        parts.append("Movement (leader → new replica):\n" + table_text(
            [{**r, "bytes": human_bytes(r["bytes"])} for r in flow_rows(d)], ["from", "to", "replicas", "bytes"]))
    return "\n\n".join(parts)



def plan_cells(changes: Sequence[PartitionChange]) -> list[dict[str, Any]]:
    """Cells of the before/after broker × partition picture for ``changes``."""
    out: list[dict[str, Any]] = []
    for c in changes:
        name = c.name
        for b in c.current:
            role = "leader" if b == c.leader_before else ("leaving" if b in c.removing else "kept")
            out.append({"partition": name, "broker": str(b), "when": "before", "role": role,
                        "label": "L" if b == c.leader_before else ""})
        for b in c.target:
            role = "leader" if b == c.leader_after else ("arriving" if b in c.adding else "kept")
            out.append({"partition": name, "broker": str(b), "when": "after", "role": role,
                        "label": "L" if b == c.leader_after else ""})
    return out
