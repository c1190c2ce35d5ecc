"""What a plan would do to a cluster: per partition, per broker, per rack, and who sends to whom (pure).

The controller's algebra (KIP-455, ``ControllerContext.reassignTo``), per partition:

* **current** = the partition's original replicas (R − AR) when it is already reassigning (the
  controller keeps the original set), else R;
* **AR** = target − current, **RR** = current − target;
* the leader stays where it is when it is in the target (a reorder alone moves nothing: run a
  preferred leader election to make the first replica lead); otherwise the controller elects the
  first target replica that is in sync;
* with the preferred leader election a run can end with (``elect``), the first target replica
  leads afterwards when it will be in sync then: it is in the ISR now, or it is added (a wave
  completes only once its added replicas are in sync).

Bytes come from the snapshot's replica sizes: an adding replica copies the leader's log, and the
leader sends it (followers fetch from the leader). A replica the plan asks into another log dir of
its broker (``log_dirs``, AlterReplicaLogDirs) copies its own log between that broker's dirs: those
bytes are counted apart (``dir_bytes_to_copy``, "between dirs"), as they cross no network.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, NamedTuple, TypeVar, overload

import numpy as np
import numpy.typing as npt

from console.core.model import BrokerId, ClusterState, Keyed, Partition
from console.core.perf import without_gc
from console.plans.columns import (
    PAD,
    Bools,
    BrokerTable,
    Ints,
    SnapshotColumns,
    broker_ids,
    columns_of,
    member,
    rows_of,
    widen,
)
from console.plans.logdirs import changes_dir, dir_copies
from console.plans.plan import Plan, PlanEntry

if TYPE_CHECKING:
    import pandas as pd

G = TypeVar("G", bound=np.generic)


class ChangeKind(str, Enum):
    """What a plan entry does to its partition."""

    UNKNOWN = "unknown partition"
    """The partition is not in the snapshot: nothing can be said (validation reports it)."""
    NONE = "no change"
    """Target equals the current replicas in the same order: skipped."""
    REORDER = "reorder"
    """Same brokers in another order: completes at once; the leader moves only with a preferred election."""
    MOVE = "move"
    """Replicas move between brokers; the replication factor stays."""
    GROW = "more replicas"
    """The replication factor goes up."""
    SHRINK = "fewer replicas"
    """The replication factor goes down."""
    REVERT = "back to original"
    """A partition in flight, targeted at its original replicas: the adding replicas are dropped at once."""
    LOG_DIR = "log dir move"
    """Same replicas, but a replica asked into another log dir of its broker (AlterReplicaLogDirs)."""


class _PartitionChange(NamedTuple):
    topic: str
    partition: int
    kind: ChangeKind
    current: tuple[BrokerId, ...]
    target: tuple[BrokerId, ...]
    adding: tuple[BrokerId, ...]
    removing: tuple[BrokerId, ...]
    leader_before: BrokerId | None
    leader_after: BrokerId | None
    in_flight: bool
    size: int | None
    """The partition's size (its leader's log), when known."""
    log_dirs: tuple[str, ...] | None = None
    dir_copies: tuple[tuple[BrokerId, int | None], ...] = ()
    """Replicas copied between the log dirs of their broker, each with its bytes (None: unknown)."""


class PartitionChange(_PartitionChange, Keyed):
    """One plan entry against the snapshot (a named tuple: there is one per planned partition)."""

    __slots__ = ()

    @property
    def bytes_to_copy(self) -> int:
        return (self.size or 0) * len(self.adding)

    @property
    def dir_bytes_to_copy(self) -> int:
        """Bytes copied between the log dirs of a broker (no network): existing replicas asked into another dir."""
        return sum(size or 0 for _, size in self.dir_copies)

    @property
    def preferred_leader(self) -> BrokerId | None:
        return self.target[0] if self.target else None

    @property
    def needs_election(self) -> bool:
        """The first target replica will not lead without a preferred leader election."""
        return self.leader_after is not None and self.leader_after != self.preferred_leader

    @property
    def source(self) -> BrokerId | None:
        """The broker the adding replicas copy from (the leader)."""
        return self.leader_before if self.leader_before is not None else (self.current[0] if self.current else None)


CHANGE_COLUMNS = (
    "topic",
    "partition",
    "kind",
    "current",
    "target",
    "adding",
    "removing",
    "leader_before",
    "leader_after",
    "in_flight",
    "size",
    "bytes_to_copy",
)
"""A partition change's columns, as the diff's table and the review job's partitions table name them."""


@dataclass(frozen=True, slots=True)
class BrokerChange:
    broker: BrokerId
    rack: str | None
    known: bool
    replicas_before: int
    replicas_after: int
    arriving: int
    leaving: int
    leaders_before: int
    leaders_after: int
    bytes_before: int
    bytes_after: int
    bytes_in: int
    bytes_out: int
    """Bytes this broker sends as leader to adding replicas elsewhere."""


@dataclass(frozen=True, slots=True)
class RackChange:
    rack: str
    replicas_before: int
    replicas_after: int
    arriving: int
    leaving: int
    bytes_before: int
    bytes_after: int
    bytes_in: int


@dataclass(frozen=True, slots=True)
class Flow:
    """Replicas copied from one broker (the leader) to another, and their bytes."""

    source: BrokerId
    destination: BrokerId
    replicas: int
    bytes: int


_KINDS = tuple(ChangeKind)
_CODE = {k: i for i, k in enumerate(_KINDS)}


@dataclass(frozen=True)
class DiffColumns:
    """The diff as arrays, one row per plan entry (see :mod:`console.plans.columns`)."""

    rows: Ints
    """Row of the partition in the snapshot's columns; -1 when unknown."""
    known: Bools
    target: Ints
    target_len: Ints
    current: Ints
    current_len: Ints
    adding: Bools
    """Cells of ``target`` that are adding replicas (AR)."""
    removing: Bools
    """Cells of ``current`` that are removing replicas (RR)."""
    kind: Ints
    """Index into ``tuple(ChangeKind)``."""
    leader_before: Ints
    leader_after: Ints
    size: Ints
    in_flight: Bools
    dir_size: Ints | None = None
    """Bytes each entry copies between the log dirs of its brokers (PAD: a size unknown); None when
    the plan names no dir (nothing is copied between dirs)."""

    @property
    def moves(self) -> Bools:
        """Entries that add or remove replicas."""
        out: Bools = np.logical_or(self.adding.any(axis=1), self.removing.any(axis=1))
        return out

    def is_kind(self, kind: ChangeKind) -> Bools:
        out: Bools = self.kind == _CODE[kind]
        return out


class Changes(Sequence[PartitionChange]):
    """Plan entries' changes, built only when looked at: a 100k-partition review shows a page of
    50, and its totals come from :class:`DiffColumns`."""

    def __init__(
        self, state: ClusterState, plan: Plan, rows: Ints, which: Ints | None = None, elect: bool = False
    ) -> None:
        """``rows``: each plan entry's row in ``state.partitions`` (-1: unknown), :attr:`DiffColumns.rows`."""
        self._partitions = state.partitions
        self._entries = plan.entries
        self._rows = rows
        self._which = which
        self._elect = elect

    def _at(self, i: int) -> PartitionChange:
        k = i if self._which is None else int(self._which[i])
        row = int(self._rows[k])
        return change_of(self._partitions[row] if row >= 0 else None, self._entries[k], self._elect)

    def __len__(self) -> int:
        return len(self._entries) if self._which is None else len(self._which)

    @overload
    def __getitem__(self, i: int) -> PartitionChange: ...

    @overload
    def __getitem__(self, i: slice) -> list[PartitionChange]: ...

    def __getitem__(self, i: int | slice) -> PartitionChange | list[PartitionChange]:
        if isinstance(i, slice):
            return [self._at(j) for j in range(*i.indices(len(self)))]
        if not -len(self) <= i < len(self):
            raise IndexError(i)
        return self._at(i % len(self))

    def __iter__(self) -> Iterator[PartitionChange]:
        return (self._at(j) for j in range(len(self)))


@dataclass(frozen=True)
class PlanDiff:
    changes: Changes
    brokers: tuple[BrokerChange, ...]
    racks: tuple[RackChange, ...]
    flows: tuple[Flow, ...]
    columns: DiffColumns
    state: ClusterState
    plan: Plan
    elect: bool = False
    """Leaders after include the preferred leader election that ends the run."""

    def __repr__(self) -> str:
        kinds = ", ".join(f"{n:,} {k}" for k, n in self.counts().items() if n)
        dirs = f" (+{self.dir_bytes_to_copy:,} between dirs)" if self.dir_bytes_to_copy else ""
        return f"<PlanDiff: {len(self.changes):,} partitions ({kinds or 'none'}), {self.bytes_to_copy:,} bytes to copy{dirs}>"

    def to_pandas(self) -> pd.DataFrame:
        """One row per plan entry: what it does (kind), R before and after, AR, RR, leaders, size, bytes to copy."""
        import pandas as pd

        return pd.DataFrame(
            [
                (
                    c.topic,
                    c.partition,
                    c.kind.value,
                    list(c.current),
                    list(c.target),
                    list(c.adding),
                    list(c.removing),
                    c.leader_before,
                    c.leader_after,
                    c.in_flight,
                    c.size,
                    c.bytes_to_copy,
                    c.dir_bytes_to_copy,
                )
                for c in self.changes
            ],
            columns=[*CHANGE_COLUMNS, "dir_bytes_to_copy"],
        )

    def brokers_to_pandas(self) -> pd.DataFrame:
        """One row per broker: replicas, leaders and bytes before and after, replicas arriving and leaving, bytes in and out."""
        from dataclasses import asdict

        import pandas as pd

        return pd.DataFrame([asdict(b) for b in self.brokers])

    def _subset(self, mask: Bools) -> Changes:
        return Changes(self.state, self.plan, self.columns.rows, np.flatnonzero(mask), self.elect)

    @property
    def moving(self) -> Changes:
        """Entries that add or remove replicas."""
        return self._subset(self.columns.moves)

    @property
    def changed(self) -> Changes:
        """Entries that change something (all but "no change")."""
        return self._subset(~self.columns.is_kind(ChangeKind.NONE))

    @property
    def bytes_to_copy(self) -> int:
        c = self.columns
        return int((np.where(c.size == PAD, 0, c.size) * c.adding.sum(axis=1)).sum())

    @property
    def dir_bytes_to_copy(self) -> int:
        """Bytes copied between the log dirs of a broker (existing replicas asked into another dir): no network."""
        d = self.columns.dir_size
        return 0 if d is None else int(np.where(d == PAD, 0, d).sum())

    @property
    def sizes_known(self) -> bool:
        c = self.columns
        return not bool(((c.size == PAD) & c.adding.any(axis=1)).any()) and (
            c.dir_size is None or not bool((c.dir_size == PAD).any())
        )

    def copied_topics(self, among: Collection[str]) -> list[str]:
        """The topics of ``among`` (e.g. the tiered ones) that the plan copies replicas of, over the
        network or between the log dirs of a broker, sorted."""
        if not among:
            return []
        c = self.columns
        copies = c.adding.any(axis=1)
        if c.dir_size is not None:
            copies |= c.dir_size != 0
        entries = self.plan.entries
        return sorted({t for i in np.flatnonzero(copies).tolist() if (t := entries[i].topic) in among})

    def counts(self) -> dict[str, int]:
        n = np.bincount(self.columns.kind, minlength=len(_KINDS))
        return {k.value: int(n[i]) for i, k in enumerate(_KINDS)}

    def summary(self) -> dict[str, object]:
        c = self.columns
        return {
            "partitions": len(c.rows),
            "moving": int(c.moves.sum()),
            "replicas_added": int(c.adding.sum()),
            "replicas_removed": int(c.removing.sum()),
            "leaders_changing": int((c.leader_before != c.leader_after).sum()),
            "bytes_to_copy": self.bytes_to_copy,
            "dir_bytes_to_copy": self.dir_bytes_to_copy,
            "sizes_known": self.sizes_known,
            "kinds": self.counts(),
        }


def partition_size(p: Partition) -> int | None:
    """The leader's log size, else the largest replica reported."""
    return p.size


def change_of(p: Partition | None, e: PlanEntry, elect: bool = False) -> PartitionChange:
    """What ``e`` does to ``p``; with ``elect``, the leader after a closing preferred leader election."""
    target = e.replicas
    if p is None:
        return PartitionChange(
            e.topic, e.partition, ChangeKind.UNKNOWN, (), target, (), (), None, None, False, None, e.log_dirs
        )
    dirs = dir_copies(p, e) if e.log_dirs is not None else ()
    current = p.original
    leader = p.leader
    if target == current and not p.reassigning:
        return PartitionChange(
            e.topic,
            e.partition,
            ChangeKind.LOG_DIR if changes_dir(p, e) else ChangeKind.NONE,
            current,
            target,
            (),
            (),
            leader,
            leader,
            False,
            partition_size(p),
            e.log_dirs,
            dirs,
        )
    # replica lists are short: tuple membership beats building sets
    adding = tuple(b for b in target if b not in current)
    removing = tuple(b for b in current if b not in target)
    if adding or removing:
        n, m = len(target), len(current)
        kind = ChangeKind.MOVE if n == m else (ChangeKind.GROW if n > m else ChangeKind.SHRINK)
    else:
        kind = ChangeKind.REVERT if p.reassigning else ChangeKind.REORDER
    leader_after = leader if leader is not None and leader in target else (target[0] if target else None)
    if elect and target and (target[0] in adding or target[0] in p.isr):
        leader_after = target[0]
    return PartitionChange(
        e.topic,
        e.partition,
        kind,
        current,
        target,
        adding,
        removing,
        leader,
        leader_after,
        p.reassigning,
        partition_size(p),
        e.log_dirs,
        dirs,
    )


@without_gc
def diff(state: ClusterState, plan: Plan, elect: bool | None = False) -> PlanDiff:
    """What ``plan`` does against ``state``, column-wise (the algebra of :func:`change_of`, which
    builds a single partition's change when it is looked at). ``elect``: leaders after include
    the preferred leader election a run can end with; None: as a run does by default, when
    :func:`first_replica_changes`."""
    rows = rows_of(state, plan.entries)
    if elect is None:
        elect = _first_replica_changes(columns_of(state), plan, rows)
    cols = _columns(state, plan, rows, elect)
    brokers, flows = _brokers(state, cols)
    return PlanDiff(Changes(state, plan, rows, None, elect), brokers, _racks(brokers), flows, cols, state, plan, elect)


def first_replica_changes(state: ClusterState, plan: Plan) -> bool:
    """Whether ``plan`` gives some partition of ``state`` another first replica (its preferred
    leader): then a run ends with a preferred leader election unless asked not to."""
    return _first_replica_changes(columns_of(state), plan, rows_of(state, plan.entries))


def _first_replica_changes(sc: SnapshotColumns, plan: Plan, rows: Ints) -> bool:
    known = rows >= 0
    if not known.any() or not len(sc.original):
        return False
    target, _ = plan.target_columns
    return bool((target[known, 0] != sc.original[rows[known], 0]).any())


def _columns(state: ClusterState, plan: Plan, rows: Ints, elect: bool = False) -> DiffColumns:
    """``rows``: each entry's row in the snapshot (:func:`console.plans.columns.rows_of`)."""
    sc = columns_of(state)
    n = len(plan)
    known = rows >= 0
    safe = np.where(known, rows, 0)

    def take(a: npt.NDArray[G], fill: int | bool = PAD) -> npt.NDArray[G]:
        if not len(a):
            return np.full((n, *a.shape[1:]), fill, a.dtype)
        out = a[safe]
        out[~known] = fill
        return out

    target, target_len = plan.target_columns
    width = max(target.shape[1], sc.original.shape[1])
    target = widen(target, width)
    current = widen(take(sc.original), width)
    current_len = take(sc.original_len, 0)
    adding = (target != PAD) & ~member(target, current) & known[:, None]
    removing = (current != PAD) & ~member(current, target)
    reassigning = take(sc.reassigning, False)
    code = _CODE
    kind = np.where(
        adding.any(axis=1) | removing.any(axis=1),
        np.where(
            target_len == current_len,
            code[ChangeKind.MOVE],
            np.where(target_len > current_len, code[ChangeKind.GROW], code[ChangeKind.SHRINK]),
        ),
        np.where(reassigning, code[ChangeKind.REVERT], code[ChangeKind.REORDER]),
    )
    unchanged = (target == current).all(axis=1) & ~reassigning
    kind = np.where(~known, code[ChangeKind.UNKNOWN], np.where(unchanged, code[ChangeKind.NONE], kind))
    # an unchanged replica list that names a dir a replica is not in: a log dir move (few entries name dirs)
    for i in np.flatnonzero(unchanged & known).tolist() if plan.names_dirs else ():
        e = plan.entries[i]
        if changes_dir(state.partitions[int(rows[i])], e):
            kind[i] = code[ChangeKind.LOG_DIR]
    dir_size = _dir_sizes(state, plan, rows) if plan.names_dirs else None
    leader_before = take(sc.leader)
    stays = (leader_before != PAD) & (target == leader_before[:, None]).any(axis=1)
    leader_after = np.where(stays | unchanged, leader_before, target[:, 0])
    if elect:  # the first target replica leads after the election when it will be in sync then
        first = target[:, :1]
        ready = adding[:, 0] | member(first, take(sc.isr))[:, 0]
        leader_after = np.where(~unchanged & (target[:, 0] != PAD) & ready, target[:, 0], leader_after)
    leader_after[~known] = PAD
    return DiffColumns(
        rows,
        known,
        target,
        target_len,
        current,
        current_len,
        adding,
        removing,
        kind,
        leader_before,
        leader_after,
        take(sc.size),
        reassigning & known,
        dir_size,
    )


def _dir_sizes(state: ClusterState, plan: Plan, rows: Ints) -> Ints:
    """Bytes each entry copies between the log dirs of its brokers (:func:`console.plans.logdirs.dir_copies`);
    PAD where a size is unknown. Only the entries naming a dir are looked at."""
    out = np.zeros(len(plan), np.int64)
    for i, e in enumerate(plan.entries):
        if e.log_dirs is None or rows[i] < 0:
            continue
        copies = dir_copies(state.partitions[int(rows[i])], e)
        out[i] = PAD if any(size is None for _, size in copies) else sum(size or 0 for _, size in copies)
    return out


def _brokers(state: ClusterState, c: DiffColumns) -> tuple[tuple[BrokerChange, ...], tuple[Flow, ...]]:
    sc = columns_of(state)
    totals = state.broker_totals  # computed once per snapshot
    table = BrokerTable.of(np.fromiter(totals, np.int64, len(totals)), broker_ids(state), c.target[c.known])
    known_rows = c.rows[c.known]
    replicas = table.sums(c.target[c.known]) - table.sums(sc.replicas[known_rows])
    turn = c.leader_before != c.leader_after
    leaders = table.sums(c.leader_after[turn & (c.leader_after != PAD)]) - table.sums(
        c.leader_before[turn & (c.leader_before != PAD)]
    )
    psize = np.where(c.size == PAD, 0, c.size)
    # leaving replicas take their own bytes (or the partition's when theirs are not reported)
    ri, ci = np.nonzero(c.removing)
    gone = c.current[ri, ci]
    own = sc.size_on(c.rows[ri], gone)
    size = -table.sums(gone, np.where(own > 0, own, psize[ri]))
    leaving = table.sums(gone)
    # in-flight adding replicas the new target drops are deleted
    if len(sc.adding):
        in_flight = widen(np.where(c.known[:, None], sc.adding[np.where(c.known, c.rows, 0)], PAD), c.target.shape[1])
        ri, ci = np.nonzero((in_flight != PAD) & ~member(in_flight, c.target))
        dropped = in_flight[ri, ci]
        own = sc.size_on(c.rows[ri], dropped)
        size -= table.sums(dropped, np.where(own > 0, own, 0))
    # adding replicas copy the partition from its leader (or first replica when it has none)
    ri, ci = np.nonzero(c.adding)
    dest = c.target[ri, ci]
    copied = sc.size_on(c.rows[ri], dest)  # an in-flight adding replica has copied part already
    size += table.sums(dest, psize[ri] - np.where(copied > 0, copied, 0))
    arriving = table.sums(dest)
    bytes_in = table.sums(dest, psize[ri])
    src = np.where(c.leader_before != PAD, c.leader_before, c.current[:, 0])[ri]
    sent = src != PAD
    bytes_out = table.sums(src[sent], psize[ri][sent])
    rows = []
    for i, b in enumerate(int(x) for x in table.ids):
        broker = state.broker(BrokerId(b))
        r0, l0, s0 = totals.get(BrokerId(b), (0, 0, 0))
        rows.append(
            BrokerChange(
                broker=BrokerId(b),
                rack=broker.rack if broker else None,
                known=broker is not None and broker.registered,
                replicas_before=r0,
                replicas_after=r0 + int(replicas[i]),
                arriving=int(arriving[i]),
                leaving=int(leaving[i]),
                leaders_before=l0,
                leaders_after=l0 + int(leaders[i]),
                bytes_before=s0,
                bytes_after=max(0, s0 + int(size[i])),
                bytes_in=int(bytes_in[i]),
                bytes_out=int(bytes_out[i]),
            )
        )
    flows: tuple[Flow, ...] = ()
    if sent.any():
        pair = table.index(src[sent]) * len(table.ids) + table.index(dest[sent])
        pairs, which = np.unique(pair, return_inverse=True)
        count = np.bincount(which, minlength=len(pairs))
        volume = np.zeros(len(pairs), np.int64)
        np.add.at(volume, which, psize[ri][sent])
        flows = tuple(
            Flow(
                BrokerId(int(table.ids[p // len(table.ids)])),
                BrokerId(int(table.ids[p % len(table.ids)])),
                int(k),
                int(v),
            )
            for p, k, v in zip(pairs, count, volume, strict=False)
        )
    return tuple(rows), flows


def _racks(brokers: tuple[BrokerChange, ...]) -> tuple[RackChange, ...]:
    acc: dict[str, list[int]] = {}
    for b in brokers:
        r = acc.setdefault(b.rack or "(no rack)", [0] * 7)
        for i, v in enumerate(
            (b.replicas_before, b.replicas_after, b.arriving, b.leaving, b.bytes_before, b.bytes_after, b.bytes_in)
        ):
            r[i] += v
    return tuple(RackChange(rack, *vals) for rack, vals in sorted(acc.items()))
