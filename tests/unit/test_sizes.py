"""Small parts: no function over 80 lines, no class over 400, no module over 800, in console/, views/,
components/ and app.py.

A class is measured with its bases from this project: its own lines and those of every class of
console/, views/ or components/ in its method resolution order. A class split over mixins in
several files is still one object to read, so splitting it that way does not make it smaller; an
object that owns small collaborators (each a class of its own, passed what it needs) does.

The parts over a limit are listed in :data:`ALLOWED` with their size (none today): the list may
only shrink. A listed part may not grow, a part that is back within its limit must leave the list, and
no new part may pass a limit. The limits are stated in docs/ARCHITECTURE.md, "Size limits"; split by
concern.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LIMITS = {"function": 80, "class": 400, "module": 800}

ALLOWED: dict[str, int] = {}
"""``path`` (a module) or ``path:Qualified.name`` (a function or class) -> its size when listed."""


def sources() -> Iterator[Path]:
    yield ROOT / "app.py"
    for top in ("console", "views", "components"):
        yield from sorted(p for p in (ROOT / top).rglob("*.py") if "__pycache__" not in p.parts)


def module_of(path: Path) -> str:
    """``console/runs/executor.py`` -> ``console.runs.executor``; a package's ``__init__`` -> the package."""
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


@dataclass
class Module:
    """What a module defines at its top level, and where its imported names come from."""

    path: str
    classes: dict[str, ast.ClassDef] = field(default_factory=dict)
    imported: dict[str, tuple[str, str | None]] = field(default_factory=dict)
    """Local name -> (module, name in it), or (module, None) for ``import module as name``."""


@cache
def modules() -> dict[str, Module]:
    out: dict[str, Module] = {}
    for path in sources():
        name = module_of(path)
        tree = ast.parse(path.read_text(encoding="utf-8"))
        m = Module(path.relative_to(ROOT).as_posix())
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in tree.body:
            if isinstance(node, ast.ClassDef):
                m.classes[node.name] = node
            elif isinstance(node, ast.ImportFrom):
                base = package.split(".")[: len(package.split(".")) - node.level + 1] if node.level else []
                source = ".".join([*base, *([node.module] if node.module else [])])
                for alias in node.names:
                    m.imported[alias.asname or alias.name] = (source, alias.name)
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    m.imported[alias.asname or alias.name.split(".")[0]] = (alias.name, None)
        out[name] = m
    return out


def _class(module: str, name: str, seen: frozenset[tuple[str, str]] = frozenset()) -> tuple[str, ast.ClassDef] | None:
    """The project class ``name`` of ``module`` (followed through imports), with its module; None if
    it is not a class of this project."""
    m = modules().get(module)
    if m is None or (module, name) in seen:
        return None
    if name in m.classes:
        return module, m.classes[name]
    if name in m.imported:
        source, original = m.imported[name]
        if original is not None:
            return _class(source, original, seen | {(module, name)})
    return None


def _base(module: str, expr: ast.expr) -> tuple[str, ast.ClassDef] | None:
    if isinstance(expr, ast.Subscript):  # Generic[T], Protocol[T]
        return _base(module, expr.value)
    if isinstance(expr, ast.Name):
        return _class(module, expr.id)
    if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name):
        m = modules().get(module)
        source = m.imported.get(expr.value.id) if m is not None else None
        if source is not None and source[1] is None:
            return _class(source[0], expr.attr)
    return None


def _lines(node: ast.AST) -> int:
    return (getattr(node, "end_lineno", None) or node.lineno) - node.lineno + 1  # type: ignore[attr-defined]


def with_bases(module: str, node: ast.ClassDef) -> int:
    """The lines of ``node`` and of every project class among its bases, each counted once."""
    seen: set[tuple[str, str]] = set()
    todo = [(module, node)]
    total = 0
    while todo:
        mod, cls = todo.pop()
        if (mod, cls.name) in seen:
            continue
        seen.add((mod, cls.name))
        total += _lines(cls)
        for b in cls.bases:
            found = _base(mod, b)
            if found is not None:
                todo.append(found)
    return total


def _parts(node: ast.AST, prefix: str, module: str) -> Iterator[tuple[str, str, int]]:
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
            name = prefix + child.name
            yield "function", name, _lines(child)
            yield from _parts(child, name + ".", module)
        elif isinstance(child, ast.ClassDef):
            name = prefix + child.name
            size = with_bases(module, child) if not prefix else _lines(child)
            yield "class", name, size
            yield from _parts(child, name + ".", module)
        else:
            yield from _parts(child, prefix, module)


@cache
def measured() -> dict[str, tuple[str, int]]:
    """Every module, class (with its project bases) and function by its key in :data:`ALLOWED`,
    with its kind and lines."""
    out: dict[str, tuple[str, int]] = {}
    for path in sources():
        rel = path.relative_to(ROOT).as_posix()
        text = path.read_text(encoding="utf-8")
        out[rel] = ("module", text.count("\n") + 1)
        for kind, name, size in _parts(ast.parse(text), "", module_of(path)):
            out[f"{rel}:{name}"] = (kind, size)
    return out


def test_no_new_part_passes_its_limit() -> None:
    sizes = measured()
    over = sorted(f"{k} ({kind}, {n} lines)" for k, (kind, n) in sizes.items() if n > LIMITS[kind] and k not in ALLOWED)
    assert not over, (
        f"over the size limits (function 80, class 400 with its bases, module 800): {over}; split by concern"
    )


def test_the_allowed_list_only_shrinks() -> None:
    sizes = measured()
    grown = sorted(f"{k}: {sizes[k][1]} > {n}" for k, n in ALLOWED.items() if k in sizes and sizes[k][1] > n)
    assert not grown, f"listed parts grew (they may only shrink): {grown}"
    stale = sorted(k for k in ALLOWED if k not in sizes or sizes[k][1] <= LIMITS[sizes[k][0]])
    assert not stale, f"within their limit now or gone: take them off ALLOWED: {stale}"


def test_a_class_counts_the_lines_of_its_project_bases_in_other_modules() -> None:
    """A base's (or a mixin's) lines count in the class made of it: the measure follows the import."""
    own = modules()["console.storage.sqlite"].classes["SqliteDatabase"]
    base = modules()["console.storage.db"].classes["Database"]
    assert measured()["console/storage/sqlite.py:SqliteDatabase"] == ("class", _lines(own) + _lines(base))
