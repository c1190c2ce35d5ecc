"""Plans in the official reassignment JSON of ``kafka-reassign-partitions.sh`` (pure).

The format (ReassignPartitionsCommand 3.9, ``parsePartitionReassignmentData`` /
``formatAsReassignmentJson``)::

    {"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[1,2],"log_dirs":["any","any"]}]}

* ``version`` may be left out (1); no other version exists.
* ``log_dirs`` may be left out; when given it has one entry per replica, ``"any"`` or an
  absolute path.
* What the console writes is byte-for-byte what the official tool prints for the same
  assignment: compact, keys in the order above, entries sorted by topic then partition,
  ``log_dirs`` all ``"any"`` when none were chosen. A rollback (:func:`rollback`) names each
  replica's current log dir where the official tool of the cluster's release does (4.2 and later).

Parsing is all or nothing: a file with any problem raises :class:`PlanFormatError` listing the
problems by entry, and no partial plan escapes.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache, cached_property, partial
from itertools import islice, repeat
from operator import attrgetter, itemgetter, le
from typing import TYPE_CHECKING, Annotated, Any, Literal, NamedTuple, cast

import msgspec
import numpy as np

from console.core.cluster_info import rollback_names_dirs
from console.core.errors import PlanFormatError
from console.core.limits import INT32_MAX, MAX_TOPIC_LENGTH
from console.core.model import BrokerId, ClusterState, Keyed, Partition, ReplicaLog, TopicPartition
from console.core.perf import without_gc
from console.plans.columns import PAD, Ints, padded, partition_keys_of, partitions_for

if TYPE_CHECKING:
    import pandas as pd

ANY = "any"
_LEGAL_TOPIC = re.compile(r"[a-zA-Z0-9._-]+")
_key = itemgetter(0, 1)


class _Written(msgspec.Struct):
    """One entry as written: fields in the official tool's order."""

    topic: str
    partition: int
    replicas: tuple[int, ...]
    log_dirs: tuple[str, ...]


_encoder = msgspec.json.Encoder()
_JSON_CHUNK = 50_000


@cache
def _anys(n: int) -> tuple[str, ...]:
    return (ANY,) * n


class _PlanEntry(NamedTuple):
    topic: str
    partition: int
    replicas: tuple[BrokerId, ...]
    log_dirs: tuple[str, ...] | None = None
    """One per replica (``"any"`` or an absolute path), or None when not chosen."""


class PlanEntry(_PlanEntry, Keyed):
    """One partition's target: replicas in order (the first is the preferred leader). A named
    tuple: plans run to a million entries, and tuples are the cheapest immutable records."""

    __slots__ = ()


@dataclass(frozen=True)
class Plan:
    """Partitions → target replicas, sorted by topic and partition (the official order).

    ``basis`` optionally records each partition's replicas (R) as they were in the snapshot the
    plan was drafted against, so validation can tell a stale plan; it never goes into the JSON.
    """

    entries: tuple[PlanEntry, ...]
    basis: Mapping[TopicPartition, tuple[BrokerId, ...]] = field(default_factory=dict)

    @staticmethod
    def of(entries: Iterable[PlanEntry], basis: Mapping[TopicPartition, tuple[BrokerId, ...]] | None = None) -> Plan:
        items = list(entries)
        keys = list(map(_key, items))
        if not all(map(le, keys, keys[1:])):
            items.sort(key=_key)
        return Plan(tuple(items), dict(basis or {}))

    def __len__(self) -> int:
        return len(self.entries)

    def __repr__(self) -> str:
        return f"<Plan: {len(self.entries):,} partitions of {len(self.topics):,} topics>"

    def to_pandas(self) -> pd.DataFrame:
        """One row per entry: topic, partition, replicas (the first is the preferred leader), log dirs."""
        import pandas as pd

        return pd.DataFrame(
            [
                (e.topic, e.partition, list(e.replicas), None if e.log_dirs is None else list(e.log_dirs))
                for e in self.entries
            ],
            columns=["topic", "partition", "replicas", "log_dirs"],
        )

    @property
    def keys(self) -> tuple[TopicPartition, ...]:
        return tuple(e.key for e in self.entries)

    @cached_property
    def topics(self) -> tuple[str, ...]:
        return tuple(sorted({e.topic for e in self.entries}))

    @cached_property
    def names_dirs(self) -> bool:
        """Whether some entry names a log dir (not only ``any``)."""
        return any(e.log_dirs is not None for e in self.entries)

    @cached_property
    def target_columns(self) -> tuple[Ints, Ints]:
        """Target replicas as a padded matrix and their lengths (:func:`console.plans.columns.padded`)."""
        return padded([e.replicas for e in self.entries])

    @without_gc
    def to_json(self) -> str:
        """Compact, as the official tool prints it (one line, no spaces, log dirs all "any" when
        none were chosen)."""
        # {"version":1,"partitions":[...]}, the entries encoded a slice at a time into one buffer:
        # a million entries never exist as encoder records all at once
        out = bytearray(b'{"version":1,"partitions":')
        entries = self.entries
        for start in range(0, max(len(entries), 1), _JSON_CHUNK):
            written = [
                _Written(e.topic, e.partition, e.replicas, _anys(len(e.replicas)) if e.log_dirs is None else e.log_dirs)
                for e in entries[start : start + _JSON_CHUNK]
            ]
            if start:  # over the closing "]" of the slices before, then "," where this slice's "[" went
                end = len(out) - 1
                _encoder.encode_into(written, out, end)
                out[end] = ord(",")
            else:
                _encoder.encode_into(written, out, -1)
        out += b"}"
        return out.decode()

    def with_basis(self, state: ClusterState) -> Plan:
        """The same plan, remembering each partition's replicas in ``state`` (for the stale check)."""
        index = state.partition_index
        basis = {e.key: index[e.key].replicas for e in self.entries if e.key in index}
        return Plan(self.entries, basis)


def plan_hash(plan: Plan, text: str | None = None) -> str:
    """A short digest of the plan's JSON (``text``, when the caller has it already): what an
    approval and a run record, so a changed plan is a different plan."""
    return hashlib.sha256((text if text is not None else plan.to_json()).encode()).hexdigest()[:16]


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
        raise PlanFormatError([f'the top level is not a JSON object with "{what}"'])
    version = doc.get("version", 1)
    if version != 1 or not _is_int(version):
        raise PlanFormatError([f"Not supported version field value {json.dumps(version)} (only 1 exists)"])


@without_gc
def parse_plan(text: str | bytes) -> Plan:
    """Parse a reassignment JSON file; raise :class:`PlanFormatError` naming every bad entry."""
    plan = _well_formed(text)
    if plan is not None:
        return plan
    doc = _load(text)
    _version(doc, "partitions")
    raw = doc.get("partitions")
    if raw is None:
        raise PlanFormatError(['there is no "partitions" list'])
    if not isinstance(raw, list):
        raise PlanFormatError(['"partitions" is not a list'])
    if not raw:
        raise PlanFormatError(["Partition reassignment list cannot be empty"])
    return Plan.of(_checked(raw))


# The format as types: msgspec decodes and checks a well-formed file in one pass at C speed.
_Id = Annotated[int, msgspec.Meta(ge=0, le=INT32_MAX)]


class _Entry(msgspec.Struct, forbid_unknown_fields=True):
    topic: str
    partition: _Id
    replicas: Annotated[tuple[_Id, ...], msgspec.Meta(min_length=1)]
    log_dirs: tuple[Literal["any"], ...] | None = None
    """Chosen log dirs send the file to the thorough path, which checks each path."""


class _File(msgspec.Struct):
    partitions: Annotated[list[_Entry], msgspec.Meta(min_length=1)]
    version: Literal[1] = 1


_decoder = msgspec.json.Decoder(_File)
entry_of_tuple: Callable[[tuple[str, int, tuple[BrokerId, ...], tuple[str, ...] | None]], PlanEntry] = partial(
    tuple.__new__, PlanEntry
)
"""A PlanEntry from a ready tuple, without NamedTuple's Python-level ``__new__``."""


def _well_formed(text: str | bytes) -> Plan | None:
    """The plan of a well-formed file without chosen log dirs (the common case): types, ranges and
    fields checked while decoding, the other rules over all entries at once. None sends the file
    to the thorough path, which names every problem."""
    try:
        raw = _decoder.decode(text).partitions
    except (msgspec.ValidationError, msgspec.DecodeError):
        return None
    topics, numbers, replicas, dirs = (
        list(map(attrgetter(f), raw)) for f in ("topic", "partition", "replicas", "log_dirs")
    )
    distinct = set(topics)
    if any(topic_name_problem(t) for t in distinct):
        return None
    target, lens = padded(replicas)
    ordered = np.sort(target, axis=1)
    if ((ordered[:, 1:] == ordered[:, :-1]) & (ordered[:, 1:] != PAD)).any():
        return None  # the same broker twice
    del ordered
    if any(d is not None and len(d) != n for d, n in zip(dirs, lens.tolist(), strict=False)):
        return None  # log dirs of the wrong length: the thorough path names them
    # sorted by (topic, partition), each partition once: checked on one int64 key per entry
    names = sorted(distinct)
    code = np.fromiter(map({t: i for i, t in enumerate(names)}.__getitem__, topics), np.int64, len(topics))
    number = np.array(numbers, np.int64)  # 0 to INT32_MAX, as decoded
    key = partition_keys_of(code, number)
    if not (key[1:] > key[:-1]).all():  # not sorted, or the same partition twice
        order = np.argsort(key, kind="stable")
        if (key[order[1:]] == key[order[:-1]]).any():
            return None
        code, number, target, lens = code[order], number[order], target[order], lens[order]
    del key
    # The entries are made of new objects, one per topic name and per number (a million entries
    # name a few thousand topics and brokers), while every object of the decoding is still alive:
    # they do not land in its memory, which then goes back to the system whole.
    own_names = np.empty(len(names), object)
    own_names[:] = [t.encode().decode() for t in names]
    entries = tuple(
        map(
            entry_of_tuple,
            zip(own_names[code].tolist(), _shared_ints(number), _replica_lists(target, lens), repeat(None)),
        )
    )
    plan = Plan(entries, {})
    plan.__dict__["target_columns"] = (target, lens)  # already built: the diff needs it next
    return plan


def _shared_ints(values: Ints) -> list[int]:
    """``values`` as Python ints, one object per distinct value."""
    distinct, where = np.unique(values, return_inverse=True)
    shared = np.empty(len(distinct), object)
    shared[:] = distinct.tolist()
    out: list[int] = shared[where.reshape(-1)].tolist()
    return out


def _replica_lists(target: Ints, lens: Ints) -> list[tuple[BrokerId, ...]]:
    """The rows of ``target`` as replica lists (tuples of shared ints)."""
    flat = cast("list[BrokerId]", _shared_ints(target[target != PAD]))
    if not len(lens):
        return []
    if (lens == lens[0]).all():  # one length for all: cut at C speed
        return list(zip(*[iter(flat)] * int(lens[0]), strict=True)) if lens[0] else [()] * len(lens)
    items = iter(flat)
    return [tuple(islice(items, k)) for k in lens.tolist()]


def _checked(raw: list[Any]) -> list[PlanEntry]:
    problems: list[str] = []
    entries: list[PlanEntry] = []
    seen: dict[TopicPartition, int] = {}
    for i, item in enumerate(raw):
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
    return entries


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
        problems.append(f'{where}: "topic" is missing')
    elif (why := topic_name_problem(topic)) is not None:
        problems.append(f"{where}: {why}")
    if "partition" not in item:
        problems.append(f'{where}: "partition" is missing')
    elif not _is_int(partition) or not 0 <= partition <= INT32_MAX:
        problems.append(f'{where}: "partition" must be an integer from 0 to {INT32_MAX}, not {json.dumps(partition)}')
    if "replicas" not in item:
        problems.append(f'{where}: "replicas" is missing')
    elif not isinstance(replicas, list):
        problems.append(f'{where}: "replicas" must be a list of broker ids')
    elif not replicas:
        problems.append(f"{where}: Partition replica list cannot be empty")
    else:
        bad = [r for r in replicas if not _is_int(r) or not 0 <= r <= INT32_MAX]
        if bad:
            problems.append(f"{where}: broker ids must be integers from 0 to {INT32_MAX}, not {json.dumps(bad)}")
        elif len(set(replicas)) != len(replicas):
            dup = sorted({r for r in replicas if replicas.count(r) > 1})
            problems.append(f"{where}: the same broker appears twice in the replica list {replicas} ({dup})")
    if dirs is not None:
        if not isinstance(dirs, list) or not all(isinstance(d, str) for d in dirs):
            problems.append(f'{where}: "log_dirs" must be a list of strings')
        else:
            if isinstance(replicas, list) and len(dirs) != len(replicas):
                problems.append(
                    f"{where}: Size of replicas list {replicas} is different from size of log dirs list {dirs}"
                )
            odd = [d for d in dirs if d != ANY and not d.startswith("/")]
            if odd:
                problems.append(f'{where}: log dirs must be "any" or an absolute path, not {json.dumps(odd)}')
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
            problems.append(f'entry {i}: not a {{"topic": name}} object')
        elif (why := topic_name_problem(item["topic"])) is not None:
            problems.append(f"entry {i}: {why}")
        elif item["topic"] in topics:
            problems.append(f"entry {i}: topic {item['topic']} is listed twice")
        else:
            topics.append(item["topic"])
    if problems:
        raise PlanFormatError(problems)
    return tuple(topics)


# ------------------------------------------------------------------------------------------
# Rollback and apply
# ------------------------------------------------------------------------------------------
@without_gc
def rollback(state: ClusterState, plan: Plan) -> Plan:
    """The way back: each planned partition as it stands in ``state`` (originals for partitions in
    flight), in the official format, byte for byte what ``kafka-reassign-partitions --execute`` of
    the cluster's release prints as "Current partition replica assignment" for the same snapshot.
    Partitions unknown to ``state`` are left out.

    Log dirs (:func:`rollback_dirs`): from Kafka 4.2 on (KAFKA-19582) the official tool names each
    replica's current log dir, so does this when ``state.info`` says the cluster runs 4.2 or later
    (:func:`console.core.cluster_info.rollback_names_dirs`); before 4.2 every dir is ``"any"``, and
    so is every dir when ``state.info`` does not tell the release (a snapshot taken without
    ``snapshot(info=True)``, or a cluster that did not say): the rollback then is what the tools
    before 4.2 print, which the 4.2 tool reads and runs as well (any dir)."""
    now = [p for p in partitions_for(state, plan.entries) if p is not None]
    if rollback_names_dirs(state.info):
        # the plan is sorted, so is what is left of it
        return Plan(tuple([entry_of_tuple((p.topic, p.partition, p.original, rollback_dirs(p))) for p in now]), {})
    return Plan(tuple([entry_of_tuple((p.topic, p.partition, p.original, None)) for p in now]), {})


def rollback_dirs(p: Partition) -> tuple[str, ...] | None:
    """Each of ``p``'s original replicas' current log dir as the official tool of Kafka 4.2 and later
    writes it in its rollback (``ReassignPartitionsCommand.getReplicaToLogDir``: DescribeReplicaLogDirs
    of the replicas on live brokers, their *current* dir, ``"any"`` where there is none): the dir of
    the replica's log (never its future log: an intra-broker move in progress rolls back to where it
    is), ``"any"`` for a replica whose broker reported no log for it (a broker down or not answering,
    an offline log dir, a log not created yet). None (all ``"any"``) when no dir is known."""
    if not p.logs:
        return None
    current = {log.broker: log.log_dir for log in p.logs if not log.is_future and log.log_dir}
    dirs = tuple(current.get(b, ANY) for b in p.original)
    return dirs if any(d != ANY for d in dirs) else None


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
        parts.append(
            replace(p, replicas=target, isr=target, leader=leader, adding=(), removing=(), source=None, logs=logs)
        )
    return replace(state, partitions=tuple(parts))
