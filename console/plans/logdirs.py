"""A plan's ``log_dirs`` carried out (KIP-113): which replicas must land in, or move to, a named log
dir, and whether they are there (pure).

An entry's ``log_dirs`` names, per replica, ``any`` or an absolute dir of that replica's broker. As
the official tool does, the console sends AlterReplicaLogDirs for each named dir the replica is
not in yet: before the reassignment for a replica still to be created (the broker answers
REPLICA_NOT_AVAILABLE and remembers the dir for when it creates the replica), and for a replica
that only changes dir (the broker copies it into a *future* replica there, then swaps). A named
dir is reached when the replica's log is in that dir and no future log of it remains.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from console.core.model import BrokerId, ClusterState, Partition, TopicPartition, partition_name
from console.plans.plan import ANY, PlanEntry

DirKey = tuple[str, int, BrokerId]
"""A replica: topic, partition, broker."""


@dataclass(frozen=True, slots=True)
class DirMove:
    """A replica to place in (or move to) ``log_dir`` of its broker."""

    topic: str
    partition: int
    broker: BrokerId
    log_dir: str

    @property
    def key(self) -> DirKey:
        return (self.topic, self.partition, self.broker)

    @property
    def partition_key(self) -> TopicPartition:
        return (self.topic, self.partition)


def current_dir(p: Partition | None, broker: BrokerId) -> str | None:
    """The dir of the replica's log on ``broker`` (not a future one); None when it has none yet."""
    if p is None:
        return None
    return next((log.log_dir for log in p.logs if log.broker == broker and not log.is_future), None)


def future_dir(p: Partition | None, broker: BrokerId) -> str | None:
    """The dir a replica on ``broker`` is being copied to (its future log); None when it is not moving."""
    if p is None:
        return None
    return next((log.log_dir for log in p.logs if log.broker == broker and log.is_future), None)


def named(e: PlanEntry) -> list[DirMove]:
    """The entry's replicas with a named dir (not ``any``)."""
    if e.log_dirs is None:
        return []
    return [DirMove(e.topic, e.partition, b, d) for b, d in zip(e.replicas, e.log_dirs, strict=False) if d and d != ANY]


def to_move(p: Partition | None, e: PlanEntry) -> list[DirMove]:
    """The named dirs the replicas are not in yet (their log elsewhere, or not created yet)."""
    return [m for m in named(e) if current_dir(p, m.broker) != m.log_dir or future_dir(p, m.broker) is not None]


def to_send(p: Partition | None, e: PlanEntry) -> list[DirMove]:
    """The named dirs to ask for now: the replica is neither in that dir nor being copied to it."""
    return [m for m in named(e) if m.log_dir not in (current_dir(p, m.broker), future_dir(p, m.broker))]


def dirs_reached(p: Partition | None, e: PlanEntry) -> bool:
    """Every named dir holds its replica's log, and no future log of those replicas remains."""
    return not to_move(p, e)


def dirs_done(state: ClusterState, p: Partition | None, e: PlanEntry, failed: set[DirKey]) -> bool:
    """Every named dir of ``e`` holds its replica (no future log left), bar those of ``failed``
    (the broker refused them: recorded, not waited for). Unknown (False) while log dirs were not read."""
    if e.log_dirs is None:
        return True
    if not state.logs_known:
        return False
    return all(m.key in failed for m in to_move(p, e))


def sends_of(state: ClusterState, entries: Iterable[PlanEntry]) -> list[DirMove]:
    """Every named dir of ``entries`` to ask for now, as ``state`` shows the replicas."""
    index = state.partition_index
    return [m for e in entries for m in to_send(index.get(e.key), e)]


def dir_copies(p: Partition | None, e: PlanEntry) -> tuple[tuple[BrokerId, int | None], ...]:
    """The replicas ``e`` asks into another dir of their broker that exist there already (their log
    is in another dir), each with the bytes its broker copies between its dirs: its own log's size
    (the partition's when its own is not reported; None when neither is). A replica still to be
    created is placed in its dir when the broker creates it: nothing is copied between dirs."""
    if p is None or e.log_dirs is None:
        return ()
    out = []
    for m in named(e):
        now = current_dir(p, m.broker)
        if now is not None and now != m.log_dir:
            own = p.size_on(m.broker)
            out.append((m.broker, own if own is not None else p.size))
    return tuple(out)


def changes_dir(p: Partition | None, e: PlanEntry) -> bool:
    """Whether the entry asks for a dir its replica is not in (a log dir move, even with the same replicas)."""
    return bool(named(e)) and bool(to_move(p, e))


@dataclass(frozen=True, slots=True)
class DirMoveProgress:
    """A future replica being copied to another dir of its broker, as DescribeLogDirs shows it."""

    topic: str
    partition: int
    broker: BrokerId
    from_dir: str | None
    to_dir: str
    copied_bytes: int
    size: int | None

    @property
    def left(self) -> int | None:
        """Bytes still to copy into the future replica; None when the source's size is not known."""
        return None if self.size is None else max(0, self.size - self.copied_bytes)

    @property
    def key(self) -> DirKey:
        return (self.topic, self.partition, self.broker)

    @property
    def percent(self) -> float | None:
        if not self.size:
            return None if self.size is None else 100.0
        return min(100.0, int(self.copied_bytes * 1000 / self.size) / 10)


def dir_moves_in_flight(state: ClusterState) -> list[DirMoveProgress]:
    """Every future replica of the snapshot (a log dir move in flight), with its progress (looked
    for once per snapshot: the Live page and its copy tracker ask at every refresh)."""
    return list(state.memo("logdirs.in_flight", _in_flight))


def _in_flight(state: ClusterState) -> tuple[DirMoveProgress, ...]:
    return tuple(_moves(state.partitions))


def dir_moves_of(state: ClusterState, keys: Iterable[TopicPartition]) -> list[DirMoveProgress]:
    """The future replicas of the partitions ``keys`` (their log dir moves in flight), with their progress."""
    index = state.partition_index
    return _moves(p for k in keys if (p := index.get(k)) is not None)


def _moves(parts: Iterable[Partition]) -> list[DirMoveProgress]:
    out = []
    for p in parts:
        for log in p.logs:
            if log.is_future:
                src = next((x for x in p.logs if x.broker == log.broker and not x.is_future), None)
                out.append(
                    DirMoveProgress(
                        p.topic,
                        p.partition,
                        log.broker,
                        src.log_dir if src else None,
                        log.log_dir,
                        log.size,
                        src.size if src else None,
                    )
                )
    return out


@dataclass(frozen=True, slots=True)
class OfflineMove:
    """A log dir move that cannot finish: its target dir, or the dir holding the replica, is
    offline on the broker (DescribeLogDirs answered it with an error, e.g. after an I/O error
    during the copy, KAFKA-19571)."""

    move: DirMove
    offline_dir: str
    """The dir that is offline (the broker's offline dirs, comma-separated, when the replica is
    in one of several)."""
    into: bool
    """The target dir is the offline one (the copy into it was dropped); else the replica's own dir is."""
    source: str | None
    """Where the replica's log is now (None: in the offline dir, or not created yet)."""

    @property
    def name(self) -> str:
        return partition_name(self.move.topic, self.move.partition)

    def message(self, during: bool = True) -> str:
        """What happened and what to do, in an operator's words (``during``: the broker had taken
        the move, so the dir went offline while it ran)."""
        m = self.move
        when = "went offline during the move" if during else "is offline"
        todo = (
            f"Check the disk and the broker's log, then restart broker {m.broker} to bring the dir back, and "
            "move the replica again."
        )
        if self.into:
            where = (
                f"the copy into it was dropped and the replica stays in {self.source}"
                if self.source
                else f"the replica has no log in an online dir of broker {m.broker} (it is in the offline dir, "
                "out of the ISR, or not created yet)"
            )
            return (
                f"the log dir {self.offline_dir} of broker {m.broker} {when} (KAFKA-19571 can cause this after "
                f"an I/O error): {where}, not in {m.log_dir} as the plan asked. {todo}"
            )
        dirs = (
            f"one of the log dirs {self.offline_dir} of broker {m.broker}, all offline,"
            if ", " in self.offline_dir
            else f"the log dir {self.offline_dir} of broker {m.broker},"
        )
        return (
            f"{dirs} which holds the replica, {when} (KAFKA-19571 can cause this after an I/O error): the copy to "
            f"{m.log_dir} stopped and the replica is offline on broker {m.broker} (out of the ISR), not in "
            f"{m.log_dir} as the plan asked. {todo}"
        )


def offline_moves(state: ClusterState, p: Partition | None, e: PlanEntry) -> list[OfflineMove]:
    """The named dirs of ``e`` not reached yet whose move cannot finish because a dir is offline on
    the replica's broker: the target dir, or the dir the replica's log is in (an offline dir lists
    nothing, so a replica of the broker, not being added, with no log in an online dir is in one).
    Empty while the broker's log dirs were not read."""
    out = []
    for m in to_move(p, e):
        broker = state.broker(m.broker)
        offline = sorted(d.path for d in broker.log_dirs if d.offline) if broker is not None else []
        if not offline:
            continue
        now = current_dir(p, m.broker)
        if m.log_dir in offline:
            out.append(OfflineMove(m, m.log_dir, True, now))
        elif p is not None and now is None and m.broker in p.replicas and m.broker not in p.adding:
            out.append(OfflineMove(m, ", ".join(offline), False, None))
    return out
