"""The SQLite back end: the default store, one file (``console.db`` in the data dir,
:func:`console.core.paths.store_file`), in WAL mode, so the Streamlit server, the CLI and a
standalone executor on one host can share it. Writes are short ``BEGIN IMMEDIATE`` transactions;
``synchronous=FULL`` makes an intent durable before the side effect it announces. Every
``sqlite3.Error`` becomes a :class:`console.core.errors.StoreError` here.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from console.core.errors import StoreError
from console.storage.db import Database, Row, split_statements


class SqliteDatabase(Database):
    """Thread-safe handle on the SQLite file (one connection per thread)."""

    dialect = "sqlite"

    def __init__(self, path: Path | str) -> None:
        super().__init__()
        self.path = Path(path)
        self.where = str(self.path)
        try:
            self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            _private(self.path)
        except OSError as e:
            raise StoreError(
                f"Cannot create the console's data dir {self.path.parent}: {e.strerror or e}.",
                "Check that the data dir is writable (CONSOLE_DATA_DIR).",
            ) from None

    def _connection(self) -> sqlite3.Connection:
        db: sqlite3.Connection | None = getattr(self._local, "db", None)
        if db is None:
            with self._translated("open"):
                db = sqlite3.connect(self.path, timeout=30, isolation_level=None)
                db.execute("PRAGMA journal_mode=WAL")
                db.execute("PRAGMA synchronous=FULL")  # intent is durable before the side effect
                db.execute("PRAGMA foreign_keys=ON")
            self._local.db = db
            self._local.depth = 0
        return db

    @contextmanager
    def _translated(self, what: str) -> Iterator[None]:
        try:
            yield
        except sqlite3.Error as e:
            hint = "Check that the data dir is writable (CONSOLE_DATA_DIR) and the disk is not full."
            raise self._failed(what, e, hint) from None

    def _begin(self) -> None:
        db = self._connection()
        with self._translated("write"):
            db.execute("BEGIN IMMEDIATE")

    def _end(self, commit: bool) -> None:
        with self._translated("write"):
            self._connection().execute("COMMIT" if commit else "ROLLBACK")

    def execute(self, sql: str, args: Sequence[Any] = ()) -> int:
        with self._translated("write"):
            cur = self._connection().execute(sql, args)
            return int(cur.lastrowid or 0)

    def changes(self, sql: str, args: Sequence[Any] = ()) -> int:
        with self._translated("write"):
            return int(self._connection().execute(sql, args).rowcount)

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        with self._translated("write"):
            self._connection().executemany(sql, rows)

    def query(self, sql: str, args: Sequence[Any] = ()) -> list[Row]:
        with self._translated("read"):
            return list(self._connection().execute(sql, args).fetchall())

    def one(self, sql: str, args: Sequence[Any] = ()) -> Row | None:
        with self._translated("read"):
            row: Row | None = self._connection().execute(sql, args).fetchone()
            return row

    def ddl(self, script: str) -> None:
        for statement in split_statements(script):
            self.execute(statement)

    def has_table(self, name: str) -> bool:
        return self.one("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,)) is not None

    def tables(self) -> list[str]:
        rows = self.query(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name"
        )
        return [str(r[0]) for r in rows]

    def columns(self, table: str) -> list[str]:
        return [str(r[1]) for r in self.query(f"PRAGMA table_info({table})")]

    def ids_follow(self, table: str) -> None:
        """SQLite does so by itself (``AUTOINCREMENT`` keeps the largest id given)."""

    def close(self) -> None:
        db = getattr(self._local, "db", None)
        if db is not None:
            db.close()
            self._local.db = None


def _private(path: Path) -> None:
    """Create the store's file 0600 when it is new (SQLite gives its -wal and -shm files the same
    mode), and take group and others' access away from an older one (and its -wal and -shm)."""
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    except FileExistsError:
        for p in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
            try:
                if os.stat(p).st_mode & 0o077:
                    os.chmod(p, 0o600)
            except (FileNotFoundError, PermissionError):
                pass
