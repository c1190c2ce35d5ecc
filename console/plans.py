"""Plans in the official reassignment JSON of ``kafka-reassign-partitions.sh`` (pure).

The format (ReassignPartitionsCommand 3.9, ``parsePartitionReassignmentData`` /
``formatAsReassignmentJson``)::

    {"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[1,2],"log_dirs":["any","any"]}]}

* ``version`` may be left out (1); no other version exists.
* ``log_dirs`` may be left out; when given it has one entry per replica, ``"any"`` or an
  absolute path.
* What the console writes is byte-for-byte what the official tool prints for the same
  assignment: compact, keys in the order above, entries sorted by topic then partition,
  ``log_dirs`` all ``"any"`` when none were chosen.

Parsing is all or nothing: a file with any problem raises :class:`PlanFormatError` listing the
problems by entry, and no partial plan escapes.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, NamedTuple

from console.errors import ConfigError
from console.perf import without_gc
from console.model import BrokerId, ClusterState, ReplicaLog, TopicPartition, partition_name

ANY = "any"
MAX_TOPIC_LENGTH = 249
_LEGAL_TOPIC = re.compile(r"[a-zA-Z0-9._-]+")
_MAX_REPORTED = 20


class PlanFormatError(ConfigError):
    """A plan file that cannot be used at all: ``problems`` lists what is wrong, by entry."""

    def __init__(self, problems: list[str], hint: str = "") -> None:
        shown = problems[:_MAX_REPORTED]
        more = len(problems) - len(shown)
        message = "The plan cannot be used: " + "; ".join(shown) + (f"; and {more} more problems" if more > 0 else "") + "."
        super().__init__(message, hint or "Fix the file and load it again; nothing was read from it.")
        self.problems = problems


class PlanEntry(NamedTuple):
    """One partition's target: replicas in order (the first is the preferred leader). A named
    tuple: plans run to a million entries, and tuples are the cheapest immutable records."""

    topic: str
    partition: int
    replicas: tuple[BrokerId, ...]
    log_dirs: tuple[str, ...] | None = None
    """One per replica (``"any"`` or an absolute path), or None when not chosen."""

    @property
    def key(self) -> TopicPartition:
        return (self.topic, self.partition)

    @property
    def name(self) -> str:
        return partition_name(self.topic, self.partition)


@dataclass(frozen=True)
class Plan:
    """Partitions → target replicas, sorted by topic and partition (the official order).

    ``basis`` optionally records each partition's replicas (R) as they were in the snapshot the
    plan was drafted against, so validation can tell a stale plan; it never goes into the JSON.
    """

    entries: tuple[PlanEntry, ...]
    basis: Mapping[TopicPartition, tuple[BrokerId, ...]] = field(default_factory=dict)

    @staticmethod
    def of(entries: Iterable[PlanEntry], basis: Mapping[TopicPartition, tuple[BrokerId, ...]] | None = None) -> "Plan":
        items = list(entries)
        if any(items[i][:2] > items[i + 1][:2] for i in range(len(items) - 1)):
            items.sort(key=lambda e: (e.topic, e.partition))
        return Plan(tuple(items), dict(basis or {}))

    def __len__(self) -> int:
        return len(self.entries)

    @property
    def keys(self) -> tuple[TopicPartition, ...]:
        return tuple(e.key for e in self.entries)

    @property
    def topics(self) -> tuple[str, ...]:
        return tuple(sorted({e.topic for e in self.entries}))

    @without_gc
    def to_dict(self) -> dict[str, Any]:
        return {
            "version": 1,
            "partitions": [
                {
                    "topic": e.topic,
                    "partition": e.partition,
                    "replicas": list(e.replicas),
                    "log_dirs": list(e.log_dirs) if e.log_dirs is not None else [ANY] * len(e.replicas),
                }
                for e in self.entries
            ],
        }

    def to_json(self) -> str:
        """Compact, as the official tool prints it (one line, no spaces)."""
        return json.dumps(self.to_dict(), separators=(",", ":"))

    def with_basis(self, state: ClusterState) -> "Plan":
        """The same plan, remembering each partition's replicas in ``state`` (for the stale check)."""
        index = state.partition_index
        basis = {e.key: index[e.key].replicas for e in self.entries if e.key in index}
        return Plan(self.entries, basis)


# ------------------------------------------------------------------------------------------
# Parsing
# ------------------------------------------------------------------------------------------
def topic_name_problem(name: object) -> str | None:
    """Why Kafka would not accept ``name`` as a topic name, or None."""
    if not isinstance(name, str):
        return "the topic is not a string"
    if name == "":
        return "the topic name is empty"
    if name in (".", ".."):
        return f"the topic name {name!r} is not allowed"
    if len(name) > MAX_TOPIC_LENGTH:
        return f"the topic name is longer than {MAX_TOPIC_LENGTH} characters"
    if not _LEGAL_TOPIC.fullmatch(name):
        return f"the topic name {name!r} has characters other than ASCII letters, digits, '.', '_' and '-'"
    return None


def _is_int(v: object) -> bool:
    return type(v) is int  # bool is an int subclass: true/false are not broker ids


def _load(text: str | bytes) -> Any:
    try:
        return json.loads(text)
    except UnicodeDecodeError:
        raise PlanFormatError(["the file is not UTF-8 text"]) from None
    except ValueError as e:
        raise PlanFormatError([f"not JSON ({e})"], "Export the plan again, or check it with a JSON linter.") from None


def _version(doc: Any, what: str) -> None:
    if not isinstance(doc, dict):
        raise PlanFormatError([f"the top level is not a JSON object with \"{what}\""])
    version = doc.get("version", 1)
    if version != 1 or not _is_int(version):
        raise PlanFormatError([f"Not supported version field value {json.dumps(version)} (only 1 exists)"])


@without_gc
def parse_plan(text: str | bytes) -> Plan:
    """Parse a reassignment JSON file; raise :class:`PlanFormatError` naming every bad entry."""
    doc = _load(text)
    _version(doc, "partitions")
    raw = doc.get("partitions")
    if raw is None:
        raise PlanFormatError(['there is no "partitions" list'])
    if not isinstance(raw, list):
        raise PlanFormatError(['"partitions" is not a list'])
    if not raw:
        raise PlanFormatError(["Partition reassignment list cannot be empty"])
    problems: list[str] = []
    entries: list[PlanEntry] = []
    seen: dict[TopicPartition, int] = {}
    good_topics: set[str] = set()
    for i, item in enumerate(raw):
        entry = _fast_entry(item, good_topics)
        if entry is None:
            entry = _entry(i, item, problems)
            if entry is None:
                continue
        first = seen.setdefault(entry.key, i)
        if first != i:
            problems.append(f"entry {i} ({entry.name}): the same partition is already in entry {first}")
            continue
        entries.append(entry)
    if problems:
        raise PlanFormatError(problems)
    return Plan.of(entries)


_KEYS3 = {"topic", "partition", "replicas"}
_KEYS4 = {"topic", "partition", "replicas", "log_dirs"}


def _fast_entry(item: Any, good_topics: set[str]) -> PlanEntry | None:
    """The common, well-formed entry without log dirs, checked with as few steps as possible;
    None sends the entry to the thorough check (which names every problem)."""
    if type(item) is not dict or item.keys() != _KEYS3 and item.keys() != _KEYS4:
        return None
    topic, partition, replicas = item["topic"], item["partition"], item["replicas"]
    if type(partition) is not int or partition < 0 or type(replicas) is not list or not replicas:
        return None
    if topic not in good_topics:
        if topic_name_problem(topic) is not None:
            return None
        good_topics.add(topic)
    if set(map(type, replicas)) != {int} or min(replicas) < 0 or len(set(replicas)) != len(replicas):
        return None
    dirs = item.get("log_dirs")
    if dirs is not None:
        if type(dirs) is not list or len(dirs) != len(replicas):
            return None
        if any(d != ANY for d in dirs):
            return None  # chosen log dirs: the thorough check validates each path
    return PlanEntry(topic, partition, tuple(replicas), None)


def _entry(i: int, item: Any, problems: list[str]) -> PlanEntry | None:
    if not isinstance(item, dict):
        problems.append(f"entry {i}: not a JSON object")
        return None
    topic: Any = item.get("topic")
    partition: Any = item.get("partition")
    replicas: Any = item.get("replicas")
    dirs: Any = item.get("log_dirs")
    where = f"entry {i}" + (f" ({topic}-{partition})" if isinstance(topic, str) and _is_int(partition) else "")
    before = len(problems)
    if "topic" not in item:
        problems.append(f"{where}: \"topic\" is missing")
    elif (why := topic_name_problem(topic)) is not None:
        problems.append(f"{where}: {why}")
    if "partition" not in item:
        problems.append(f"{where}: \"partition\" is missing")
    elif not _is_int(partition) or partition < 0:
        problems.append(f"{where}: \"partition\" must be a non-negative integer, not {json.dumps(partition)}")
    if "replicas" not in item:
        problems.append(f"{where}: \"replicas\" is missing")
    elif not isinstance(replicas, list):
        problems.append(f"{where}: \"replicas\" must be a list of broker ids")
    elif not replicas:
        problems.append(f"{where}: Partition replica list cannot be empty")
    else:
        bad = [r for r in replicas if not _is_int(r) or r < 0]
        if bad:
            problems.append(f"{where}: broker ids must be non-negative integers, not {json.dumps(bad)}")
        elif len(set(replicas)) != len(replicas):
            dup = sorted({r for r in replicas if replicas.count(r) > 1})
            problems.append(f"{where}: the same broker appears twice in the replica list {replicas} ({dup})")
    if dirs is not None:
        if not isinstance(dirs, list) or not all(isinstance(d, str) for d in dirs):
            problems.append(f"{where}: \"log_dirs\" must be a list of strings")
        else:
            if isinstance(replicas, list) and len(dirs) != len(replicas):
                problems.append(
                    f"{where}: Size of replicas list {replicas} is different from size of log dirs list {dirs}")
            odd = [d for d in dirs if d != ANY and not d.startswith("/")]
            if odd:
                problems.append(f"{where}: log dirs must be \"any\" or an absolute path, not {json.dumps(odd)}")
    extra = set(item) - {"topic", "partition", "replicas", "log_dirs"}
    if extra:
        problems.append(f"{where}: unknown fields {sorted(extra)}")
    if len(problems) > before:
        return None
    log_dirs = tuple(dirs) if dirs is not None and any(d != ANY for d in dirs) else None
    return PlanEntry(topic, partition, tuple(replicas), log_dirs)


def parse_topics_to_move(text: str | bytes) -> tuple[str, ...]:
    """Parse ``{"version":1,"topics":[{"topic":"foo"}]}`` (the official --generate input)."""
    doc = _load(text)
    _version(doc, "topics")
    raw = doc.get("topics")
    if not isinstance(raw, list) or not raw:
        raise PlanFormatError(['"topics" must be a non-empty list of {"topic": name} objects'])
    problems: list[str] = []
    topics: list[str] = []
    for i, item in enumerate(raw):
        if not isinstance(item, dict) or "topic" not in item:
            problems.append(f"entry {i}: not a {{\"topic\": name}} object")
        elif (why := topic_name_problem(item["topic"])) is not None:
            problems.append(f"entry {i}: {why}")
        elif item["topic"] in topics:
            problems.append(f"entry {i}: topic {item['topic']} is listed twice")
        else:
            topics.append(item["topic"])
    if problems:
        raise PlanFormatError(problems)
    return tuple(topics)


def topics_to_move_json(topics: Iterable[str]) -> str:
    return json.dumps({"version": 1, "topics": [{"topic": t} for t in topics]}, separators=(",", ":"))


# ------------------------------------------------------------------------------------------
# Rollback and apply
# ------------------------------------------------------------------------------------------
@without_gc
def rollback(state: ClusterState, plan: Plan) -> Plan:
    """The way back: each planned partition as it stands in ``state`` (originals for partitions in
    flight), in the official format. Partitions unknown to ``state`` are left out."""
    index = state.partition_index
    return Plan.of(PlanEntry(e.topic, e.partition, index[e.key].original) for e in plan.entries if e.key in index)


@without_gc
def apply(state: ClusterState, plan: Plan) -> ClusterState:
    """The snapshot as it would be once ``plan`` has completed (pure simulation for tests and
    what-if views): replicas and ISR become the target, the leader becomes the first target
    replica when the current one leaves, and sizes follow the replicas."""
    from dataclasses import replace

    targets = {e.key: e.replicas for e in plan.entries}
    parts = []
    for p in state.partitions:
        target = targets.get(p.key)
        if target is None:
            parts.append(p)
            continue
        size = p.size_on(p.leader) if p.leader is not None else None
        kept = {log.broker: log for log in p.logs if not log.is_future}
        logs = tuple(kept.get(b) or ReplicaLog(b, "", size or 0) for b in target) if kept else ()
        leader = p.leader if p.leader in target else target[0]
        parts.append(replace(p, replicas=target, isr=target, leader=leader, adding=(), removing=(), source=None,
                             logs=logs))
    return replace(state, partitions=tuple(parts))
