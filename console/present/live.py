"""View models for the Live and Overview screens (pure; the pages only render these).

Everything here is sized for big clusters: filters run in one pass, tables come a page at a
time, and the broker × partition picture is built only for the rows on screen.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

from console.core.format import human_bytes, ids_text as _ids, table_text
from console.core.model import ClusterState, Partition, PartitionHealth, ReplicaRole


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
