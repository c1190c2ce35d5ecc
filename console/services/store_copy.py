"""Copy a whole store into an empty one (``python -m console store copy``): a console's history
moved from its SQLite file to the team's PostgreSQL, or back.

Every table is copied in one transaction on the target, rows in their order (a row's id kept,
so references between rows hold), then checked row for row before it commits: the same count and
the same digest of every row in each table, or nothing is written. The target's audit log then
records the copy (who, from where, what). A target that holds anything is refused: a copy never
merges two histories.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass

from console.access.auth import Identity
from console.core.errors import StoreError
from console.storage.db import Database
from console.storage.migrations import VERSION_TABLE
from console.storage.store import Store

BATCH = 5_000
"""Rows read and written at a time."""
FIRST = ("plans", "runs")
"""Tables other tables refer to: copied first."""
NOT_COPIED = {"schema_version"}
"""Each store keeps its own (the target is at this console's version already)."""


@dataclass(frozen=True)
class TableCopy:
    table: str
    rows: int
    digest: str
    """The sum of every row's SHA-256 (mod 2^256), as both stores read it back."""


@dataclass(frozen=True)
class CopyReport:
    source: str
    target: str
    tables: tuple[TableCopy, ...]

    @property
    def rows(self) -> int:
        return sum(t.rows for t in self.tables)


def _value(v: object) -> str:
    if isinstance(v, bool):
        return str(int(v))
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, bytes | memoryview):
        return bytes(v).hex()
    return repr(v)


def _batches(db: Database, table: str, columns: list[str]) -> Iterator[list[tuple[object, ...]]]:
    order = ", ".join(str(i + 1) for i in range(len(columns)))
    cols = ", ".join(f'"{c}"' for c in columns)
    offset = 0
    while True:
        rows = db.query(f"SELECT {cols} FROM {table} ORDER BY {order} LIMIT ? OFFSET ?", (BATCH, offset))
        if not rows:
            return
        yield rows
        offset += len(rows)


def _digest(db: Database, table: str, columns: list[str]) -> tuple[int, str]:
    """How many rows, and the sum of their SHA-256 digests (mod 2^256): the same for the same rows
    whatever order each back end sorts text in."""
    total, n = 0, 0
    for batch in _batches(db, table, columns):
        for row in batch:
            total += int.from_bytes(hashlib.sha256("\x1f".join(_value(v) for v in row).encode()).digest(), "big")
            n += 1
    return n, f"{total % 2**256:064x}"


def _tables(source: Store, target: Store) -> list[str]:
    have, want = set(source.db.tables()) - NOT_COPIED, set(target.db.tables()) - NOT_COPIED
    if have != want:
        raise StoreError(
            f"The two stores do not have the same tables (only in the source: {sorted(have - want) or 'none'}; "
            f"only in the target: {sorted(want - have) or 'none'}).",
            "Open both with this console's version first (it brings each store's schema up to date).",
        )
    return [t for t in FIRST if t in have] + sorted(have - set(FIRST))


def _refuse_non_empty(target: Store, tables: list[str]) -> None:
    full = [t for t in tables if target.db.one(f"SELECT 1 FROM {t} LIMIT 1") is not None]
    if full:
        raise StoreError(
            f"The target store {target.db.where} is not empty ({', '.join(full)} hold rows).",
            "Copy into a new, empty database (a copy never merges two stores' histories).",
        )


def _copy_table(source: Store, target: Store, table: str) -> TableCopy:
    columns = source.db.columns(table)
    if set(columns) != set(target.db.columns(table)):
        raise StoreError(f"The table {table} has other columns in the target store.", "Nothing was copied.")
    cols = ", ".join(f'"{c}"' for c in columns)
    marks = ", ".join("?" * len(columns))
    for batch in _batches(source.db, table, columns):
        target.db.executemany(f"INSERT INTO {table} ({cols}) VALUES ({marks})", batch)
    target.db.ids_follow(table)
    rows, digest = _digest(source.db, table, columns)
    copied = _digest(target.db, table, columns)
    if copied != (rows, digest):
        raise StoreError(
            f"The copy of {table} does not match its source ({rows} rows read, {copied[0]} written, "
            f"digests {digest[:12]} and {copied[1][:12]}).",
            "Nothing was copied. Check that both stores are at this console's version.",
        )
    return TableCopy(table, rows, digest)


def copy_store(source_url: str, target_url: str, who: Identity) -> CopyReport:
    """Copy every table of the store at ``source_url`` into the empty store at ``target_url``,
    checked row for row; the target's audit log records it. Refused (nothing written) when the
    target holds anything, or when both name one store."""
    source, target = Store(source_url), Store(target_url)
    try:
        if source.db.where == target.db.where:
            raise StoreError("The source and the target are the same store.", "Name another target.")
        tables = _tables(source, target)
        with target.transaction():
            target.db.ddl(VERSION_TABLE)
            _refuse_non_empty(target, tables)
            copied = tuple(_copy_table(source, target, t) for t in tables)
            report = CopyReport(source.db.where, target.db.where, copied)
            target.audit.record(
                who.name,
                "*",
                "store-copy",
                {"from": report.source, "to": report.target, "rows": {t.table: t.rows for t in copied}},
                "completed",
                response={t.table: t.digest for t in copied},
            )
        return report
    finally:
        source.close()
        target.close()
