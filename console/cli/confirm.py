"""The questions a command asks before it changes a cluster (``--yes`` skips them).

Asked only at a terminal: without one (a script, a pipe, CI) nothing could answer, so the command
stops with :class:`NotATerminal` (exit 2) before anything is sent, and says to add ``--yes``.
"""

from __future__ import annotations

import sys

from console.core.errors import NotATerminal


def _ask(prompt: str) -> str:
    if not sys.stdin.isatty():
        raise NotATerminal(
            "Not at a terminal, so the console cannot ask you to confirm: nothing was sent.",
            "Check what the command will do, then run it again with --yes.",
        )
    # the question goes to stderr: stdout carries only what the command produces (``--json > file``)
    print(prompt, end="", file=sys.stderr, flush=True)
    line = sys.stdin.readline()
    if not line:  # Ctrl-D: no answer is not a yes
        print(file=sys.stderr)
    return line


def typed_name(prompt: str, name: str) -> bool:
    """Whether the operator typed the cluster's ``name`` at ``prompt``."""
    return _ask(prompt).strip() == name


def said_yes(question: str) -> bool:
    """Whether the operator answered "yes" to ``question`` (``[yes/no]``)."""
    return _ask(question).strip().lower() == "yes"
