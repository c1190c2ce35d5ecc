"""The store's one database interface, over SQLite (the default) or PostgreSQL (a team's shared store).

:class:`Database` is what every store module writes through: per-thread connections,
:meth:`Database.transaction` (re-entrant on a thread, so an operation puts a state change and its
audit entry in one transaction; writers are serialised, as SQLite's ``BEGIN IMMEDIATE`` does), and
``execute`` / ``changes`` / ``executemany`` / ``query`` / ``one``. SQL is written once, with ``?``
placeholders; the PostgreSQL back end (:mod:`console.storage.postgres`) translates it.
:func:`console.storage.backends.open_database` chooses the back end from the store's location (:func:`console.core.paths.store_url`):
a path or ``sqlite:///…`` is a SQLite file (:mod:`console.storage.sqlite`), ``postgresql://…`` a
PostgreSQL database. Every library error becomes a :class:`console.core.errors.StoreError` in the
back end's module and nowhere else.
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from console.core.errors import StoreError

Row = tuple[Any, ...]


class Database(ABC):
    """Thread-safe handle on the store (one connection per thread)."""

    dialect: str
    """``"sqlite"`` or ``"postgresql"``."""
    where: str
    """The store as shown to people (a path, or a URL without its password)."""

    def __init__(self) -> None:
        self._local = threading.local()

    def _failed(self, what: str, why: object, hint: str) -> StoreError:
        """The error for a ``what`` (open, read, write) the back end could not do, ``why`` as its
        library says it, and what to check (``hint``)."""
        return StoreError(f"Cannot {what} the console's store at {self.where}: {why}.", f"Nothing was sent. {hint}")

    # -- what each back end provides ------------------------------------------------------------
    @abstractmethod
    def _begin(self) -> None:
        """Start a write transaction that excludes every other writer until it ends."""

    @abstractmethod
    def _end(self, commit: bool) -> None: ...

    @abstractmethod
    def execute(self, sql: str, args: Sequence[Any] = ()) -> int:
        """Run one statement; returns the id of the row it inserted (0 when none)."""

    @abstractmethod
    def changes(self, sql: str, args: Sequence[Any] = ()) -> int:
        """Run one statement; returns how many rows it changed."""

    @abstractmethod
    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None: ...

    @abstractmethod
    def query(self, sql: str, args: Sequence[Any] = ()) -> list[Row]: ...

    @abstractmethod
    def one(self, sql: str, args: Sequence[Any] = ()) -> Row | None: ...

    @abstractmethod
    def ddl(self, script: str) -> None:
        """Run a schema script (portable SQL, as the store modules' ``SCHEMA``) statement by
        statement, inside the current transaction."""

    @abstractmethod
    def has_table(self, name: str) -> bool: ...

    @abstractmethod
    def tables(self) -> list[str]:
        """The store's tables (the migrations' bookkeeping included), by name."""

    @abstractmethod
    def columns(self, table: str) -> list[str]:
        """``table``'s columns, in their order."""

    @abstractmethod
    def ids_follow(self, table: str) -> None:
        """After rows were inserted with their ids given, the next id follows the largest."""

    @abstractmethod
    def close(self) -> None: ...

    # -- transactions ----------------------------------------------------------------------------
    @property
    def in_transaction(self) -> bool:
        return bool(getattr(self._local, "depth", 0))

    @contextmanager
    def transaction(self) -> Iterator[Database]:
        """Begin … commit (roll back on any error). Nested calls on the same thread join the outer
        transaction, so what they write commits, or not, together."""
        if self.in_transaction:
            self._local.depth += 1
            try:
                yield self
            finally:
                self._local.depth -= 1
            return
        self._begin()
        self._local.depth = 1
        try:
            yield self
        except BaseException:
            self._local.depth = 0
            self._end(commit=False)
            raise
        self._local.depth = 0
        self._end(commit=True)


class StorePart:
    """One part of the store (its tables and what they mean), read and written through the store's
    one database."""

    def __init__(self, db: Database) -> None:
        self.db = db


def split_statements(script: str) -> list[str]:
    """The statements of a schema script (a trigger's ``BEGIN … END;`` stays one statement)."""
    import sqlite3

    out: list[str] = []
    buf = ""
    for line in script.splitlines(keepends=True):
        buf += line
        if sqlite3.complete_statement(buf):
            if buf.strip():
                out.append(buf.strip())
            buf = ""
    if buf.strip() and not all(ln.strip().startswith("--") or not ln.strip() for ln in buf.splitlines()):
        out.append(buf.strip())
    return out


def in_clause(values: Iterable[str]) -> str:
    """``('a','b')`` for an SQL ``IN`` over fixed, known strings (enum values, never user input)."""
    return "(" + ",".join("'" + v.replace("'", "''") + "'" for v in values) + ")"
