"""A running wave watched: which partitions are done, gone or cancelled, min ISR changes, and
the stuck flag."""

from __future__ import annotations

import time
from collections.abc import Iterable

from console.core.format import human_duration
from console.core.model import (
    DIR_OFFLINE,
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
from console.notify.events import Event
from console.plans.plan import PlanEntry, parse_plan
from console.runs.dirmoves import _dirs_done
from console.runs.steps import ExecutorBase
from console.storage.runs import Run, Wave


class Watching(ExecutorBase):
    """A running wave's progress, and what stops it."""

    def _wave_status(
        self, run: Run, wave: Wave, state: ClusterState, entries: list[PlanEntry] | None = None
    ) -> tuple[int, list[PlanEntry], bool]:
        """(partitions accepted, those not done yet, whether the wave was cancelled); ``entries``:
        the wave's accepted entries when the caller read them already.

        Cancelled: every partition not done has left the list without reaching its target. A
        completed move can look like that for a moment (brokers learn the new replicas a little
        after the controller), so it is confirmed on a second look."""
        if entries is None:
            entries = self._accepted_entries(run, wave)
        failed: set[tuple[str, int, BrokerId]] = set()
        offline: dict[TopicPartition, set[BrokerId]] = {}
        if any(e.log_dirs is not None for e in entries):
            last = {(d.topic, d.partition, d.broker): d for d in self.store.runs.dir_moves(run.id, wave.number)}
            failed = {k for k, d in last.items() if not d.accepted and not d.remembered}  # refused, cancelled, offline
            for (t, n, b), d in last.items():
                if d.code == DIR_OFFLINE:  # its replica may be offline: not waited for in the ISR
                    offline.setdefault((t, n), set()).add(b)

        def status(s: ClusterState) -> tuple[list[PlanEntry], bool]:
            index = s.partition_index
            pending = [
                e
                for e in entries
                if not _done(index.get(e.key), e.replicas, offline.get(e.key, ()))
                or not _dirs_done(s, index.get(e.key), e, failed)
            ]
            gone = [
                e
                for e in pending
                if (p := index.get(e.key)) is not None and not p.reassigning and p.replicas != e.replicas
            ]
            return pending, bool(pending) and len(gone) == len(pending)

        pending, cancelled = status(state)
        if cancelled:
            time.sleep(self.settle_s)
            pending, cancelled = status(self.cluster.snapshot())
        return len(entries), pending, cancelled

    def _accepted_entries(self, run: Run, wave: Wave) -> list[PlanEntry]:
        """The wave's entries the controller took (or that were at their target already), not gone since."""
        recorded = self.store.runs.outcomes(run.id, wave.number)
        gone = {o.key for o in recorded if o.code == PARTITION_GONE}
        accepted = {o.key for o in recorded if o.accepted} - gone
        return [e for e in parse_plan(wave.entries_json).entries if e.key in accepted]

    def _gone(self, run: Run, wave: Wave, state: ClusterState) -> list[TopicPartition]:
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
            with self.store.transaction():
                self.store.runs.add_outcomes(run.id, wave.number, outcomes)
                self._record(
                    run,
                    "partitions-gone",
                    {"run": run.id, "wave": wave.number},
                    "no longer waited for",
                    response=[o.to_dict() for o in outcomes],
                )
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
            self._record(
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

    def _watch(self, run: Run, state: ClusterState, pending: list[PlanEntry], accepted: int) -> None:
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
            self._record(run, "run-stuck", {"run": run.id}, "stuck", response={"why": why})
            self._notify(run, Event.RUN_STUCK, f"Run #{run.id} ({run.name}) is stuck: {text}.")

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
