"""What a plan would do to a cluster: per partition, per broker, per rack, and who sends to whom (pure).

The controller's algebra (KIP-455, ``ControllerContext.reassignTo``), per partition:

* **current** = the partition's original replicas (R − AR) when it is already reassigning (the
  controller keeps the original set), else R;
* **AR** = target − current, **RR** = current − target;
* the leader stays where it is when it is in the target (a reorder alone moves nothing: run a
  preferred leader election to make the first replica lead); otherwise the controller elects the
  first target replica that is in sync.

Bytes come from the snapshot's replica sizes: an adding replica copies the leader's log, and the
leader sends it (followers fetch from the leader).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from enum import Enum
from typing import Iterable, NamedTuple

from console.perf import without_gc
from console.model import BrokerId, ClusterState, Partition, TopicPartition, partition_name
from console.plans import Plan, PlanEntry


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


class PartitionChange(NamedTuple):
    """One plan entry against the snapshot (a named tuple: there is one per planned partition)."""

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

    @property
    def key(self) -> TopicPartition:
        return (self.topic, self.partition)

    @property
    def name(self) -> str:
        return partition_name(self.topic, self.partition)

    @property
    def bytes_to_copy(self) -> int:
        return (self.size or 0) * len(self.adding)

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


@dataclass(frozen=True)
class PlanDiff:
    changes: tuple[PartitionChange, ...]
    brokers: tuple[BrokerChange, ...]
    racks: tuple[RackChange, ...]
    flows: tuple[Flow, ...]

    @property
    def moving(self) -> tuple[PartitionChange, ...]:
        return tuple(c for c in self.changes if c.adding or c.removing)

    @property
    def bytes_to_copy(self) -> int:
        return sum(c.bytes_to_copy for c in self.changes)

    @property
    def sizes_known(self) -> bool:
        return all(c.size is not None for c in self.changes if c.adding)

    def counts(self) -> dict[str, int]:
        out = {k.value: 0 for k in ChangeKind}
        for c in self.changes:
            out[c.kind.value] += 1
        return out

    def summary(self) -> dict[str, object]:
        moving = self.moving
        return {
            "partitions": len(self.changes),
            "moving": len(moving),
            "replicas_added": sum(len(c.adding) for c in moving),
            "replicas_removed": sum(len(c.removing) for c in moving),
            "leaders_changing": sum(1 for c in self.changes if c.leader_after != c.leader_before),
            "bytes_to_copy": self.bytes_to_copy,
            "sizes_known": self.sizes_known,
            "kinds": self.counts(),
        }


def partition_size(p: Partition) -> int | None:
    """The leader's log size, else the largest replica reported."""
    largest = None
    for log in p.logs:
        if not log.is_future:
            if log.broker == p.leader:
                return log.size
            if largest is None or log.size > largest:
                largest = log.size
    return largest


def change_of(p: Partition | None, e: PlanEntry) -> PartitionChange:
    target = e.replicas
    if p is None:
        return PartitionChange(e.topic, e.partition, ChangeKind.UNKNOWN, (), target, (), (), None, None, False, None,
                               e.log_dirs)
    current = p.original
    leader = p.leader
    if target == current and not p.reassigning:
        return PartitionChange(e.topic, e.partition, ChangeKind.NONE, current, target, (), (), leader, leader,
                               False, partition_size(p), e.log_dirs)
    # replica lists are short: tuple membership beats building sets
    adding = tuple(b for b in target if b not in current)
    removing = tuple(b for b in current if b not in target)
    if adding or removing:
        n, m = len(target), len(current)
        kind = ChangeKind.MOVE if n == m else (ChangeKind.GROW if n > m else ChangeKind.SHRINK)
    else:
        kind = ChangeKind.REVERT if p.reassigning else ChangeKind.REORDER
    leader_after = leader if leader is not None and leader in target else (target[0] if target else None)
    return PartitionChange(e.topic, e.partition, kind, current, target, adding, removing, leader, leader_after,
                           p.reassigning, partition_size(p), e.log_dirs)


@without_gc
def diff(state: ClusterState, plan: Plan) -> PlanDiff:
    index = state.partition_index
    changes = tuple(change_of(index.get(e.key), e) for e in plan.entries)
    brokers, flows = _brokers(state, changes)
    return PlanDiff(changes, brokers, _racks(brokers), flows)


def _brokers(state: ClusterState, changes: Iterable[PartitionChange]) -> tuple[tuple[BrokerChange, ...], tuple[Flow, ...]]:
    totals = state.broker_totals  # computed once per snapshot
    before_r = {b: t[0] for b, t in totals.items()}
    before_l = {b: t[1] for b, t in totals.items()}
    before_s = {b: t[2] for b, t in totals.items()}
    replicas: dict[BrokerId, int] = defaultdict(int, before_r)
    leaders: dict[BrokerId, int] = defaultdict(int, before_l)
    size: dict[BrokerId, int] = defaultdict(int, before_s)
    arriving: dict[BrokerId, int] = defaultdict(int)
    leaving: dict[BrokerId, int] = defaultdict(int)
    b_in: dict[BrokerId, int] = defaultdict(int)
    b_out: dict[BrokerId, int] = defaultdict(int)
    flows: dict[tuple[BrokerId, BrokerId], list[int]] = {}
    index = state.partition_index
    for c in changes:
        if c.kind is ChangeKind.UNKNOWN:
            continue
        p = index[c.key]
        # "before" counted R; a partition in flight ends, under the plan, at its target instead
        for b in p.replicas:
            replicas[b] -= 1
        for b in c.target:
            replicas[b] += 1
        if c.leader_before != c.leader_after:
            if c.leader_before is not None:
                leaders[c.leader_before] -= 1
            if c.leader_after is not None:
                leaders[c.leader_after] += 1
        psize = c.size or 0
        for b in c.removing:
            leaving[b] += 1
            size[b] -= p.size_on(b) or psize
        for b in p.adding:  # in-flight adding replicas the new target drops are deleted
            if b not in c.target:
                size[b] -= p.size_on(b) or 0
        src = c.source
        for b in c.adding:
            arriving[b] += 1
            copied = p.size_on(b) or 0  # an in-flight adding replica has copied part already
            size[b] += psize - copied
            b_in[b] += psize
            if src is not None:
                b_out[src] += psize
                f = flows.setdefault((src, b), [0, 0])
                f[0] += 1
                f[1] += psize
    ids = sorted(set(replicas) | {b.id for b in state.brokers})
    rows = []
    for b in ids:
        broker = state.broker(b)
        rows.append(BrokerChange(
            broker=b, rack=broker.rack if broker else None, known=broker is not None and broker.registered,
            replicas_before=before_r.get(b, 0), replicas_after=replicas.get(b, 0),
            arriving=arriving.get(b, 0), leaving=leaving.get(b, 0),
            leaders_before=before_l.get(b, 0), leaders_after=leaders.get(b, 0),
            bytes_before=before_s.get(b, 0), bytes_after=max(0, size.get(b, 0)),
            bytes_in=b_in.get(b, 0), bytes_out=b_out.get(b, 0),
        ))
    flow_rows = tuple(Flow(s, d, n, sz) for (s, d), (n, sz) in sorted(flows.items()))
    return tuple(rows), flow_rows


def _racks(brokers: tuple[BrokerChange, ...]) -> tuple[RackChange, ...]:
    acc: dict[str, list[int]] = {}
    for b in brokers:
        r = acc.setdefault(b.rack or "(no rack)", [0] * 7)
        for i, v in enumerate((b.replicas_before, b.replicas_after, b.arriving, b.leaving, b.bytes_before,
                               b.bytes_after, b.bytes_in)):
            r[i] += v
    return tuple(RackChange(rack, *vals) for rack, vals in sorted(acc.items()))
