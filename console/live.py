"""View models for the Live and Overview screens (pure; the pages only render these).

Everything here is sized for big clusters: filters run in one pass, tables come a page at a
time, and the broker × partition picture is built only for the rows on screen.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

from console.export import ids_text as _ids
from console.model import ClusterState, Partition, PartitionHealth, ReplicaRole


@dataclass(frozen=True)
class LiveFilter:
    topics: tuple[str, ...] = ()
    brokers: tuple[int, ...] = ()
    health: tuple[PartitionHealth, ...] = ()
    in_flight_only: bool = True

    def matches(self, p: Partition) -> bool:
        if self.in_flight_only and not p.reassigning:
            return False
        if self.topics and p.topic not in self.topics:
            return False
        if self.brokers and not any(b in self.brokers for b in p.replicas):
            return False
        if self.health and p.health not in self.health:
            return False
        return True


def select(state: ClusterState, f: LiveFilter) -> list[Partition]:
    source: Iterable[Partition] = state.in_flight if f.in_flight_only else state.partitions
    return [p for p in source if f.matches(p)]


@dataclass(frozen=True)
class LiveCounts:
    partitions: int
    reassigning: int
    under_replicated: int
    offline: int
    adding_replicas: int
    adding_copied: int
    stalled: int
    bytes_to_copy: int | None


def counts(state: ClusterState) -> LiveCounts:
    adding = copied = stalled = 0
    to_copy = 0
    known = state.logs_known
    for p in state.in_flight:
        for r in p.progress(known):
            adding += 1
            if r.in_isr:
                copied += 1
            b = state.broker(r.broker)
            if b is not None and not b.eligible and not r.in_isr:
                stalled += 1
            if r.leader_bytes is not None and not r.in_isr:
                to_copy += max(0, r.leader_bytes - (r.copied_bytes or 0))
    offline = sum(1 for p in state.partitions if p.offline)
    return LiveCounts(
        partitions=len(state.partitions),
        reassigning=len(state.in_flight),
        under_replicated=len(state.under_replicated),
        offline=offline,
        adding_replicas=adding,
        adding_copied=copied,
        stalled=stalled,
        bytes_to_copy=to_copy if known else None,
    )


def page_count(n: int, size: int) -> int:
    return max(1, -(-n // size))


def page(rows: Sequence[Any], number: int, size: int) -> tuple[Sequence[Any], int]:
    """Rows of page ``number`` (1-based, clamped) and the number of pages."""
    pages = page_count(len(rows), size)
    number = min(max(1, number), pages)
    return rows[(number - 1) * size : number * size], pages


def partition_rows(state: ClusterState, parts: Sequence[Partition],
                   runs: Mapping[tuple[str, int], int] | None = None) -> list[dict[str, Any]]:
    """One table row per partition: R / I / AR / RR, leader, source, progress, and (with
    ``runs``) which of the console's runs started it ("elsewhere" for a reassignment in flight
    the console did not start)."""
    out = []
    known = state.logs_known
    for p in parts:
        prog = p.progress(known)
        fractions = [r.fraction for r in prog if r.fraction is not None]
        out.append(
            {
                "partition": p.name,
                "topic": p.topic,
                "R": _ids(p.replicas),
                "I": _ids(p.isr),
                "AR": _ids(p.adding),
                "RR": _ids(p.removing),
                "leader": p.leader if p.leader is not None else "none",
                "source": p.source.value if p.source else "",
                "progress": round(100 * min(fractions), 1) if fractions else None,
                "adding detail": "; ".join(
                    f"{r.broker}: " + (f"{100 * r.fraction:.0f}%" if r.fraction is not None else "?")
                    + (f" ({human_bytes(r.copied_bytes)}/{human_bytes(r.leader_bytes)})" if r.leader_bytes is not None and not r.in_isr else "")
                    for r in prog
                ),
                "state": p.health.value,
                **({"started by": (f"run {runs[p.key]}" if p.key in runs else ("elsewhere" if p.reassigning else ""))}
                   if runs is not None else {}),
            }
        )
    return out


def replica_cells(state: ClusterState, parts: Sequence[Partition]) -> list[dict[str, Any]]:
    """The broker × partition picture: one cell per replica with its role."""
    out = []
    known = state.logs_known
    for p in parts:
        prog = {r.broker: r for r in p.progress(known)}
        for b in p.replicas:
            role = p.role(b)
            if role is None:
                continue
            label = "L" if b == p.leader else ""
            if role is ReplicaRole.ADDING and b in prog and prog[b].fraction is not None:
                label = f"{100 * (prog[b].fraction or 0):.0f}%"
            out.append({"partition": p.name, "broker": str(b), "role": role.value, "label": label,
                        "in_isr": b in p.isr})
    return out


def human_bytes(n: int | None) -> str:
    if n is None:
        return "?"
    value = float(n)
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if value < 1024 or unit == "TB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{n} B"


def broker_rows(state: ClusterState) -> list[dict[str, Any]]:
    """Per broker: rack, liveness, eligibility, partition/leader/replica counts and bytes."""
    totals = state.broker_totals
    rows = []
    for b in state.brokers:
        rows.append(
            {
                "broker": b.id,
                "host": f"{b.host}:{b.port}" if b.host else "",
                "rack": b.rack or "",
                "live": b.live,
                "eligible": b.eligible,
                "controller": b.is_controller,
                "replicas": totals[b.id][0],
                "leaders": totals[b.id][1],
                "bytes": totals[b.id][2] if state.logs_known else None,
                "on disk": human_bytes(totals[b.id][2]) if state.logs_known else "unknown",
                "usable": human_bytes(b.usable_bytes) if b.usable_bytes is not None else "unknown",
                "log dirs": len(b.log_dirs),
                "seen in": ", ".join(s for s, on in (("Admin API", b.in_api), ("ZooKeeper", b.in_zookeeper)) if on),
            }
        )
    return rows


def throttle_rows(state: ClusterState) -> list[dict[str, str]]:
    rows = []
    for name, cfg in state.throttles.brokers:
        for k, v in cfg:
            rows.append({"entity": f"broker {name}", "config": k, "value": v})
    for name, cfg in state.throttles.topics:
        for k, v in cfg:
            rows.append({"entity": f"topic {name}", "config": k, "value": v})
    return rows


def finding_rows(state: ClusterState) -> list[dict[str, Any]]:
    from console.review import finding_rows as rows

    return rows(state.findings)


def table_text(rows: Sequence[dict[str, Any]], columns: Sequence[str]) -> str:
    """Rows as an aligned plain-text table (CLI)."""
    cells = [[str(c) for c in columns]] + [["" if r.get(c) is None else str(r.get(c)) for c in columns] for r in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(columns))]
    return "\n".join("  ".join(v.ljust(w) for v, w in zip(row, widths)).rstrip() for row in cells)


def state_text(state: ClusterState) -> str:
    """The snapshot as an operator reads it in a terminal: brokers, counts, what is in flight, throttles, findings."""
    from datetime import datetime

    n = counts(state)
    head = [
        f"Cluster {state.name or '?'}" + (f" (id {state.cluster_id})" if state.cluster_id else "")
        + f", controller {state.controller if state.controller is not None else 'unknown'}"
        + f", read at {datetime.fromtimestamp(state.taken_at):%Y-%m-%d %H:%M:%S}.",
        "Sources: " + ", ".join(f"{k} {v}" for k, v in state.status.to_dict().items()) + ".",
        f"{len(state.brokers)} brokers ({len(state.live_brokers)} live), {n.partitions} partitions, "
        f"{n.reassigning} reassigning, {n.under_replicated} truly under-replicated, {n.offline} offline.",
    ]
    out = ["\n".join(head), "Brokers:\n" + table_text(
        broker_rows(state), ["broker", "rack", "host", "live", "eligible", "controller", "replicas", "leaders", "on disk"])]
    if state.in_flight:
        out.append("In flight:\n" + table_text(
            partition_rows(state, state.in_flight), ["partition", "R", "I", "AR", "RR", "leader", "source", "adding detail"]))
    else:
        out.append("No partition reassignments found.")
    if n.bytes_to_copy:
        out.append(f"Left to copy: {human_bytes(n.bytes_to_copy)}; stalled adding replicas: {n.stalled}.")
    throttles = throttle_rows(state)
    if throttles:
        out.append("Throttles:\n" + table_text(throttles, ["entity", "config", "value"]))
    if state.findings:
        out.append("Findings:\n" + "\n".join(
            f"[{r['severity']}] {r['message']}" + (f" {r['hint']}" if r.get("hint") else "") for r in finding_rows(state)))
    return "\n\n".join(out)
