"""Options more than one command takes: on/off switches given as a table, and the limits of a run's
waves (``submit`` and ``pipeline review``)."""

from __future__ import annotations

import argparse

from console.core.limits import MOVES_PER_BROKER, PARTITIONS_PER_WAVE


def switches(p: argparse.ArgumentParser | argparse._ArgumentGroup, *flags: tuple[str, str]) -> None:
    """On/off options (``store_true``), each ``(flag, help)``, in the order given."""
    for flag, words in flags:
        p.add_argument(flag, action="store_true", help=words)


def wave_args(p: argparse.ArgumentParser) -> None:
    """How much a wave of a run holds: ``--max-moves-per-broker``, ``--max-partitions-per-request``."""
    p.add_argument(
        "--max-moves-per-broker",
        type=int,
        default=MOVES_PER_BROKER,
        help=f"adding replicas per broker per wave (default {MOVES_PER_BROKER})",
    )
    p.add_argument(
        "--max-partitions-per-request",
        type=int,
        default=PARTITIONS_PER_WAVE,
        help=f"partitions per wave (default {PARTITIONS_PER_WAVE})",
    )
