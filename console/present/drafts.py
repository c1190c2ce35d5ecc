"""What the Drafts page says about a draft at once (pure): entries naming topics, partitions or
brokers the cluster does not know, compactly (the Review page lists every finding)."""

from __future__ import annotations

from collections.abc import Iterable

from console.core.model import BrokerId, ClusterState, Finding
from console.plans.plan import Plan
from console.plans.rules.codes import UNKNOWN_BROKER, UNKNOWN_PARTITION, UNKNOWN_TOPIC

UNKNOWN_CODES = frozenset({UNKNOWN_TOPIC, UNKNOWN_PARTITION, UNKNOWN_BROKER})
SHOWN = 5


def _some(names: list[str]) -> str:
    more = len(names) - SHOWN
    return ", ".join(names[:SHOWN]) + (f" and {more} more" if more > 0 else "")


def unknown_lines(findings: Iterable[Finding], state: ClusterState, plan: Plan) -> list[str]:
    """One line per kind of unknown name among ``findings`` (those of :data:`UNKNOWN_CODES`):
    topics with how many entries name each, partitions, brokers with the partitions that name
    them. Empty when the draft names only what exists."""
    topics: dict[str, int] = {}
    partitions: list[str] = []
    brokers: dict[BrokerId, list[str]] = {}
    flagged: list[tuple[str, int]] = []
    for f in findings:
        if f.topic is None or f.partition is None:
            continue
        if f.code == UNKNOWN_TOPIC:
            topics[f.topic] = topics.get(f.topic, 0) + 1
        elif f.code == UNKNOWN_PARTITION:
            partitions.append(f"{f.topic}-{f.partition}")
        elif f.code == UNKNOWN_BROKER:
            flagged.append((f.topic, f.partition))
    if flagged:
        entries = {e.key: e for e in plan.entries}
        known = state.broker_index
        for key in dict.fromkeys(flagged):
            entry = entries.get(key)
            for b in entry.replicas if entry is not None else ():
                if b not in known:
                    brokers.setdefault(b, []).append(f"{key[0]}-{key[1]}")
    lines = []
    if topics:
        lines.append(
            f"Unknown topic{'s' if len(topics) > 1 else ''}: "
            + _some([f"{t} ({n} entr{'ies' if n > 1 else 'y'})" for t, n in sorted(topics.items())])
        )
    if partitions:
        lines.append(f"Unknown partition{'s' if len(partitions) > 1 else ''}: " + _some(partitions))
    if brokers:
        lines.append(
            f"Unknown broker{'s' if len(brokers) > 1 else ''}: "
            + _some([f"{b} (in {_some(names)})" for b, names in sorted(brokers.items())])
        )
    return lines
