"""The options more than one command takes (console.cli.options): switches from a table, and the
wave limits submit and pipeline review share."""

from __future__ import annotations

import argparse

from console.cli.options import switches, wave_args
from console.core.limits import MOVES_PER_BROKER, PARTITIONS_PER_WAVE


def test_switches_are_off_unless_given_and_keep_their_order_and_help() -> None:
    p = argparse.ArgumentParser()
    switches(p, ("--yes", "do not ask"), ("--json", "print JSON"))
    assert vars(p.parse_args([])) == {"yes": False, "json": False}
    assert vars(p.parse_args(["--json"])) == {"yes": False, "json": True}
    assert [(a.option_strings, a.help) for a in p._actions[1:]] == [
        (["--yes"], "do not ask"),
        (["--json"], "print JSON"),
    ]


def test_wave_args_default_to_the_console_s_limits() -> None:
    p = argparse.ArgumentParser()
    wave_args(p)
    args = p.parse_args([])
    assert (args.max_moves_per_broker, args.max_partitions_per_request) == (MOVES_PER_BROKER, PARTITIONS_PER_WAVE)
    assert p.parse_args(["--max-partitions-per-request", "7"]).max_partitions_per_request == 7
