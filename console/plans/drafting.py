"""Drafting plans (pure): start from the current assignment, edit entries, bulk edits.

Every function returns a new :class:`~console.plans.plan.Plan` (plans are immutable), so the Drafts
page keeps a history for undo by keeping the previous plans.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from console.core.errors import PlanFormatError
from console.core.limits import INT32_MAX
from console.core.model import BrokerId, ClusterState, TopicPartition
from console.plans.plan import ANY, Plan, PlanEntry


def from_assignment(state: ClusterState, topics: Iterable[str] = (), partitions: Iterable[TopicPartition] = ()) -> Plan:
    """A draft holding the current replicas (originals for partitions in flight) of the chosen
    topics and partitions; the basis for the stale check is recorded."""
    wanted_topics = set(topics)
    wanted = set(partitions)
    entries = [
        PlanEntry(p.topic, p.partition, p.original)
        for p in state.partitions
        if p.topic in wanted_topics or p.key in wanted
    ]
    return Plan.of(entries).with_basis(state)


def parse_ids(text: str) -> tuple[BrokerId, ...]:
    """``"1, 2,3"`` → (1, 2, 3); raise PlanFormatError for anything else."""
    parts = [x.strip() for x in str(text).replace(" ", ",").split(",") if x.strip()]
    if not parts:
        raise PlanFormatError(["the replica list is empty"])
    if not all(x.isdigit() and int(x) <= INT32_MAX for x in parts):
        raise PlanFormatError([f"broker ids must be integers from 0 to {INT32_MAX}: {text!r}"])
    ids = tuple(BrokerId(int(x)) for x in parts)
    if len(set(ids)) != len(ids):
        raise PlanFormatError([f"the same broker appears twice in {text!r}"])
    return ids


def set_entry(
    plan: Plan, topic: str, partition: int, replicas: tuple[BrokerId, ...], log_dirs: tuple[str, ...] | None = None
) -> Plan:
    if log_dirs is not None and all(d == ANY for d in log_dirs):
        log_dirs = None
    if log_dirs is not None and len(log_dirs) != len(replicas):
        raise PlanFormatError(
            [f'{len(log_dirs)} log dirs for {len(replicas)} replicas (give one per replica, or "any")']
        )
    if log_dirs is not None and any(d != ANY and not d.startswith("/") for d in log_dirs):
        raise PlanFormatError(['log dirs must be "any" or absolute paths'])
    entries = [e for e in plan.entries if (e.topic, e.partition) != (topic, partition)]
    entries.append(PlanEntry(topic, partition, replicas, log_dirs))
    return Plan.of(entries, plan.basis)


def _map(plan: Plan, keys: Iterable[TopicPartition] | None, fn: Callable[[PlanEntry], PlanEntry]) -> Plan:
    chosen = None if keys is None else set(keys)
    return Plan.of((fn(e) if chosen is None or e.key in chosen else e for e in plan.entries), plan.basis)


def replace_broker(plan: Plan, old: BrokerId, new: BrokerId, keys: Iterable[TopicPartition] | None = None) -> Plan:
    """Broker ``old`` → ``new`` in the selection (all entries when ``keys`` is None). Entries that
    already hold ``new`` are left as they are (a broker holds one replica of a partition)."""

    def fn(e: PlanEntry) -> PlanEntry:
        if old not in e.replicas or new in e.replicas:
            return e
        return e._replace(replicas=tuple(new if b == old else b for b in e.replicas), log_dirs=None)

    return _map(plan, keys, fn)


def move_to_first(plan: Plan, broker: BrokerId, keys: Iterable[TopicPartition] | None = None) -> Plan:
    """Make ``broker`` the preferred leader (first replica) wherever it holds a replica in the selection."""

    def fn(e: PlanEntry) -> PlanEntry:
        if broker not in e.replicas or e.replicas[0] == broker:
            return e
        order = (broker, *tuple(b for b in e.replicas if b != broker))
        dirs = None if e.log_dirs is None else tuple(e.log_dirs[e.replicas.index(b)] for b in order)
        return e._replace(replicas=order, log_dirs=dirs)

    return _map(plan, keys, fn)


def set_replication_factor(plan: Plan, state: ClusterState, topic: str, rf: int) -> Plan:
    """Every entry of ``topic`` gets ``rf`` replicas: dropping from the end, or adding eligible
    brokers (never a cordoned one) that put the partition on a new rack first, then the least
    loaded ones."""
    if rf < 1:
        raise PlanFormatError([f"the replication factor must be at least 1, not {rf}"])
    eligible = [b for b in state.brokers if b.eligible and not b.cordoned]
    if rf > len(eligible):
        raise PlanFormatError(
            [f"replication factor {rf} needs {rf} eligible, uncordoned brokers; the cluster has {len(eligible)}"]
        )
    load = {b.id: state.broker_totals.get(b.id, (0, 0, 0))[0] for b in eligible}
    rack = {b.id: b.rack for b in eligible}

    def fn(e: PlanEntry) -> PlanEntry:
        if e.topic != topic or len(e.replicas) == rf:
            return e
        if len(e.replicas) > rf:
            return e._replace(replicas=e.replicas[:rf], log_dirs=e.log_dirs[:rf] if e.log_dirs else None)
        replicas = list(e.replicas)
        while len(replicas) < rf:
            used_racks = {rack.get(b) for b in replicas}
            pick = min(
                (b for b in load if b not in replicas),
                key=lambda b: (rack.get(b) in used_racks and rack.get(b) is not None, load[b], b),
            )
            replicas.append(pick)
            load[pick] += 1
        return e._replace(replicas=tuple(replicas), log_dirs=None)

    return _map(plan, None, fn)
