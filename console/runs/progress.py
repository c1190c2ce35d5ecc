"""How far a run has come and how long it will take (pure): the ETA before a run (throttle ×
brokers copying at once), and during it the observed copy rate, the bytes left and the adding
replicas that stopped growing."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Iterator

from console.core.model import BrokerId, ClusterState, ReplicaProgress
from console.plans.diff import change_of
from console.plans.plan import PlanEntry


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


