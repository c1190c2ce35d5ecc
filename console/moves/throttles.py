"""Replication throttles for a run, as ``kafka-reassign-partitions.sh --throttle`` sets them (pure).

On each topic, ``leader.replication.throttled.replicas`` lists ``partition:broker`` for every
current replica of a moving partition and ``follower.replication.throttled.replicas`` the adding
ones; the rate goes on every live broker taking part. Lists are merged with what is already set
(never replaced), and removal takes away exactly the entries the console added (the ledger in
:mod:`console.storage.runs` remembers them). **Leftovers** are throttles nothing in flight needs
(for the sweeper).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum

from console.core.limits import ALL_REPLICAS, FOLLOWER_LIST, LEADER_LIST
from console.core.model import DEFAULT_BROKER, BrokerId, ClusterState, Partition
from console.plans.diff import PartitionChange, change_of
from console.plans.logdirs import dir_moves_in_flight, to_move
from console.plans.plan import PlanEntry


@dataclass(frozen=True)
class Throttle:
    """What a wave needs throttled: list entries per topic and key, and the brokers taking part."""

    topics: Mapping[str, Mapping[str, frozenset[str]]]
    brokers: frozenset[BrokerId]
    dir_brokers: frozenset[BrokerId] = frozenset()
    """Brokers copying a replica between their log dirs (``replica.alter.log.dirs.io.max.bytes.per.second``)."""


def wave_throttle(state: ClusterState, entries: Iterable[PlanEntry]) -> Throttle:
    topics: dict[str, dict[str, set[str]]] = {}
    brokers: set[BrokerId] = set()
    dir_brokers: set[BrokerId] = set()
    index = state.partition_index
    for e in entries:
        dir_brokers.update(m.broker for m in to_move(index.get(e.key), e) if m.broker in e.replicas)
        c: PartitionChange = change_of(index.get(e.key), e)
        if not c.adding and not c.removing:
            continue
        t = topics.setdefault(e.topic, {LEADER_LIST: set(), FOLLOWER_LIST: set()})
        t[LEADER_LIST].update(f"{e.partition}:{b}" for b in c.current)
        t[FOLLOWER_LIST].update(f"{e.partition}:{b}" for b in c.adding)
        brokers.update(c.current)
        brokers.update(c.adding)
    live = {b.id for b in state.brokers if b.live}
    return Throttle(
        {t: {k: frozenset(v) for k, v in keys.items() if v} for t, keys in topics.items()},
        frozenset(b for b in brokers if b in live),
        frozenset(b for b in dir_brokers if b in live),
    )


def _entries(value: str | None) -> set[str]:
    return {x.strip() for x in (value or "").split(",") if x.strip()}


def _joined(entries: Iterable[str]) -> str:
    return ",".join(sorted(entries))  # the official tool's order: lexicographic ("10:1" < "2:1")


def merged(current: str | None, ours: Iterable[str]) -> str | None:
    """The value to set so that ``ours`` are throttled too; None when nothing needs setting
    (all are there already, or the list is ``*``)."""
    have = _entries(current)
    if ALL_REPLICAS in have:
        return None
    want = have | set(ours)
    return None if want == have else _joined(want)


def unmerged(current: str | None, added: Iterable[str]) -> tuple[bool, str | None]:
    """Taking away exactly the entries the console ``added``: (change needed, new value or None
    to delete the key). Entries others set meanwhile stay."""
    have = _entries(current)
    left = have - set(added)
    if left == have:
        return False, None
    return True, (_joined(left) if left else None)


# -- the sweeper ---------------------------------------------------------------------------------
class LeftoverKind(StrEnum):
    """Where a leftover throttle is set."""

    BROKER = "broker"
    TOPIC = "topic"
    CLUSTER_DEFAULT = "cluster default"
    """The cluster-wide default broker configs (``kafka-configs --entity-default``): in force on
    every broker without its own value. Someone set it on purpose; it is swept only when asked."""


@dataclass(frozen=True)
class Leftover:
    """A throttle config set on a broker, a topic or as the cluster default that nothing in flight needs."""

    kind: LeftoverKind
    name: str
    """The broker id, the topic, or ``DEFAULT_BROKER`` for the cluster default."""
    key: str
    value: str

    @property
    def where(self) -> str:
        """``broker 2``, ``topic t``, ``cluster default``."""
        return str(self.kind) if self.kind is LeftoverKind.CLUSTER_DEFAULT else f"{self.kind} {self.name}"


def leftover_throttles(state: ClusterState, include_cluster_default: bool = False) -> list[Leftover]:
    """Throttles nothing needs: topic lists on topics with no partition in flight, and broker
    rates on brokers no in-flight partition involves and no log dir move copies on (every
    throttle, when nothing is in flight).
    The cluster default rates only with ``include_cluster_default``, and only those no broker in
    flight takes as its rate (a broker in flight without its own value copies at the default)."""
    busy_topics = {p.topic for p in state.in_flight}
    busy_brokers = {str(b) for p in state.in_flight for b in p.replicas}
    busy_brokers |= {str(m.broker) for m in dir_moves_in_flight(state)}  # copying between its own dirs
    brokers = state.throttles.broker_map()
    default = brokers.pop(DEFAULT_BROKER, {})
    out = [
        Leftover(LeftoverKind.TOPIC, t, k, v)
        for t, keys in state.throttles.topic_map().items()
        if t not in busy_topics
        for k, v in sorted(keys.items())
    ]
    out += [
        Leftover(LeftoverKind.BROKER, b, k, v)
        for b, keys in brokers.items()
        if b not in busy_brokers
        for k, v in sorted(keys.items())
    ]
    if include_cluster_default:
        out += [
            Leftover(LeftoverKind.CLUSTER_DEFAULT, DEFAULT_BROKER, k, v)
            for k, v in sorted(default.items())
            if all(k in brokers.get(b, {}) for b in busy_brokers)
        ]
    return out


def cluster_default_kept(state: ClusterState, left: Iterable[Leftover]) -> list[Leftover]:
    """The cluster default rates set now that ``left`` does not sweep (for saying so)."""
    swept = {lo.key for lo in left if lo.kind is LeftoverKind.CLUSTER_DEFAULT}
    default = state.throttles.broker_map().get(DEFAULT_BROKER, {})
    return [
        Leftover(LeftoverKind.CLUSTER_DEFAULT, DEFAULT_BROKER, k, v)
        for k, v in sorted(default.items())
        if k not in swept
    ]


def left_on(
    left: Iterable[Leftover],
    topics: Iterable[str],
    brokers: Iterable[BrokerId],
    set_by_runs: Iterable[tuple[str, str, str]] = (),
) -> list[Leftover]:
    """Of ``left`` (:func:`leftover_throttles`: nothing in flight needs them), those on ``topics``
    and on ``brokers``, less those this console's runs set (``set_by_runs``: each open ledger
    entry's kind, name and key; a run takes its own off): after a cancel, what another tool (the
    official ``--throttle``) left on the cancelled partitions' topics and brokers. Never the
    cluster default."""
    on = {LeftoverKind.TOPIC: set(topics), LeftoverKind.BROKER: {str(b) for b in brokers}}
    ours = set(set_by_runs)
    return [lo for lo in left if lo.name in on.get(lo.kind, ()) and (str(lo.kind), lo.name, lo.key) not in ours]


def involved(partitions: Iterable[Partition]) -> tuple[tuple[str, ...], tuple[BrokerId, ...]]:
    """The topics of ``partitions`` and the brokers their reassignments involved (every replica,
    adding and removing ones included: where the official tool sets its rates)."""
    parts = list(partitions)
    return tuple(sorted({p.topic for p in parts})), tuple(sorted({b for p in parts for b in p.replicas}))
