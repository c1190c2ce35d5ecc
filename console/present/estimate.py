"""A plan's estimate in words, the same on Review, in the submit dialog and from ``submit``: the
bytes it copies, its waves, and how long it takes with what the figure rests on; and a running
wave's bytes left and ETA, the same on the Runs page and in ``submit``'s progress lines."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from console.core.calibration import Calibration, Estimate
from console.core.format import about_duration, human_bytes, human_duration, human_rate, plural
from console.core.model import BrokerId, ClusterState, TopicPartition
from console.core.states import RunState
from console.moves.eta import InFlightEta, ReplicaKey, in_flight_eta
from console.moves.progress import bytes_left, estimate_run
from console.moves.waves import WaveLimits
from console.plans.plan import PlanEntry


def estimate_text(
    partitions: int,
    waves: int,
    bytes_to_copy: int,
    dir_bytes_to_copy: int,
    rate: int | None,
    est: Estimate | None,
) -> str:
    """``12 partitions in 3 waves, 4.0 MB to copy (+ 1.0 MB between dirs): ≈ 1 min 40 s at 40.0 KB/s
    per broker, from the busiest broker of each wave (at the throttle)``; without a throttle or
    sizes, says why there is no duration."""
    copied = human_bytes(bytes_to_copy) + (
        f" (+ {human_bytes(dir_bytes_to_copy)} between dirs)" if dir_bytes_to_copy else ""
    )
    head = f"{plural(partitions, 'partition')} in {plural(waves, 'wave')}, {copied} to copy"
    if est is None:
        return head + (
            ": no duration (a size is unknown)"
            if rate
            else ": no duration (not throttled, and no history of these brokers)"
        )
    at = f" at {human_rate(rate)} per broker" if rate else ""
    return (
        f"{head}: {about_duration(est.seconds)}{at}, from the busiest broker of each wave (the most it takes in, "
        f"sends out or copies between its dirs), waves one after the other; {est.basis}"
    )


def run_summary(estimate: str, limits: WaveLimits) -> str:
    """The run's summary sentence, the same from ``submit`` and in the submit dialog: its
    :func:`estimate_text` and the wave limits it was cut with."""
    return (
        estimate + f"; at most {plural(limits.moves_per_broker, 'adding replica')} per broker and "
        f"{plural(limits.partitions, 'partition')} per wave."
    )


WAITS = {RunState.PAUSED: "the next waits for Resume", RunState.STOPPING: "no later wave is sent"}
"""What follows the current wave of a paused or stopping run: no ETA counts the later waves."""


@dataclass(frozen=True)
class WaveEta:
    """A running wave's bytes left and ETA, and the later waves' estimate, as the Runs page and
    ``submit``'s progress lines say them."""

    left: int | None
    """Bytes its adding replicas (and its copies between log dirs) still have to copy; None: a size is unknown."""
    this: InFlightEta
    """Until its last copy is done (:func:`console.moves.eta.in_flight_eta`)."""
    after: Estimate | None
    """The later waves one after the other (:func:`console.moves.progress.estimate_run`); None when
    the run is paused or stopping, or they cannot be estimated."""
    later_waves: int
    waits: str | None
    """What follows this wave when the run is paused or stopping (:data:`WAITS`), else None."""

    @property
    def seconds(self) -> float | None:
        """This wave's ETA and the later waves' (none counted while paused or stopping); None while measuring."""
        if self.this.seconds is None:
            return None
        return self.this.seconds + (self.after.seconds if self.after is not None else 0.0)

    @property
    def later_basis(self) -> str:
        return self.after.basis if self.after is not None else "at the throttle"


def wave_eta(
    now: ClusterState,
    run_state: RunState,
    keys: Sequence[TopicPartition],
    later_waves: Callable[[], Iterable[Sequence[PlanEntry]]],
    rate: int | None,
    rates: Mapping[ReplicaKey, float],
    dir_rates: Mapping[ReplicaKey, float],
    calibration: Calibration | None,
) -> WaveEta:
    """The running wave of ``keys`` against ``now``, with the copy rates observed (``rates``,
    ``dir_rates``: :class:`console.moves.progress.CopyTracker`); ``later_waves``: the run's pending
    waves, neither read nor estimated when it is paused or stopping."""
    waits = WAITS.get(run_state)
    later = [] if waits else [tuple(w) for w in later_waves()]
    after = None if waits else estimate_run(now, later, rate, calibration)
    this = in_flight_eta(now, rates, dir_rates, calibration, keys)
    return WaveEta(bytes_left(now, keys), this, after, len(later), waits)


def progress_text(eta: WaveEta, busiest: tuple[BrokerId, float] | None) -> str:
    """A running wave in a line: ``12.0 MB left, copying at 40.0 KB/s (broker 2, the busiest), ETA
    5 min 3 s`` (``busiest``: the broker copying fastest and its rate, a throttle being per broker)."""
    left = f"{human_bytes(eta.left)} left" if eta.left is not None else "bytes left unknown"
    rate = (
        f"copying at {human_rate(busiest[1])} (broker {busiest[0]}, the busiest)"
        if busiest is not None and busiest[1] > 0
        else "measuring the copy rate"
    )
    seconds = eta.seconds
    if seconds is None:
        when = f"ETA … ({eta.this.basis})"
    elif eta.waits:
        when = f"ETA of this wave {human_duration(seconds)} ({eta.waits})"
    else:
        when = f"ETA {human_duration(seconds)}" + (
            f" (this wave and {plural(eta.later_waves, 'later wave')}, {eta.later_basis})" if eta.later_waves else ""
        )
    return f"{left}, {rate}, {when}"
