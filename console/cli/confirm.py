"""The questions a command asks before it changes a cluster (``--yes`` skips them)."""

from __future__ import annotations


def typed_name(prompt: str, name: str) -> bool:
    """Whether the operator typed the cluster's ``name`` at ``prompt``."""
    return input(prompt).strip() == name


def said_yes(question: str) -> bool:
    """Whether the operator answered "yes" to ``question`` (``[yes/no]``)."""
    return input(question).strip().lower() == "yes"
