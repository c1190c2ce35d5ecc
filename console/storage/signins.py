"""What guards sign-in against the users file: failed attempts per user name and per client (the
back-off, :mod:`console.services.sessions` decides it), and one-time tickets that hand a new
session's token to the browser's cookie.

Both live in the store, so every server sharing it sees the same back-off and any of them
redeems a ticket. A ticket holds the session token sealed with a key derived from the ticket
itself, which the store never keeps (only its digest): a copy of the store signs nobody in.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from console.storage.db import StorePart

SCHEMA = """
CREATE TABLE IF NOT EXISTS sign_in_failures (
    key          TEXT PRIMARY KEY,
    failures     INTEGER NOT NULL,
    unaudited    INTEGER NOT NULL,
    first_at     REAL NOT NULL,
    last_at      REAL NOT NULL,
    locked_until REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS sign_in_tickets (
    ticket_hash TEXT PRIMARY KEY,
    sealed      TEXT NOT NULL,
    expires_at  REAL NOT NULL
);
"""
"""Created by every open (``IF NOT EXISTS``): a store made before these tables gets them."""


@dataclass(frozen=True)
class Failures:
    """Failed sign-ins of one key (``name:<user>`` or ``client:<address>``) since its last success."""

    key: str
    failures: int
    """Attempts whose password was checked and wrong."""
    unaudited: int
    """Attempts (failed, or refused while locked) not yet counted in an audit entry."""
    first_at: float
    last_at: float
    locked_until: float
    """No password of this key is checked before then (0: not locked)."""


def _seal(token: str, ticket: str) -> str:
    data = token.encode()
    pad = hashlib.sha512(b"console sign-in ticket\0" + ticket.encode()).digest()
    if len(data) > len(pad):
        raise ValueError("a session token is at most 64 bytes")
    return bytes(a ^ b for a, b in zip(data, pad, strict=False)).hex()


def _unseal(sealed: str, ticket: str) -> str:
    data = bytes.fromhex(sealed)
    pad = hashlib.sha512(b"console sign-in ticket\0" + ticket.encode()).digest()
    return bytes(a ^ b for a, b in zip(data, pad, strict=False)).decode("ascii", "replace")


class SignInStore(StorePart):
    # -- failures ------------------------------------------------------------------------------
    def failures(self, key: str) -> Failures | None:
        row = self.db.one(
            "SELECT key, failures, unaudited, first_at, last_at, locked_until FROM sign_in_failures WHERE key = ?",
            (key,),
        )
        return None if row is None else Failures(str(row[0]), int(row[1]), int(row[2]), *map(float, row[3:]))

    def put(self, f: Failures) -> None:
        self.db.execute(
            "INSERT INTO sign_in_failures (key, failures, unaudited, first_at, last_at, locked_until) "
            "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(key) DO UPDATE SET failures = excluded.failures, "
            "unaudited = excluded.unaudited, first_at = excluded.first_at, last_at = excluded.last_at, "
            "locked_until = excluded.locked_until",
            (f.key, f.failures, f.unaudited, f.first_at, f.last_at, f.locked_until),
        )

    def clear(self, key: str) -> None:
        self.db.execute("DELETE FROM sign_in_failures WHERE key = ?", (key,))

    def forget_before(self, at: float) -> None:
        """Drop the records of keys quiet since before ``at`` and no longer locked."""
        self.db.execute("DELETE FROM sign_in_failures WHERE last_at < ? AND locked_until < ?", (at, at))

    # -- tickets -------------------------------------------------------------------------------
    def issue(self, ticket: str, token: str, expires_at: float, now: float) -> None:
        """Record a one-time ticket for ``token`` until ``expires_at`` (expired ones purged)."""
        with self.db.transaction() as db:
            db.execute("DELETE FROM sign_in_tickets WHERE expires_at <= ?", (now,))
            db.execute(
                "INSERT INTO sign_in_tickets (ticket_hash, sealed, expires_at) VALUES (?, ?, ?)",
                (hashlib.sha256(ticket.encode()).hexdigest(), _seal(token, ticket), expires_at),
            )

    def redeem(self, ticket: str, now: float) -> str | None:
        """The token ``ticket`` was issued for, once: the ticket is gone after (None when it is
        unknown, used or expired)."""
        digest = hashlib.sha256(ticket.encode()).hexdigest()
        with self.db.transaction() as db:
            row = db.one("SELECT sealed, expires_at FROM sign_in_tickets WHERE ticket_hash = ?", (digest,))
            if row is None:
                return None
            db.execute("DELETE FROM sign_in_tickets WHERE ticket_hash = ?", (digest,))
        return _unseal(str(row[0]), ticket) if float(row[1]) > now else None
