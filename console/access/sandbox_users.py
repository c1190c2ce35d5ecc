"""The sandbox's console users (admin, operator, approver, viewer with their published,
sandbox-only passwords): in the sandbox's own users file, never the console's real one.

`sandbox up` writes ``<sandbox data dir>/console-users.json`` when it is missing; `make demo`
(scripts/demo.sh) points the console at it with ``CONSOLE_USERS_FILE`` unless that is set
already. A console started otherwise does not read it.
"""

from __future__ import annotations

from pathlib import Path

from console.access.auth import SANDBOX_USERS, write_users

FILE = "console-users.json"


def sandbox_users_file(data_dir: Path) -> Path:
    return data_dir / FILE


def ensure_sandbox_users(data_dir: Path) -> Path:
    """The sandbox's users file in ``data_dir``, written (0600) when missing."""
    path = sandbox_users_file(data_dir)
    if not path.exists():
        write_users(path, {n: (pw, list(roles)) for n, (pw, roles) in SANDBOX_USERS.items()})
    return path


def published_passwords_in(path: Path) -> list[str]:
    """The users of the users file at ``path`` whose password is still the sandbox's published one
    (an older `sandbox up` wrote them into the console's real users file)."""
    from console.access.auth import check_password, load_users
    from console.core.errors import ConfigError

    try:
        users = load_users(path)
    except ConfigError:
        return []
    if users is None:
        return []
    return [
        n for n, (pw, _) in SANDBOX_USERS.items() if n in users.passwords and check_password(pw, users.passwords[n])
    ]
