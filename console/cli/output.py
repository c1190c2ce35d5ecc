"""What every command prints on stderr: errors with their hints, a snapshot's findings."""

from __future__ import annotations

import sys

from console.core.errors import ConsoleError
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
