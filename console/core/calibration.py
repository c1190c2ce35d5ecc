"""What past moves teach about copy speed, as the ETAs use it (pure values).

The history job's ``copy_rates`` table gives, per destination broker, the median throughput it
received while copying (a move's rate times the moves it had in flight) and the median of that
over the throttle in force. An ETA for bytes going to a broker with history uses
``throttle × ratio`` when the new copy is throttled and throttled moves were seen, else the
median throughput (capped by the throttle); a broker without history falls back to the throttle.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

from console.core.format import ids_text, plural
from console.core.model import BrokerId


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
        return (f"calibrated from {plural(self.moves, 'past move')} to "
                f"{'broker' if len(self.brokers) == 1 else 'brokers'} {ids_text(self.brokers)}")


def receive_time(todo: Mapping[BrokerId, int], throttle: int | None,
                 calibration: Calibration | None) -> tuple[float, set[BrokerId]] | None:
    """Seconds until every broker of ``todo`` (bytes to receive, brokers copying at once) has its
    bytes at its calibrated rate, with the brokers whose history was used; None when some broker
    has neither history nor a throttle to go by, or no history applies at all."""
    if not calibration:
        return None
    slowest = 0.0
    used: set[BrokerId] = set()
    for broker, size in todo.items():
        known = calibration.brokers.get(broker)
        speed = known.rate(throttle) if known is not None else (float(throttle) if throttle else None)
        if not speed:
            return None
        if known is not None:
            used.add(broker)
        slowest = max(slowest, size / speed)
    return (slowest, used) if used else None
