"""Sign-in sessions (users file): an opaque random token per browser, kept here as its SHA-256.

The browser holds only the token (a cookie); this table says whose it is and until when. A token
that is unknown, tampered with, expired or signed out names no row and signs nobody in. Deleting
the row (sign-out) ends the session in every tab that shares the cookie. The token itself is
never stored, so a copy of the store does not let anyone sign in.
"""

from __future__ import annotations

import hashlib
import re
import time
from dataclasses import dataclass

from console.storage.db import StorePart

SCHEMA = """
CREATE TABLE IF NOT EXISTS sessions (
    token_hash TEXT PRIMARY KEY,
    user       TEXT NOT NULL,
    created_at REAL NOT NULL,
    expires_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS sessions_expiry ON sessions (expires_at);
"""

_TOKEN = re.compile(r"[A-Za-z0-9_-]{32,128}")
"""What :func:`secrets.token_urlsafe` gives; anything else is not looked up."""


def token_digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def _ref(digest: str) -> str:
    """A short name for a session that is safe to show and to audit (never the token)."""
    return digest[:12]


@dataclass(frozen=True)
class Session:
    user: str
    created_at: float
    expires_at: float
    ref: str
    """The start of its token's digest (:func:`_ref`): safe to show and to audit."""


class SessionStore(StorePart):
    def create(self, token: str, user: str, expires_at: float, now: float | None = None) -> Session:
        """Record a new session for ``token`` (expired sessions are purged on the way)."""
        if not _TOKEN.fullmatch(token):
            raise ValueError("a session token is 32 to 128 URL-safe characters")
        now = time.time() if now is None else now
        digest = token_digest(token)
        with self.db.transaction() as db:
            db.execute("DELETE FROM sessions WHERE expires_at <= ?", (now,))
            db.execute(
                "INSERT INTO sessions (token_hash, user, created_at, expires_at) VALUES (?, ?, ?, ?)",
                (digest, user, now, expires_at),
            )
        return Session(user, now, expires_at, _ref(digest))

    def get(self, token: str | None, now: float | None = None) -> Session | None:
        """The live session of ``token``, or None (unknown, malformed, expired or ended)."""
        if not token or not _TOKEN.fullmatch(token):
            return None
        now = time.time() if now is None else now
        digest = token_digest(token)
        row = self.db.one(
            "SELECT user, created_at, expires_at FROM sessions WHERE token_hash = ? AND expires_at > ?", (digest, now)
        )
        return None if row is None else Session(str(row[0]), float(row[1]), float(row[2]), _ref(digest))

    def delete(self, token: str | None) -> Session | None:
        """End the session of ``token``; returns what it was (None when there was none)."""
        if not token or not _TOKEN.fullmatch(token):
            return None
        digest = token_digest(token)
        with self.db.transaction() as db:
            row = db.one("SELECT user, created_at, expires_at FROM sessions WHERE token_hash = ?", (digest,))
            if row is None:
                return None
            db.execute("DELETE FROM sessions WHERE token_hash = ?", (digest,))
        return Session(str(row[0]), float(row[1]), float(row[2]), _ref(digest))

    def count(self, user: str | None = None, now: float | None = None) -> int:
        """Live sessions (of one user, or all)."""
        now = time.time() if now is None else now
        sql = "SELECT COUNT(*) FROM sessions WHERE expires_at > ?" + (" AND user = ?" if user is not None else "")
        row = self.db.one(sql, (now, user) if user is not None else (now,))
        return int(row[0]) if row else 0
