"""Text forms of a snapshot, and ``list --json`` (pure): what the CLI prints. The snapshot document
(``state --json``) is :mod:`console.state.document`'s."""

from __future__ import annotations

from typing import Any

from console.core.cluster_info import active_controller, summary_line
from console.core.format import human_bytes, ids_text, plural, table_text, timestamp
from console.core.health import HealthGroup, kafka_health
from console.core.model import ClusterState
from console.moves.throttles import cluster_default_kept, leftover_throttles
from console.present.findings import finding_rows
from console.present.live import broker_rows, counts, partition_rows, throttle_rows
from console.present.throttles import throttle_table


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


NAMED = 5
"""How many partitions a line of :func:`health_lines` names."""


def health_lines(state: ClusterState) -> list[str]:
    """A line per Kafka 4 health group that has partitions, naming the first few of them."""
    h = kafka_health(state)
    lines = []
    for g in HealthGroup:
        parts = h.group(g)
        if parts:
            names = ", ".join(p.name for p in parts[:NAMED]) + (" …" if len(parts) > NAMED else "")
            lines.append(f"{g.label}: {plural(len(parts), 'partition')} ({names}).")
    return lines


def _or_unknown(node: int | None) -> str:
    return str(node) if node is not None else "unknown"


def throttles_text(state: ClusterState) -> list[str]:
    """The throttle configs set now, each marked as Overview marks it (``in use``, ``left over:
    nothing in flight needs it``, ``cluster default, kept``), and how to remove the leftovers."""
    if not state.status.in_flight_known:  # what needs a throttle is not known: none is said to be left over
        rows = throttle_rows(state)
        return (
            [
                "Throttles (whether anything in flight needs them is not known):\n"
                + table_text(rows, ["entity", "config", "value"])
            ]
            if rows
            else []
        )
    left = leftover_throttles(state)
    rows = throttle_table(state, left, cluster_default_kept(state, left))
    if not rows:
        return []
    said = "Throttles:\n" + table_text(rows, ["entity", "config", "value", "needed"])
    if left:
        said += f"\n{plural(len(left), 'throttle setting')} left over: `throttle --sweep` removes " + (
            "it." if len(left) == 1 else "them."
        )
    return [said]


def state_text(state: ClusterState) -> str:
    """The snapshot as an operator reads it in a terminal: brokers, counts, what is in flight, throttles, findings."""
    n = counts(state)
    head = [
        f"Cluster {state.name or '?'}"
        + (f" (id {state.cluster_id})" if state.cluster_id else "")
        + f", controller {_or_unknown(active_controller(state.info, state.controller))}"
        + f", read at {timestamp(state.taken_at)}.",
        summary_line(state.info) + ".",
        "Sources: " + ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in state.status.to_dict().items()) + ".",
        f"{plural(len(state.brokers), 'broker')} ({len(state.live_brokers)} live), {plural(n.partitions, 'partition')}, "
        f"{n.reassigning} reassigning, {n.under_replicated} truly under-replicated, {n.offline} offline (no leader).",
    ]
    head += health_lines(state)
    if state.tiered_topics:
        shown = ", ".join(state.tiered_topics[:10]) + (" …" if len(state.tiered_topics) > 10 else "")
        head.append(
            f"Tiered storage (remote.storage.enable=true): {plural(len(state.tiered_topics), 'topic')} ({shown}); "
            "moving them copies their local log only."
        )
    out = [
        "\n".join(head),
        "Brokers:\n"
        + table_text(
            broker_rows(state),
            [
                "broker",
                "rack",
                "host",
                "live",
                "fenced",
                "eligible",
                "cordoned",
                "controller",
                "replicas",
                "leaders",
                "on disk",
            ],
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
    elif state.status.in_flight_known:
        out.append("No partition reassignments found.")
    else:
        out.append("Partition reassignments: unknown (neither ListPartitionReassignments nor ZooKeeper answered).")
    if n.bytes_to_copy:
        out.append(f"Left to copy: {human_bytes(n.bytes_to_copy)}; stalled adding replicas: {n.stalled}.")
    out += throttles_text(state)
    if state.findings:
        out.append(
            "Findings:\n"
            + "\n".join(
                f"[{r['severity']}] {r['message']}" + (f" {r['hint']}" if r.get("hint") else "")
                for r in finding_rows(state.findings)
            )
        )
    return "\n\n".join(out)
