"""Text forms a person reads: bytes, rates, durations, broker lists, plain-text tables, pages.

One copy of each, so the same value reads the same on every page and in the CLI.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any, TypeVar

T = TypeVar("T")


def human_bytes(n: int | float | None) -> str:
    """``1536`` → ``1.5 KB`` (binary multiples, as Kafka's tools print sizes); ``?`` when unknown."""
    if n is None:
        return "?"
    value = float(n)
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if abs(value) < 1024 or unit == "TB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{n} B"


def human_rate(bytes_per_s: int | float | None) -> str:
    """A copy rate or throttle: ``10.0 MB/s``."""
    return "?" if bytes_per_s is None else f"{human_bytes(bytes_per_s)}/s"


def percent_text(percent: float | None) -> str:
    """A copy percentage as every page prints it: ``12.3%`` (the value already rounded once, by
    :attr:`console.core.model.ReplicaProgress.percent`); ``?`` when unknown."""
    return "?" if percent is None else f"{percent:.1f}%"


def human_duration(seconds: float) -> str:
    if seconds < 1:
        return "under a second"
    s = round(seconds)
    return (
        f"{s // 3600} h {s % 3600 // 60} min" if s >= 3600 else (f"{s // 60} min {s % 60} s" if s >= 60 else f"{s} s")
    )


def timestamp(ts: float | None) -> str:
    """Epoch seconds as local ``YYYY-MM-DD HH:MM:SS``; empty when unknown."""
    return "" if ts is None else f"{datetime.fromtimestamp(ts):%Y-%m-%d %H:%M:%S}"


def ids_text(ids: Iterable[int], empty: str = "") -> str:
    """Broker ids as the official tool prints them: ``4,5,6`` (``empty`` for none)."""
    return ",".join(map(str, ids)) or empty


def plural(n: int, word: str, many: str | None = None) -> str:
    """``1 error``, ``2 errors``."""
    return f"{n:,} {word if n == 1 else (many or word + 's')}"


def table_text(rows: Sequence[dict[str, Any]], columns: Sequence[str]) -> str:
    """Rows as an aligned plain-text table (CLI)."""
    cells = [[str(c) for c in columns]] + [[_cell(r.get(c)) for c in columns] for r in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(columns))]
    return "\n".join("  ".join(v.ljust(w) for v, w in zip(row, widths, strict=False)).rstrip() for row in cells)


def _cell(value: object) -> str:
    """A table cell in words: nothing for None, ``yes``/``no`` for booleans."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def page_count(n: int, size: int) -> int:
    return max(1, -(-n // size))


def page(rows: Sequence[T], number: int, size: int) -> tuple[Sequence[T], int]:
    """Rows of page ``number`` (1-based, clamped) and the number of pages."""
    pages = page_count(len(rows), size)
    number = min(max(1, number), pages)
    return rows[(number - 1) * size : number * size], pages
