"""When everything in flight will be done (pure): the time until the last copy ends, not the total
bytes left over the total rate.

The copies in flight are grouped by what bounds them: each broker's adding replicas (its follower
throttle), each leader's replicas being fetched by adding replicas (its leader throttle) and each
broker's replicas being copied between its log dirs (its log-dir throttle). A group copies at the
rate observed of its members, summed, never above its throttle (a leader at its throttle: what
its receivers fetch from it is bounded by them as much as by it; a broker taking in below its
throttle from a leader at its throttle: at its own throttle, which it gets once the leader's other
copies are done); until every member is measured, at
the rate its broker showed in past moves (history) or at the throttle. The ETA is the longest
group's: the bottleneck, which it names.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import TypeVar

from console.core.calibration import Calibration
from console.core.format import human_bytes, human_rate
from console.core.limits import FOLLOWER_RATE, LEADER_RATE, LOG_DIR_RATE
from console.core.model import BrokerId, ClusterState, TopicPartition, broker_rate_bps
from console.plans.logdirs import dir_moves_in_flight

ReplicaKey = tuple[str, int, BrokerId]
K = TypeVar("K", bound=Hashable)


class Side(str, Enum):
    """What a group of copies shares: the broker's throttle that bounds them."""

    TAKES_IN = "takes in"
    SENDS_OUT = "sends out"
    COPIES_BETWEEN_DIRS = "copies between its dirs"


class Basis(str, Enum):
    """What a group's rate rests on."""

    OBSERVED = "the rate observed"
    THROTTLE = "the throttle"
    HISTORY = "history"
    NONE = "nothing"


SATURATED = 0.8
"""A group copying at this share of its throttle or more is held by its throttle."""


@dataclass
class _Group:
    left: int = 0
    observed: float = 0.0
    measured: bool = True
    members: int = 0
    leaders: set[BrokerId] = field(default_factory=set)
    """For a broker taking in: the leaders its copies fetch from."""
    lefts: dict[tuple[bool, ReplicaKey], int] = field(default_factory=dict)
    """Each member's bytes left, by (a copy between dirs?, replica)."""


@dataclass(frozen=True)
class Bottleneck:
    broker: BrokerId
    side: Side
    left: int
    rate: float
    basis: Basis
    throttle: int | None

    @property
    def seconds(self) -> float:
        return self.left / self.rate if self.rate > 0 else 0.0

    @property
    def text(self) -> str:
        """``broker 3 takes in 1.2 MB at 40.0 KB/s (the throttle)``."""
        capped = self.basis is Basis.OBSERVED and self.throttle is not None and self.rate >= self.throttle
        why = "its throttle, which the rate observed reaches" if capped else self.basis.value
        return f"broker {self.broker} {self.side.value} {human_bytes(self.left)} at {human_rate(self.rate)} ({why})"


@dataclass(frozen=True)
class InFlightEta:
    """The time until the last copy in flight is done, and what it rests on."""

    seconds: float | None
    """None: nothing to go by yet (unthrottled and not measured), or a copy makes no progress."""
    bottleneck: Bottleneck | None = None
    stalled: tuple[str, ...] = ()
    """Groups observed not to grow (``broker 3 takes in``)."""
    history_moves: int = 0
    """Past moves behind a group's rate (its broker's history), when history was used."""
    groups: tuple[Bottleneck, ...] = field(default_factory=tuple)
    finish: Mapping[ReplicaKey, float] = field(default_factory=dict)
    """When each adding replica's copy will be done, as the groups it is in share their rate among
    their members (:func:`share_finish`): the last of them is :attr:`seconds`, so a partition's
    ETA on the page never says later than the headline."""
    dir_finish: Mapping[ReplicaKey, float] = field(default_factory=dict)
    """The same for each replica being copied between the log dirs of its broker."""

    @property
    def basis(self) -> str:
        if self.bottleneck is None:
            return "no rate to go by yet" if not self.stalled else "no progress: " + ", ".join(self.stalled)
        extra = f", calibrated from {self.history_moves} past moves" if self.bottleneck.basis is Basis.HISTORY else ""
        return f"the last to finish: {self.bottleneck.text}{extra}"


def in_flight_eta(
    state: ClusterState,
    rates: Mapping[ReplicaKey, float],
    dir_rates: Mapping[ReplicaKey, float] | None = None,
    calibration: Calibration | None = None,
    keys: Iterable[TopicPartition] | None = None,
) -> InFlightEta:
    """The ETA of the copies in flight (of ``keys`` only, when given): see the module's docstring.
    ``rates``/``dir_rates``: the copy rates observed (:class:`console.moves.progress.CopyTracker`)."""
    wanted = None if keys is None else set(keys)
    brokers = state.throttles.broker_map()
    groups: dict[tuple[BrokerId, Side], _Group] = {}

    def add(broker: BrokerId, side: Side, left: int, rate: float | None, member: tuple[bool, ReplicaKey]) -> _Group:
        g = groups.setdefault((broker, side), _Group())
        g.left += left
        g.members += 1
        g.lefts[member] = left
        if rate is None:
            g.measured = False
        else:
            g.observed += rate
        return g

    for p in state.in_flight:
        if wanted is not None and p.key not in wanted:
            continue
        for r in p.progress(state.logs_known):
            if r.in_isr:
                continue
            left = r.bytes_left
            if left is None:
                return InFlightEta(None)
            if not left:
                continue
            key = (p.topic, p.partition, r.broker)
            got = rates.get(key)
            taking = add(r.broker, Side.TAKES_IN, left, got, (False, key))
            if p.leader is not None:
                taking.leaders.add(p.leader)
                add(p.leader, Side.SENDS_OUT, left, got, (False, key))
    for m in dir_moves_in_flight(state) if dir_rates is not None else []:
        if wanted is not None and (m.topic, m.partition) not in wanted:
            continue
        if m.left is None:
            return InFlightEta(None)
        if m.left:
            add(m.broker, Side.COPIES_BETWEEN_DIRS, m.left, (dir_rates or {}).get(m.key), (True, m.key))
    return _longest(groups, brokers, calibration)


def _throttle(brokers: Mapping[str, Mapping[str, str]], broker: BrokerId, side: Side) -> int | None:
    key = {Side.TAKES_IN: FOLLOWER_RATE, Side.SENDS_OUT: LEADER_RATE, Side.COPIES_BETWEEN_DIRS: LOG_DIR_RATE}[side]
    return broker_rate_bps(brokers, broker, key)


def _saturated(g: _Group, brokers: Mapping[str, Mapping[str, str]], broker: BrokerId, side: Side) -> bool:
    throttle = _throttle(brokers, broker, side)
    return bool(throttle) and g.measured and g.observed >= SATURATED * (throttle or 0)


def _longest(
    groups: Mapping[tuple[BrokerId, Side], _Group],
    brokers: Mapping[str, Mapping[str, str]],
    calibration: Calibration | None,
) -> InFlightEta:
    out: list[Bottleneck] = []
    finish: dict[tuple[bool, ReplicaKey], float] = {}
    stalled: list[str] = []
    held = {b for (b, side), g in groups.items() if side is Side.SENDS_OUT and _saturated(g, brokers, b, side)}
    unknown = False
    for (broker, side), g in sorted(groups.items()):
        throttle = _throttle(brokers, broker, side)
        if g.measured and g.observed <= 0:
            stalled.append(f"broker {broker} {side.value}")
            continue
        if g.measured and side is Side.SENDS_OUT and throttle:
            # what its receivers fetch is bounded by them as much as by it: the leader's own bound is its throttle
            rate, basis = float(throttle), Basis.THROTTLE
        elif (
            g.measured
            and throttle
            and side is Side.TAKES_IN
            and not _saturated(g, brokers, broker, side)
            and g.leaders & held
        ):
            # held back by a leader at its throttle, which it shares: once the others are done, its own throttle
            rate, basis = float(throttle), Basis.THROTTLE
        elif g.measured:
            rate, basis = (min(g.observed, throttle) if throttle else g.observed), Basis.OBSERVED
        else:
            known = calibration.brokers.get(broker) if calibration and side is Side.TAKES_IN else None
            if known is not None:
                rate, basis = known.rate(throttle), Basis.HISTORY
            elif throttle:
                rate, basis = float(throttle), Basis.THROTTLE
            else:
                unknown = side is not Side.SENDS_OUT  # an unthrottled leader is bounded by its receivers
                continue
        out.append(Bottleneck(broker, side, g.left, rate, basis, throttle))
        for member, t in share_finish(g.lefts, rate).items():
            finish[member] = max(t, finish.get(member, 0.0))
    if stalled:
        return InFlightEta(None, stalled=tuple(stalled), groups=tuple(out))
    if unknown:
        return InFlightEta(None, groups=tuple(out))
    if not out:
        return InFlightEta(0.0)
    last = max(out, key=lambda b: b.seconds)
    moves = calibration.brokers[last.broker].moves if calibration and last.basis is Basis.HISTORY else 0
    return InFlightEta(
        last.seconds,
        last,
        history_moves=moves,
        groups=tuple(out),
        finish={k: t for (between_dirs, k), t in finish.items() if not between_dirs},
        dir_finish={k: t for (between_dirs, k), t in finish.items() if between_dirs},
    )


def share_finish(lefts: Mapping[K, int], rate: float) -> dict[K, float]:
    """When each member of a group copying at ``rate`` in all is done, the group's rate shared
    evenly among the members still copying: by the time a member with ``x`` bytes left is done,
    every member has copied ``min(its bytes left, x)``. The last is done at the group's bytes left
    over its rate."""
    if rate <= 0:
        return {}
    order = sorted(lefts.values())
    before = [0]
    for x in order:
        before.append(before[-1] + x)
    n = len(order)
    out = {}
    for member, x in lefts.items():
        i = bisect_left(order, x)
        out[member] = (before[i] + x * (n - i)) / rate
    return out
