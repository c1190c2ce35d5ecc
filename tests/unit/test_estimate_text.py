"""The estimate in words (Review, the submit dialog, ``submit``): a duration is "≈ X", and one
under a second says so plainly (Review read "≈ under a second")."""

from __future__ import annotations

from console.core.calibration import Estimate
from console.core.format import about_duration
from console.moves.waves import WaveLimits
from console.present.estimate import estimate_text, run_summary


def test_a_copy_under_a_second_is_not_said_to_be_about_under_a_second() -> None:
    text = estimate_text(3, 1, 530_900, 0, 10_000_000, Estimate(0.05))
    assert "≈ under a second" not in text
    assert "3 partitions in 1 wave, 530.9 KB to copy: under a second at 10.0 MB/s per broker" in text


def test_a_longer_copy_is_about_its_duration() -> None:
    assert "≈ 1 min 40 s at 40.0 KB/s per broker" in estimate_text(12, 3, 4_000_000, 0, 40_000, Estimate(100))
    assert about_duration(0.2) == "under a second" and about_duration(65) == "≈ 1 min 5 s"


def test_the_runs_summary_is_its_estimate_and_the_wave_limits() -> None:
    estimate = estimate_text(12, 3, 4_000_000, 0, 40_000, Estimate(100))
    summary = run_summary(estimate, WaveLimits(moves_per_broker=2, partitions=500))
    assert summary == estimate + "; at most 2 adding replicas per broker and 500 partitions per wave."
