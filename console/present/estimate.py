"""A plan's estimate in words, the same on Review, in the submit dialog and from ``submit``: the
bytes it copies, its waves, and how long it takes with what the figure rests on."""

from __future__ import annotations

from console.core.calibration import Estimate
from console.core.format import about_duration, human_bytes, human_rate, plural
from console.moves.waves import WaveLimits


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


def run_summary(
    partitions: int,
    waves: int,
    bytes_to_copy: int,
    dir_bytes_to_copy: int,
    rate: int | None,
    est: Estimate | None,
    limits: WaveLimits,
) -> str:
    """The run's summary sentence, the same from ``submit`` and in the submit dialog:
    :func:`estimate_text` and the wave limits it was cut with."""
    return (
        estimate_text(partitions, waves, bytes_to_copy, dir_bytes_to_copy, rate, est)
        + f"; at most {plural(limits.moves_per_broker, 'adding replica')} per broker and "
        f"{plural(limits.partitions, 'partition')} per wave."
    )
