"""How far a run has come and how long it will take (pure): the ETA before a run (throttle ×
brokers copying at once; copies between the log dirs of a broker at the same rate, which the run
sets as ``replica.alter.log.dirs.io.max.bytes.per.second``), and during it the observed copy rate, the bytes left and the adding
replicas that stopped growing; and for the Live page, the copy rate of every adding replica in
flight (:class:`CopyTracker`)."""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace

from console.core.calibration import Calibration, Estimate, receive_seconds
from console.core.limits import FOLLOWER_RATE, LEADER_RATE
from console.core.model import BrokerId, ClusterState, Partition, ReplicaProgress
from console.plans.columns import partitions_for
from console.plans.diff import change_of
from console.plans.logdirs import dir_moves_in_flight, dir_moves_of
from console.plans.plan import PlanEntry


def estimate_seconds(state: ClusterState, waves: Iterable[tuple[PlanEntry, ...]], rate: int | None) -> float | None:
    """Before a run, at the throttle alone (see :func:`estimate_run`); None when unthrottled or sizes are unknown."""
    est = estimate_run(state, waves, rate)
    return None if est is None else est.seconds


@dataclass(frozen=True)
class WaveLoad:
    """What one wave copies: bytes, the bytes each broker sends (leaders, to their adding
    replicas), and each receiving broker's bytes; and the bytes each broker copies between its own
    log dirs (no network)."""

    copy: int
    senders: Mapping[BrokerId, int]
    """Per leader, the bytes its adding replicas fetch from it (the leader throttle bounds them)."""
    receivers: Mapping[BrokerId, int]
    """Per adding broker, the bytes it fetches (the follower throttle bounds them)."""
    dir_copies: Mapping[BrokerId, int] = field(default_factory=dict)
    """Per broker, the bytes of its replicas moving to another of its log dirs (the log-dir throttle)."""

    @property
    def dir_copy(self) -> int:
        return sum(self.dir_copies.values())


def wave_load(state: ClusterState, wave: Iterable[PlanEntry]) -> WaveLoad | None:
    """The load of ``wave`` against ``state``; None when a size is unknown."""
    entries = tuple(wave)
    now = partitions_for(state, entries)
    changes = [change_of(p, e) for p, e in zip(now, entries, strict=True)]
    load = load_of((c.adding, c.size, c.source, c.bytes_to_copy) for c in changes)
    if load is None:
        return None
    dirs: dict[BrokerId, int] = {}
    for c in changes:
        for b, size in c.dir_copies:
            if size is None:
                return None
            dirs[b] = dirs.get(b, 0) + size
    return replace(load, dir_copies=dirs) if dirs else load


def load_of(moves: Iterable[tuple[Sequence[BrokerId], int | None, BrokerId | None, int]]) -> WaveLoad | None:
    """The load of a wave's entries, each as (adding brokers, partition size, the leader copied
    from, bytes to copy); None when an entry adds replicas of a partition of unknown size."""
    copy = 0
    senders: dict[BrokerId, int] = {}
    receivers: dict[BrokerId, int] = {}
    for adding, size, source, to_copy in moves:
        if adding and size is None:
            return None
        copy += to_copy
        if adding and source is not None:
            senders[source] = senders.get(source, 0) + (size or 0) * len(adding)
            for b in adding:
                receivers[b] = receivers.get(b, 0) + (size or 0)
    return WaveLoad(copy, senders, receivers)


def estimate_run(
    state: ClusterState,
    waves: Iterable[tuple[PlanEntry, ...]],
    rate: int | None,
    calibration: Calibration | None = None,
) -> Estimate | None:
    """Before a run: the waves one after the other (:func:`estimate_waves`); None when a size is
    unknown. The one estimate of a plan's duration: Review, submit (page and CLI), Runs and the
    review pipeline all read it."""
    loads = []
    for w in waves:
        load = wave_load(state, w)
        if load is None:
            return None
        loads.append(load)
    return estimate_waves(loads, rate, calibration)


def wave_seconds(
    w: WaveLoad, rate: int | None, calibration: Calibration | None = None
) -> tuple[float, set[BrokerId]] | None:
    """How long one wave takes: as long as its bottleneck, the broker that must take in the most
    for its follower throttle (at the rate its history shows, where it has history), send out the
    most for its leader throttle, or copy the most between its log dirs for its log-dir throttle
    (a run sets all three at ``rate`` on the brokers taking part). With the brokers whose history
    was used; None when some copy has neither a throttle nor history to go by."""
    received = receive_seconds({b: size for b, size in w.receivers.items() if size}, rate, calibration)
    if received is None:
        return None
    seconds, used = received
    for copies in (w.senders, w.dir_copies):
        most = max(copies.values(), default=0)
        if most and not rate:
            if copies is w.senders and used:
                continue  # unthrottled leaders: the receivers' history bounds the wave
            return None
        if most and rate:
            seconds = max(seconds, most / rate)
    return seconds, used


def estimate_waves(
    waves: Iterable[WaveLoad], rate: int | None, calibration: Calibration | None = None
) -> Estimate | None:
    """The waves one after the other, each as long as its bottleneck (:func:`wave_seconds`). None
    when a wave can be estimated neither at the throttle nor from history (unthrottled, no history;
    copies between dirs have no history: unthrottled, they are not estimated either)."""
    total = 0.0
    used: set[BrokerId] = set()
    for w in waves:
        if not w.copy and not w.dir_copies:
            continue
        took = wave_seconds(w, rate, calibration)
        if took is None:
            return None
        total += took[0]
        used |= took[1]
    if not used:
        return Estimate(total) if rate else None
    assert calibration is not None
    return Estimate(total, sum(calibration.brokers[b].moves for b in used), tuple(sorted(used)))


@dataclass
class Progress:
    """Copy progress of a set of partitions across snapshots: observed rate, ETA, stuck ones.

    The rate is the growth of each replica between two snapshots that both saw it, summed: a
    replica that joins or leaves the set (its copy done, a dir move that starts with bytes already
    there) adds nothing by being counted or no longer counted. Growth is kept per broker and kind
    (network copies per receiving broker, dir copies per broker), for a throttle is per broker."""

    stuck_after_s: float = 60.0
    samples: list[tuple[float, int]] = field(default_factory=list)
    last_growth: dict[tuple[str, int, BrokerId], tuple[int, float]] = field(default_factory=dict)
    seen: dict[tuple[bool, str, int, BrokerId], int] = field(default_factory=dict)
    """The bytes of each replica copying at the last snapshot (dir copy or not, topic, partition, broker)."""
    grown: dict[tuple[bool, BrokerId], int] = field(default_factory=dict)
    """Bytes grown so far, per (dir copy or not, broker), since the first snapshot."""
    per_broker: list[tuple[float, dict[tuple[bool, BrokerId], int]]] = field(default_factory=list)

    def update(self, state: ClusterState, keys: Iterable[tuple[str, int]]) -> None:
        """Take a snapshot in (one newer than the last taken; others are ignored): the bytes copied
        so far by the adding replicas of ``keys`` and by their replicas being copied between log dirs."""
        if self.samples and state.taken_at <= self.samples[-1][0]:
            return
        keys = list(keys)
        now: dict[tuple[bool, str, int, BrokerId], int] = {
            (True, m.topic, m.partition, m.broker): m.copied_bytes for m in dir_moves_of(state, keys)
        }
        for (t, p), r in _copying(state, keys):
            copied = r.copied_bytes or 0
            now[(False, t, p, r.broker)] = copied
            seen = self.last_growth.get((t, p, r.broker))
            if seen is None or copied > seen[0]:
                self.last_growth[(t, p, r.broker)] = (copied, state.taken_at)
        for key, copied in now.items():
            before = self.seen.get(key)
            if before is not None and copied > before:
                g = (key[0], key[3])
                self.grown[g] = self.grown.get(g, 0) + copied - before
        self.seen = now
        self.samples = [*self.samples, (state.taken_at, sum(self.grown.values()))][-30:]
        self.per_broker = [*self.per_broker, (state.taken_at, dict(self.grown))][-30:]

    def rate(self) -> float | None:
        """Bytes per second over the samples kept (up to 30), when the copy has grown: every broker's, summed."""
        if len(self.samples) < 2:
            return None
        (t0, b0), (t1, b1) = self.samples[0], self.samples[-1]
        return (b1 - b0) / (t1 - t0) if t1 > t0 and b1 > b0 else None

    def broker_rates(self) -> dict[tuple[bool, BrokerId], float]:
        """Per (dir copy or not, broker): bytes per second over the samples kept (what its throttle bounds)."""
        if len(self.per_broker) < 2:
            return {}
        (t0, g0), (t1, g1) = self.per_broker[0], self.per_broker[-1]
        if t1 <= t0:
            return {}
        return {k: (v - g0.get(k, 0)) / (t1 - t0) for k, v in g1.items()}

    def stuck(self, state: ClusterState) -> list[str]:
        """Adding replicas whose copy has not grown for ``stuck_after_s`` while still in flight."""
        out = []
        for (t, p, b), (_, since) in self.last_growth.items():
            part = state.partition_index.get((t, p))
            if (
                part is not None
                and b in part.adding
                and b not in part.isr
                and state.taken_at - since > self.stuck_after_s
            ):
                out.append(f"{t}-{p} on broker {b} (no progress for {state.taken_at - since:.0f} s)")
        return out


def _copying(state: ClusterState, keys: Iterable[tuple[str, int]]) -> Iterator[tuple[tuple[str, int], ReplicaProgress]]:
    """Each adding replica of ``keys`` that is not in the ISR yet, with its progress."""
    for k in keys:
        p = state.partition_index.get(k)
        if p is not None:
            for r in p.progress(state.logs_known):
                if not r.in_isr:
                    yield k, r


def bytes_left(state: ClusterState, keys: Iterable[tuple[str, int]]) -> int | None:
    """Bytes the adding replicas of ``keys`` still have to copy, and their replicas being copied
    between log dirs (the future replica's size against its source's; None when sizes are unknown)."""
    keys = list(keys)
    left = 0
    for m in dir_moves_of(state, keys):
        if m.left is None:
            return None
        left += m.left
    for _, r in _copying(state, keys):
        if r.leader_bytes is None or r.copied_bytes is None:
            return None
        left += max(0, r.leader_bytes - r.copied_bytes)
    return left


def waiting_on(state: ClusterState, keys: Iterable[tuple[str, int]]) -> list[str]:
    """What the unfinished partitions of ``keys`` wait on, most telling first: adding replicas on a
    broker that is down or fenced, a target smaller than ``min.insync.replicas``, a throttle of 0 on
    a broker taking part, no leader, or adding replicas that simply do not grow."""
    rates = state.throttles.broker_map()
    down: dict[BrokerId, list[str]] = {}
    zero: dict[BrokerId, list[str]] = {}
    leaderless: list[str] = []
    slow: list[str] = []
    below_min: list[str] = []
    mins = state.min_insync_index
    for k in keys:
        p = state.partition_index.get(k)
        if p is None or not p.reassigning:
            continue
        if p.leader is None:
            leaderless.append(p.name)
            continue
        need = mins.get(p.topic)
        if need is not None and len(p.target) < need:
            below_min.append(f"{p.name}: {len(p.target)} < {need}")
        for b in p.adding:
            if b in p.isr:
                continue
            broker = state.broker(b)
            if broker is None or not broker.live:
                down.setdefault(b, []).append(p.name)
            elif (
                rates.get(str(b), {}).get(FOLLOWER_RATE) == "0" or rates.get(str(p.leader), {}).get(LEADER_RATE) == "0"
            ):
                zero.setdefault(b if rates.get(str(b), {}).get(FOLLOWER_RATE) == "0" else p.leader, []).append(p.name)
            else:
                slow.append(f"{p.name} on broker {b}")
    out = [
        f"broker {b} is down{' (fenced)' if (x := state.broker(b)) is not None and x.fenced else ''} "
        f"({_some(names)} cannot copy to it)"
        for b, names in sorted(down.items())
    ]
    if below_min:
        out.append(
            f"target replicas fewer than min.insync.replicas ({_some(below_min)}): the partition cannot take "
            "acks=all writes once moved; cancel it, or lower min.insync.replicas if that is intended"
        )
    out += [f"the throttle on broker {b} is 0 B/s ({_some(names)})" for b, names in sorted(zero.items())]
    if leaderless:
        out.append(f"no leader to copy from ({_some(leaderless)})")
    if slow:
        out.append(f"adding replicas not growing: {_some(slow)}")
    return out


def _some(names: list[str], shown: int = 5) -> str:
    return ", ".join(names[:shown]) + (f" and {len(names) - shown} more" if len(names) > shown else "")


ReplicaKey = tuple[str, int, BrokerId]
"""An adding replica: topic, partition, broker."""


class CopyTracker:
    """Copy rates of every adding replica in flight, observed across successive snapshots of one
    cluster (the Live page feeds it each refresh; one per cluster is shared by every session
    watching it, hence the lock).

    A replica's rate is the growth of its log over the samples kept for it: those of the last
    ``window_s`` seconds, and always at least the last two, so a slow refresh still gives a rate.
    A replica seen once has no rate yet ("measuring"); one whose log shrank (its copy started
    over) starts measuring again; one that left the in-flight list, or joined the ISR, is dropped.
    Snapshots no newer than the last one observed (the same shared snapshot, or a last good one
    shown while the cluster does not answer) are ignored, and so are snapshots without log sizes.
    """

    def __init__(self, window_s: float = 60.0, max_samples: int = 30) -> None:
        self.window_s = window_s
        self.max_samples = max(2, max_samples)
        self._samples: dict[ReplicaKey, deque[tuple[float, int]]] = {}
        self._dir_samples: dict[ReplicaKey, deque[tuple[float, int]]] = {}
        self._last_at: float | None = None
        self._lock = threading.Lock()

    def observe(self, state: ClusterState) -> bool:
        """Take one snapshot in; False when it was ignored (not newer, or no log sizes)."""
        if not state.logs_known:
            return False
        with self._lock:
            if self._last_at is not None and state.taken_at <= self._last_at:
                return False
            self._last_at = now = state.taken_at
            kept: dict[ReplicaKey, deque[tuple[float, int]]] = {}
            for p, broker, copied in adding_copied(state):
                key = (p.topic, p.partition, broker)
                kept[key] = self._sampled(self._samples.get(key), now, copied)
            self._samples = kept
            # replicas copied between the log dirs of their broker: the growth of their future log
            self._dir_samples = {
                m.key: self._sampled(self._dir_samples.get(m.key), now, m.copied_bytes)
                for m in dir_moves_in_flight(state)
            }
        return True

    def _sampled(self, samples: deque[tuple[float, int]] | None, now: float, copied: int) -> deque[tuple[float, int]]:
        """``samples`` with (``now``, ``copied``), those older than the window dropped (the last two
        kept, and ``max_samples`` at most); kept in place (a poll of 10,000 copies copies no lists)."""
        if samples is None or (samples and copied < samples[-1][1]):
            samples = deque(maxlen=self.max_samples)  # new, or the copy started over
        samples.append((now, copied))
        while len(samples) > 2 and now - samples[0][0] > self.window_s:
            samples.popleft()
        return samples

    def rates(self) -> dict[ReplicaKey, float]:
        """Bytes per second of each adding replica seen in at least two snapshots (0 when its log
        did not grow). A replica copying but missing here is still being measured."""
        with self._lock:
            return _rates(self._samples)

    def dir_rates(self) -> dict[ReplicaKey, float]:
        """Bytes per second of each replica being copied to another log dir of its broker (its
        future log's growth), as :meth:`rates` gives them for adding replicas."""
        with self._lock:
            return _rates(self._dir_samples)

    def observed_s(self) -> float:
        """Seconds between the oldest and newest sample kept (how long the rates are measured over)."""
        with self._lock:
            spans = [s[-1][0] - s[0][0] for s in self._samples.values() if len(s) >= 2]
            return max(spans, default=0.0)


class BrokerIntake:
    """What each broker takes in by replication, observed across successive snapshots: the bytes
    its adding replicas grew by from one snapshot to the next, summed per broker, over the last
    ``window_s`` seconds (and always at least the last two snapshots). A replica seen for the
    first time, or whose log shrank (its copy started over), adds nothing at that snapshot.

    The figure a broker's follower throttle bounds (its replication intake as a whole), for the
    guardrails (:mod:`console.runs.guard`); lighter than :class:`CopyTracker`, which keeps every
    replica's own samples for the pages' per-replica rates and ETAs."""

    def __init__(self, window_s: float = 60.0) -> None:
        self.window_s = window_s
        self._sizes: dict[ReplicaKey, int] = {}
        self._polls: deque[tuple[float, dict[BrokerId, int]]] = deque()
        """(when, bytes each broker took in since the snapshot before), oldest first."""

    def observe(self, state: ClusterState) -> bool:
        """Take one snapshot in; False when it was ignored (not newer, or no log sizes)."""
        if not state.logs_known or (self._polls and state.taken_at <= self._polls[-1][0]):
            return False
        now, before = state.taken_at, self._sizes
        sizes: dict[ReplicaKey, int] = {}
        grew: dict[BrokerId, int] = {}
        for p, broker, copied in adding_copied(state):
            key = (p.topic, p.partition, broker)
            sizes[key] = copied
            was = before.get(key)
            if was is not None and copied > was:
                grew[broker] = grew.get(broker, 0) + copied - was
        self._sizes = sizes
        self._polls.append((now, grew))
        while len(self._polls) > 2 and now - self._polls[1][0] > self.window_s:
            self._polls.popleft()
        return True

    def rates(self) -> dict[BrokerId, float]:
        """Bytes per second each broker took in over the snapshots kept (none before two)."""
        if len(self._polls) < 2:
            return {}
        span = self._polls[-1][0] - self._polls[0][0]
        total: dict[BrokerId, int] = {}
        for _, grew in list(self._polls)[1:]:  # what the first took in came before the span
            for b, n in grew.items():
                total[b] = total.get(b, 0) + n
        return {b: n / span for b, n in total.items()}


def adding_copied(state: ClusterState) -> Iterator[tuple[Partition, BrokerId, int]]:
    """Each adding replica in flight not yet in the ISR, with the bytes it has copied (0 when its
    broker reports no log for it while the leader's is reported): what
    :meth:`~console.core.model.Partition.progress` gives of it, without building its record (a
    poll of 10,000 copies asks this of each; the logs' fields read by position, the cheapest way)."""
    for p in state.in_flight:
        adding = p.adding
        if not adding:
            continue
        isr, leader, logs = p.isr, p.leader, p.logs
        for b in adding:
            if b in isr:
                continue
            copied: int | None = None
            leader_known = False
            for log in logs:  # ReplicaLog: broker, log_dir, size, is_future
                if not log[3]:
                    if log[0] == b:
                        copied = log[2] if copied is None else copied
                    elif log[0] == leader:
                        leader_known = True
            if copied is not None:
                yield p, b, copied
            elif leader_known:
                yield p, b, 0


def _rates(samples: Mapping[ReplicaKey, Sequence[tuple[float, int]]]) -> dict[ReplicaKey, float]:
    out = {}
    for key, kept in samples.items():
        if len(kept) >= 2:
            (t0, b0), (t1, b1) = kept[0], kept[-1]
            if t1 > t0:
                out[key] = max(0.0, (b1 - b0) / (t1 - t0))
    return out


def wave_bytes_done(
    state: ClusterState,
    entries: Iterable[PlanEntry],
    before: Mapping[tuple[str, int], Sequence[BrokerId]] | None = None,
) -> float | None:
    """Percent of a wave's bytes copied (not of its partitions): each adding replica in flight its
    bytes copied of its leader's; a partition at its target all the bytes it added (its size once
    per replica added, ``before`` giving its replicas before the run; one when not known). None
    when a size is unknown or the wave copies nothing."""
    done = total = 0
    for e in entries:
        p = state.partition_index.get(e.key)
        if p is None:
            continue
        if p.reassigning:
            for r in p.progress(state.logs_known):
                if r.leader_bytes is None or (r.copied_bytes is None and not r.in_isr):
                    return None
                total += r.leader_bytes
                done += r.leader_bytes if r.in_isr else min(r.copied_bytes or 0, r.leader_bytes)
        elif p.replicas == e.replicas:
            size = p.size_on(p.leader) if p.leader is not None else None
            if size is None:
                return None
            added = len(set(e.replicas) - set(before[e.key])) if before is not None and e.key in before else 1
            total += size * added
            done += size * added
        else:  # not started: what it will copy, nothing copied yet
            size = p.size_on(p.leader) if p.leader is not None else None
            if size is None:
                return None
            total += size * max(1, len(set(e.replicas) - set(p.replicas)))
    return None if not total else 100.0 * done / total
