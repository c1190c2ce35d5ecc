"""Reassignments in flight that this console did not start (another balancer, a colleague's script,
the official tool), and how much each has left.

Pure: the snapshot and the partitions the console's own active runs move go in; records come out.
Kafka does not say when a reassignment started (ListPartitionReassignments has no time): what a
process can know is when it first saw one (:class:`FirstSeen`), and that is what it says.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Collection, Iterable
from dataclasses import dataclass

from console.core.format import human_bytes, ids_text, plural
from console.core.model import BrokerId, ClusterState, Partition, TopicPartition

NAMED_AT_MOST = 20
"""Partitions named in one sentence; the rest are counted."""


@dataclass(frozen=True)
class OtherMove:
    """One partition another mover is reassigning."""

    topic: str
    partition: int
    replicas: tuple[BrokerId, ...]
    adding: tuple[BrokerId, ...]
    removing: tuple[BrokerId, ...]
    bytes_left: int | None
    """Still to copy to its adding replicas; None when a size is not known."""
    seen_since: float | None = None
    """When this console first saw it in flight (epoch seconds); None when not known. Never when it
    started: Kafka does not say."""

    @property
    def name(self) -> str:
        return f"{self.topic}-{self.partition}"

    @property
    def key(self) -> TopicPartition:
        return (self.topic, self.partition)


def _bytes_left(p: Partition, logs_known: bool) -> int | None:
    left = 0
    for r in p.progress(logs_known):
        if r.bytes_left is None:
            return None
        left += r.bytes_left
    return left


def other_moves(
    state: ClusterState, ours: Collection[TopicPartition], seen: FirstSeen | None = None
) -> list[OtherMove]:
    """Partitions in flight in ``state`` that are not among ``ours`` (the partitions the console's
    active runs move: ``store.runs.active_partitions``), sorted by topic and partition. ``seen``,
    when given, is told of them and says since when each was seen."""
    out = [
        OtherMove(p.topic, p.partition, p.replicas, p.adding, p.removing, _bytes_left(p, state.logs_known))
        for p in state.in_flight
        if p.key not in ours
    ]
    if seen is None:
        return out
    since = seen.observe(state.taken_at, out)
    return [
        OtherMove(m.topic, m.partition, m.replicas, m.adding, m.removing, m.bytes_left, since.get(m.key)) for m in out
    ]


def bytes_left_total(moves: Iterable[OtherMove]) -> tuple[int, int]:
    """(bytes left over the moves whose sizes are known, how many moves have no known size)."""
    known = unknown = 0
    for m in moves:
        if m.bytes_left is None:
            unknown += 1
        else:
            known += m.bytes_left
    return known, unknown


def moves_text(moves: Iterable[OtherMove], limit: int = NAMED_AT_MOST) -> str:
    """The partitions named (the first ``limit``), with what is left and since when, in one sentence."""
    moves = list(moves)
    named = ", ".join(
        f"{m.name} (adding {ids_text(m.adding) or 'none'}; removing {ids_text(m.removing) or 'none'}"
        + (f"; {human_bytes(m.bytes_left)} left" if m.bytes_left is not None else "; size not known")
        + ")"
        for m in moves[:limit]
    )
    more = f" and {len(moves) - limit} more" if len(moves) > limit else ""
    known, unknown = bytes_left_total(moves)
    left = f"{human_bytes(known)} left to copy" + (
        f" where sizes are known ({plural(unknown, 'partition')} without a size)" if unknown else ""
    )
    return f"{plural(len(moves), 'partition')} in flight that this console did not start: {named}{more}; {left}."


def headline(moves: Iterable[OtherMove], topics_at_most: int = 3) -> str:
    """The other movers' reassignments in one line, summarised by topic, whatever their number:
    ``6 partitions (payments 6) this console did not start, 3.2 MB left to copy, first seen 10:42:13``."""
    moves = list(moves)
    per_topic = Counter(m.topic for m in moves)
    topics = ", ".join(f"{t} {n:,}" for t, n in per_topic.most_common(topics_at_most))
    if len(per_topic) > topics_at_most:
        topics += f" and {plural(len(per_topic) - topics_at_most, 'more topic')}"
    known, unknown = bytes_left_total(moves)
    left = f"{human_bytes(known)} left to copy" + (f" ({unknown:,} without a size)" if unknown else "")
    seen = [m.seen_since for m in moves if m.seen_since is not None]
    since = f", first seen {time.strftime('%H:%M:%S', time.localtime(min(seen)))}" if seen else ""
    return f"{plural(len(moves), 'partition')} ({topics}) this console did not start, {left}{since}"


def detail_rows(moves: Iterable[OtherMove]) -> list[dict[str, object]]:
    """One row per partition another mover is reassigning, for a table."""
    return [
        {
            "partition": m.name,
            "replicas": ids_text(m.replicas),
            "adding": ids_text(m.adding),
            "removing": ids_text(m.removing),
            "left to copy": human_bytes(m.bytes_left) if m.bytes_left is not None else "not known",
        }
        for m in moves
    ]


def since_text(moves: Iterable[OtherMove]) -> str:
    """Since when, as far as it is known: Kafka does not say when a reassignment started."""
    seen = [m.seen_since for m in moves if m.seen_since is not None]
    if not seen:
        return "Since when is not known: Kafka does not say when a reassignment started."
    first = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(min(seen)))
    return f"First seen by this console at {first}; Kafka does not say when a reassignment started, so it may be older."


class FirstSeen:
    """When each other mover's partition was first seen in flight, across snapshots (one per cluster
    in a process; thread-safe). A partition that leaves the in-flight list is forgotten, so a new
    move of it starts a new time."""

    def __init__(self) -> None:
        self._since: dict[TopicPartition, float] = {}
        self._lock = threading.Lock()

    def observe(self, at: float, moves: Iterable[OtherMove]) -> dict[TopicPartition, float]:
        with self._lock:
            self._since = {m.key: min(self._since.get(m.key, at), at) for m in moves}
            return dict(self._since)
