"""Carries runs out, one step at a time: throttle a wave, submit it, wait for it, clean up.

Every step writes its intent to the store before the side effect, so a worker that restarts
anywhere picks the run up from the store, reconciles with the cluster and never sends a wave
twice: before (re)sending a wave it leaves out every partition the cluster already shows moving
to, or sitting at, its target. A run can end with a preferred leader election of its partitions
(:meth:`Executor._elect`), after its last wave and before it is marked completed. The executor
talks to the cluster only through a :class:`~console.runs.gateway.ClusterGateway`, so it can be
driven against an in-memory fake.
"""

from __future__ import annotations

import json
import os
import socket
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import partial

from console.adapters.kafka import CONFIGS_PARTIAL
from console.core.errors import (
    AuthorizationFailed,
    ClusterUnavailable,
    ConsoleError,
    PartiallyApplied,
    UnsupportedByCluster,
)
from console.core.format import human_duration, plural
from console.core.limits import FOLLOWER_RATE, LEADER_RATE, LOG_DIR_RATE, REQUEST_LIMIT
from console.core.model import (
    DIR_OFFLINE,
    PARTITION_GONE,
    BrokerId,
    ClusterState,
    DirOutcome,
    Outcome,
    Partition,
    SourceStatus,
    TopicPartition,
    outcome_word,
    split_outcomes,
)
from console.core.states import RunState, SubmitPath, WaveState, wave_end_for
from console.moves.progress import waiting_on
from console.moves.rf_guard import split_by_rf
from console.moves.throttles import Throttle, merged, unmerged, wave_throttle
from console.plans.logdirs import current_dir, offline_moves, sends_of, to_move
from console.plans.plan import PlanEntry, parse_plan
from console.runs.audited import Intent
from console.runs.gateway import ClusterGateway
from console.runs.reassign import send_reassignments
from console.runs.settle import configs_shown, send_configs
from console.storage.runs import ELECTION_WAVE, LedgerEntry, Run, Wave
from console.storage.store import Store

LEASE_S = float(os.environ.get("CONSOLE_RUN_LEASE_S", "30"))
"""A worker that stops without saying so (killed) gives its runs up to another after this long."""
ELECTION_ATTEMPTS = 10
"""Requests of a run's closing leader election that may go unanswered before the run completes
without it (its waves are done: the election is not worth waiting for forever)."""
STUCK_AFTER_S = float(os.environ.get("CONSOLE_STUCK_AFTER_S", "300"))
"""A running wave that copies nothing and completes nothing for this long flags its run stuck."""


BrokerChanges = dict[BrokerId, dict[str, str | None]]
"""Config changes per broker (None: delete the key)."""
TopicChanges = dict[str, dict[str, str | None]]
"""Config changes per topic (None: delete the key)."""


@dataclass(frozen=True)
class Step:
    """What one tick did, for progress output."""

    run: Run
    wave: int | None
    did: str


class Executor:
    def __init__(
        self,
        store: Store,
        cluster: ClusterGateway,
        user: str,
        settle_s: float = 1.5,
        poll_s: float = 0.5,
        stuck_after_s: float | None = None,
    ) -> None:
        self.store = store
        self.cluster = cluster
        self.user = user
        self.owner = f"{socket.gethostname()}:{os.getpid()}:{id(self):x}"
        self.settle_s = settle_s
        """How long to look again before taking "left the list away from its target" as a cancel."""
        self.poll_s = poll_s
        """Pause between looks when reconciling a resumed wave or waiting for configs."""
        self.stuck_after_s = STUCK_AFTER_S if stuck_after_s is None else stuck_after_s
        """A running wave with no byte copied and no partition done for this long flags its run stuck."""
        self._min_isr: dict[int, dict[str, int]] = {}
        """Per run, each of its moving topics' ``min.insync.replicas`` as last seen (see :meth:`_min_isr_changes`)."""

    # -- stepping --------------------------------------------------------------------------------
    def tick(self, run_id: int) -> Step:
        run = self.store.runs.require(run_id)
        if not run.active:
            return Step(run, None, run.state)
        holder = self.store.runs.claim(run_id, self.owner, LEASE_S)
        if holder is not None:
            return Step(run, None, f"driven by another worker ({holder})")
        try:
            return self._step(run)
        except (AuthorizationFailed, UnsupportedByCluster) as e:  # asking again will not help
            return self._fail(run, f"{e.message} {e.hint}")

    def drive(
        self,
        run_id: int,
        every: float = 1.0,
        progress: Callable[[Step], None] | None = None,
        timeout: float | None = None,
    ) -> Run:
        """Tick until the run ends (or ``timeout`` seconds pass)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            try:
                step = self.tick(run_id)
            except ConsoleError as e:  # the cluster did not answer: the next tick tries again
                step = Step(self.store.runs.require(run_id), None, f"retrying: {e.message}")
            if progress is not None:
                progress(step)
            if step.run.state.terminal or (deadline is not None and time.monotonic() > deadline):
                return step.run
            time.sleep(every)

    def _step(self, run: Run) -> Step:
        state = self.cluster.snapshot()
        if state.status.reassignments is not SourceStatus.OK:
            return Step(run, None, "waiting: ListPartitionReassignments did not answer")
        wave = next((w for w in self.store.runs.waves(run.id) if w.state.open), None)
        if wave is None:
            if run.elect_leaders:  # every wave completed: the closing election, then completed
                return self._elect(run, state)
            off = self._not_in_dir(run)
            return self._finish(
                run,
                RunState.COMPLETED,
                response={"not_in_log_dir": off} if off else None,
                did="run completed" + (f"; {_not_in_dir_text(off)}" if off else ""),
            )
        if wave.state is WaveState.PENDING:
            if run.state is RunState.PAUSED:
                return Step(run, wave.number, "paused")
            if run.state is RunState.STOPPING:
                return self._finish(run, RunState.STOPPED)
            self._throttle(run, wave.number, state, parse_plan(wave.entries_json).entries)
            self.store.runs.set_wave(run.id, wave.number, WaveState.SUBMITTING)  # intent, before the request
            return self._submit(run, wave, state)
        if wave.state is WaveState.SUBMITTING:  # a worker stopped between intent and answer: reconcile
            return self._submit(run, wave, state, resuming=True)
        gone = self._gone(run, wave, state)
        entries = self._accepted_entries(run, wave)
        self._dirs_offline(run, wave.number, state, entries)
        self._dir_moves(run, wave.number, state, entries)
        accepted, pending, cancelled = self._wave_status(run, wave, state, entries)
        if cancelled:
            return self._cancelled(run, wave)
        if pending:
            self._min_isr_changes(run, state, pending)
            self._watch(run, state, pending, accepted)
            return Step(
                run,
                wave.number,
                f"wave {wave.number}: {accepted - len(pending)} of {accepted} done"
                + (f" ({len(gone)} gone)" if gone else ""),
            )
        self._unthrottle(run, wave.number)
        with self.store.transaction():
            self.store.runs.set_wave(run.id, wave.number, WaveState.COMPLETED)
            self._record(run, "wave-complete", {"run": run.id, "wave": wave.number}, "completed")
        return Step(self.store.runs.require(run.id), wave.number, f"wave {wave.number} completed")

    def _after_cancel(self, run_id: int) -> Step:
        """Clean up a run whose running wave was cancelled (see :func:`clean_up_after_cancel`):
        throttles off, run marked cancelled.
        Only with the run's lease: when a worker drives the run, the worker cleans up at its next
        step (two clean-ups at once would each take the throttles off and record it)."""
        run = self.store.runs.require(run_id)
        wave = next((w for w in self.store.runs.waves(run_id) if w.state is WaveState.RUNNING), None)
        if not run.active or wave is None:
            return Step(run, None, run.state)
        holder = self.store.runs.claim(run_id, self.owner, LEASE_S)
        if holder is not None:
            return Step(run, wave.number, f"its worker cleans up ({holder})")
        try:
            _, _, cancelled = self._wave_status(run, wave, self.cluster.snapshot())
            if cancelled:
                return self._cancelled(run, wave)
            return Step(run, wave.number, "still moving")
        finally:
            self.store.runs.release(run_id, self.owner)

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

    def _dir_moves(self, run: Run, wave: int, state: ClusterState, entries: Iterable[PlanEntry]) -> None:
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
        intent = self._announce(run, "alter-log-dirs", request)
        answers = intent.send(partial(self.cluster.alter_replica_log_dirs, send))
        with self.store.transaction():
            self.store.runs.add_dir_moves(run.id, wave, answers)
            moved = sum(1 for a in answers if a.accepted)
            later = sum(1 for a in answers if a.remembered)
            bad = len(answers) - moved - later
            intent.answer(
                f"{moved} moving, {later} placed when created" + (f", {bad} refused" if bad else ""),
                [a.to_dict() for a in answers],
            )

    def _dirs_offline(self, run: Run, wave: int, state: ClusterState, entries: Iterable[PlanEntry]) -> None:
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
            self._record(
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

    def _not_in_dir(self, run: Run) -> list[list[object]]:
        """The replicas of ``run`` left out of the dir the plan asked because a dir went offline:
        [topic, partition, broker, offline dir] each."""
        return [
            [d.topic, d.partition, int(d.broker), d.log_dir]
            for d in self.store.runs.dir_moves(run.id)
            if d.code == DIR_OFFLINE
        ]

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
        idle = state.taken_at - since
        was = self.store.runs.stuck(run.id)
        if idle < self.stuck_after_s:
            return
        why = "; ".join(waiting_on(state, [e.key for e in pending])) or "no partition reaches its target"
        text = f"no progress for {human_duration(idle)}: {why}"
        self.store.runs.set_stuck(run.id, text)
        if was is None:  # once, when it becomes stuck
            self._record(run, "run-stuck", {"run": run.id}, "stuck", response={"why": why})

    def _cancelled(self, run: Run, wave: Wave) -> Step:
        """The wave's partitions left the list without reaching their targets: cancelled."""
        self._unthrottle(run, wave.number)
        self.store.runs.set_wave(run.id, wave.number, WaveState.CANCELLED)
        return self._finish(self.store.runs.require(run.id), RunState.CANCELLED)

    # -- the closing preferred leader election ----------------------------------------------------
    def _elect(self, run: Run, state: ClusterState) -> Step:
        """After the last wave: a preferred leader election of the run's partitions whose first
        target replica is in sync but does not lead, then the run completes.

        Requests carry at most :data:`REQUEST_LIMIT` partitions, each audited ("elect-leaders":
        the intent before it, the answer with per-partition outcomes after it); outcomes are kept
        in wave :data:`ELECTION_WAVE`. Left out: partitions the controller rejected, that are
        gone, or that were moved again since. One whose first replica is out of sync is recorded
        as not elected without a request. A partition the election fails for (or a cluster that
        refuses elections) does not fail the run; a cluster that does not answer is asked again
        at the next tick, up to :data:`ELECTION_ATTEMPTS` requests in all, after which the rest
        is recorded as not elected and the run completes. Elections are idempotent: a worker
        resuming after a request whose answer was never recorded records what leads already and
        sends the rest again."""
        if state.status.metadata is not SourceStatus.OK:  # an empty picture would look like "all gone"
            return Step(run, None, "waiting: Metadata did not answer (needed for the leader election)")
        election = self._election(run, state)
        send = self._give_up_election(run, election)
        self._election_not_sent(run, election, set(send))
        stopped = self._send_election(run, election.preferred, send)
        if stopped is not None:
            return stopped
        answers = self.store.runs.outcomes(run.id, ELECTION_WAVE)
        elected = sum(1 for o in answers if o.accepted)
        failed = len(answers) - elected
        off = self._not_in_dir(run)
        return self._finish(
            run,
            RunState.COMPLETED,
            response={"elected": elected, "not_elected": failed, **({"not_in_log_dir": off} if off else {})},
            did="run completed"
            + (f"; preferred leader election: {elected} elected, {failed} not" if answers else "")
            + (f"; {_not_in_dir_text(off)}" if off else ""),
        )

    def _election(self, run: Run, state: ClusterState) -> _Election:
        """What the closing election still has to do against ``state``."""
        recorded = {o.key for o in self.store.runs.outcomes(run.id, ELECTION_WAVE)}
        index = state.partition_index
        preferred: dict[TopicPartition, BrokerId] = {}
        leading: set[TopicPartition] = set()
        for key, target in self._taken(run).items():
            p = index.get(key)
            if key in recorded or p is None or not target or p.reassigning or p.replicas[:1] != target[:1]:
                continue  # answered already, gone, or moved since
            if p.leader == target[0]:
                leading.add(key)
            else:
                preferred[key] = target[0]
        unanswered, errors = self._election_log(run)
        return _Election(
            preferred,
            leading,
            unanswered,
            errors,
            already=sorted({k for _, keys in unanswered for k in keys} & leading),
            out_of_sync=sorted(k for k, b in preferred.items() if b not in index[k].isr),
            send=sorted(k for k, b in preferred.items() if b in index[k].isr),
        )

    def _give_up_election(self, run: Run, election: _Election) -> list[TopicPartition]:
        """What to send: nothing once :data:`ELECTION_ATTEMPTS` requests failed (the moves are
        done: the run does not wait forever; the rest is recorded as not elected)."""
        send, errors, preferred = election.send, election.errors, election.preferred
        if not send or len(errors) < ELECTION_ATTEMPTS:
            return send
        why = f"not elected: {len(errors)} attempts failed; the last: {errors[-1]}"
        with self.store.transaction():
            self.store.runs.add_outcomes(
                run.id, ELECTION_WAVE, [Outcome(t, p, False, "NO_ANSWER", why) for t, p in send]
            )
            self._record(
                run,
                "elect-leaders",
                {"run": run.id, "partitions": [[t, p, preferred[(t, p)]] for t, p in send]},
                "given up",
                response={"attempts": len(errors), "error": errors[-1]},
            )
        return []

    def _election_not_sent(self, run: Run, election: _Election, again: set[TopicPartition]) -> None:
        """Record what needs no request: partitions found leading when the run resumed (and the
        answer of the requests a stopped worker never recorded) and those whose preferred replica
        is out of sync."""
        if not election.unanswered and not election.out_of_sync:
            return
        preferred, leading = election.preferred, election.leading
        with self.store.transaction():
            self.store.runs.add_outcomes(
                run.id,
                ELECTION_WAVE,
                [
                    *(
                        Outcome(t, p, True, "ALREADY_ELECTED", "the preferred replica led when the run resumed")
                        for t, p in election.already
                    ),
                    *(
                        Outcome(
                            t,
                            p,
                            False,
                            "PREFERRED_NOT_IN_SYNC",
                            f"not elected: its preferred replica {preferred[(t, p)]} is not in sync",
                        )
                        for t, p in election.out_of_sync
                    ),
                ],
            )
            for intent, keys in election.unanswered:  # the requests of a worker that stopped before their answer
                self._record(
                    run,
                    "elect-leaders",
                    {"run": run.id},
                    "resumed",
                    ref=intent,
                    response={
                        "already_elected": [[t, p] for t, p in keys if (t, p) in leading],
                        "sent_again": [[t, p] for t, p in keys if (t, p) in again],
                    },
                )
            if election.out_of_sync:
                self._record(
                    run,
                    "elect-leaders",
                    {"run": run.id, "partitions": [[t, p, preferred[(t, p)]] for t, p in election.out_of_sync]},
                    "not sent",
                    response={"error": "the preferred replica is not in sync"},
                )

    def _send_election(
        self, run: Run, preferred: dict[TopicPartition, BrokerId], send: list[TopicPartition]
    ) -> Step | None:
        """Send the election of ``send`` in requests of at most :data:`REQUEST_LIMIT` partitions;
        a Step when the run waits for the next tick to send the rest, else None."""
        for start in range(0, len(send), REQUEST_LIMIT):
            chunk = send[start : start + REQUEST_LIMIT]
            request = {"run": run.id, "partitions": [[t, p, preferred[(t, p)]] for t, p in chunk]}
            intent = self._announce(run, "elect-leaders", request)
            try:
                answer = intent.send(
                    partial(self.cluster.elect_leaders, chunk),
                    answered_by_caller=(AuthorizationFailed, UnsupportedByCluster, PartiallyApplied),
                )
            except (AuthorizationFailed, UnsupportedByCluster) as e:  # asking again will not help: none is elected
                code = "CLUSTER_AUTHORIZATION_FAILED" if isinstance(e, AuthorizationFailed) else "UNSUPPORTED_VERSION"
                rest = send[start:]
                with self.store.transaction():
                    self.store.runs.add_outcomes(
                        run.id,
                        ELECTION_WAVE,
                        [Outcome(t, p, False, code, f"{e.message} {e.hint}".strip()) for t, p in rest],
                    )
                    intent.answer("failed", {"error": e.message, "hint": e.hint, "not_elected": len(rest)})
                return None
            except PartiallyApplied as e:  # what was answered is recorded; the next tick sends the rest
                self._partly_answered(intent, ELECTION_WAVE, e)
                if isinstance(e.cause, (AuthorizationFailed, UnsupportedByCluster)):
                    return Step(run, None, f"leader election partly answered: {e.message}")  # the rest: next tick
                raise e.cause from None
            self._answered(
                intent,
                ELECTION_WAVE,
                [
                    answer.get(k) or Outcome(*k, False, "NO_ANSWER", "the controller did not answer for it")
                    for k in chunk
                ],
            )
        return None

    def _taken(self, run: Run) -> dict[TopicPartition, tuple[BrokerId, ...]]:
        """The run's partitions the controller took (neither rejected nor recorded gone), and their targets."""
        out: dict[TopicPartition, tuple[BrokerId, ...]] = {}
        for w in self.store.runs.waves(run.id):
            recorded = self.store.runs.outcomes(run.id, w.number)
            # a replica left out of its log dir (offline) is no refusal: its partition moved all the same
            took = {o.key for o in recorded if o.accepted} - {
                o.key for o in recorded if not o.accepted and o.code != DIR_OFFLINE
            }
            out.update((e.key, e.replicas) for e in parse_plan(w.entries_json).entries if e.key in took)
        return out

    def _election_log(self, run: Run) -> tuple[list[tuple[int, list[TopicPartition]]], list[str]]:
        """From the audit log, this run's "elect-leaders" requests whose answer was never recorded
        (their worker stopped), and the errors of those that failed (the cluster did not answer)."""
        entries = [
            e
            for e in self.store.audit.entries(run.cluster, "elect-leaders")
            if json.loads(e.request).get("run") == run.id
        ]
        answered = {e.ref for e in entries if e.ref is not None}
        unanswered = [
            (e.id, [(str(t), int(p)) for t, p, *_ in json.loads(e.request).get("partitions", [])])
            for e in entries
            if e.outcome == "sending" and e.id not in answered
        ]
        errors = [
            str(json.loads(e.response).get("error"))
            for e in entries
            if e.outcome == "failed" and e.response and e.response.startswith("{")
        ]
        return unanswered, errors

    def apply_rate(self, run: Run, rate: int) -> None:
        """Give the brokers the running wave throttles the run's new ``rate`` (the ledger keeps
        what was there before the run); the caller recorded the change."""
        changes: BrokerChanges = {}
        for e in self.store.runs.ledger(run.id):
            if e.kind == "broker":  # each rate the run set, and only those: a dir copy's broker keeps its others
                changes.setdefault(BrokerId(int(e.name)), {})[e.key] = str(rate)
        self.cluster.alter_configs(changes, {})

    # -- the side effects, each announced in the store first ---------------------------------------
    def _submit(self, run: Run, wave: Wave, state: ClusterState, resuming: bool = False) -> Step:
        # named log dirs first, as the official tool does: a replica still to be created is placed there
        self._dir_moves(run, wave.number, state, parse_plan(wave.entries_json).entries)
        send = self._left_to_send(run, wave, state, resuming)
        request = {"run": run.id, "wave": wave.number, "partitions": [[t, p, list(r)] for (t, p), r in send.items()]}
        if send and run.path is SubmitPath.ZOOKEEPER:
            self._send_znode(run, wave, request, send)
        elif send and not self._send_wave(run, wave, request, send, state):  # older than 2.4: the znode path instead
            return self._submit(self.store.runs.require(run.id), wave, state)
        took = [o for o in self.store.runs.outcomes(run.id, wave.number) if o.accepted]
        if not took:  # nothing of the wave runs: stop here, nothing more is sent
            self._unthrottle(run, wave.number)
            self.store.runs.set_wave(run.id, wave.number, WaveState.FAILED)
            return self._finish(self.store.runs.require(run.id), RunState.FAILED)
        self.store.runs.set_wave(run.id, wave.number, WaveState.RUNNING)
        return Step(
            self.store.runs.require(run.id), wave.number, f"wave {wave.number} submitted ({len(took)} partitions)"
        )

    def _left_to_send(
        self, run: Run, wave: Wave, state: ClusterState, resuming: bool
    ) -> dict[TopicPartition, tuple[BrokerId, ...]]:
        """The wave's partitions still to send, and their targets.

        A wave whose answer was never recorded may have been sent: whatever the cluster shows
        moving to, or sitting at, its target is not sent again (recorded as sent already). Brokers
        learn a completed move from the controller a moment later, so a resumed wave looks a few
        times."""
        recorded = {o.key for o in self.store.runs.outcomes(run.id, wave.number)}
        entries = [e for e in parse_plan(wave.entries_json).entries if e.key not in recorded]
        send: dict[TopicPartition, tuple[BrokerId, ...]] = {e.key: e.replicas for e in entries}
        found: list[Outcome] = []
        looks = 6 if resuming else 1
        for look in range(looks):
            index = state.partition_index
            for e in entries:
                p = index.get(e.key)
                if (
                    e.key in send
                    and p is not None
                    and (p.target == e.replicas if p.reassigning else p.replicas == e.replicas)
                ):
                    del send[e.key]
                    found.append(
                        Outcome(e.topic, e.partition, True, "ALREADY_SENT", "moving to (or at) its target when resumed")
                    )
            if not send or look == looks - 1:
                break
            time.sleep(self.poll_s)
            state = self.cluster.snapshot()
        if found:
            self.store.runs.add_outcomes(run.id, wave.number, found)
        return send

    def _send_znode(
        self, run: Run, wave: Wave, request: dict[str, object], send: dict[TopicPartition, tuple[BrokerId, ...]]
    ) -> None:
        """The wave through the pre-2.4 znode (its intent says so)."""
        intent = self._announce(run, "submit-wave", {**request, "path": "zookeeper"}).answered_as(request)
        intent.send(partial(self.cluster.create_legacy_reassignment, send))
        with self.store.transaction():
            self.store.runs.add_outcomes(
                run.id,
                wave.number,
                [Outcome(t, p, True, "ZNODE", "written to /admin/reassign_partitions") for t, p in send],
            )
            intent.answer("znode created")

    def _send_wave(
        self,
        run: Run,
        wave: Wave,
        request: dict[str, object],
        send: dict[TopicPartition, tuple[BrokerId, ...]],
        state: ClusterState,
    ) -> bool:
        """The wave through AlterPartitionReassignments, split by replication factor as ``state``
        shows the partitions (:func:`~console.runs.reassign.send_reassignments`: moves that keep it
        guarded, RF changes on their own, named in the audited request); False when the cluster is
        older than 2.4 and has ZooKeeper (nothing was applied: the run takes the znode path)."""
        _, changing = split_by_rf(send, state.partition_index)
        if changing:
            request = {**request, "rf_changes": [[t, p] for t, p in changing]}
        intent = self._announce(run, "submit-wave", request)
        try:
            outcomes = intent.send(
                partial(send_reassignments, self.cluster, send, state),
                answered_by_caller=(UnsupportedByCluster, PartiallyApplied),
            )
        except UnsupportedByCluster as e:
            if not self.cluster.has_zookeeper:
                intent.failed(e)
                raise
            with self.store.transaction():
                self.store.runs.set_path(run.id, SubmitPath.ZOOKEEPER)
                intent.answer("unsupported: using the znode path")
            return False
        except PartiallyApplied as e:  # what was applied is recorded; resuming reconciles the rest
            self._partly_answered(intent, wave.number, e)
            raise e.cause from None
        self._answered(intent, wave.number, list(outcomes.values()))  # nothing applied on a failure: sent again
        return True

    def _answered(self, intent: Intent, wave: int, outcomes: list[Outcome]) -> None:
        """The per-partition answer of a request: kept with the wave, and its audit answer."""
        accepted, rejected = split_outcomes(outcomes)
        with self.store.transaction():
            self.store.runs.add_outcomes(intent.run.id, wave, outcomes)
            intent.answer(outcome_word(len(accepted), len(rejected)), [o.to_dict() for o in outcomes])

    def _partly_answered(self, intent: Intent, wave: int, e: PartiallyApplied) -> None:
        """A request in batches that stopped part-way: what was answered is kept, and said."""
        with self.store.transaction():
            self.store.runs.add_outcomes(intent.run.id, wave, e.outcomes.values())
            intent.answer("partly sent", {"error": e.message, "outcomes": [o.to_dict() for o in e.outcomes.values()]})

    def _throttle(self, run: Run, wave: int, state: ClusterState, entries: tuple[PlanEntry, ...]) -> None:
        """Throttle what ``wave`` moves at the run's rate, the ledger recording what was there before."""
        if run.rate is None:
            return
        need = wave_throttle(state, entries)
        _throttles_known(state, need)
        with self.store.transaction():
            brokers, topics = self._ledger_throttle(run, wave, state, need)
            intent = self._announce(
                run,
                "throttle-set",
                {
                    "run": run.id,
                    "wave": wave,
                    "rate": run.rate,
                    "brokers": sorted(need.brokers),
                    **({"log_dir_brokers": sorted(need.dir_brokers)} if need.dir_brokers else {}),
                    "topics": {t: dict(c) for t, c in topics.items()},
                },
            )
        self._configs(intent, brokers, topics)
        self._await_configs(brokers, topics)

    def _ledger_throttle(
        self, run: Run, wave: int, state: ClusterState, need: Throttle
    ) -> tuple[BrokerChanges, TopicChanges]:
        """The config changes that throttle ``need`` at the run's rate, each recorded in the ledger
        with what was there before. A worker that stopped after setting the throttle sets it again:
        what the ledger holds of this run already is not recorded twice (the run's own rate is not
        "what was there before")."""
        brokers_now, topics_now = state.throttles.broker_map(), state.throttles.topic_map()
        broker_changes: BrokerChanges = {}
        topic_changes: TopicChanges = {}
        held = {(e.kind, e.name, e.key) for e in self.store.runs.ledger(run.id)}
        rates = [(b, key) for b in sorted(need.brokers) for key in (LEADER_RATE, FOLLOWER_RATE)]
        rates += [(b, LOG_DIR_RATE) for b in sorted(need.dir_brokers)]  # copies between a broker's dirs
        for b, key in rates:
            if ("broker", str(b), key) not in held:
                self.store.runs.ledger_add(
                    run.id, wave, "broker", str(b), key, brokers_now.get(str(b), {}).get(key), str(run.rate)
                )
            broker_changes.setdefault(b, {})[key] = str(run.rate)
        for topic, keys in sorted(need.topics.items()):
            for key, ours in sorted(keys.items()):
                before = topics_now.get(topic, {}).get(key)
                value = merged(before, ours)
                if value is None:
                    continue
                added = sorted(ours - set((before or "").split(",")))
                self.store.runs.ledger_add(run.id, wave, "topic", topic, key, before, ",".join(added))
                topic_changes.setdefault(topic, {})[key] = value
        return broker_changes, topic_changes

    def _await_configs(
        self,
        brokers: dict[BrokerId, dict[str, str | None]],
        topics: dict[str, dict[str, str | None]],
        timeout_s: float = 15.0,
    ) -> None:
        """Wait until every broker reports the throttle it was given: brokers apply dynamic
        configs a moment after the change, and a wave submitted before would copy unthrottled."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if configs_shown(self.cluster.describe_configs(tuple(brokers), tuple(topics)), brokers, topics):
                return
            time.sleep(min(self.poll_s, 0.2))
        raise ClusterUnavailable(
            "The throttle was set but the brokers do not report it yet; the wave waits.",
            "The console checks again at its next step.",
        )

    def unthrottle(self, run: Run) -> None:
        """Take away everything this run set (for an abandoned run); see :meth:`_unthrottle`."""
        self._unthrottle(run, None)

    def _unthrottle(self, run: Run, wave: int | None) -> None:
        """Take away exactly what this run (this wave) set; restore what was there before. A
        broker rate another, later run also set is handed over to it instead."""
        mine = [e for e in self.store.runs.ledger(run.id) if wave is None or e.wave == wave]
        if not mine:
            return
        fresh = self.cluster.snapshot()
        if fresh.status.configs is not SourceStatus.OK or fresh.status.metadata is not SourceStatus.OK:
            raise ClusterUnavailable(
                "The throttles could not be read, so they were not taken off yet.",
                "The console tries again at its next step.",
            )
        brokers, topics, done = self._to_restore(mine, fresh)
        request = {"run": run.id, "wave": wave, "brokers": {str(b): c for b, c in brokers.items()}, "topics": topics}
        self._configs(self._announce(run, "throttle-removed", request), brokers, topics)
        with self.store.transaction():
            for i in done:
                self.store.runs.ledger_restored(i)

    def _to_restore(
        self, mine: list[LedgerEntry], fresh: ClusterState
    ) -> tuple[BrokerChanges, TopicChanges, list[int]]:
        """The config changes that take ``mine`` (ledger entries) away, and the entries they close.
        A broker rate a later run also set is handed over to it here; a broker that is down keeps
        its entry open for the sweeper; a deleted topic's entries close (its configs went with it)."""
        topics_now = fresh.throttles.topic_map()
        live = {str(b.id) for b in fresh.brokers if b.live}
        everyone = self.store.runs.ledger()
        broker_changes: BrokerChanges = {}
        topic_changes: TopicChanges = {}
        done: list[int] = []
        handed: dict[int, str | None] = {}  # entries of this call that took over an earlier "before"
        topics_there = set(fresh.topics)
        for e in mine:
            before = handed.get(e.id, e.before)
            if e.kind == "topic" and e.name not in topics_there:  # deleted: its configs went with it
                done.append(e.id)
                continue
            if e.kind == "topic":
                changed, value = unmerged(topics_now.get(e.name, {}).get(e.key), e.added.split(","))
                if changed:
                    topic_changes.setdefault(e.name, {})[e.key] = value
                done.append(e.id)
                continue
            later = [o for o in everyone if (o.kind, o.name, o.key) == (e.kind, e.name, e.key) and o.id > e.id]
            if later:
                self.store.runs.ledger_restored(e.id, hand_over_to=later[0].id, before=before)
                handed[later[0].id] = before
            elif e.name in live:  # a broker that is down keeps its entry open for the sweeper
                broker_changes.setdefault(BrokerId(int(e.name)), {})[e.key] = before
                done.append(e.id)
        return broker_changes, topic_changes, done

    def _configs(self, intent: Intent, brokers: BrokerChanges, topics: TopicChanges) -> None:
        """IncrementalAlterConfigs, its answer recorded against its intent (:func:`send_configs`)."""
        send_configs(self.cluster, intent, brokers, topics)

    # -- the audit log ------------------------------------------------------------------------------
    def _announce(self, run: Run, action: str, request: object) -> Intent:
        """The intent of a request of ``run`` (see :class:`~console.runs.audited.Intent`)."""
        return Intent.announce(self.store, self.user, run, action, request)

    def _record(
        self,
        run: Run,
        action: str,
        request: object,
        outcome: str,
        *,
        ref: int | None = None,
        response: object = None,
    ) -> int:
        """An audit entry about ``run`` that is not the answer of a request sent now."""
        return self.store.audit.record(
            self.user, run.cluster, action, request, outcome, ref=ref, plan_hash=run.plan_hash, response=response
        )

    # -- ending a run -------------------------------------------------------------------------------
    def _fail(self, run: Run, why: str) -> Step:
        try:
            self._unthrottle(run, None)
        except ConsoleError:
            pass  # left in the ledger for the sweeper
        return self._finish(run, RunState.FAILED, unthrottle=False, response={"error": why}, did=f"run failed: {why}")

    def finish(self, run: Run, how: RunState, request: dict[str, object] | None = None) -> Step:
        """End ``run`` as ``how`` (its throttles off first); for operations such as abandon."""
        return self._finish(run, how, request=request)

    def _finish(
        self,
        run: Run,
        how: RunState,
        unthrottle: bool = True,
        request: dict[str, object] | None = None,
        response: object = None,
        did: str | None = None,
    ) -> Step:
        if unthrottle:
            self._unthrottle(run, None)
        end = wave_end_for(how)
        with self.store.transaction():
            now = self.store.runs.require(run.id)
            if not now.active:  # ended meanwhile (a cancel's clean-up and the worker both saw it): once only
                return Step(now, None, now.state)
            for w in self.store.runs.waves(run.id):
                if w.state.open:
                    self.store.runs.set_wave(run.id, w.number, end)
            self.store.runs.set_state(run.id, how)
            self._record(run, f"run-{how}", {"run": run.id, **(request or {})}, how.value, response=response)
        self.store.runs.release(run.id, self.owner)
        return Step(self.store.runs.require(run.id), None, did or f"run {how}")


@dataclass(frozen=True)
class _Election:
    """What a run's closing election still has to do, against a snapshot."""

    preferred: dict[TopicPartition, BrokerId]
    """Partitions whose preferred (first target) replica does not lead, and that replica."""
    leading: set[TopicPartition]
    """Partitions whose preferred replica leads."""
    unanswered: list[tuple[int, list[TopicPartition]]]
    """Requests a stopped worker sent without recording their answer (intent id, partitions)."""
    errors: list[str]
    """The errors of the requests that failed so far."""
    already: list[TopicPartition]
    """Of the unanswered requests' partitions, those leading now."""
    out_of_sync: list[TopicPartition]
    """Preferred replica not in sync: not sent."""
    send: list[TopicPartition]
    """To send."""


def clean_up_after_cancel(store: Store, cluster: ClusterGateway, user: str, run_ids: Iterable[int]) -> list[Step]:
    """After a cancel the controller took, each run among ``run_ids`` whose running wave it ended
    has its throttles taken off and ends as cancelled, now: the one place a cancel's clean-up is
    driven from outside a run's worker. A run a worker drives (it holds the lease) is left to that
    worker, which cleans up at its next step; so is one the cluster does not answer for now."""
    executor = Executor(store, cluster, user)
    steps = []
    for run_id in sorted(set(run_ids)):
        try:
            steps.append(executor._after_cancel(run_id))
        except ConsoleError:
            pass  # its worker cleans up at its next step
    return steps


def _throttles_known(state: ClusterState, need: Throttle) -> None:
    """What was there before must be known for every broker and topic about to change: the
    ledger restores it later, and an unknown value would be restored as "nothing"."""
    unknown = sorted(
        {
            f"broker {f.broker}"
            for f in state.findings
            if f.code == CONFIGS_PARTIAL and f.broker is not None and f.broker in need.brokers
        }
        | {
            f"topic {f.topic}"
            for f in state.findings
            if f.code == CONFIGS_PARTIAL and f.topic is not None and f.topic in need.topics
        }
    )
    if state.status.configs is not SourceStatus.OK or unknown:
        raise ClusterUnavailable(
            "The throttles in force could not be read "
            + (f"for {', '.join(unknown)}" if unknown else "")
            + "; the wave waits.",
            "The console reads them again at its next step.",
        )


def _done(p: Partition | None, target: tuple[BrokerId, ...], offline: Iterable[BrokerId] = ()) -> bool:
    """Complete: no longer reassigning, at the target, every target replica in sync but those of
    ``offline`` (brokers whose replica's log dir went offline during its move: not waited for)."""
    return p is not None and not p.reassigning and p.replicas == target and set(target) - set(offline) <= set(p.isr)


def _not_in_dir_text(off: list[list[object]]) -> str:
    """``2 replicas not in the log dir the plan asked (a dir went offline during the move)``: the run's end."""
    return f"{plural(len(off), 'replica')} not in the log dir the plan asked (a dir went offline during the move)"


def _dirs_done(state: ClusterState, p: Partition | None, e: PlanEntry, failed: set[tuple[str, int, BrokerId]]) -> bool:
    """Every named dir of ``e`` holds its replica (no future log left), bar those the broker refused
    (recorded, not waited for). Unknown while log dirs were not read."""
    if e.log_dirs is None:
        return True
    if not state.logs_known:
        return False
    return all(m.key in failed for m in to_move(p, e))
