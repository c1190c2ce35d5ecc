"""Sign-in sessions against the users file: :func:`sign_in`, :func:`redeem_ticket`,
:func:`resume_session`, :func:`sign_out`; and the audit of a sign-in through Streamlit's own
authentication (:func:`record_streamlit_sign_in`).

Sign-in cannot be guessed at: after :data:`NAME_LIMIT` failed attempts for one user name, or
:data:`CLIENT_LIMIT` from one client (what the browser connected from), no password of that name
or client is checked for a while, growing from :data:`LOCK_FIRST_S` seconds and doubling with every
further failure up to :data:`LOCK_MAX_S`; the answer says until when. The count is kept in the
store (every server sharing it sees it) and forgotten after a success (the name's) or a quiet
day. An unknown name costs the same work as a known one (:meth:`console.access.auth.Users.login`).
Failures are audited without flooding the log: one entry at the first failure of a name and one
each time the name or the client gets locked, each with the number of attempts since the last.
"""

from __future__ import annotations

import enum
import hashlib
import math
import re
import secrets
import time
from dataclasses import dataclass, replace

from console.access.auth import Identity, Users
from console.storage.signins import Failures
from console.storage.store import Store

# -- sign-in sessions --------------------------------------------------------------------------------
CONSOLE_WIDE = "*"
"""The cluster of audit entries about the console as a whole (signing in and out)."""
NAME_LIMIT = 5
"""Failed attempts for one user name before it is locked."""
CLIENT_LIMIT = 20
"""Failed attempts from one client (any names) before it is locked."""
LOCK_FIRST_S = 30.0
"""The first lock; each further failure doubles it."""
LOCK_MAX_S = 15 * 60.0
"""The longest lock."""
FORGET_S = 24 * 3600.0
"""Failures older than this (and no lock left) are forgotten."""
TICKET_S = 60.0
"""How long the browser has to collect its session cookie with a sign-in's ticket."""
SHOWN_CHARS = 64
"""How much of a typed user name (or a client's address) an audit entry keeps."""
_TICKET = re.compile(r"[A-Za-z0-9_-]{32,128}")


class Refusal(enum.Enum):
    WRONG = "unknown user or wrong password"
    LOCKED = "too many failed attempts"


@dataclass(frozen=True)
class SignedIn:
    identity: Identity
    token: str
    """What the browser keeps (a cookie); the store keeps only its digest."""
    expires_at: float
    ticket: str
    """One-time, for :data:`TICKET_S` seconds: what the browser trades for its cookie
    (:func:`redeem_ticket`) so the cookie is set by the server, HttpOnly."""


@dataclass(frozen=True)
class Refused:
    why: Refusal
    until: float | None = None
    """When a locked name or client may try again."""

    def message(self) -> str:
        if self.why is Refusal.LOCKED and self.until is not None:
            at = time.strftime("%H:%M:%S", time.localtime(self.until))
            wait = max(1, math.ceil(self.until - time.time()))
            return f"Too many failed sign-ins: try again after {at} (in {wait} s)."
        return "Unknown user or wrong password."


def shown(text: str, default: str) -> str:
    """``text`` cut to :data:`SHOWN_CHARS` for an audit entry or a message."""
    text = text.strip()
    return (text[:SHOWN_CHARS] + "…" if len(text) > SHOWN_CHARS else text) or default


def _keys(name: str, client: str) -> tuple[str, str]:
    """The back-off's keys: the name (by digest: any length, one row) and the client."""
    return "name:" + hashlib.sha256(name.encode()).hexdigest()[:32], "client:" + shown(client, "(unknown)")


def lock_s(failures: int, limit: int) -> float:
    """How long ``failures`` in a row lock a key whose limit is ``limit`` (0: not locked)."""
    if failures < limit:
        return 0.0
    return min(LOCK_MAX_S, LOCK_FIRST_S * 2.0 ** min(failures - limit, 32))


def _current(store: Store, key: str, now: float) -> Failures:
    f = store.signins.failures(key)
    if f is None or (f.last_at < now - FORGET_S and f.locked_until <= now):
        return Failures(key, 0, 0, now, now, 0.0)
    return f


def sign_in(
    store: Store, users: Users, name: str, password: str, ttl_s: float, client: str = "", now: float | None = None
) -> SignedIn | Refused:
    """Check ``name``'s password against the users file and open a session lasting ``ttl_s``
    seconds (audited), with a ticket for the browser's cookie. Refused (audited as the module
    says) for an unknown user or a wrong password, and without checking anything while the name or
    ``client`` (the browser's address, as the front end knows it) is locked."""
    given, now = now, time.time() if now is None else now
    name_key, client_key = _keys(name, client)
    with store.transaction():
        by_name, by_client = _current(store, name_key, now), _current(store, client_key, now)
        until = max(by_name.locked_until, by_client.locked_until)
        if until > now:  # refused unchecked; counted (no new row) for the next audit entry
            locked = by_name if by_name.locked_until > now else by_client
            store.signins.put(replace(locked, unaudited=locked.unaudited + 1, last_at=now))
            return Refused(Refusal.LOCKED, until)
    who = users.login(name, password)  # half a second of work, even for an unknown name
    now = time.time() if given is None else now
    if who is None:
        return _failed(store, name, client, now)
    return _open(store, who, ttl_s, client, now)


def _failed(store: Store, name: str, client: str, now: float) -> Refused:
    name_key, client_key = _keys(name, client)
    with store.transaction():
        by_name, by_client = _current(store, name_key, now), _current(store, client_key, now)
        n, c = by_name.failures + 1, by_client.failures + 1
        name_lock, client_lock = lock_s(n, NAME_LIMIT), lock_s(c, CLIENT_LIMIT)
        by_name = replace(by_name, failures=n, unaudited=by_name.unaudited + 1, last_at=now)
        by_name = replace(by_name, locked_until=now + name_lock if name_lock else 0.0)
        by_client = replace(by_client, failures=c, unaudited=0, last_at=now)
        by_client = replace(by_client, locked_until=now + client_lock if client_lock else 0.0)
        until = max(by_name.locked_until, by_client.locked_until) or None
        if n == 1 or name_lock or client_lock:
            request: dict[str, object] = {
                "source": "users file",
                "client": shown(client, "(unknown)"),
                "attempts": by_name.unaudited,
            }
            if until is not None:
                request["locked until"] = round(until, 3)
            store.audit.record(shown(name, "(no name)"), CONSOLE_WIDE, "sign-in", request, "refused")
            by_name = replace(by_name, unaudited=0)
        store.signins.put(by_name)
        store.signins.put(by_client)
        store.signins.forget_before(now - FORGET_S)
    return Refused(Refusal.LOCKED if until else Refusal.WRONG, until)


def _open(store: Store, who: Identity, ttl_s: float, client: str, now: float) -> SignedIn:
    token, ticket = secrets.token_urlsafe(32), secrets.token_urlsafe(32)
    with store.transaction():
        store.signins.clear(_keys(who.name, client)[0])
        session = store.sessions.create(token, who.name, now + ttl_s, now)
        store.signins.issue(ticket, token, now + TICKET_S, now)
        store.audit.record(
            who.name,
            CONSOLE_WIDE,
            "sign-in",
            {
                "source": "users file",
                "session": session.ref,
                "hours": round(ttl_s / 3600, 2),
                "client": shown(client, "(unknown)"),
            },
            "signed in",
        )
    return SignedIn(who, token, session.expires_at, ticket)


def redeem_ticket(store: Store, ticket: str | None, now: float | None = None) -> str | None:
    """The session token a sign-in's ticket stands for, once and within :data:`TICKET_S`
    seconds, while its session lasts; else None."""
    if not ticket or not _TICKET.fullmatch(ticket):
        return None
    now = time.time() if now is None else now
    token = store.signins.redeem(ticket, now)
    return token if token is not None and store.sessions.get(token, now) is not None else None


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


def record_streamlit_sign_in(store: Store, who: Identity, client: str = "") -> None:
    """Audit a sign-in through Streamlit's own authentication (once per browser session: the
    front end calls it when it first sees the signed-in user)."""
    store.audit.record(
        shown(who.name, "(no name)"),
        CONSOLE_WIDE,
        "sign-in",
        {"source": who.source, "roles": sorted(who.roles), "client": shown(client, "(unknown)")},
        "signed in",
    )
