"""A running wave watched: which partitions are done, gone or cancelled, min ISR changes, and
the stuck flag."""

from __future__ import annotations

import os
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from console.core.errors import ConsoleError
from console.core.format import human_duration, ids_text
from console.core.model import (
    DIR_OFFLINE,
    PARTITION_CANCELLED,
    PARTITION_GONE,
    BrokerId,
    ClusterState,
    Outcome,
    Partition,
    SourceStatus,
    TopicPartition,
)
from console.metrics.instruments import BYTES_LEFT, ETA_SECONDS
from console.moves.progress import bytes_left, waiting_on
from console.moves.readback import AGREE_S, LOOK_EVERY_S, ReadBack, Shown
from console.notify.events import Event
from console.plans.logdirs import dirs_done
from console.plans.plan import PlanEntry, parse_plan
from console.runs.steps import Ports
from console.storage.runs import Run, Wave

STUCK_AFTER_S = float(os.environ.get("CONSOLE_STUCK_AFTER_S", "300"))
"""A running wave that copies nothing and completes nothing for this long flags its run stuck."""


@dataclass(frozen=True)
class WaveStatus:
    """A running wave as the cluster shows it."""

    accepted: int
    """Its partitions the controller took, neither gone nor cancelled since."""
    pending: list[PlanEntry]
    """Of those, the ones not done yet: moving, or not yet in sync or in the log dirs asked."""
    cancelled: tuple[TopicPartition, ...]
    """Its partitions an operator cancelled (recorded as such), at this look or before."""
    moved: int
    """Of the accepted, those whose reassignment completed (out of the in-flight list, at their
    target): done as the progress counts them (the Runs page's "at target"), in sync yet or not."""

    @property
    def done(self) -> int:
        """Its partitions done for the wave: at their target, in sync, in their log dirs."""
        return self.accepted - len(self.pending)

    def progress(self, wave: int, gone: int) -> str:
        """``wave 1: 3 of 6 done``, with what else there is to say of it."""
        notes = [
            f"{n} {what}"
            for n, what in (
                (self.moved - self.done, "at the target, not yet in sync or in their log dir"),
                (len(self.cancelled), "cancelled"),
                (gone, "gone"),
            )
            if n
        ]
        return f"wave {wave}: {self.moved} of {self.accepted} done" + "".join(f" ({n})" for n in notes)


class Watcher:
    """A running wave's progress, and what stops it: partitions gone or cancelled (recorded once),
    ``min.insync.replicas`` changed under it, no progress for too long (the run flagged stuck)."""

    def __init__(self, ports: Ports, settle_s: float, stuck_after_s: float | None = None) -> None:
        self.ports = ports
        self.store = ports.store
        self.settle_s = settle_s
        """How long to look again before taking "left the list away from its target" as a cancel."""
        self.stuck_after_s = STUCK_AFTER_S if stuck_after_s is None else stuck_after_s
        """A running wave with no byte copied and no partition done for this long flags its run stuck."""
        self._min_isr: dict[int, dict[str, int]] = {}
        """Per run, each of its moving topics' ``min.insync.replicas`` as last seen (see :meth:`_min_isr_changes`)."""
        self._copied: dict[int, tuple[int, float]] = {}
        """Per run, the bytes its pending replicas had copied at the last look, and when (for the ETA metric)."""
        self._shown: dict[tuple[int, int], tuple[ReadBack, float, float | None]] = {}
        """Per (run, wave) the controller completed: what the brokers showed of it, since when it is
        watched, the last look (see :meth:`shown_on_brokers`)."""

    def status(self, run: Run, wave: Wave, state: ClusterState, entries: list[PlanEntry] | None = None) -> WaveStatus:
        """Where the wave stands (see :class:`WaveStatus`); ``entries``: the wave's accepted entries
        when the caller read them already.

        A partition not done that has left the list without reaching its target was cancelled (by
        an operator, here or with another tool): recorded once (:data:`PARTITION_CANCELLED`, with
        where it is now), audited, and no longer waited for; the rest of the wave goes on. A
        completed move can look like that for a moment (brokers learn the new replicas a little
        after the controller), so it is confirmed on a second look."""
        if entries is None:
            entries = self.accepted(run, wave)
        failed: set[tuple[str, int, BrokerId]] = set()
        offline: dict[TopicPartition, set[BrokerId]] = {}
        if any(e.log_dirs is not None for e in entries):
            last = {(d.topic, d.partition, d.broker): d for d in self.store.runs.dir_moves(run.id, wave.number)}
            failed = {k for k, d in last.items() if not d.accepted and not d.remembered}  # refused, cancelled, offline
            for (t, n, b), d in last.items():
                if d.code == DIR_OFFLINE:  # its replica may be offline: not waited for in the ISR
                    offline.setdefault((t, n), set()).add(b)

        def status(s: ClusterState) -> tuple[list[PlanEntry], set[TopicPartition]]:
            index = s.partition_index
            pending = [
                e
                for e in entries
                if not _done(index.get(e.key), e.replicas, offline.get(e.key, ()))
                or not dirs_done(s, index.get(e.key), e, failed)
            ]
            left = {
                e.key
                for e in pending
                if (p := index.get(e.key)) is not None and not p.reassigning and p.replicas != e.replicas
            }
            return pending, left

        pending, left = status(state)
        if left:
            time.sleep(self.settle_s)
            state = self.ports.cluster.snapshot()
            pending, again = status(state)
            left &= again  # away from its target on both looks
        if left:
            self._record_cancelled(run, wave, state, sorted(left))
            pending = [e for e in pending if e.key not in left]
        cancelled = tuple(
            sorted(o.key for o in self.store.runs.outcomes(run.id, wave.number) if o.code == PARTITION_CANCELLED)
        )
        index = state.partition_index
        moved = sum(
            1
            for e in entries
            if e.key not in left
            and (p := index.get(e.key)) is not None
            and not p.reassigning
            and p.replicas == e.replicas
        )
        return WaveStatus(len(entries) - len(left), pending, cancelled, moved)

    def shown_on_brokers(self, run: Run, wave: Wave, entries: Iterable[PlanEntry]) -> str | None:
        """A wave the controller completed is done once every broker shows its partitions at their
        targets (Metadata asked of each broker, at most every ``LOOK_EVERY_S``), or ``AGREE_S``
        after the first look: None then, and :meth:`brokers_said` tells the wave's audit entry what
        they showed. Until then, what they still show, as the step's progress."""
        key = (run.id, wave.number)
        now = time.monotonic()
        back, since, looked = self._shown.get(key) or (ReadBack({e.key: e.replicas for e in entries}), now, None)
        unshown = tuple(k for k in back.expected if back.state(k) is not Shown.SHOWN)
        if unshown and (looked is None or now - looked >= LOOK_EVERY_S):
            try:
                back, looked = back.look(self.ports.cluster.replicas_seen(unshown), now - since), now
            except ConsoleError:
                pass  # asked again at the next step
        self._shown[key] = (back, since, looked)
        if back.settled or now - since >= AGREE_S:
            return None
        return f"wave {wave.number}: at the target on the controller; {back.summary()}"

    def brokers_said(self, run: Run, wave: Wave) -> dict[str, object]:
        """What the brokers showed of the wave's partitions when it ended (for its audit entry)."""
        got = self._shown.pop((run.id, wave.number), None)
        return {"brokers": got[0].to_dict()} if got is not None else {}

    def _record_cancelled(self, run: Run, wave: Wave, state: ClusterState, keys: list[TopicPartition]) -> None:
        """Partitions of the wave that left the in-flight list away from their target: recorded
        cancelled, with where they are now, and audited (naming the run and the wave)."""
        index = state.partition_index
        before = {e.key: e.replicas for e in parse_plan(run.rollback_json).entries}
        outcomes = [
            Outcome(t, n, False, PARTITION_CANCELLED, cancelled_where(index[(t, n)].replicas, before.get((t, n))))
            for t, n in keys
        ]
        self._no_longer_waited(run, wave, "partitions-cancelled", outcomes)

    def _no_longer_waited(self, run: Run, wave: Wave, action: str, outcomes: list[Outcome]) -> None:
        """Partitions of the wave the run no longer waits for: their outcomes recorded and audited
        as ``action`` (naming the run and the wave), in one transaction."""
        with self.store.transaction():
            self.store.runs.add_outcomes(run.id, wave.number, outcomes)
            self.ports.record(
                run,
                action,
                {"run": run.id, "wave": wave.number},
                "no longer waited for",
                response=[o.to_dict() for o in outcomes],
            )

    def accepted(self, run: Run, wave: Wave) -> list[PlanEntry]:
        """The wave's entries the controller took (or that were at their target already), neither
        gone nor cancelled since."""
        recorded = self.store.runs.outcomes(run.id, wave.number)
        dropped = {o.key for o in recorded if o.code in (PARTITION_GONE, PARTITION_CANCELLED)}
        accepted = {o.key for o in recorded if o.accepted} - dropped
        return [e for e in parse_plan(wave.entries_json).entries if e.key in accepted]

    def gone(self, run: Run, wave: Wave, state: ClusterState) -> list[TopicPartition]:
        """Accepted partitions of the wave that no longer exist (topic deleted, partitions changed):
        recorded once, with the reason, and no longer waited for."""
        if state.status.metadata is not SourceStatus.OK:
            return []  # a partial picture says nothing about what is gone
        recorded = self.store.runs.outcomes(run.id, wave.number)
        known = {o.key for o in recorded if o.code == PARTITION_GONE}
        index, topics = state.partition_index, set(state.topics)
        new = [o for o in recorded if o.accepted and o.key not in known and o.key not in index]
        if new:
            outcomes = [
                Outcome(
                    o.topic,
                    o.partition,
                    False,
                    PARTITION_GONE,
                    "its topic was deleted" if o.topic not in topics else "the partition no longer exists",
                )
                for o in new
            ]
            self._no_longer_waited(run, wave, "partitions-gone", outcomes)
        return sorted(known | {o.key for o in new})

    def _min_isr_changes(self, run: Run, state: ClusterState, pending: list[PlanEntry]) -> None:
        """A change of a moving topic's ``min.insync.replicas`` seen while the run watches it is
        audited as a warning: on Kafka 4 it clears the topic's eligible leader replicas (KIP-966; a
        change of the cluster value clears every topic's), so a partition below min ISR may lose the
        replicas it could have elected. Seen by this worker from its first look at the wave."""
        if state.status.configs is not SourceStatus.OK:
            return
        topics = {e.topic for e in pending}
        now = {t: n for t, n in state.min_insync if t in topics}
        seen = self._min_isr.setdefault(run.id, dict(now))
        changed = {t: (seen[t], n) for t, n in now.items() if t in seen and seen[t] != n}
        seen.update(now)
        if changed:
            self.ports.record(
                run,
                "min-isr-changed",
                {"run": run.id, "topics": sorted(changed)},
                "warning",
                response={
                    "changed": {t: {"was": a, "now": b} for t, (a, b) in sorted(changed.items())},
                    "why": "Changing min.insync.replicas clears the topic's eligible leader replicas (KIP-966): "
                    "a partition below min ISR may now have fewer replicas it can elect.",
                },
            )

    def watch(self, run: Run, state: ClusterState, status: WaveStatus) -> None:
        """A wave with partitions still pending, at this look: a change of its topics' min ISR is
        audited (:meth:`_min_isr_changes`), and its progress noted (:meth:`_progress`)."""
        self._min_isr_changes(run, state, status.pending)
        self._progress(run, state, status.pending, status.accepted)

    def _progress(self, run: Run, state: ClusterState, pending: list[PlanEntry], accepted: int) -> None:
        """Note whether the wave still makes progress (bytes copied, partitions done); flag the run
        stuck, with what it waits on, when it has made none for ``stuck_after_s``."""
        copied = sum(
            r.copied_bytes or 0
            for e in pending
            if (p := state.partition_index.get(e.key)) is not None
            for r in p.progress(state.logs_known)
        )
        since = self.store.runs.note_progress(run.id, f"{copied}:{accepted - len(pending)}", state.taken_at)
        self._gauge_progress(run, state, pending, copied)
        idle = state.taken_at - since
        was = self.store.runs.stuck(run.id)
        if idle < self.stuck_after_s:
            return
        why = "; ".join(waiting_on(state, [e.key for e in pending])) or "no partition reaches its target"
        text = f"no progress for {human_duration(idle)}: {why}"
        self.store.runs.set_stuck(run.id, text)
        if was is None:  # once, when it becomes stuck
            self.ports.record(run, "run-stuck", {"run": run.id}, "stuck", response={"why": why})
            self.ports.notify(run, Event.RUN_STUCK, f"Run #{run.id} ({run.name}) is stuck: {text}.")

    def _gauge_progress(self, run: Run, state: ClusterState, pending: list[PlanEntry], copied: int) -> None:
        """The run's bytes left and ETA for the metrics: the rate is the bytes copied since the last look."""
        left = bytes_left(state, [e.key for e in pending])
        labels = (run.cluster, str(run.id))
        if left is None:
            return
        BYTES_LEFT.labels(*labels).set(left)
        last = self._copied.get(run.id)
        self._copied[run.id] = (copied, state.taken_at)
        if last is not None and state.taken_at > last[1] and copied > last[0]:
            ETA_SECONDS.labels(*labels).set(left / ((copied - last[0]) / (state.taken_at - last[1])))


def _done(p: Partition | None, target: tuple[BrokerId, ...], offline: Iterable[BrokerId] = ()) -> bool:
    """Complete: no longer reassigning, at the target, every target replica in sync but those of
    ``offline`` (brokers whose replica's log dir went offline during its move: not waited for)."""
    return p is not None and not p.reassigning and p.replicas == target and set(target) - set(offline) <= set(p.isr)


def cancelled_where(now: Sequence[BrokerId], before: Sequence[BrokerId] | None) -> str:
    """Where a partition cancelled while its run went on is now, against where it was before the
    run: a cancel puts back the original brokers in the order the reassignment listed them, so its
    preferred leader may have changed (the run's rollback JSON puts the order back)."""
    if before is None or list(now) == list(before):
        return f"cancelled: back on {ids_text(now)}, as before the run"
    if sorted(now) == sorted(before):
        return (
            f"cancelled: back on its brokers before the run in another order, {ids_text(now)} (was "
            f"{ids_text(before)}): its preferred leader is now {now[0]}, not {before[0]}; the run's rollback JSON "
            "puts the order back"
        )
    return f"cancelled: left the in-flight list away from its target, on {ids_text(now)} (before the run: {ids_text(before)})"
