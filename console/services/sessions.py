"""Sign-in sessions against the users file: :func:`sign_in`, :func:`resume_session`, :func:`sign_out`."""

from __future__ import annotations

import secrets
import time
from dataclasses import dataclass

from console.access.auth import Identity, Users
from console.storage.store import Store

# -- sign-in sessions --------------------------------------------------------------------------------
CONSOLE_WIDE = "*"
"""The cluster of audit entries about the console as a whole (signing in and out)."""


@dataclass(frozen=True)
class SignedIn:
    identity: Identity
    token: str
    """What the browser keeps (a cookie); the store keeps only its digest."""
    expires_at: float


def sign_in(store: Store, users: Users, name: str, password: str, ttl_s: float) -> SignedIn | None:
    """Check ``name``'s password against the users file and open a session lasting ``ttl_s``
    seconds (audited); None, audited as refused, for an unknown user or a wrong password."""
    who = users.login(name, password)
    if who is None:
        store.audit.record(
            name.strip()[:100] or "(no name)", CONSOLE_WIDE, "sign-in", {"source": "users file"}, "refused"
        )
        return None
    token = secrets.token_urlsafe(32)
    now = time.time()
    with store.transaction():
        session = store.sessions.create(token, who.name, now + ttl_s, now)
        store.audit.record(
            who.name,
            CONSOLE_WIDE,
            "sign-in",
            {"source": "users file", "session": session.ref, "hours": round(ttl_s / 3600, 2)},
            "signed in",
        )
    return SignedIn(who, token, session.expires_at)


def resume_session(store: Store, users: Users, token: str | None) -> Identity | None:
    """Who ``token`` signs in, with the roles the users file gives them now; None when the token
    is unknown, tampered with, expired or signed out, or its user left the users file."""
    session = store.sessions.get(token)
    return None if session is None else users.identity_of(session.user)


def sign_out(store: Store, token: str | None) -> bool:
    """End the session of ``token`` in every tab and browser that holds it (audited); False
    when there was none (already ended or expired)."""
    with store.transaction():
        session = store.sessions.delete(token)
        if session is not None:
            store.audit.record(session.user, CONSOLE_WIDE, "sign-out", {"session": session.ref}, "signed out")
    return session is not None
