"""Text forms a person reads: bytes, rates, durations, broker lists, plain-text tables, pages.

One copy of each, so the same value reads the same on every page and in the CLI.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any, TypeVar

T = TypeVar("T")


UNITS = ("B", "KB", "MB", "GB", "TB")
"""Decimal (SI) multiples, one convention for every size, rate and throttle the console prints or
reads: 1 KB = 1000 bytes, 1 MB = 1000 KB (Kafka's throttle configs are bytes/s, and its docs count
them so: ``--throttle 50000000`` is 50 MB/s). A binary unit (KiB, MiB, GiB) is read when typed."""
_MULTIPLE: dict[str, int] = {u.lower(): int(1000**i) for i, u in enumerate(UNITS)} | {
    "k": 1000,
    "m": 1000**2,
    "g": 1000**3,
    "t": 1000**4,
    "kib": 1024,
    "mib": 1024**2,
    "gib": 1024**3,
    "tib": 1024**4,
}
_RATE = re.compile(r"\s*([0-9][0-9_,]*(?:\.[0-9]*)?|\.[0-9]+)\s*([a-z]*)\s*(?:/\s*s(?:ec)?|ps)?\s*", re.IGNORECASE)
RATE_MAX = 2**63 - 1
"""Kafka's throttle configs are longs."""


def human_bytes(n: int | float | None) -> str:
    """``1500`` → ``1.5 KB`` (decimal multiples, :data:`UNITS`); ``?`` when unknown."""
    if n is None:
        return "?"
    value = float(n)
    for unit in UNITS:
        if abs(value) < 1000 or unit == UNITS[-1]:
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1000
    return f"{n} B"


def human_rate(bytes_per_s: int | float | None) -> str:
    """A copy rate or throttle, as every page and the CLI print it: ``10.0 MB/s`` (10,000,000 bytes/s)."""
    return "?" if bytes_per_s is None else f"{human_bytes(bytes_per_s)}/s"


def parse_rate(text: str | int | float) -> int:
    """A throttle as a person types it, in bytes/s: ``20 KB/s`` → 20000, ``1.5 MB/s``, ``10MB``,
    ``2 MiB/s`` (binary when said), ``10,000``. A number alone is bytes/s on every page and in the
    CLI, as in Kafka's own tools (``--throttle 50000000`` is 50 MB/s). Raises :class:`ValueError`
    saying what it accepts."""
    not_a_rate = (
        f"{str(text).strip()!r} is not a rate: write e.g. 20 KB/s, 1.5 MB/s, or 20000 (a number alone is bytes/s)."
    )
    if isinstance(text, int | float) and not isinstance(text, bool):
        number, word = float(text), "b"
        if not 0 <= number < float("inf"):  # NaN fails too
            raise ValueError(not_a_rate)
    else:
        found = _RATE.fullmatch(str(text))
        if found is None:
            raise ValueError(not_a_rate)
        number = float(str(found.group(1)).replace(",", "").replace("_", ""))
        typed = str(found.group(2))
        if typed.endswith("b") and typed[:-1].lower() in ("", "k", "m", "g", "t"):  # Mb, kb: bits, not bytes
            big = typed[:-1].upper() + "B"
            raise ValueError(
                f"{typed}/s is bits per second (a small b); throttles are in bytes: write {big}/s for bytes "
                f"({str(text).strip()} would be {human_rate(number * _MULTIPLE[big.lower()] / 8)})."
            )
        word = typed.lower() or "b"
    multiple = _MULTIPLE.get(word.removesuffix("b") if word not in _MULTIPLE else word)
    if multiple is None:
        raise ValueError(f"{word!r} is not a unit: use B/s, KB/s, MB/s or GB/s (1 KB = 1000 bytes), or KiB/s, MiB/s.")
    value = round(number * multiple)
    if value > RATE_MAX:
        raise ValueError(f"{str(text).strip()} is more than a throttle can be ({RATE_MAX:,} bytes/s).")
    return value


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


def about_duration(seconds: float) -> str:
    """An estimated duration: ``≈ 2 min 5 s``, or ``under a second`` (never "≈ under a second")."""
    return human_duration(seconds) if seconds < 1 else f"≈ {human_duration(seconds)}"


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
