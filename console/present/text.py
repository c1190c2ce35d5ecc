"""Text and JSON forms of a snapshot (pure): what the CLI prints and notebooks save."""

from __future__ import annotations

from typing import Any

from console.core.format import human_bytes, ids_text, plural, table_text, timestamp
from console.core.model import SNAPSHOT_FORMAT, ClusterState, Partition
from console.present.findings import finding_rows
from console.present.live import broker_rows, counts, partition_rows, throttle_rows


def list_text(state: ClusterState) -> str:
    """The same shape as ``kafka-reassign-partitions.sh --list``."""
    if not state.in_flight:
        return "No partition reassignments found."
    lines = ["Current partition reassignments:"]
    for p in state.in_flight:
        line = f"{p.name}: replicas: {ids_text(p.replicas)}."
        if p.adding:
            line += f" adding: {ids_text(p.adding)}."
        if p.removing:
            line += f" removing: {ids_text(p.removing)}."
        lines.append(line)
    return "\n".join(lines)


def list_json(state: ClusterState) -> dict[str, Any]:
    return {
        "version": 1,
        "partitions": [
            {
                "topic": p.topic,
                "partition": p.partition,
                "replicas": list(p.replicas),
                "adding_replicas": list(p.adding),
                "removing_replicas": list(p.removing),
                "isr": list(p.isr),
                "leader": p.leader,
                "source": p.source.value if p.source else None,
            }
            for p in state.in_flight
        ],
    }


def partition_dict(p: Partition, logs_known: bool) -> dict[str, Any]:
    return {
        "topic": p.topic,
        "partition": p.partition,
        "replicas": list(p.replicas),
        "isr": list(p.isr),
        "leader": p.leader,
        "adding_replicas": list(p.adding),
        "removing_replicas": list(p.removing),
        "original": list(p.original),
        "target": list(p.target),
        "reassigning": p.reassigning,
        "complete": p.complete,
        "under_replicated": p.under_replicated,
        "health": p.health.value,
        "source": p.source.value if p.source else None,
        "replica_bytes": {str(log.broker): log.size for log in p.logs if not log.is_future},
        "logs": [
            {"broker": log.broker, "log_dir": log.log_dir, "size": log.size, "is_future": log.is_future}
            for log in p.logs
        ],
        "progress": [
            {
                "broker": r.broker,
                "copied_bytes": r.copied_bytes,
                "leader_bytes": r.leader_bytes,
                "in_isr": r.in_isr,
                "fraction": r.fraction,
            }
            for r in p.progress(logs_known)
        ],
    }


def state_json(state: ClusterState) -> dict[str, Any]:
    """The whole snapshot (what ``state --json`` prints and ``--state-file`` reads back)."""
    doc = state_header(state)
    doc["counts"] = {
        "partitions": len(state.partitions),
        "reassigning": len(state.in_flight),
        "under_replicated": len(state.under_replicated),
    }
    doc["partitions"] = [partition_dict(p, state.logs_known) for p in state.partitions]
    return doc


def state_header(state: ClusterState) -> dict[str, Any]:
    """Everything of the snapshot but its partitions: what the pipeline keeps beside the replica rows."""
    return {
        "format": SNAPSHOT_FORMAT,
        "taken_at": state.taken_at,
        "name": state.name,
        "cluster_id": state.cluster_id,
        "controller": state.controller,
        "fingerprint": state.fingerprint(),
        "status": state.status.to_dict(),
        "brokers": [
            {
                "id": b.id,
                "host": b.host,
                "port": b.port,
                "rack": b.rack,
                "live": b.live,
                "registered": b.registered,
                "fenced": b.fenced,
                "eligible": b.eligible,
                "is_controller": b.is_controller,
                "in_api": b.in_api,
                "in_zookeeper": b.in_zookeeper,
                "log_dirs": [
                    {"path": d.path, "error": d.error, "total_bytes": d.total_bytes, "usable_bytes": d.usable_bytes}
                    for d in b.log_dirs
                ],
            }
            for b in state.brokers
        ],
        "throttles": {"brokers": state.throttles.broker_map(), "topics": state.throttles.topic_map()},
        "min_insync": dict(state.min_insync),
        "findings": [f.to_dict() for f in state.findings],
    }


def state_text(state: ClusterState) -> str:
    """The snapshot as an operator reads it in a terminal: brokers, counts, what is in flight, throttles, findings."""
    n = counts(state)
    head = [
        f"Cluster {state.name or '?'}"
        + (f" (id {state.cluster_id})" if state.cluster_id else "")
        + f", controller {state.controller if state.controller is not None else 'unknown'}"
        + f", read at {timestamp(state.taken_at)}.",
        "Sources: " + ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in state.status.to_dict().items()) + ".",
        f"{plural(len(state.brokers), 'broker')} ({len(state.live_brokers)} live), {plural(n.partitions, 'partition')}, "
        f"{n.reassigning} reassigning, {n.under_replicated} truly under-replicated, {n.offline} offline.",
    ]
    out = [
        "\n".join(head),
        "Brokers:\n"
        + table_text(
            broker_rows(state),
            ["broker", "rack", "host", "live", "eligible", "controller", "replicas", "leaders", "on disk"],
        ),
    ]
    if state.in_flight:
        out.append(
            "In flight:\n"
            + table_text(
                partition_rows(state, state.in_flight),
                [
                    "partition",
                    "R",
                    "I",
                    "AR",
                    "RR",
                    "leader",
                    "source",
                    "adding detail",
                    "left to copy",
                    "leader throttle",
                    "follower throttle",
                ],
            )
        )
    else:
        out.append("No partition reassignments found.")
    if n.bytes_to_copy:
        out.append(f"Left to copy: {human_bytes(n.bytes_to_copy)}; stalled adding replicas: {n.stalled}.")
    throttles = throttle_rows(state)
    if throttles:
        out.append("Throttles:\n" + table_text(throttles, ["entity", "config", "value"]))
    if state.findings:
        out.append(
            "Findings:\n"
            + "\n".join(
                f"[{r['severity']}] {r['message']}" + (f" {r['hint']}" if r.get("hint") else "")
                for r in finding_rows(state.findings)
            )
        )
    return "\n\n".join(out)
