"""A run: a reviewed plan carried out in waves, with throttles set and removed exactly (pure).

* **Waves** bound how much moves at once: adding replicas per broker (default 5), partitions
  per request (default 500, never more than :data:`console.validate.REQUEST_LIMIT`) and,
  optionally, bytes per wave. Entries are placed first-fit, in plan order, so a wave is as full
  as the limits allow. Entries that change nothing are not sent.
* **Throttles** follow ``kafka-reassign-partitions.sh --throttle``: on each topic,
  ``leader.replication.throttled.replicas`` lists ``partition:broker`` for every current
  replica of a moving partition and ``follower.replication.throttled.replicas`` the adding
  ones; the rate goes on every live broker taking part. Lists are merged with what is already
  set (never replaced), and removal takes away exactly the entries the console added.
* **Leftovers**: throttles nothing in flight needs (for the sweeper).
* **Progress**: the ETA before a run (throttle × brokers copying at once), and during it the
  observed copy rate, the bytes left and the adding replicas that stopped growing.

No I/O here: the executor (console/executor.py) applies what these functions decide.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Iterator, Mapping

from console.diff import ChangeKind, PartitionChange, change_of
from console.model import BrokerId, ClusterState, ReplicaProgress
from console.plans import Plan, PlanEntry
from console.validate import REQUEST_LIMIT

LEADER_LIST = "leader.replication.throttled.replicas"
FOLLOWER_LIST = "follower.replication.throttled.replicas"
LEADER_RATE = "leader.replication.throttled.rate"
FOLLOWER_RATE = "follower.replication.throttled.rate"
ALL = "*"


@dataclass(frozen=True)
class WaveLimits:
    moves_per_broker: int = 5
    partitions: int = 500
    bytes: int | None = None


def plan_waves(state: ClusterState, plan: Plan, limits: WaveLimits = WaveLimits()) -> list[tuple[PlanEntry, ...]]:
    """The plan's entries that change something, in waves within ``limits`` (first fit)."""
    per_request = max(1, min(limits.partitions, REQUEST_LIMIT))
    waves: list[list[PlanEntry]] = []
    load: list[dict[BrokerId, int]] = []
    size: list[int] = []
    index = state.partition_index
    for e in plan.entries:
        c = change_of(index.get(e.key), e)
        if c.kind in (ChangeKind.NONE, ChangeKind.UNKNOWN):
            continue
        copy = c.bytes_to_copy
        for w, entries in enumerate(waves):
            if (len(entries) < per_request
                    and all(load[w].get(b, 0) < limits.moves_per_broker for b in c.adding)
                    and (limits.bytes is None or not entries or size[w] + copy <= limits.bytes)):
                break
        else:
            waves.append([])
            load.append({})
            size.append(0)
            w = len(waves) - 1
        waves[w].append(e)
        size[w] += copy
        for b in c.adding:
            load[w][b] = load[w].get(b, 0) + 1
    return [tuple(w) for w in waves]


# -- throttles -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Throttle:
    """What a wave needs throttled: list entries per topic and key, and the brokers taking part."""

    topics: Mapping[str, Mapping[str, frozenset[str]]]
    brokers: frozenset[BrokerId]


def wave_throttle(state: ClusterState, entries: Iterable[PlanEntry]) -> Throttle:
    topics: dict[str, dict[str, set[str]]] = {}
    brokers: set[BrokerId] = set()
    index = state.partition_index
    for e in entries:
        c: PartitionChange = change_of(index.get(e.key), e)
        if not c.adding and not c.removing:
            continue
        t = topics.setdefault(e.topic, {LEADER_LIST: set(), FOLLOWER_LIST: set()})
        t[LEADER_LIST].update(f"{e.partition}:{b}" for b in c.current)
        t[FOLLOWER_LIST].update(f"{e.partition}:{b}" for b in c.adding)
        brokers.update(c.current)
        brokers.update(c.adding)
    live = {b.id for b in state.brokers if b.live}
    return Throttle({t: {k: frozenset(v) for k, v in keys.items() if v} for t, keys in topics.items()},
                    frozenset(b for b in brokers if b in live))


def _entries(value: str | None) -> set[str]:
    return {x.strip() for x in (value or "").split(",") if x.strip()}


def _joined(entries: Iterable[str]) -> str:
    return ",".join(sorted(entries))  # the official tool's order: lexicographic ("10:1" < "2:1")


def merged(current: str | None, ours: Iterable[str]) -> str | None:
    """The value to set so that ``ours`` are throttled too; None when nothing needs setting
    (all are there already, or the list is ``*``)."""
    have = _entries(current)
    if ALL in have:
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
@dataclass(frozen=True)
class Leftover:
    """A throttle config set on a broker or topic that nothing in flight needs."""

    kind: str
    """"broker" or "topic"."""
    name: str
    key: str
    value: str


def leftover_throttles(state: ClusterState) -> list[Leftover]:
    """Throttles nothing needs: topic lists on topics with no partition in flight, and broker
    rates on brokers no in-flight partition involves (every throttle, when nothing is in flight)."""
    busy_topics = {p.topic for p in state.in_flight}
    busy_brokers = {str(b) for p in state.in_flight for b in p.replicas}
    out = [Leftover("topic", t, k, v) for t, keys in state.throttles.topic_map().items() if t not in busy_topics
           for k, v in sorted(keys.items())]
    out += [Leftover("broker", b, k, v) for b, keys in state.throttles.broker_map().items()
            if b not in busy_brokers for k, v in sorted(keys.items())]
    return out


# -- progress and ETA ------------------------------------------------------------------------------
def estimate_seconds(state: ClusterState, waves: Iterable[tuple[PlanEntry, ...]], rate: int | None) -> float | None:
    """Before a run: each wave copies its bytes at the throttle times the brokers that can copy at
    once (a throttle is per broker: as many senders and receivers as the wave has, the fewer of
    the two); None when unthrottled or sizes are unknown."""
    if not rate:
        return None
    total = 0.0
    index = state.partition_index
    for w in waves:
        copy = 0
        senders: set[BrokerId] = set()
        receivers: set[BrokerId] = set()
        for e in w:
            c = change_of(index.get(e.key), e)
            if c.adding and c.size is None:
                return None
            copy += c.bytes_to_copy
            if c.adding and c.source is not None:
                senders.add(c.source)
                receivers.update(c.adding)
        if copy:
            total += copy / (rate * max(1, min(len(senders), len(receivers))))
    return total


@dataclass
class Progress:
    """Copy progress of a set of partitions across snapshots: observed rate, ETA, stuck ones."""

    stuck_after_s: float = 60.0
    samples: list[tuple[float, int]] = field(default_factory=list)
    last_growth: dict[tuple[str, int, BrokerId], tuple[int, float]] = field(default_factory=dict)

    def update(self, state: ClusterState, keys: Iterable[tuple[str, int]]) -> None:
        copied = 0
        for (t, p), r in _copying(state, keys):
            now = r.copied_bytes or 0
            copied += now
            seen = self.last_growth.get((t, p, r.broker))
            if seen is None or now > seen[0]:
                self.last_growth[(t, p, r.broker)] = (now, state.taken_at)
        self.samples = (self.samples + [(state.taken_at, copied)])[-30:]

    def rate(self) -> float | None:
        """Bytes per second over the samples kept (up to 30), when the copy has grown."""
        if len(self.samples) < 2:
            return None
        (t0, b0), (t1, b1) = self.samples[0], self.samples[-1]
        return (b1 - b0) / (t1 - t0) if t1 > t0 and b1 > b0 else None

    def stuck(self, state: ClusterState) -> list[str]:
        """Adding replicas whose copy has not grown for ``stuck_after_s`` while still in flight."""
        out = []
        for (t, p, b), (_, since) in self.last_growth.items():
            part = state.partition_index.get((t, p))
            if part is not None and b in part.adding and b not in part.isr and state.taken_at - since > self.stuck_after_s:
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
    """Bytes the adding replicas of ``keys`` still have to copy (None when sizes are unknown)."""
    left = 0
    for _, r in _copying(state, keys):
        if r.leader_bytes is None or r.copied_bytes is None:
            return None
        left += max(0, r.leader_bytes - r.copied_bytes)
    return left


def human_duration(seconds: float) -> str:
    if seconds < 1:
        return "under a second"
    s = int(round(seconds))
    return f"{s // 3600} h {s % 3600 // 60} min" if s >= 3600 else (f"{s // 60} min {s % 60} s" if s >= 60 else f"{s} s")
