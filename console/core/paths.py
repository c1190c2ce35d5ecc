"""Where the console keeps its files: one data dir for the store, the users file and the sandbox."""

from __future__ import annotations

import os
from pathlib import Path


def console_data_dir() -> Path:
    """``$CONSOLE_DATA_DIR``, else ``$XDG_DATA_HOME/reassignment-console`` (``~/.local/share/...``)."""
    base = os.environ.get("CONSOLE_DATA_DIR") or os.path.join(
        os.environ.get("XDG_DATA_HOME") or os.path.expanduser("~/.local/share"), "reassignment-console"
    )
    return Path(base)


def store_file() -> Path:
    return console_data_dir() / "console.db"


def store_url() -> str:
    """Where the store is: ``$CONSOLE_STORE_URL`` (a path, ``sqlite:///path`` or
    ``postgresql://user@host/database``), else the SQLite file :func:`store_file`."""
    return os.environ.get("CONSOLE_STORE_URL", "").strip() or str(store_file())


def users_file() -> Path:
    """``$CONSOLE_USERS_FILE``, else ``<data dir>/users.json``."""
    return Path(os.environ.get("CONSOLE_USERS_FILE") or console_data_dir() / "users.json")


def history_dir() -> Path:
    """Where the pipeline's snapshots and tables go: ``$CONSOLE_HISTORY_DIR``, else ``<data dir>/history``."""
    return Path(os.environ.get("CONSOLE_HISTORY_DIR") or console_data_dir() / "history")
