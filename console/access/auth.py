"""Who may do what: roles, and the local users file (hashed passwords) used when Streamlit's own
authentication is not configured.

Roles: **viewer** reads; **operator** submits, cancels, pauses, resumes, stops, abandons, changes
throttles and sweeps leftover ones, cordons and uncordons brokers and log dirs; **operator** or
**approver** saves plans, brings saved plans up to date and adds review notes; **approver**
approves plans (with the two-person rule, a plan is submitted only after someone who authored no
version of it approved that content on that cluster). Cancel needs only the operator role and never waits for an approval.

The users file (``CONSOLE_USERS_FILE``, default ``<data dir>/users.json``)::

    {"users": {"ann": {"password": "scrypt$...", "roles": ["operator", "approver"]}},
     "emails": {"ann@example.com": ["operator"]},
     "two_person_rule": false}

``emails`` gives roles to people signed in through Streamlit's authentication. Without a users
file and without Streamlit authentication, everyone is a viewer.

A sign-in against the users file opens a server-side session
(:func:`console.services.sessions.sign_in`, lasting :func:`session_ttl_s`); each use takes the
user's roles from the file as it is then (:meth:`Users.identity_of`).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from console.core.errors import ConfigError
from console.core.paths import users_file

VIEWER, OPERATOR, APPROVER = "viewer", "operator", "approver"
ROLES = (VIEWER, OPERATOR, APPROVER)
NEEDS = {
    "submit": OPERATOR,
    "cancel": OPERATOR,
    "abandon": OPERATOR,
    "throttle": OPERATOR,
    "sweep": OPERATOR,
    "cordon": OPERATOR,
    "uncordon": OPERATOR,
    "decommission": OPERATOR,
    "unregister": OPERATOR,
    "pause": OPERATOR,
    "resume": OPERATOR,
    "stop": OPERATOR,
    "approve": APPROVER,
    "update the history": OPERATOR,
}
"""The role each action needs (``update the history``: run the history job on the server now)."""
NEEDS_ONE_OF = {
    "save plans": (OPERATOR, APPROVER),
    "rebase": (OPERATOR, APPROVER),
    "add notes": (OPERATOR, APPROVER),
}
"""Actions any one of several roles allows: saving a plan, bringing one up to date (it saves a
new plan) and adding a review note are for the people who take part in a review."""
OPEN_TO_ALL: frozenset[str] = frozenset()
"""Actions that change the store and that every reader may do: none (the console is read only
for a viewer and without signing in)."""
CLI_USER = "command line"
"""The source of the command line's identity: it has every role (the cluster's ACLs decide)."""
SESSION_HOURS = 12.0
"""How long a sign-in against the users file lasts by default (``CONSOLE_SESSION_HOURS``)."""
SANDBOX_USERS = {
    "admin": ("admin-secret", [OPERATOR, APPROVER]),
    "operator": ("operator-secret", [OPERATOR]),
    "approver": ("approver-secret", [APPROVER]),
    "viewer": ("viewer-secret", [VIEWER]),
}
"""The sandbox's console users (fixed, sandbox-only passwords, like its SASL users)."""
_N, _R, _P = 2**14, 8, 1


def hash_password(password: str, salt: bytes | None = None) -> str:
    salt = salt if salt is not None else secrets.token_bytes(16)
    digest = hashlib.scrypt(password.encode(), salt=salt, n=_N, r=_R, p=_P)
    return f"scrypt${_N}${_R}${_P}${salt.hex()}${digest.hex()}"


def check_password(password: str, stored: str) -> bool:
    try:
        kind, n, r, p, salt, digest = stored.split("$")
        if kind != "scrypt":
            return False
        got = hashlib.scrypt(password.encode(), salt=bytes.fromhex(salt), n=int(n), r=int(r), p=int(p))
    except (ValueError, TypeError):
        return False
    return hmac.compare_digest(got.hex(), digest)


@dataclass(frozen=True)
class Identity:
    name: str
    roles: frozenset[str] = frozenset({VIEWER})
    source: str = "local"
    """"streamlit", "users file", or "nobody configured users"."""

    @classmethod
    def cli(cls, name: str) -> Identity:
        """Who acts from the command line: every role, as before roles existed there (what the
        command may do on the cluster is for the cluster's ACLs, ``--command-config``, to say)."""
        return cls(name, frozenset(ROLES), CLI_USER)

    def can(self, action: str) -> bool:
        if action in NEEDS_ONE_OF:
            return not self.roles.isdisjoint(NEEDS_ONE_OF[action])
        need = NEEDS.get(action)
        return need is None or need in self.roles

    def why_not(self, action: str) -> str:
        need = " or ".join(NEEDS_ONE_OF.get(action, ())) or NEEDS.get(action, VIEWER)
        return (
            f"{self.name} may not {action}: it needs the {need} role "
            f"(roles: {', '.join(sorted(self.roles)) or 'none'})."
        )


@dataclass(frozen=True)
class Users:
    passwords: dict[str, str] = field(default_factory=dict)
    roles: dict[str, frozenset[str]] = field(default_factory=dict)
    emails: dict[str, frozenset[str]] = field(default_factory=dict)
    two_person_rule: bool = False

    def login(self, name: str, password: str) -> Identity | None:
        stored = self.passwords.get(name)
        if stored is None or not check_password(password, stored):
            return None
        return Identity(name, self.roles.get(name, frozenset({VIEWER})), "users file")

    def identity_of(self, name: str) -> Identity | None:
        """``name`` as the users file has it now (for a session opened earlier), or None when
        the user is no longer in the file."""
        if name not in self.passwords:
            return None
        return Identity(name, self.roles.get(name, frozenset({VIEWER})), "users file")

    def signed_in(self, email: str) -> Identity:
        return Identity(email, self.emails.get(email, frozenset({VIEWER})), "streamlit")


def session_ttl_s() -> float:
    """How long a sign-in lasts: ``$CONSOLE_SESSION_HOURS`` (default 12) hours."""
    raw = os.environ.get("CONSOLE_SESSION_HOURS", "").strip()
    try:
        hours = float(raw) if raw else SESSION_HOURS
    except ValueError:
        hours = -1.0
    if not 0 < hours <= 24 * 366:
        raise ConfigError(
            f"CONSOLE_SESSION_HOURS is {raw!r}, not a number of hours.", "For example 12 (the default) or 0.5."
        )
    return hours * 3600


def load_users(path: Path | None = None) -> Users | None:
    """The users file, or None when there is none."""
    path = path or users_file()
    try:
        raw = json.loads(path.read_text())
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as e:
        raise ConfigError(
            f"Cannot read the users file {path}: {e}.",
            'It is JSON: {"users": {"name": {"password": "scrypt$...", "roles": ["operator"]}}}.',
        ) from None
    try:
        users = raw.get("users", {})
        for name, u in users.items():
            bad = set(u.get("roles", [])) - set(ROLES)
            if bad:
                raise ConfigError(
                    f"The users file {path} gives {name} unknown roles {sorted(bad)}.", f"Roles are {', '.join(ROLES)}."
                )
        return Users(
            {n: str(u["password"]) for n, u in users.items()},
            {n: frozenset(u.get("roles", [VIEWER])) for n, u in users.items()},
            {e: frozenset(r) for e, r in raw.get("emails", {}).items()},
            bool(raw.get("two_person_rule", False)),
        )
    except (AttributeError, KeyError, TypeError) as e:
        raise ConfigError(
            f"The users file {path} is not in the expected shape ({e}).",
            'Expected {"users": {"name": {"password": "scrypt$...", "roles": [...]}}}.',
        ) from None


def write_users(path: Path, users: dict[str, tuple[str, list[str]]], two_person_rule: bool = False) -> None:
    """Write a users file from clear-text passwords (hashed here)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    body = {
        "users": {n: {"password": hash_password(pw), "roles": roles} for n, (pw, roles) in users.items()},
        "emails": {},
        "two_person_rule": two_person_rule,
    }
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(body, indent=2))
    os.chmod(tmp, 0o600)
    tmp.replace(path)


class Approved(Protocol):
    @property
    def approver(self) -> str: ...

    @property
    def plan_hash(self) -> str: ...

    @property
    def cluster(self) -> str: ...


def approval_problem(
    authors: Collection[str], approvals: Sequence[Approved], plan_hash: str, cluster: str
) -> str | None:
    """Why the two-person rule does not let this plan be submitted on ``cluster`` yet, or None: it
    needs an approval of this content (``plan_hash``), given on this cluster, by someone who
    authored no version of it (``authors``: every author of the plan and of the plans it was
    brought up to date from)."""
    who = ", ".join(sorted(authors)) or "nobody"
    valid = [a for a in approvals if a.plan_hash == plan_hash and a.cluster == cluster]
    if any(a.approver not in authors for a in valid):
        return None
    if valid:
        return f"The plan was approved only by its authors ({who}); someone who authored no version must approve it."
    if any(a.plan_hash == plan_hash for a in approvals):
        return f"The plan was approved on another cluster, not on {cluster}; it needs an approval on this one."
    if approvals:
        return "The plan changed since it was approved; it needs a new approval."
    return f"The plan needs an approval by someone who authored no version of it (authors: {who})."
