"""Small parts: no function over 80 lines, no class over 400, no module over 800, in console/, views/,
components/ and app.py.

The parts over a limit are listed in :data:`ALLOWED` with their size (none today): the list may
only shrink. A listed part may not grow, a part that is back within its limit must leave the list, and
no new part may pass a limit. Split by concern (docs/ARCHITECTURE.md).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LIMITS = {"function": 80, "class": 400, "module": 800}

ALLOWED: dict[str, int] = {}
"""``path`` (a module) or ``path:Qualified.name`` (a function or class) -> its size when listed."""


def sources() -> Iterator[Path]:
    yield ROOT / "app.py"
    for top in ("console", "views", "components"):
        yield from sorted(p for p in (ROOT / top).rglob("*.py") if "__pycache__" not in p.parts)


def _parts(node: ast.AST, prefix: str) -> Iterator[tuple[str, str, int]]:
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            kind = "class" if isinstance(child, ast.ClassDef) else "function"
            name = prefix + child.name
            yield kind, name, (child.end_lineno or child.lineno) - child.lineno + 1
            yield from _parts(child, name + ".")
        else:
            yield from _parts(child, prefix)


def measured() -> dict[str, tuple[str, int]]:
    """Every module, class and function by its key in :data:`ALLOWED`, with its kind and lines."""
    out: dict[str, tuple[str, int]] = {}
    for path in sources():
        rel = path.relative_to(ROOT).as_posix()
        text = path.read_text(encoding="utf-8")
        out[rel] = ("module", text.count("\n") + 1)
        for kind, name, size in _parts(ast.parse(text), ""):
            out[f"{rel}:{name}"] = (kind, size)
    return out


def test_no_new_part_passes_its_limit() -> None:
    sizes = measured()
    over = sorted(f"{k} ({kind}, {n} lines)" for k, (kind, n) in sizes.items() if n > LIMITS[kind] and k not in ALLOWED)
    assert not over, f"over the size limits (function 80, class 400, module 800): {over}; split by concern"


def test_the_allowed_list_only_shrinks() -> None:
    sizes = measured()
    grown = sorted(f"{k}: {sizes[k][1]} > {n}" for k, n in ALLOWED.items() if k in sizes and sizes[k][1] > n)
    assert not grown, f"listed parts grew (they may only shrink): {grown}"
    stale = sorted(k for k in ALLOWED if k not in sizes or sizes[k][1] <= LIMITS[sizes[k][0]])
    assert not stale, f"within their limit now or gone: take them off ALLOWED: {stale}"
