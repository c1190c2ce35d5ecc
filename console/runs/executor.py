"""Carries runs out, one step at a time: throttle a wave, submit it, wait for it, clean up.

Every step writes its intent to the store before the side effect (DESIGN §6), so a worker that
restarts anywhere picks the run up from the store, reconciles with the cluster and never sends
a wave twice: before (re)sending a wave it leaves out every partition the cluster already shows
moving to, or sitting at, its target.
"""

from __future__ import annotations

import hashlib
import os
import socket
import time
from dataclasses import dataclass
from typing import Callable

from console.core.errors import AuthorizationFailed, ClusterUnavailable, ConfigError, ConsoleError, UnsupportedByCluster
from console.core.model import BrokerId, ClusterState, Partition, SourceStatus, TopicPartition
from console.plans.plan import Plan, PlanEntry, parse_plan, rollback
from console.state.reader import ClusterReader
from console.core.limits import FOLLOWER_RATE, LEADER_RATE
from console.runs.throttles import Leftover, merged, unmerged, wave_throttle
from console.runs.waves import WaveLimits, plan_waves
from console.storage.store import Run, Store, WaveRow
from console.runs.cancel import CancelPlan, Outcome, outcome_rows, summary

TERMINAL = ("completed", "cancelled", "failed", "stopped")


def cluster_key(state: ClusterState, name: str) -> str:
    """Runs and the audit log name a cluster by its id (two names for one cluster are one
    cluster), or by its configured name when the id is not known."""
    return state.cluster_id or name


def plan_hash(plan: Plan, text: str | None = None) -> str:
    """A short digest of the plan's JSON (``text``, when the caller has it already)."""
    return hashlib.sha256((text if text is not None else plan.to_json()).encode()).hexdigest()[:16]


@dataclass(frozen=True)
class Step:
    """What one tick did, for progress output."""

    run: Run
    wave: int | None
    did: str


class Executor:
    def __init__(self, store: Store, reader: ClusterReader, user: str) -> None:
        self.store = store
        self.reader = reader
        self.user = user
        self.owner = f"{socket.gethostname()}:{os.getpid()}:{id(self):x}"

    # -- starting --------------------------------------------------------------------------------
    def start(self, state: ClusterState, plan: Plan, name: str, rate: int | None = None,
              limits: WaveLimits = WaveLimits(), path: str = "api") -> int:
        """Record a run of ``plan`` (refused when another active run moves the same partitions).
        ``path`` "zookeeper" submits through the pre-2.4 znode (needs ZooKeeper; no cancel)."""
        if path == "zookeeper" and self.reader.zookeeper is None:
            raise ConfigError("The ZooKeeper path needs the cluster's ZooKeeper connect string.",
                              "Give --zookeeper (or configure it for the cluster).")
        waves = plan_waves(state, plan, limits)
        text = plan.to_json()
        digest = plan_hash(plan, text)
        cluster = cluster_key(state, self.reader.settings.name)
        run_id = self.store.create_run(
            cluster, name, self.user, text, rollback(state, plan).to_json(), digest,
            [Plan(w).to_json() for w in waves], [e.key for w in waves for e in w], rate,
            limits.moves_per_broker, limits.partitions, limits.bytes, path)
        self.store.record(self.user, cluster, "submit", {"run": run_id, "name": name, "waves": len(waves),
                                                         "rate": rate, "path": path}, "run recorded", plan_hash=digest)
        return run_id

    # -- stepping --------------------------------------------------------------------------------
    LEASE_S = float(os.environ.get("CONSOLE_RUN_LEASE_S", "30"))
    """A worker that stops without saying so (killed) gives its runs up to another after this long."""

    def tick(self, run_id: int) -> Step:
        run = self._run(run_id)
        if not run.active:
            return Step(run, None, run.state)
        holder = self.store.claim(run_id, self.owner, self.LEASE_S)
        if holder is not None:
            return Step(run, None, f"driven by another worker ({holder})")
        try:
            return self._step(run)
        except (AuthorizationFailed, UnsupportedByCluster) as e:  # asking again will not help
            return self._fail(run, f"{e.message} {e.hint}")

    def _fail(self, run: Run, why: str) -> Step:
        for w in self.store.waves(run.id):
            if w.state in ("pending", "submitting", "running"):
                self.store.set_wave(run.id, w.number, "failed")
        try:
            self._unthrottle(run, None, self.reader.snapshot())
        except ConsoleError:
            pass  # left in the ledger for the sweeper
        self.store.set_run(run.id, "failed")
        self.store.release(run.id, self.owner)
        self.store.record(self.user, run.cluster, "run-failed", {"run": run.id}, "failed", plan_hash=run.plan_hash,
                          response={"error": why})
        return Step(self._run(run.id), None, f"run failed: {why}")

    def _step(self, run: Run) -> Step:
        run_id = run.id
        state = self.reader.snapshot()
        if state.status.reassignments is not SourceStatus.OK:
            return Step(run, None, "waiting: ListPartitionReassignments did not answer")
        wave = next((w for w in self.store.waves(run_id) if w.state not in ("completed", "cancelled")), None)
        if wave is None:
            return self._finish(run, state, "completed")
        entries = parse_plan(wave.entries_json).entries
        if wave.state == "pending":
            if run.state == "paused":
                return Step(run, wave.number, "paused")
            if run.state == "stopping":
                return self._finish(run, state, "stopped")
            self._throttle(run, wave.number, state, entries)
            self.store.set_wave(run_id, wave.number, "submitting")  # intent, before the request
            return self._submit(run, wave, state)
        if wave.state == "submitting":  # a worker stopped between intent and answer: reconcile
            return self._submit(run, wave, state, resuming=True)
        accepted, pending, cancelled = self._wave_status(run, wave, state)
        if cancelled:
            return self._cancelled(run, wave, state)
        if pending:
            return Step(run, wave.number, f"wave {wave.number}: {accepted - len(pending)} of {accepted} done")
        self._unthrottle(run, wave.number, state)
        self.store.set_wave(run_id, wave.number, "completed")
        self.store.record(self.user, run.cluster, "wave-complete", {"run": run_id, "wave": wave.number},
                          "completed", plan_hash=run.plan_hash)
        return Step(self._run(run_id), wave.number, f"wave {wave.number} completed")

    def after_cancel(self, run_id: int) -> Step:
        """Clean up a run whose running wave was cancelled: throttles off, run marked cancelled.
        Needs no lease: what it does is idempotent (the ledger says what is still to restore)."""
        run = self._run(run_id)
        wave = next((w for w in self.store.waves(run_id) if w.state == "running"), None)
        if not run.active or wave is None:
            return Step(run, None, run.state)
        state = self.reader.snapshot()
        _, _, cancelled = self._wave_status(run, wave, state)
        if cancelled:
            return self._cancelled(run, wave, state)
        return Step(run, wave.number, "still moving")

    def _wave_status(self, run: Run, wave: WaveRow, state: ClusterState) -> tuple[int, list[PlanEntry], bool]:
        """(partitions accepted, those not done yet, whether the wave was cancelled).

        Cancelled: every partition not done has left the list without reaching its target. A
        completed move can look like that for a moment (brokers learn the new replicas a little
        after the controller), so it is confirmed on a second look."""
        accepted = {(t, p) for w, t, p, ok, _, _ in self.store.outcomes(run.id) if w == wave.number and ok}
        entries = [e for e in parse_plan(wave.entries_json).entries if e.key in accepted]

        def status(s: ClusterState) -> tuple[list[PlanEntry], bool]:
            index = s.partition_index
            pending = [e for e in entries if not _done(index.get(e.key), e.replicas)]
            gone = [e for e in pending if (p := index.get(e.key)) is not None and not p.reassigning
                    and p.replicas != e.replicas]
            return pending, bool(pending) and len(gone) == len(pending)

        pending, cancelled = status(state)
        if cancelled:
            time.sleep(1.5)
            pending, cancelled = status(self.reader.snapshot())
        return len(accepted), pending, cancelled

    def _cancelled(self, run: Run, wave: WaveRow, state: ClusterState) -> Step:
        """The wave's partitions left the list without reaching their targets: cancelled."""
        self._unthrottle(run, wave.number, state)
        self.store.set_wave(run.id, wave.number, "cancelled")
        return self._finish(self._run(run.id), state, "cancelled")

    def set_rate(self, run_id: int, rate: int) -> None:
        """Change the throttle of a run, in flight too: the brokers the running wave throttles get
        the new rate at once (the ledger keeps what was there before the run)."""
        run = self._run(run_id)
        self.store.set_run(run_id, rate=rate)
        brokers = sorted({e.name for e in self.store.ledger(run_id) if e.kind == "broker"})
        changes = {BrokerId(int(b)): {LEADER_RATE: str(rate), FOLLOWER_RATE: str(rate)} for b in brokers}
        self.store.record(self.user, run.cluster, "throttle-rate", {"run": run_id, "rate": rate, "brokers": brokers},
                          "sending", plan_hash=run.plan_hash)
        self.reader.kafka.alter_configs(changes, {})

    def drive(self, run_id: int, every: float = 1.0, progress: Callable[[Step], None] | None = None,
              timeout: float | None = None) -> Run:
        """Tick until the run ends (or ``timeout`` seconds pass)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            try:
                step = self.tick(run_id)
            except ConsoleError as e:  # the cluster did not answer: the next tick tries again
                step = Step(self._run(run_id), None, f"retrying: {e.message}")
            if progress is not None:
                progress(step)
            if step.run.state in TERMINAL or (deadline is not None and time.monotonic() > deadline):
                return step.run
            time.sleep(every)

    # -- the side effects, each announced in the store first ---------------------------------------
    def _submit(self, run: Run, wave: WaveRow, state: ClusterState, resuming: bool = False) -> Step:
        recorded = {(t, p) for w, t, p, _, _, _ in self.store.outcomes(run.id) if w == wave.number}
        entries = [e for e in parse_plan(wave.entries_json).entries if e.key not in recorded]
        send: dict[TopicPartition, tuple[BrokerId, ...] | None] = {e.key: e.replicas for e in entries}
        found: list[tuple[str, int, bool, str | None, str | None]] = []
        # A wave whose answer was never recorded may have been sent: whatever the cluster shows
        # moving to, or sitting at, its target is not sent again. Brokers learn a completed move
        # from the controller a moment later, so a resumed wave looks a few times.
        looks = 6 if resuming else 1
        for look in range(looks):
            index = state.partition_index
            for e in entries:
                p = index.get(e.key)
                if e.key in send and p is not None and (p.target == e.replicas if p.reassigning else p.replicas == e.replicas):
                    del send[e.key]
                    found.append((e.topic, e.partition, True, "ALREADY_SENT", "moving to (or at) its target when resumed"))
            if not send or look == looks - 1:
                break
            time.sleep(0.5)
            state = self.reader.snapshot()
        if found:
            self.store.add_outcomes(run.id, wave.number, found)
        request = {"run": run.id, "wave": wave.number, "partitions": [[t, p, list(r or ())] for (t, p), r in send.items()]}
        if send and run.path == "zookeeper":
            intent = self.store.record(self.user, run.cluster, "submit-wave", {**request, "path": "zookeeper"},
                                       "sending", plan_hash=run.plan_hash)
            assert self.reader.zookeeper is not None  # checked when the run started
            self.reader.zookeeper.create_reassignment({k: r for k, r in send.items() if r is not None})
            self.store.add_outcomes(run.id, wave.number, [(t, p, True, "ZNODE", "written to /admin/reassign_partitions")
                                                          for t, p in send])
            self.store.record(self.user, run.cluster, "submit-wave", request, "znode created", ref=intent,
                              plan_hash=run.plan_hash)
        elif send:
            intent = self.store.record(self.user, run.cluster, "submit-wave", request, "sending", plan_hash=run.plan_hash)
            try:
                outcomes = self.reader.kafka.alter_reassignments(send)
            except UnsupportedByCluster:
                if self.reader.zookeeper is None:
                    raise
                # a cluster older than 2.4: the znode path instead (nothing was applied)
                self.store.set_run(run.id, path="zookeeper")
                self.store.record(self.user, run.cluster, "submit-wave", request, "unsupported: using the znode path",
                                  ref=intent, plan_hash=run.plan_hash)
                return self._submit(self._run(run.id), wave, state)
            accepted, rejected = summary(outcomes.values())
            self.store.add_outcomes(run.id, wave.number, [(o.topic, o.partition, o.accepted, o.code, o.message)
                                                          for o in outcomes.values()])
            self.store.record(self.user, run.cluster, "submit-wave", request,
                              "accepted" if not rejected else ("partly accepted" if accepted else "rejected"),
                              ref=intent, plan_hash=run.plan_hash, response=outcome_rows(outcomes))
        took = [o for o in self.store.outcomes(run.id) if o[0] == wave.number and o[3]]
        if not took:  # nothing of the wave runs: stop here, nothing more is sent
            self._unthrottle(run, wave.number, state)
            self.store.set_wave(run.id, wave.number, "failed")
            return self._finish(self._run(run.id), state, "failed")
        self.store.set_wave(run.id, wave.number, "running")
        return Step(self._run(run.id), wave.number, f"wave {wave.number} submitted ({len(took)} partitions)")

    def _throttle(self, run: Run, wave: int, state: ClusterState, entries: tuple[PlanEntry, ...]) -> None:
        if run.rate is None:
            return
        need = wave_throttle(state, entries)
        brokers_now, topics_now = state.throttles.broker_map(), state.throttles.topic_map()
        broker_changes: dict[BrokerId, dict[str, str | None]] = {}
        topic_changes: dict[str, dict[str, str | None]] = {}
        for b in sorted(need.brokers):
            for key in (LEADER_RATE, FOLLOWER_RATE):
                self.store.ledger_add(run.id, wave, "broker", str(b), key, brokers_now.get(str(b), {}).get(key),
                                      str(run.rate))
                broker_changes.setdefault(b, {})[key] = str(run.rate)
        for topic, keys in sorted(need.topics.items()):
            for key, ours in sorted(keys.items()):
                before = topics_now.get(topic, {}).get(key)
                value = merged(before, ours)
                if value is None:
                    continue
                added = sorted(ours - set((before or "").split(",")))
                self.store.ledger_add(run.id, wave, "topic", topic, key, before, ",".join(added))
                topic_changes.setdefault(topic, {})[key] = value
        self.store.record(self.user, run.cluster, "throttle-set", {"run": run.id, "wave": wave, "rate": run.rate,
                          "brokers": sorted(need.brokers), "topics": {t: dict(c) for t, c in topic_changes.items()}},
                          "sending", plan_hash=run.plan_hash)
        self.reader.kafka.alter_configs(broker_changes, topic_changes)
        self._await_configs(broker_changes, topic_changes)

    def _await_configs(self, brokers: dict[BrokerId, dict[str, str | None]],
                       topics: dict[str, dict[str, str | None]], timeout_s: float = 15.0) -> None:
        """Wait until every broker reports the throttle it was given: brokers apply dynamic
        configs a moment after the change, and a wave submitted before would copy unthrottled."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            got_b, got_t, _ = self.reader.kafka.describe_configs(tuple(brokers), tuple(topics))
            if (all(got_b.get(str(b), {}).get(k) == v for b, c in brokers.items() for k, v in c.items())
                    and all(got_t.get(t, {}).get(k) == v for t, c in topics.items() for k, v in c.items())):
                return
            time.sleep(0.2)
        raise ClusterUnavailable("The throttle was set but the brokers do not report it yet; the wave waits.",
                                 "The console checks again at its next step.")

    def _unthrottle(self, run: Run, wave: int | None, state: ClusterState) -> None:
        """Take away exactly what this run (this wave) set; restore what was there before. A
        broker rate another, later run also set is handed over to it instead."""
        mine = [e for e in self.store.ledger(run.id) if wave is None or e.wave == wave]
        if not mine:
            return
        fresh = self.reader.snapshot()
        topics_now = fresh.throttles.topic_map()
        live = {str(b.id) for b in fresh.brokers if b.live}
        everyone = self.store.ledger()
        broker_changes: dict[BrokerId, dict[str, str | None]] = {}
        topic_changes: dict[str, dict[str, str | None]] = {}
        done: list[int] = []
        for e in mine:
            if e.kind == "topic":
                changed, value = unmerged(topics_now.get(e.name, {}).get(e.key), e.added.split(","))
                if changed:
                    topic_changes.setdefault(e.name, {})[e.key] = value
                done.append(e.id)
                continue
            later = [o for o in everyone if (o.kind, o.name, o.key) == (e.kind, e.name, e.key) and o.id > e.id]
            if later:
                self.store.ledger_restored(e.id, hand_over_to=later[0].id, before=e.before)
            elif e.name in live:  # a broker that is down keeps its entry open for the sweeper
                broker_changes.setdefault(BrokerId(int(e.name)), {})[e.key] = e.before
                done.append(e.id)
        request = {"run": run.id, "wave": wave, "brokers": {str(b): c for b, c in broker_changes.items()},
                   "topics": topic_changes}
        self.store.record(self.user, run.cluster, "throttle-removed", request, "sending", plan_hash=run.plan_hash)
        self.reader.kafka.alter_configs(broker_changes, topic_changes)
        for i in done:
            self.store.ledger_restored(i)

    def _finish(self, run: Run, state: ClusterState, how: str) -> Step:
        self._unthrottle(run, None, state)
        self.store.set_run(run.id, how)
        self.store.release(run.id, self.owner)
        self.store.record(self.user, run.cluster, "run-" + how, {"run": run.id}, how, plan_hash=run.plan_hash)
        return Step(self._run(run.id), None, f"run {how}")

    def _run(self, run_id: int) -> Run:
        run = self.store.run(run_id)
        if run is None:
            raise ConsoleError(f"Run {run_id} is not in the store.", "List the runs with `python -m console runs`.")
        return run


def _done(p: Partition | None, target: tuple[BrokerId, ...]) -> bool:
    """Complete: no longer reassigning, at the target, every target replica in sync."""
    return p is not None and not p.reassigning and p.replicas == target and set(target) <= set(p.isr)


# -- cancel, for on-call ---------------------------------------------------------------------------
@dataclass(frozen=True)
class CancelResult:
    accepted: tuple[Outcome, ...]
    rejected: tuple[Outcome, ...]
    seconds_to_accept: float
    left: tuple[TopicPartition, ...]
    """Accepted and gone from the in-flight list."""
    still_in_flight: tuple[TopicPartition, ...]


def send_cancel(reader: ClusterReader, store: Store, user: str, cluster: str, plan: CancelPlan,
                ours: dict[TopicPartition, int], wait_s: float = 60.0) -> CancelResult:
    """Send ``plan`` (audited before and after), wait up to ``wait_s`` for the partitions to leave
    ListPartitionReassignments, then clean up after the console's runs among them."""
    request = {"cancel": [[t, p] for t, p in plan.targets]}
    intent = store.record(user, cluster, "cancel", request, "sending")
    t0 = time.perf_counter()
    try:
        outcomes = reader.kafka.alter_reassignments(plan.targets)
    except ConsoleError as e:
        store.record(user, cluster, "cancel", request, "failed", ref=intent,
                     response={"error": e.message, "outcomes": outcome_rows(getattr(e, "outcomes", {}))})
        raise
    took = time.perf_counter() - t0
    accepted, rejected = summary(outcomes.values())
    store.record(user, cluster, "cancel", request,
                 "accepted" if not rejected else ("partly accepted" if accepted else "rejected"),
                 ref=intent, response=outcome_rows(outcomes))
    waiting = {(o.topic, o.partition) for o in accepted}
    deadline = time.monotonic() + wait_s
    while waiting and wait_s > 0 and time.monotonic() < deadline:
        try:
            waiting &= set(reader.kafka.list_reassignments())
        except ConsoleError:
            pass  # the controller may be moving: ask again
        if waiting:
            time.sleep(0.25)
    left = tuple(sorted({(o.topic, o.partition) for o in accepted} - waiting))
    executor = Executor(store, reader, user)
    for run_id in sorted({ours[k] for k in left if k in ours}):
        try:
            executor.after_cancel(run_id)  # the run's throttles come off now
        except ConsoleError:
            pass  # its worker cleans up at its next step
    if wait_s > 0:
        store.record(user, cluster, "cancel-complete", request,
                     "left the in-flight list" if not waiting else "still in flight", ref=intent,
                     response={"left": left, "still_in_flight": sorted(waiting)})
    return CancelResult(tuple(accepted), tuple(rejected), took, left, tuple(sorted(waiting)))


def sweep(reader: ClusterReader, store: Store, user: str, leftovers: list[Leftover]) -> None:
    """Remove throttles nothing needs (audited before and after); ledger entries for them are closed."""
    from collections import defaultdict

    brokers: dict[BrokerId, dict[str, str | None]] = defaultdict(dict)
    topics: dict[str, dict[str, str | None]] = defaultdict(dict)
    for lo in leftovers:
        if lo.kind == "topic":
            topics[lo.name][lo.key] = None
        elif lo.name.isdigit():  # "<default>" broker configs are not the console's to remove
            brokers[BrokerId(int(lo.name))][lo.key] = None
    state = reader.snapshot()
    cluster = cluster_key(state, reader.settings.name)
    request = {"brokers": {str(b): sorted(k) for b, k in brokers.items()}, "topics": {t: sorted(k) for t, k in topics.items()}}
    intent = store.record(user, cluster, "throttle-sweep", request, "sending")
    reader.kafka.alter_configs(brokers, topics)
    swept = {(lo.kind, lo.name, lo.key) for lo in leftovers}
    for e in store.ledger():
        run = store.run(e.run_id)
        if (e.kind, e.name, e.key) in swept and (run is None or not run.active):
            store.ledger_restored(e.id)
    store.record(user, cluster, "throttle-sweep", request, "removed", ref=intent)
