"""Who may do what: roles, and the local users file (hashed passwords) used when Streamlit's own
authentication is not configured.

Roles: **viewer** reads; **operator** submits, cancels, pauses, resumes, stops, abandons, changes
throttles and sweeps leftover ones, cordons and uncordons brokers and log dirs; **operator** or
**approver** saves plans, brings saved plans up to date and adds review notes; **approver**
approves plans (with the two-person rule, a plan is submitted only after someone who authored no
version of it approved that content on that cluster). Cancel needs only the operator role and never waits for an approval.

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

import functools
import hashlib
import hmac
import json
import os
import secrets
import stat
import threading
from collections.abc import Collection, Mapping, Sequence
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
_N, _R, _P = 2**17, 8, 1
"""scrypt's cost: OWASP's minimum (N = 2^17, r = 8, p = 1: 128 MiB and about half a second a hash)."""
_MAX_NR = 2**21
"""The most memory a stored hash may ask of a check (N × r; 2^21 is 256 MiB): a file with
absurd parameters costs the server a bounded amount."""
_HASHING = threading.BoundedSemaphore(2)
"""At most two password checks at once (each holds 128 MiB for half a second): a flood of
sign-ins waits here instead of taking the server's memory."""


def _scrypt(password: str, salt: bytes, n: int, r: int, p: int) -> bytes:
    if n < 2 or n & (n - 1) or not 1 <= r <= 64 or not 1 <= p <= 16 or n * r > _MAX_NR:
        raise ValueError("scrypt parameters out of range")
    with _HASHING:
        return hashlib.scrypt(password.encode(), salt=salt, n=n, r=r, p=p, maxmem=129 * n * r * p + (1 << 24))


def hash_password(password: str, salt: bytes | None = None) -> str:
    salt = salt if salt is not None else secrets.token_bytes(16)
    digest = _scrypt(password, salt, _N, _R, _P)
    return f"scrypt${_N}${_R}${_P}${salt.hex()}${digest.hex()}"


@functools.cache
def _dummy_hash() -> str:
    """What an unknown name's password is checked against (the same work as a known name's)."""
    return hash_password(secrets.token_urlsafe(16))


def check_password(password: str, stored: str) -> bool:
    """Whether ``password`` is the one ``stored`` hashes (constant-time comparison). A stored
    value that is not a usable scrypt hash costs the same work as one that is, and is False."""
    try:
        kind, n, r, p, salt, digest = stored.split("$")
        if kind != "scrypt":
            raise ValueError(kind)
        got = _scrypt(password, bytes.fromhex(salt), int(n), int(r), int(p))
        want = bytes.fromhex(digest)
    except (ValueError, TypeError):
        check_password(password, _dummy_hash())
        return False
    return hmac.compare_digest(got, want)


def needs_rehash(stored: str) -> bool:
    """Whether ``stored`` was hashed with less than today's cost (it is upgraded at the next
    successful sign-in, :func:`upgrade_password`)."""
    try:
        _, n, r, *_ = stored.split("$")
        return int(n) < _N or int(r) < _R
    except ValueError:
        return True


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

    path: Path | None = None
    """The file these users were read from (a password hash is upgraded there)."""

    def login(self, name: str, password: str) -> Identity | None:
        """``name`` when ``password`` is theirs, else None. An unknown name costs the same work
        as a known one (its password is checked against a dummy hash). A hash made with less than
        today's cost is upgraded in the users file on the way."""
        stored = self.passwords.get(name)
        matches = check_password(password, _dummy_hash() if stored is None else stored)
        if stored is None or not matches:
            return None
        if needs_rehash(stored) and self.path is not None:
            upgrade_password(self.path, name, stored, password)
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
    """The users file, or None when there is none. A file that others than its owner may read
    is refused (it holds password hashes)."""
    path = path or users_file()
    try:
        mode = path.stat().st_mode
        if mode & 0o077:
            raise ConfigError(
                f"The users file {path} may be read by others than its owner (mode {stat.S_IMODE(mode):04o}); "
                "it is not used.",
                f"It holds password hashes: `chmod 600 {path}` (the console writes it 0600).",
            )
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
            path,
        )
    except (AttributeError, KeyError, TypeError) as e:
        raise ConfigError(
            f"The users file {path} is not in the expected shape ({e}).",
            'Expected {"users": {"name": {"password": "scrypt$...", "roles": [...]}}}.',
        ) from None


def write_users(path: Path, users: dict[str, tuple[str, list[str]]], two_person_rule: bool = False) -> None:
    """Write a users file from clear-text passwords (hashed here)."""
    write_users_file(
        path,
        {
            "users": {n: {"password": hash_password(pw), "roles": roles} for n, (pw, roles) in users.items()},
            "emails": {},
            "two_person_rule": two_person_rule,
        },
    )


def write_users_file(path: Path, body: Mapping[str, object]) -> None:
    """Replace the users file with ``body`` atomically: a new file created 0600 (never readable by
    others, not even for a moment), written, flushed, then renamed over the old one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(6)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "w") as out:
            out.write(json.dumps(body, indent=2))
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def upgrade_password(path: Path, name: str, old: str, password: str) -> bool:
    """Rehash ``name``'s password at today's cost in the users file, everything else kept as it
    is; False (nothing written) when the file no longer has ``old`` for ``name`` or cannot be
    rewritten (the sign-in stands; the next one tries again)."""
    try:
        raw = json.loads(path.read_text())
        entry = raw["users"][name]
        if entry.get("password") != old:
            return False
        entry["password"] = hash_password(password)
        write_users_file(path, raw)
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return False
    return True


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
