"""One name for each thing: a name is imported from the module that defines it, never through
another module that imported it (a re-export).

Two rules, read with ``ast``:

* **No module re-exports.** A module of console/, components/, views/ (and app.py, serve.py) does
  not list an imported name in its ``__all__``, does not import a name as itself (``import x as x``,
  the re-export marker) and imports nothing it does not use.
* **Nobody imports through a re-export.** Code anywhere in the repository (the package, the app,
  the tests, the benchmarks, the notebooks) imports a project name from the module that defines it:
  ``from M import n`` and ``M.n`` are refused when ``n`` is only imported into ``M``; the public
  surface's map (``console/__init__.py``'s ``_PUBLIC``) names the defining module of each name.

Two modules are exempt, both documented as such in their docstrings: ``console/core/model.py``, the
one import for the domain values (defined there and in ``core/findings.py``, ``core/ids.py``,
``core/sources.py`` and ``core/throttle_configs.py``), and ``console/__init__.py``, the lazy public
surface for notebooks and scripts.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from tests.support import ENTRY_SCRIPTS, project_modules

ROOT = Path(__file__).resolve().parents[2]
USER_DIRS = ("console", "components", "views", "tests", "bench", "scripts")
SHORTCUTS = frozenset({"console.core.model", "console"})
"""The modules whose imports are their point: the domain values' one import, the public surface."""


@cache
def tree_of(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def top_level(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """The statements run at import time: the body, and inside ``if``/``try``/``with`` blocks."""
    for node in body:
        yield node
        if isinstance(node, (ast.If, ast.For, ast.While, ast.With)):
            yield from top_level(node.body)
            yield from top_level(getattr(node, "orelse", []))
        elif isinstance(node, ast.Try):
            yield from top_level(node.body)
            for handler in node.handlers:
                yield from top_level(handler.body)
            yield from top_level(node.orelse)
            yield from top_level(node.finalbody)


@dataclass(frozen=True)
class Bindings:
    imported: dict[str, ast.alias]
    """Names bound at module level by an import (not ``from __future__``), with their alias."""
    defined: frozenset[str]
    """Names bound at module level otherwise (def, class, assignment, loop, with)."""
    dunder_all: frozenset[str]

    @property
    def only_imported(self) -> frozenset[str]:
        return frozenset(self.imported) - self.defined


def _targets(node: ast.stmt) -> Iterator[str]:
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        yield node.name
        return
    targets: list[ast.expr] = []
    if isinstance(node, ast.Assign):
        targets = list(node.targets)
    elif isinstance(node, (ast.AnnAssign, ast.AugAssign, ast.For)):
        targets = [node.target]
    elif isinstance(node, ast.With):
        targets = [i.optional_vars for i in node.items if i.optional_vars is not None]
    for target in targets:
        yield from (n.id for n in ast.walk(target) if isinstance(n, ast.Name))


@cache
def bindings(module: str) -> Bindings:
    imported: dict[str, ast.alias] = {}
    defined: set[str] = set()
    dunder_all: set[str] = set()
    for node in top_level(tree_of(project_modules()[module]).body):
        if isinstance(node, ast.ImportFrom) and node.module != "__future__":
            imported.update((a.asname or a.name, a) for a in node.names)
        elif isinstance(node, ast.Import):
            imported.update((a.asname or a.name.split(".")[0], a) for a in node.names)
        else:
            names = set(_targets(node))
            defined |= names
            if "__all__" in names and isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
                strings = (c.value for c in ast.walk(node.value) if isinstance(c, ast.Constant))
                dunder_all |= {s for s in strings if isinstance(s, str)}
    return Bindings(imported, frozenset(defined), frozenset(dunder_all))


def names_used(tree: ast.Module) -> set[str]:
    """Every name read in ``tree`` outside ``__all__``, string annotations included."""
    used: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            continue
        if isinstance(node, ast.Name):
            used.add(node.id)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.isidentifier():
            used.add(node.value)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            try:
                expr = ast.parse(node.value, mode="eval")
            except SyntaxError:
                continue
            used |= {n.id for n in ast.walk(expr) if isinstance(n, ast.Name)}
    return used


def reexports_in(module: str) -> list[str]:
    """What ``module`` re-exports: imported names in ``__all__``, aliased as themselves, or unused."""
    found = bindings(module)
    all_ = ast.Module(
        body=[n for n in tree_of(project_modules()[module]).body if "__all__" not in set(_targets(n))],
        type_ignores=[],
    )
    used = names_used(all_)
    out = []
    for name, alias in sorted(found.imported.items()):
        if name in found.defined:
            continue
        if name in found.dunder_all:
            out.append(f"{module}: {name} (listed in __all__)")
        elif alias.asname is not None and alias.asname == alias.name:
            out.append(f"{module}: {name} (imported as itself)")
        elif name not in used:
            out.append(f"{module}: {name} (imported, not used)")
    return out


def through(module: str, name: str) -> bool:
    """Whether ``module.name`` reaches a project name through a module that only imported it (a
    package's submodule is its own; a function a package imports under a submodule's name is not)."""
    if module not in project_modules() or module in SHORTCUTS:
        return False
    found = bindings(module)
    if name not in found.only_imported:
        return False
    node = _import_of(module, found.imported[name])
    if not isinstance(node, ast.ImportFrom):
        return False  # a module bound by `import x` is no re-export
    source = resolve(module, node)
    return f"{source}.{found.imported[name].name}" not in project_modules()


def resolve(module: str, node: ast.ImportFrom) -> str:
    """The absolute module a ``from ... import`` written in ``module`` reads from."""
    if node.level == 0:
        return node.module or ""
    package = module.split(".") if project_modules()[module].name == "__init__.py" else module.split(".")[:-1]
    base = package[: len(package) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def missing(module: str, name: str) -> bool:
    """Whether ``module`` (a project module without a ``__getattr__``) has no ``name`` at all."""
    if module not in project_modules() or f"{module}.{name}" in project_modules() or name == "*":
        return False
    found = bindings(module)
    return name not in found.imported and name not in found.defined and "__getattr__" not in found.defined


def _import_of(module: str, alias: ast.alias) -> ast.stmt | None:
    for node in top_level(tree_of(project_modules()[module]).body):
        if isinstance(node, (ast.Import, ast.ImportFrom)) and alias in node.names:
            return node
    return None


def _dotted(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return None if base is None else f"{base}.{node.attr}"
    return None


def imports_through_reexports(tree: ast.Module, where: str) -> list[str]:
    """``from M import n`` and ``M.n`` in ``tree`` where ``M`` only imported ``n``."""
    modules = project_modules()
    local: dict[str, str] = {}
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            for alias in node.names:
                if through(node.module, alias.name):
                    out.append(f"{where}: from {node.module} import {alias.name}")
                elif missing(node.module, alias.name):
                    out.append(f"{where}: from {node.module} import {alias.name} (not in that module)")
                elif f"{node.module}.{alias.name}" in modules:
                    local[alias.asname or alias.name] = f"{node.module}.{alias.name}"
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    local[alias.asname] = alias.name
                else:
                    local[alias.name.split(".")[0]] = alias.name.split(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
            base = _dotted(node.value)
            if base is None:
                continue
            head, _, rest = base.partition(".")
            if head not in local:
                continue
            module = local[head] + (f".{rest}" if rest else "")
            if through(module, node.attr):
                out.append(f"{where}: {base}.{node.attr} (via {module})")
    return out


def user_trees() -> Iterator[tuple[str, ast.Module]]:
    paths = [ROOT / name for name in ENTRY_SCRIPTS]
    for top in USER_DIRS:
        paths.extend(p for p in (ROOT / top).rglob("*.py") if "__pycache__" not in p.parts)
    for path in sorted(paths):
        yield path.relative_to(ROOT).as_posix(), tree_of(path)
    for notebook in sorted((ROOT / "notebooks").glob("*.ipynb")):
        cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
        code = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
        lines = [line for line in code.splitlines() if not line.lstrip().startswith(("%", "!"))]
        yield notebook.relative_to(ROOT).as_posix(), ast.parse("\n".join(lines))


def test_no_module_reexports_a_name_it_does_not_define() -> None:
    found = [r for module in project_modules() if module not in SHORTCUTS for r in reexports_in(module)]
    assert not found, "re-exported (import it from the module that defines it):\n" + "\n".join(found)


def test_names_are_imported_from_the_module_that_defines_them() -> None:
    found = [r for where, tree in user_trees() for r in imports_through_reexports(tree, where)]
    assert not found, "imported through a module that does not define it:\n" + "\n".join(found)


def test_the_public_surface_names_the_defining_modules() -> None:
    tree = tree_of(ROOT / "console" / "__init__.py")
    public = next(
        n.value
        for n in tree.body
        if isinstance(n, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "_PUBLIC" for t in n.targets)
    )
    assert isinstance(public, ast.Dict)
    pairs = {ast.literal_eval(k): ast.literal_eval(v) for k, v in zip(public.keys, public.values, strict=True) if k}
    wrong = sorted(f"{name}: {module}" for name, module in pairs.items() if through(module, name))
    assert not wrong, f"_PUBLIC names a module that only imports these: {wrong}"


def test_the_shortcut_says_so() -> None:
    doc = ast.get_docstring(tree_of(ROOT / "console" / "core" / "model.py")) or ""
    assert "shortcut" in doc, "console/core/model.py's docstring says it is the one re-exporting shortcut"
