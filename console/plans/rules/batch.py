"""What the rules read: a batch of plan entries joined with their partitions' current state (numpy
columns, one row per entry), and the small table of a cluster's brokers.

Both runners build these: the in-process review from the snapshot's columns and the diff
(:mod:`console.plans.rules.local`), the Spark review from each Arrow batch of its joined entries
(:mod:`console.pipeline.spark_rules`), with the broker table of the snapshot's header either way."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, TypeVar, cast

import numpy as np

from console.core.cluster_info import refuses_cordoned
from console.core.model import Broker, ClusterState
from console.plans.columns import Bools, Ints, distinct, lookup, member
from console.plans.diff import ChangeKind

T = TypeVar("T")
KINDS = tuple(ChangeKind)
"""A batch's ``kind`` is an index into this tuple."""


def kind_code(kind: ChangeKind) -> int:
    return KINDS.index(kind)


@dataclass(frozen=True)
class BrokerTable:
    """A cluster's brokers as the rules read them (sorted by id; a few thousand at most)."""

    ids: Ints
    eligible: Bools
    registered: Bools
    live: Bools
    fenced: Bools
    """DescribeCluster says it is fenced (KIP-1073)."""
    cordoned: Bools
    """The whole broker is cordoned (KIP-1066)."""
    rack: Ints
    """Index of its rack in the sorted rack names; -1 without a rack."""
    available_racks: int
    """Racks that have an eligible broker."""
    log_dirs: Mapping[int, frozenset[str]] = field(default_factory=dict)
    """The paths of each broker that reports its log dirs."""
    cordoned_dirs: Mapping[int, frozenset[str]] = field(default_factory=dict)
    dir_errors: Mapping[int, Mapping[str, str]] = field(default_factory=dict)
    """Each offline dir's DescribeLogDirs error (the first reported)."""
    refuses_cordoned: bool = False
    """The controller refuses a reassignment onto a wholly cordoned broker (Kafka 4.4 and later)."""

    @staticmethod
    def empty() -> BrokerTable:
        """The table of a cluster that lists no broker."""
        ints, bools = np.zeros(0, np.int64), np.zeros(0, np.bool_)
        return BrokerTable(ints, bools, bools, bools, bools, bools, ints, 0)

    def at(self, brokers: Ints) -> Ints:
        """Row of each broker id in the table; -1 when unknown."""
        return lookup(self.ids, np.arange(len(self.ids), dtype=np.int64), brokers, missing=-1)

    def flag(self, column: Bools, brokers: Ints) -> Bools:
        """``column`` of each broker id (False when unknown or padding)."""
        rows = self.at(brokers)
        out: Bools = np.where(rows >= 0, column[np.maximum(rows, 0)] if len(column) else False, False)
        return out

    def racks_spanned(self, replicas: Ints) -> Ints:
        """How many different racks each row of padded broker ids spans."""
        rows = self.at(replicas)
        codes: Ints = np.where(rows >= 0, self.rack[np.maximum(rows, 0)] if len(self.rack) else -1, -1)
        return distinct(codes)


def broker_table(state: ClusterState) -> BrokerTable:
    """The table of ``state``'s brokers (the snapshot's header is enough)."""
    brokers = sorted(state.brokers, key=lambda b: int(b.id))
    names = sorted({b.rack for b in brokers if b.rack})

    def flags(test: object) -> Bools:
        return np.fromiter((bool(test(b)) for b in brokers), np.bool_, len(brokers))  # type: ignore[operator]

    return BrokerTable(
        ids=np.fromiter((int(b.id) for b in brokers), np.int64, len(brokers)),
        eligible=flags(lambda b: b.eligible),
        registered=flags(lambda b: b.registered),
        live=flags(lambda b: b.live),
        fenced=flags(lambda b: b.fenced is True),
        cordoned=flags(lambda b: b.cordoned is True),
        rack=np.fromiter((names.index(b.rack) if b.rack else -1 for b in brokers), np.int64, len(brokers)),
        available_racks=len({b.rack for b in brokers if b.eligible and b.rack}),
        log_dirs={int(b.id): frozenset(d.path for d in b.log_dirs) for b in brokers if b.log_dirs},
        cordoned_dirs={int(b.id): _cordoned_dirs(b) for b in brokers if b.log_dirs},
        dir_errors={int(b.id): _dir_errors(b) for b in brokers if any(d.error is not None for d in b.log_dirs)},
        refuses_cordoned=refuses_cordoned(state.info),
    )


def _cordoned_dirs(b: Broker) -> frozenset[str]:
    return frozenset(d.path for d in b.log_dirs if b.dir_cordoned(d.path))


def _dir_errors(b: Broker) -> dict[str, str]:
    out: dict[str, str] = {}
    for d in b.log_dirs:
        if d.error is not None:
            out.setdefault(d.path, d.error)
    return out


@dataclass(frozen=True)
class EntryBatch:
    """Plan entries joined with their partitions' state, one row per entry (padded lists: ``PAD``)."""

    topic: Sequence[str]
    partition: Ints
    known: Bools
    """The snapshot has the partition."""
    kind: Ints
    """Index into :data:`KINDS`."""
    target: Ints
    target_len: Ints
    current: Ints
    """The partition's original replicas (R − AR)."""
    current_len: Ints
    adding: Bools
    """Cells of ``target`` that add a replica."""
    leader_before: Ints
    leader_after: Ints
    in_flight: Bools
    isr: Ints
    min_isr: Ints
    """The topic's min.insync.replicas; PAD when not known."""
    topic_partitions: Ints
    """For an unknown entry, how many partitions its topic has; PAD when the topic does not exist."""
    log_dirs: Mapping[int, tuple[str, ...]]
    """The log dirs of each row that names them (most plans name none)."""
    dir_now: Mapping[int, tuple[str | None, ...]]
    """For an entry naming log dirs, the dir each target broker's replica is in now (None: not there
    or not reported)."""
    stale: Mapping[int, tuple[tuple[int, ...], tuple[int, ...]]] = field(default_factory=dict)
    """Rows whose partition changed since the plan was drafted: replicas then and now."""
    derived: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)
    """Columns the rules derive once per batch (:meth:`once`)."""

    def once(self, key: str, make: Callable[[], T]) -> T:
        """The value ``make`` gives, computed once per batch (a column several rules read)."""
        if key not in self.derived:
            self.derived[key] = make()
        return cast(T, self.derived[key])

    def __len__(self) -> int:
        return len(self.partition)

    def is_kind(self, kind: ChangeKind) -> Bools:
        out: Bools = self.kind == kind_code(kind)
        return out

    @cached_property
    def live(self) -> Bools:
        """Known entries that change something."""
        out: Bools = self.known & ~self.is_kind(ChangeKind.NONE)
        return out

    @cached_property
    def in_sync(self) -> Ints:
        """How many of the original replicas are in the ISR."""
        out: Ints = member(self.current, self.isr).sum(axis=1)
        return out

    def name(self, i: int) -> str:
        return f"{self.topic[i]}-{self.partition_list[i]}"

    @cached_property
    def partition_list(self) -> list[int]:
        return self.partition.tolist()  # type: ignore[no-any-return]

    def targets(self, i: int) -> list[int]:
        return self.target[i, : self.target_len[i]].tolist()  # type: ignore[no-any-return]

    def currents(self, i: int) -> list[int]:
        return self.current[i, : self.current_len[i]].tolist()  # type: ignore[no-any-return]
