"""Sign-ins through the identity provider (OIDC) or a trusted proxy, audited as a sign-in
against the users file is (action ``sign-in``, the console as a whole, the source named); the
users file's own sign-ins are in :mod:`console.services.sessions`."""

from __future__ import annotations

from collections.abc import Sequence

from console.services.sessions import CONSOLE_WIDE
from console.storage.store import Store

GROUPS_KEPT = 50
"""At most this many of a person's groups go into the audit entry."""


def signed_in(store: Store, name: str, source: str, groups: Sequence[str]) -> None:
    """Record that ``name`` signed in through ``source`` ("oidc" or "proxy") as a member of ``groups``."""
    request: dict[str, object] = {"source": source, "groups": list(groups[:GROUPS_KEPT])}
    if len(groups) > GROUPS_KEPT:
        request["groups_left_out"] = len(groups) - GROUPS_KEPT
    store.audit.record(name, CONSOLE_WIDE, "sign-in", request, "signed in")


def signed_out(store: Store, name: str, source: str) -> None:
    """Record that ``name`` signed out of the provider's sign-in here."""
    store.audit.record(name, CONSOLE_WIDE, "sign-out", {"source": source}, "signed out")


def refused_headers(store: Store, claimed: str, why: str) -> None:
    """Record identity headers that no trusted proxy sent (``claimed`` is who they named)."""
    store.audit.record(claimed[:100], CONSOLE_WIDE, "sign-in", {"source": "proxy", "why": why}, "refused")
