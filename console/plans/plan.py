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
from typing import TYPE_CHECKING, Annotated, Any, Literal, NamedTuple, NoReturn, Union, cast

import msgspec
import numpy as np

from console.core.cluster_info import rollback_names_dirs
from console.core.errors import PlanFormatError
from console.core.format import human_bytes
from console.core.limits import (
    INT32_MAX,
    MAX_LOG_DIR_LENGTH,
    MAX_TOPIC_LENGTH,
    NAME_SHOWN,
    PLAN_LIMITS,
    PROBLEMS_COUNTED,
    PROBLEMS_SHOWN,
    PlanLimits,
)
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
# Parsing, bounded: size first, then a decoding that cannot nest deeper than the limit, then counts
# and lengths before each entry is looked at (console/core/limits.py; docs/GUIDE.md, "Limits")
# ------------------------------------------------------------------------------------------
def shortened(name: str) -> str:
    """``name`` as a message shows it: whole when short, else its start and its length."""
    if len(name) <= NAME_SHOWN:
        return name
    return f"{name[:NAME_SHOWN]}… ({len(name):,} characters)"


_ITEMS_SHOWN = 8


def shown(value: object) -> str:
    """A JSON value as a message shows it: strings cut, lists to their first few items, objects unsaid."""
    if isinstance(value, str):
        return json.dumps(shortened(value), ensure_ascii=False)
    if isinstance(value, list):
        items = [_scalar(v) for v in value[:_ITEMS_SHOWN]]
        more = f", … ({len(value):,} items)" if len(value) > _ITEMS_SHOWN else ""
        return "[" + ", ".join(items) + more + "]"
    return _scalar(value)


def _scalar(value: object) -> str:
    if value is None or isinstance(value, bool):
        return "null" if value is None else "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(shortened(value), ensure_ascii=False)
    return "[…]" if isinstance(value, list) else "{…}"


def topic_name_problem(name: object) -> str | None:
    """Why Kafka would not accept ``name`` as a topic name, or None."""
    if not isinstance(name, str):
        return "the topic is not a string"
    if name == "":
        return "the topic name is empty"
    if name in (".", ".."):
        return f"the topic name {name!r} is not allowed"
    if len(name) > MAX_TOPIC_LENGTH:
        return f"the topic name {shown(name)} is longer than {MAX_TOPIC_LENGTH} characters"
    if not _LEGAL_TOPIC.fullmatch(name):
        return f"the topic name {shown(name)} has characters other than ASCII letters, digits, '.', '_' and '-'"
    return None


def _is_int(v: object) -> bool:
    return type(v) is int  # bool is an int subclass: true/false are not broker ids


class _Problems:
    """What is wrong with a file: the first few messages and a count of the others, up to
    :data:`PROBLEMS_COUNTED` (a file of a million bad entries does not become a million messages,
    nor a million detailed checks)."""

    def __init__(self) -> None:
        self.shown: list[str] = []
        self.more = 0

    def add(self, text: str) -> None:
        if len(self.shown) < PROBLEMS_SHOWN:
            self.shown.append(text)
        else:
            self.more += 1

    def __len__(self) -> int:
        return len(self.shown) + self.more

    @property
    def full(self) -> bool:
        """Whether what comes next is only counted."""
        return len(self.shown) >= PROBLEMS_SHOWN

    @property
    def enough(self) -> bool:
        """Whether the check stops looking."""
        return len(self) >= PROBLEMS_COUNTED

    def error(self, stopped: bool = False) -> PlanFormatError:
        """``stopped``: the check stopped looking before the end (what it counted is a lower bound)."""
        return PlanFormatError(self.shown, more=self.more, stopped=stopped)


_BOM = "\ufeff"


def _bounded(text: str | bytes, limits: PlanLimits) -> str | bytes:
    """``text`` once its size is checked (and a UTF-8 byte order mark dropped)."""
    if isinstance(text, str):
        size = len(text) if 4 * len(text) <= limits.bytes or text.isascii() else len(text.encode(errors="replace"))
        text = text.removeprefix(_BOM)
    elif isinstance(text, (bytes, bytearray, memoryview)):
        text = bytes(text).removeprefix(_BOM.encode())
        size = len(text)
    else:
        raise PlanFormatError([f"the plan is not text but {type(text).__name__}"])
    if size > limits.bytes:
        raise PlanFormatError(
            [f"the file takes {human_bytes(size)}, more than the {human_bytes(limits.bytes)} a plan may take"],
            f"A plan has at most {limits.entries:,} entries; split a bigger one into several plans.",
        )
    return text


_Leaf = str | int | float | bool | None


@cache
def _nesting_decoder(depth: int) -> msgspec.json.Decoder[Any]:
    """A decoder of any JSON nested at most ``depth`` lists and objects deep: deeper input is
    refused where it goes too deep, so decoding never recurses further than that."""
    kind: Any = _Leaf
    for _ in range(depth):
        kind = Union[_Leaf, list[kind], dict[str, kind]]  # noqa: UP007 (built at run time)
    return msgspec.json.Decoder(kind)


def _load(text: str | bytes, limits: PlanLimits) -> Any:
    try:
        return _nesting_decoder(limits.depth).decode(text)
    except UnicodeError:
        raise PlanFormatError(["the file is not UTF-8 text"]) from None
    except msgspec.ValidationError as e:
        why = str(e)
        if "got `array`" in why or "got `object`" in why:
            raise PlanFormatError(
                [f"the JSON nests lists and objects more than {limits.depth} deep (a plan needs 4)"]
            ) from None
        raise PlanFormatError([f"a number is out of range ({shortened(why)})"]) from None
    except msgspec.DecodeError as e:
        raise PlanFormatError(
            [f"not JSON ({shortened(str(e))})"], "Export the plan again, or check it with a JSON linter."
        ) from None


def _version(doc: Any, what: str) -> None:
    if not isinstance(doc, dict):
        raise PlanFormatError([f'the top level is not a JSON object with "{what}"'])
    version = doc.get("version", 1)
    if version != 1 or not _is_int(version):
        raise PlanFormatError([f"Not supported version field value {shown(version)} (only 1 exists)"])


def _listed(doc: dict[str, Any], what: str, limits: PlanLimits, partitions: int | None = None) -> list[Any]:
    raw = doc.get(what)
    if raw is None:
        raise PlanFormatError([f'there is no "{what}" list'])
    if not isinstance(raw, list):
        raise PlanFormatError([f'"{what}" is not a list'])
    _count(len(raw), limits, partitions)
    return raw


def _count(n: int, limits: PlanLimits, partitions: int | None) -> None:
    """Refuse ``n`` entries over the limit, or over the cluster's ``partitions`` when known."""
    if n > limits.entries:
        raise PlanFormatError(
            [f"{n:,} entries, more than the {limits.entries:,} a plan may have"], "Split the plan into several plans."
        )
    if partitions and n > partitions:
        raise PlanFormatError(
            [f"{n:,} entries, more than the {partitions:,} partitions of the cluster"],
            "A plan lists each partition once: this one names partitions the cluster does not have.",
        )


@without_gc
def parse_plan(
    text: str | bytes, *, brokers: int | None = None, partitions: int | None = None, limits: PlanLimits = PLAN_LIMITS
) -> Plan:
    """Parse a reassignment JSON file; raise :class:`PlanFormatError` naming every bad entry (the
    first few). The file is held to ``limits`` before any other work: its size, how deep it nests,
    its entries (no more than ``partitions``, the cluster's, when known), each entry's replicas
    (no more than ``brokers``, the cluster's, when known) and the length of its names, in time and
    memory linear in its size."""
    text = _bounded(text, limits)
    most = _Most(limits.replicas_for(brokers), brokers)
    plan = _well_formed(text, most, limits, partitions)
    if plan is not None:
        return plan
    doc = _load(text, limits)
    _version(doc, "partitions")
    raw = _listed(doc, "partitions", limits, partitions)
    if not raw:
        raise PlanFormatError(["Partition reassignment list cannot be empty"])
    return Plan.of(_checked(raw, most))


class _Most(NamedTuple):
    """Replicas an entry may list, and the cluster's brokers when known."""

    replicas: int
    brokers: int | None

    def problem(self, n: int) -> str | None:
        if n <= self.replicas:
            return None
        if self.brokers and self.replicas == self.brokers:
            return f"{n:,} replicas, more than the {self.brokers} brokers of the cluster"
        return f"{n:,} replicas, more than the {self.replicas} an entry may list"


# The format as types: msgspec decodes and checks a well-formed file in one pass at C speed.
_Id = Annotated[int, msgspec.Meta(ge=0, le=INT32_MAX)]


class _Entry(msgspec.Struct, forbid_unknown_fields=True):
    topic: Annotated[str, msgspec.Meta(max_length=MAX_TOPIC_LENGTH)]
    partition: _Id
    replicas: Annotated[tuple[_Id, ...], msgspec.Meta(min_length=1)]
    log_dirs: tuple[Literal["any"], ...] | None = None
    """Chosen log dirs send the file to the thorough path, which checks each path."""


class _File(msgspec.Struct, forbid_unknown_fields=True):
    """Other fields send the file to the thorough path: skipping a value could nest without end."""

    partitions: Annotated[list[_Entry], msgspec.Meta(min_length=1)]
    version: Literal[1] = 1


_decoder = msgspec.json.Decoder(_File)
entry_of_tuple: Callable[[tuple[str, int, tuple[BrokerId, ...], tuple[str, ...] | None]], PlanEntry] = partial(
    tuple.__new__, PlanEntry
)
"""A PlanEntry from a ready tuple, without NamedTuple's Python-level ``__new__``."""


def _well_formed(text: str | bytes, most: _Most, limits: PlanLimits, partitions: int | None) -> Plan | None:
    """The plan of a well-formed file without chosen log dirs (the common case): types, ranges and
    fields checked while decoding, the other rules over all entries at once. None sends the file
    to the thorough path, which names every problem."""
    try:
        raw = _decoder.decode(text).partitions
    except (msgspec.ValidationError, msgspec.DecodeError, UnicodeError):
        return None
    _count(len(raw), limits, partitions)
    topics, numbers, replicas, dirs = (
        list(map(attrgetter(f), raw)) for f in ("topic", "partition", "replicas", "log_dirs")
    )
    # each rule over all entries at once; the entries that break one are named (the first few)
    lens_list = list(map(len, replicas))
    if max(lens_list) > most.replicas:  # before the padded matrix: one long entry would widen every row
        _refuse_rows(raw, np.flatnonzero(np.array(lens_list) > most.replicas), most)
    distinct = set(topics)
    if bad_names := {t for t in distinct if topic_name_problem(t)}:
        _refuse_rows(raw, np.flatnonzero(np.fromiter((t in bad_names for t in topics), np.bool_, len(topics))), most)
    target, lens = padded(replicas)
    ordered = np.sort(target, axis=1)
    twice = ((ordered[:, 1:] == ordered[:, :-1]) & (ordered[:, 1:] != PAD)).any(axis=1)
    if twice.any():  # the same broker twice
        _refuse_rows(raw, np.flatnonzero(twice), most)
    del ordered, twice
    if wrong := [i for i, (d, n) in enumerate(zip(dirs, lens_list, strict=True)) if d is not None and len(d) != n]:
        _refuse_rows(raw, np.array(wrong, np.int64), most)
    # sorted by (topic, partition), each partition once: checked on one int64 key per entry
    names = sorted(distinct)
    code = np.fromiter(map({t: i for i, t in enumerate(names)}.__getitem__, topics), np.int64, len(topics))
    number = np.array(numbers, np.int64)  # 0 to INT32_MAX, as decoded
    key = partition_keys_of(code, number)
    if not (key[1:] > key[:-1]).all():  # not sorted, or the same partition twice
        order = np.argsort(key, kind="stable")
        if (key[order[1:]] == key[order[:-1]]).any():
            _refuse_duplicates(raw, key, order)
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


def _refuse_rows(raw: list[_Entry], rows: Ints, most: _Most) -> NoReturn:
    """Name what is wrong with the entries at ``rows`` (the first few; the others are counted)."""
    problems = _Problems()
    for i in rows[:PROBLEMS_SHOWN].tolist():
        e = raw[i]
        item = {"topic": e.topic, "partition": e.partition, "replicas": list(e.replicas)}
        if e.log_dirs is not None:
            item["log_dirs"] = list(e.log_dirs)
        _entry(i, item, problems, most)
    problems.more += max(0, len(rows) - PROBLEMS_SHOWN)
    raise problems.error()


def _refuse_duplicates(raw: list[_Entry], key: Ints, order: Ints) -> NoReturn:
    """Name the entries of a partition listed before (``order``: the stable sort of ``key``)."""
    same = key[order[1:]] == key[order[:-1]]
    starts = np.flatnonzero(np.concatenate([[True], ~same]))
    group = np.cumsum(np.concatenate([[True], ~same])) - 1
    first = order[starts[group]]  # per sorted position, the first entry of its partition
    later, earlier = order[1:][same], first[1:][same]
    by_entry = np.argsort(later, kind="stable")[:PROBLEMS_SHOWN]
    problems = _Problems()
    for i, f in zip(later[by_entry].tolist(), earlier[by_entry].tolist(), strict=True):
        e = raw[i]
        problems.add(f"entry {i} ({shortened(e.topic)}-{e.partition}): the same partition is already in entry {f}")
    problems.more += max(0, len(later) - PROBLEMS_SHOWN)
    raise problems.error()


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


def _checked(raw: list[Any], most: _Most) -> list[PlanEntry]:
    problems = _Problems()
    entries: list[PlanEntry] = []
    seen: dict[TopicPartition, int] = {}
    legal: dict[str, bool] = {}
    for i, item in enumerate(raw):
        entry = _quick(item, most, legal)
        if entry is None:
            entry = _entry(i, item, problems, most)
        if entry is None:
            if problems.enough:
                break
            continue
        first = seen.setdefault(entry.key, i)
        if first != i:
            problems.add(
                "" if problems.full else f"entry {i} ({entry.name}): the same partition is already in entry {first}"
            )
            if problems.enough:
                break
            continue
        entries.append(entry)
    if problems:
        raise problems.error(stopped=problems.enough)
    return entries


def _quick(item: Any, most: _Most, legal: dict[str, bool]) -> PlanEntry | None:
    """The entry when it is good and names no log dir (checked at C speed, each topic name once);
    None sends it to :func:`_entry`, which says what is wrong."""
    try:
        e = msgspec.convert(item, _Entry)
    except msgspec.ValidationError:
        return None
    ok = legal.get(e.topic)
    if ok is None:
        ok = legal[e.topic] = topic_name_problem(e.topic) is None
    replicas = cast("tuple[BrokerId, ...]", e.replicas)
    n = len(replicas)
    if not ok or n > most.replicas or len(set(replicas)) != n or (e.log_dirs is not None and len(e.log_dirs) != n):
        return None
    return entry_of_tuple((e.topic, e.partition, replicas, None))


_FIELDS = ("topic", "partition", "replicas", "log_dirs")


def _entry(i: int, item: Any, problems: _Problems, most: _Most) -> PlanEntry | None:
    if not isinstance(item, dict):
        problems.add(f"entry {i}: not a JSON object")
        return None
    topic: Any = item.get("topic")
    partition: Any = item.get("partition")
    replicas: Any = item.get("replicas")
    dirs: Any = item.get("log_dirs")
    named = isinstance(topic, str) and _is_int(partition)
    where = f"entry {i}" + (f" ({shortened(topic)}-{partition})" if named else "")
    found = [
        f"{where}: {why}"
        for why in (
            _topic_problem(item, topic),
            _partition_problem(item, partition),
            _replicas_problem(item, replicas, most, problems.full),
            _dirs_problem(dirs, replicas, problems.full),
            _fields_problem(item),
        )
        if why is not None
    ]
    for text in found:
        problems.add(text)
    if found:
        return None
    log_dirs = tuple(dirs) if dirs is not None and any(d != ANY for d in dirs) else None
    return PlanEntry(topic, partition, tuple(replicas), log_dirs)


def _topic_problem(item: dict[str, Any], topic: Any) -> str | None:
    return '"topic" is missing' if "topic" not in item else topic_name_problem(topic)


def _partition_problem(item: dict[str, Any], partition: Any) -> str | None:
    if "partition" not in item:
        return '"partition" is missing'
    if not _is_int(partition) or not 0 <= partition <= INT32_MAX:
        return f'"partition" must be an integer from 0 to {INT32_MAX}, not {shown(partition)}'
    return None


def _replicas_problem(item: dict[str, Any], replicas: Any, most: _Most, quiet: bool = False) -> str | None:
    """In time linear in the list's length (it is no longer than ``most`` past the first check);
    ``quiet``: the problem is counted, not shown, so its message is not written out."""
    if "replicas" not in item:
        return '"replicas" is missing'
    if not isinstance(replicas, list):
        return '"replicas" must be a list of broker ids'
    if not replicas:
        return "Partition replica list cannot be empty"
    if (too_many := most.problem(len(replicas))) is not None:
        return too_many
    bad = [r for r in replicas if not _is_int(r) or not 0 <= r <= INT32_MAX]
    if bad:
        return "" if quiet else f"broker ids must be integers from 0 to {INT32_MAX}, not {shown(bad)}"
    seen: set[int] = set()
    again: set[int] = set()
    for r in replicas:
        (again if r in seen else seen).add(r)
    twice = sorted(again)
    if twice:
        return "" if quiet else f"the same broker appears twice in the replica list {shown(replicas)} ({shown(twice)})"
    return None


def _dirs_problem(dirs: Any, replicas: Any, quiet: bool = False) -> str | None:
    if dirs is None:
        return None
    if not isinstance(dirs, list) or not all(isinstance(d, str) for d in dirs):
        return '"log_dirs" must be a list of strings'
    if isinstance(replicas, list) and len(dirs) != len(replicas):
        return (
            ""
            if quiet
            else f"Size of replicas list {shown(replicas)} is different from size of log dirs list {shown(dirs)}"
        )
    odd = [d for d in dirs if d != ANY and not d.startswith("/")]
    if odd:
        return f'log dirs must be "any" or an absolute path, not {shown(odd)}'
    long = [d for d in dirs if len(d) > MAX_LOG_DIR_LENGTH]
    if long:
        return f"a log dir is longer than {MAX_LOG_DIR_LENGTH:,} characters: {shown(long[0])}"
    return None


def _fields_problem(item: dict[str, Any]) -> str | None:
    extra = [k for k in item if k not in _FIELDS]
    if not extra:
        return None
    names = ", ".join(shown(k) for k in sorted(extra[:_ITEMS_SHOWN], key=len))
    return f"unknown fields {names}" + (f" and {len(extra) - _ITEMS_SHOWN:,} more" if len(extra) > _ITEMS_SHOWN else "")


def parse_topics_to_move(text: str | bytes, limits: PlanLimits = PLAN_LIMITS) -> tuple[str, ...]:
    """Parse ``{"version":1,"topics":[{"topic":"foo"}]}`` (the official --generate input), held to
    the same limits as a plan."""
    doc = _load(_bounded(text, limits), limits)
    _version(doc, "topics")
    if not isinstance(doc.get("topics"), list) or not doc["topics"]:
        raise PlanFormatError(['"topics" must be a non-empty list of {"topic": name} objects'])
    raw = _listed(doc, "topics", limits)
    problems = _Problems()
    topics: dict[str, int] = {}
    for i, item in enumerate(raw):
        if not isinstance(item, dict) or "topic" not in item:
            problems.add(f'entry {i}: not a {{"topic": name}} object')
        elif (why := topic_name_problem(item["topic"])) is not None:
            problems.add(f"entry {i}: {why}")
        elif item["topic"] in topics:
            problems.add(f"entry {i}: topic {shortened(item['topic'])} is listed twice")
        else:
            topics[item["topic"]] = i
    if problems:
        raise problems.error()
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
