"""A run's log dir moves: AlterReplicaLogDirs before the reassignment, and dirs that went offline."""

from __future__ import annotations

from collections.abc import Iterable
from functools import partial

from console.core.model import (
    DIR_OFFLINE,
    BrokerId,
    ClusterState,
    DirOutcome,
    Outcome,
)
from console.plans.logdirs import current_dir, offline_moves, sends_of
from console.plans.plan import PlanEntry
from console.runs.steps import Ports
from console.storage.runs import Run


class DirMover:
    """Replicas into the dirs the plan names: asked for, and given up where a dir went offline."""

    def __init__(self, ports: Ports) -> None:
        self.ports = ports
        self.store = ports.store

    def send(self, run: Run, wave: int, state: ClusterState, entries: Iterable[PlanEntry]) -> None:
        """AlterReplicaLogDirs for the named dirs of ``entries`` their replicas are not in, nor being
        copied to (KIP-113), audited as one request (``alter-log-dirs``) with its answer per replica.
        A dir is asked for once; again only when the broker answered REPLICA_NOT_AVAILABLE (the
        replica did not exist yet) and the replica now exists elsewhere. Nothing while log dirs
        were not read (the wave waits)."""
        entries = [e for e in entries if e.log_dirs is not None]  # most plans name no dir
        if not entries or not state.logs_known:
            return
        wanted = sends_of(state, entries)
        if not wanted:
            return
        asked: dict[tuple[str, int, BrokerId], list[DirOutcome]] = {}
        for d in self.store.runs.dir_moves(run.id, wave):
            asked.setdefault((d.topic, d.partition, d.broker), []).append(d)
        index = state.partition_index
        send = {}
        for m in wanted:
            before = [d for d in asked.get(m.key, []) if d.log_dir == m.log_dir]
            exists = current_dir(index.get(m.partition_key), m.broker) is not None
            if not before or (all(d.remembered for d in before) and exists and len(before) < 2):
                send[m.key] = m.log_dir
        if not send:
            return
        request = {
            "run": run.id,
            "wave": wave,
            "replicas": [[t, p, int(b), d] for (t, p, b), d in send.items()],
        }
        intent = self.ports.announce(run, "alter-log-dirs", request)
        answers = intent.send(partial(self.ports.cluster.alter_replica_log_dirs, send))
        with self.store.transaction():
            self.store.runs.add_dir_moves(run.id, wave, answers)
            moved = sum(1 for a in answers if a.accepted)
            later = sum(1 for a in answers if a.remembered)
            bad = len(answers) - moved - later
            intent.answer(
                f"{moved} moving, {later} placed when created" + (f", {bad} refused" if bad else ""),
                [a.to_dict() for a in answers],
            )

    def offline(self, run: Run, wave: int, state: ClusterState, entries: Iterable[PlanEntry]) -> None:
        """A log dir move of the wave whose target dir, or the dir holding the replica, is offline
        on its broker (DescribeLogDirs answers it with an error; KAFKA-19571: an I/O error during
        a move between dirs can take a whole dir offline) cannot finish: recorded once per replica
        (its dir answer ``LOG_DIR_OFFLINE``, and an outcome of its partition naming the broker and
        the dir, with what to do), audited (``log-dir-offline``), and no longer waited for. Only
        moves the broker took (or will place when it creates the replica); nothing while log dirs
        were not read."""
        entries = [e for e in entries if e.log_dirs is not None]
        if not entries or not state.logs_known:
            return
        last = {(d.topic, d.partition, d.broker): d for d in self.store.runs.dir_moves(run.id, wave)}
        index = state.partition_index
        found = [
            (o, last[o.move.key].accepted)
            for e in entries
            for o in offline_moves(state, index.get(e.key), e)
            if o.move.key in last and (last[o.move.key].accepted or last[o.move.key].remembered)
        ]
        if not found:
            return
        outcomes = [
            Outcome(o.move.topic, o.move.partition, False, DIR_OFFLINE, o.message(during)) for o, during in found
        ]
        with self.store.transaction():
            self.store.runs.add_dir_moves(
                run.id,
                wave,
                [
                    DirOutcome(o.move.topic, o.move.partition, o.move.broker, o.offline_dir, DIR_OFFLINE)
                    for o, _ in found
                ],
            )
            self.store.runs.add_outcomes(run.id, wave, outcomes)
            self.ports.record(
                run,
                "log-dir-offline",
                {
                    "run": run.id,
                    "wave": wave,
                    "replicas": [
                        {
                            "topic": o.move.topic,
                            "partition": o.move.partition,
                            "broker": int(o.move.broker),
                            "log_dir": o.move.log_dir,
                            "offline_dir": o.offline_dir,
                            "from": o.source,
                        }
                        for o, _ in found
                    ],
                },
                "no longer waited for",
                response=[x.to_dict() for x in outcomes],
            )

    def not_in_dir(self, run: Run) -> list[list[object]]:
        """The replicas of ``run`` left out of the dir the plan asked because a dir went offline:
        [topic, partition, broker, offline dir] each."""
        return [
            [d.topic, d.partition, int(d.broker), d.log_dir]
            for d in self.store.runs.dir_moves(run.id)
            if d.code == DIR_OFFLINE
        ]
