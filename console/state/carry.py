"""Sizes and topic configs carried over between full reads (pure).

A narrow read (:mod:`console.state.cadence`) asks every broker for the log dirs of only some
partitions, and for the configs of every broker but only of some topics: those in flight now
(ListPartitionReassignments), those in flight or copied between log dirs at a read in the last
``sizes_every_s`` (so that a move that just ended shows its final sizes at once, and the throttles
taken off after it show gone), those a run of this console moves, and those Metadata lists that
were not there at the last read (a topic just created) or whose replicas changed since (a move
another tool made that began and ended between two reads). What it
did not ask for is taken from the last read: :func:`narrowing` decides what to ask,
:func:`carry` puts the answer and the carried values together, :class:`Carried` is what is kept.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, replace
from typing import TypeVar

from console.adapters.kafka import Narrowing
from console.adapters.kafka.wire import CONFIGS_PARTIAL
from console.adapters.records import ApiView, Asked, BrokerLogDirs, PartitionMeta, Reassignment
from console.core.model import BrokerId, SourceStatus, TopicPartition

V = TypeVar("V")

UNREAD = frozenset({"log-dirs-unreadable", "configs-unreadable", CONFIGS_PARTIAL})
"""Finding codes of a read that did not answer in full (a broker's log dirs, some configs)."""


@dataclass(frozen=True)
class Carried:
    """What the reads so far know of every partition's sizes and every topic's configs."""

    log_dirs: tuple[BrokerLogDirs, ...]
    topic_throttles: dict[str, dict[str, str]]
    min_insync: dict[str, int]
    tiered_topics: frozenset[str]
    replicas: Mapping[TopicPartition, tuple[BrokerId, ...]]
    """Each partition Metadata listed at the last read, with its replicas then (their sizes and
    configs were read as they were)."""
    moved: Mapping[TopicPartition, float]
    """When each partition was last seen moving (in flight, or a replica being copied to another
    log dir of its broker), for those seen in the last ``window_s``."""
    read_at: float
    """When the last read began (epoch seconds)."""
    sizes_at: float
    """When every partition's sizes were last read (the last full read began)."""
    configs_at: float

    @staticmethod
    def after(
        view: ApiView,
        read_at: float,
        sizes_at: float,
        configs_at: float,
        before: Carried | None = None,
        window_s: float = 0.0,
    ) -> Carried:
        """What to carry over after a read that answered in full (``view``: its answer, carried
        values included); the partitions seen moving in the last ``window_s`` seconds are kept
        from ``before``."""
        moving = set(view.reassignments or ())
        for bl in view.log_dirs:
            moving.update((t, p) for t, p, _, _, future in bl.replicas if future)
        kept = {k: t for k, t in before.moved.items() if read_at - t < window_s} if before is not None else {}
        return Carried(
            view.log_dirs,
            view.topic_throttles,
            view.min_insync,
            view.tiered_topics,
            {k: m.replicas for k, m in view.partitions.items()},
            kept | dict.fromkeys(moving, read_at),
            read_at,
            sizes_at,
            configs_at,
        )


def narrowing(carried: Carried, followed: Collection[TopicPartition] = ()) -> Narrowing:
    """What a narrow read asks for, once Metadata (``parts``) and the reassignments in flight
    (``listed``; None when they could not be read) are known: the partitions in flight, those seen
    moving lately, ``followed`` (a run's) and those Metadata lists that were not known or whose replicas changed; and their
    topics. Only partitions Metadata lists are asked for."""

    def ask(
        parts: Mapping[TopicPartition, PartitionMeta], listed: Mapping[TopicPartition, Reassignment] | None
    ) -> Asked:
        wanted = set(listed or ()) | carried.moved.keys() | set(followed)
        # new partitions, and those whose replicas changed since (another tool's move, done between reads)
        wanted.update(k for k, m in parts.items() if carried.replicas.get(k) != m.replicas)
        partitions = frozenset(k for k in wanted if k in parts)
        return Asked(partitions, frozenset(t for t, _ in partitions))

    return ask


def carry(fresh: ApiView, carried: Carried) -> tuple[ApiView, bool]:
    """``fresh`` (a narrow read's answer) with what it did not ask for taken from ``carried``, and
    whether everything could be carried over. Each broker that answered gives its dirs (their free
    space is fresh) and the sizes asked for, the rest of its replicas carried; a broker that did not
    answer has no log dirs, as in a full read. The configs of the topics asked for and of every
    broker are fresh, the other topics' carried (topics no longer listed dropped). Not everything is
    carried over (False: the next read is a full one) when Metadata, a broker's log dirs or the
    configs did not answer, or a broker answered that had nothing to carry over (a new one)."""
    asked = fresh.asked
    if asked is None or fresh.metadata_status is not SourceStatus.OK:
        return fresh, False
    before = {bl.broker: bl for bl in carried.log_dirs}
    log_dirs = tuple(_carried_dirs(bl, before.get(bl.broker), asked.partitions) for bl in fresh.log_dirs)
    complete = (
        fresh.log_dirs_status is SourceStatus.OK
        and fresh.configs_status is SourceStatus.OK
        and {b.id for b in fresh.brokers} <= before.keys()
        and len(fresh.log_dirs) == len(fresh.brokers)
        and not any(f.code in UNREAD for f in fresh.problems)
    )
    if fresh.configs_status is not SourceStatus.OK:
        return replace(fresh, log_dirs=log_dirs), False
    listed = {t for t, _ in fresh.partitions}
    kept = listed - asked.topics
    return (
        replace(
            fresh,
            log_dirs=log_dirs,
            topic_throttles={**_only(carried.topic_throttles, kept), **fresh.topic_throttles},
            min_insync={**_only(carried.min_insync, kept), **fresh.min_insync},
            tiered_topics=(carried.tiered_topics & kept) | fresh.tiered_topics,
        ),
        complete,
    )


def answered_in_full(view: ApiView) -> bool:
    """A full read whose every part answered: Metadata, every broker's log dirs and every config
    (what is carried over from it is then the whole picture)."""
    return (
        view.asked is None
        and view.metadata_status is SourceStatus.OK
        and view.log_dirs_status is SourceStatus.OK
        and view.configs_status is SourceStatus.OK
        and len(view.log_dirs) == len(view.brokers)
        and not any(f.code in UNREAD for f in view.problems)
    )


def _carried_dirs(
    answered: BrokerLogDirs, before: BrokerLogDirs | None, asked: frozenset[TopicPartition]
) -> BrokerLogDirs:
    """A broker's answer to a narrow read (its dirs, the replicas asked for) with its other
    replicas as ``before`` had them."""
    if before is None:
        return answered
    kept = tuple(r for r in before.replicas if (r[0], r[1]) not in asked)
    return BrokerLogDirs(answered.broker, answered.dirs, kept + answered.replicas)


def _only(values: Mapping[str, V], topics: set[str]) -> dict[str, V]:
    return {t: v for t, v in values.items() if t in topics}
