"""The store's back end, chosen from where the store is (:func:`console.core.paths.store_url`)."""

from __future__ import annotations

from pathlib import Path

from console.core.errors import StoreError
from console.storage.db import Database


def open_database(location: str | Path) -> Database:
    """The back end for ``location``: a path or ``sqlite:///path`` (SQLite), ``postgresql://…``
    (PostgreSQL). Anything else is refused with a :class:`StoreError` naming the forms."""
    text = str(location)
    if text.startswith(("postgresql://", "postgres://")):
        from console.storage.postgres import PostgresDatabase

        return PostgresDatabase(text)
    from console.storage.sqlite import SqliteDatabase

    if text.startswith("sqlite://"):
        path = text[len("sqlite://") :]
        if not path.startswith("/") or path == "/":
            raise StoreError(
                f"The store URL {text!r} names no file.",
                "Write sqlite:/// followed by the file's absolute path (sqlite:///var/lib/console/console.db).",
            )
        return SqliteDatabase(Path(path))
    if "://" in text:
        raise StoreError(
            f"The store URL {text.split('://')[0]}://… is not one the console knows.",
            "Set CONSOLE_STORE_URL to a file path, sqlite:///path or postgresql://user@host/database.",
        )
    return SqliteDatabase(Path(text))
