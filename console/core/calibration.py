"""What past moves teach about copy speed, as the ETAs use it (pure values).

The history job's ``copy_rates`` table gives, per destination broker, the median throughput it
received while copying (a move's rate times the moves it had in flight) and the median of that
over the throttle in force. An ETA for bytes going to a broker with history uses
``throttle × ratio`` when the new copy is throttled and throttled moves were seen, else the
median throughput (capped by the throttle); a broker without history falls back to the throttle.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from console.core.format import ids_text, plural
from console.core.limits import FOLLOWER_RATE
from console.core.model import BrokerId, ClusterState, TopicPartition, broker_rate_bps


@dataclass(frozen=True)
class BrokerRate:
    """How fast one broker received replicas in the past."""

    broker: BrokerId
    moves: int
    throughput_bps: float
    """Median bytes per second received while copying."""
    throttle_ratio: float | None = None
    """Median throughput over the throttle in force, over ``throttled_moves`` moves; None when none was throttled."""
    throttled_moves: int = 0

    def rate(self, throttle: int | None) -> float:
        """Bytes per second this broker is expected to receive under ``throttle`` (None: unthrottled)."""
        if throttle and self.throttle_ratio is not None and self.throttled_moves:
            return throttle * self.throttle_ratio
        return min(float(throttle), self.throughput_bps) if throttle else self.throughput_bps


@dataclass(frozen=True)
class Calibration:
    """The copy rates of one cluster's brokers, as the last history job computed them."""

    cluster: str
    brokers: Mapping[BrokerId, BrokerRate] = field(default_factory=dict)
    made_at: float = 0.0
    """When the history job wrote them (epoch seconds)."""

    def __bool__(self) -> bool:
        return bool(self.brokers)


@dataclass(frozen=True)
class Estimate:
    """How long copying will take, and what the figure rests on."""

    seconds: float
    moves: int = 0
    """Past moves the figure is calibrated from (0: the throttle alone)."""
    brokers: tuple[BrokerId, ...] = ()
    """The destination brokers whose history was used."""

    @property
    def calibrated(self) -> bool:
        return self.moves > 0

    @property
    def basis(self) -> str:
        """``calibrated from 37 past moves to broker 4``, or ``at the throttle``."""
        if not self.calibrated:
            return "at the throttle"
        return (
            f"calibrated from {plural(self.moves, 'past move')} to "
            f"{'broker' if len(self.brokers) == 1 else 'brokers'} {ids_text(self.brokers)}"
        )


Throttles = Mapping[BrokerId, int | None] | int | None
"""The follower throttle per destination broker, or one for all (None: unthrottled)."""


def receive_time(
    todo: Mapping[BrokerId, int], throttle: Throttles, calibration: Calibration | None
) -> tuple[float, set[BrokerId]] | None:
    """Seconds until every broker of ``todo`` (bytes to receive, brokers copying at once) has its
    bytes at its calibrated rate, with the brokers whose history was used; None when some broker
    has neither history nor a throttle to go by, or no history applies at all."""
    if not calibration:
        return None
    learned = receive_seconds(todo, throttle, calibration)
    return learned if learned is not None and learned[1] else None


def receive_seconds(
    todo: Mapping[BrokerId, int], throttle: Throttles, calibration: Calibration | None
) -> tuple[float, set[BrokerId]] | None:
    """Seconds until every broker of ``todo`` (bytes to receive, brokers copying at once) has its
    bytes: at the rate its history shows at its throttle where it has history, else at the
    throttle; with the brokers whose history was used. None when some broker has neither."""
    slowest = 0.0
    used: set[BrokerId] = set()
    for broker, size in todo.items():
        limit = throttle.get(broker) if isinstance(throttle, Mapping) else throttle
        known = calibration.brokers.get(broker) if calibration else None
        speed = known.rate(limit) if known is not None else (float(limit) if limit else None)
        if not speed:
            return None
        if known is not None:
            used.add(broker)
        slowest = max(slowest, size / speed)
    return slowest, used


def calibrated(
    todo: Mapping[BrokerId, int] | None, throttle: Throttles, calibration: Calibration | None
) -> Estimate | None:
    """:func:`receive_time` as an :class:`Estimate` (None without sizes or history)."""
    if todo is None or calibration is None:
        return None
    learned = receive_time(todo, throttle, calibration)
    if learned is None:
        return None
    seconds, used = learned
    return Estimate(seconds, sum(calibration.brokers[b].moves for b in used), tuple(sorted(used)))


def bytes_to_receive(state: ClusterState, keys: Iterable[TopicPartition] | None = None) -> dict[BrokerId, int] | None:
    """Per broker, the bytes its adding replicas (of ``keys``, or of everything in flight) still
    have to copy; None when a size is unknown."""
    parts = state.in_flight if keys is None else [p for k in keys if (p := state.partition_index.get(k)) is not None]
    out: dict[BrokerId, int] = {}
    for p in parts:
        for r in p.progress(state.logs_known):
            if r.in_isr:
                continue
            if r.bytes_left is None:
                return None
            out[r.broker] = out.get(r.broker, 0) + r.bytes_left
    return out


def follower_throttles(state: ClusterState) -> dict[BrokerId, int | None]:
    """The follower throttle rate set on each broker (None where none is)."""
    rates = state.throttles.broker_map()
    return {b.id: broker_rate_bps(rates, b.id, FOLLOWER_RATE) for b in state.brokers}
