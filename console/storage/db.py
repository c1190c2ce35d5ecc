"""The one SQLite module: connections, transactions and error translation for every store.

One file, ``console.db`` in the data dir (:func:`console.core.paths.store_file`), in WAL mode, so
the Streamlit server, the CLI and a standalone executor can share it. Writes are short
``BEGIN IMMEDIATE`` transactions; :meth:`Database.transaction` is re-entrant on a thread, so an
operation can put a state change and its audit entry in one transaction. ``synchronous=FULL``
makes an intent durable before the side effect it announces. Every ``sqlite3.Error`` becomes a
:class:`console.core.errors.StoreError` here and nowhere else.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from console.core.errors import StoreError

Row = tuple[Any, ...]


class Database:
    """Thread-safe handle on the SQLite file (one connection per thread)."""

    def __init__(self, path: Path | str, schemas: Iterable[str]) -> None:
        self.path = Path(path)
        self._local = threading.local()
        try:
            self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            _private(self.path)
        except OSError as e:
            raise StoreError(
                f"Cannot create the console's data dir {self.path.parent}: {e.strerror or e}.",
                "Check that the data dir is writable (CONSOLE_DATA_DIR).",
            ) from None
        for schema in schemas:
            with self._translated("open"):
                self._connection().executescript(schema)  # runs in its own transaction

    def _connection(self) -> sqlite3.Connection:
        db: sqlite3.Connection | None = getattr(self._local, "db", None)
        if db is None:
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
            raise StoreError(
                f"Cannot {what} the console's store at {self.path}: {e}.",
                "Nothing was sent. Check that the data dir is writable (CONSOLE_DATA_DIR) and the disk is not full.",
            ) from None

    @contextmanager
    def transaction(self) -> Iterator[Database]:
        """``BEGIN IMMEDIATE`` … ``COMMIT`` (``ROLLBACK`` on any error). Nested calls on the same
        thread join the outer transaction, so what they write commits, or not, together."""
        db = self._connection()
        if self._local.depth:
            self._local.depth += 1
            try:
                yield self
            finally:
                self._local.depth -= 1
            return
        with self._translated("write"):
            db.execute("BEGIN IMMEDIATE")
        self._local.depth = 1
        try:
            yield self
        except BaseException:
            self._local.depth = 0
            with self._translated("write"):
                db.execute("ROLLBACK")
            raise
        self._local.depth = 0
        with self._translated("write"):
            db.execute("COMMIT")

    def execute(self, sql: str, args: Sequence[Any] = ()) -> int:
        """Run one statement; returns the last inserted row id (0 when none)."""
        with self._translated("write"):
            cur = self._connection().execute(sql, args)
            return int(cur.lastrowid or 0)

    def changes(self, sql: str, args: Sequence[Any] = ()) -> int:
        """Run one statement; returns how many rows it changed."""
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


def in_clause(values: Iterable[str]) -> str:
    """``('a','b')`` for an SQL ``IN`` over fixed, known strings (enum values, never user input)."""
    return "(" + ",".join("'" + v.replace("'", "''") + "'" for v in values) + ")"
