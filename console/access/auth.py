"""Who may do what: roles, and the local users file (hashed passwords) used when Streamlit's own
authentication is not configured.

Roles: **viewer** reads; **operator** submits, cancels, pauses, resumes, stops, abandons, changes
throttles and sweeps leftover ones, cordons and uncordons brokers and log dirs; **operator** or
**approver** saves plans; **approver**
approves plans (with the two-person rule, a plan is submitted only after someone other than its
author approved it). Cancel needs only the operator role and never waits for an approval.

Roles are per cluster (``console.access.roles``): an :class:`Identity` the pages act with holds
its roles on one cluster (:meth:`Identity.on`) and is a viewer on every other.

The users file (``CONSOLE_USERS_FILE``, default ``<data dir>/users.json``)::

    {"users": {"ann": {"password": "scrypt$...", "roles": ["operator", "approver"]},
               "bob": {"password": "scrypt$...", "roles": {"staging": ["operator"], "*": ["viewer"]}}},
     "emails": {"ann@example.com": ["operator"]},
     "two_person_rule": false}

A list of roles holds on every cluster; a table gives them per cluster name (``*``: every other).
People signed in through the identity provider (OIDC, ``console.access.groups``) get their roles
from their groups; ``emails`` gives roles to some of them by e-mail on every cluster. Without a
users file and without a sign-in, everyone is a viewer.

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
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from console.access.roles import ClusterRoles, parse_cluster_roles
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
}
NEEDS_ONE_OF = {"save plans": (OPERATOR, APPROVER)}
"""Actions any one of several roles allows."""
OPEN_TO_ALL = frozenset({"note", "rebase"})
"""Actions that change the store and that every reader may do (a review note; a saved plan
brought up to date, as a new version)."""
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
    """"users file", "oidc" (the identity provider), "proxy" (a trusted reverse proxy), "command line",
    "not signed in", or "nobody configured users"."""
    clusters: frozenset[str] | None = None
    """The cluster ``roles`` hold on, by all its names (its name in the settings, its Kafka cluster
    id); None: on every cluster. On any other cluster this identity is only a viewer."""

    @classmethod
    def cli(cls, name: str) -> Identity:
        """Who acts from the command line: every role, as before roles existed there (what the
        command may do on the cluster is for the cluster's ACLs, ``--command-config``, to say)."""
        return cls(name, frozenset(ROLES), CLI_USER)

    def on(self, roles: frozenset[str], *cluster: str) -> Identity:
        """This person with ``roles`` on the cluster known by the names ``cluster``, a viewer on
        every other."""
        return Identity(self.name, roles, self.source, frozenset(cluster))

    def roles_on(self, cluster: str | None = None) -> frozenset[str]:
        """The roles on ``cluster`` (a name or id; None: the cluster this identity is for)."""
        if cluster is None or self.clusters is None or cluster in self.clusters:
            return self.roles
        return frozenset({VIEWER})

    def can(self, action: str, cluster: str | None = None) -> bool:
        roles = self.roles_on(cluster)
        if action in NEEDS_ONE_OF:
            return not roles.isdisjoint(NEEDS_ONE_OF[action])
        need = NEEDS.get(action)
        return need is None or need in roles

    def why_not(self, action: str, cluster: str | None = None) -> str:
        need = " or ".join(NEEDS_ONE_OF.get(action, ())) or NEEDS.get(action, VIEWER)
        on = f" on {cluster}" if cluster is not None and self.clusters is not None else ""
        return (
            f"{self.name} may not {action}{on}: it needs the {need} role "
            f"(roles{on}: {', '.join(sorted(self.roles_on(cluster))) or 'none'})."
        )


@dataclass(frozen=True)
class Users:
    passwords: dict[str, str] = field(default_factory=dict)
    roles: dict[str, frozenset[str]] = field(default_factory=dict)
    emails: dict[str, frozenset[str]] = field(default_factory=dict)
    two_person_rule: bool = False
    cluster_roles: dict[str, ClusterRoles] = field(default_factory=dict)
    """The users whose ``roles`` name clusters: their roles per cluster (``roles`` holds their
    roles on every cluster not named)."""

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

    def roles_on(self, name: str, *cluster: str) -> frozenset[str]:
        """``name``'s roles on the cluster known by the names ``cluster``."""
        if name in self.cluster_roles:
            return self.cluster_roles[name].on(*cluster) or frozenset({VIEWER})
        return self.roles.get(name, frozenset({VIEWER}))


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
        given = {
            n: parse_cluster_roles(u.get("roles", [VIEWER]), f"The users file {path}: {n}", ROLES)
            for n, u in users.items()
        }
        return Users(
            {n: str(u["password"]) for n, u in users.items()},
            {n: r.everywhere or frozenset({VIEWER}) for n, r in given.items()},
            {e: frozenset(r) for e, r in raw.get("emails", {}).items()},
            bool(raw.get("two_person_rule", False)),
            {n: r for n, r in given.items() if r.per_cluster},
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


def approval_problem(author: str, approvals: Sequence[Approved], plan_hash: str) -> str | None:
    """Why the two-person rule does not let this plan be submitted yet, or None."""
    others = [a for a in approvals if a.plan_hash == plan_hash and a.approver != author]
    if others:
        return None
    if any(a.plan_hash == plan_hash for a in approvals):
        return f"The plan was approved only by its author ({author}); someone else must approve it."
    if approvals:
        return "The plan changed since it was approved; it needs a new approval."
    return f"The plan needs an approval by someone other than its author ({author})."
