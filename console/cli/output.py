"""What every command prints on stderr: errors with their hints, a snapshot's findings."""

from __future__ import annotations

import argparse
import sys

from console.core.errors import ConsoleError
from console.core.format import parse_rate
from console.core.model import ClusterState, Finding


def error(e: ConsoleError) -> None:
    print(f"Error: {e.message}", file=sys.stderr)
    if e.hint:
        print(e.hint, file=sys.stderr)


def print_findings(state: ClusterState) -> None:
    for f in state.findings:
        print(f"Error: {f.message}\n{f.hint}", file=sys.stderr)


def short(f: Finding) -> dict[str, object]:
    """A finding as ``validate --json`` prints it."""
    d = f.to_dict()
    return {k: d[k] for k in ("code", "severity", "topic", "partition", "message")}


def rate_arg(text: str) -> int:
    """A throttle argument: a number alone is bytes/s, as Kafka's tools and the pages take it
    (``10000000``), or with a unit (``10MB/s``, ``500KB/s``; 1 KB = 1000 bytes)."""
    try:
        return parse_rate(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
