"""Each finding code and each shared hint is written once in console/.

A finding code is what the CLI's ``--json``, the store and the pages key on, so one string means one
thing: the review's codes (``console/plans/rules/codes.py``), the snapshot's own
(``console/state/merge.py``) and those the generators' reports and the adapters write in place
(``Finding("code", ...)``, ``ctx.note("code", ...)``) are all different strings, and each is spelled
once (anything that compares with a code imports its constant). A module-level hint or explanation
(``*_HINT``, ``*_WHY``) is defined in one module.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CODE_MODULES = ("console/plans/rules/codes.py", "console/state/merge.py")
"""The modules that name finding codes as constants."""
ALSO_AN_AUDIT_ACTION = {"log-dir-offline": "console/runs/dirmoves.py"}
"""A code that is also the name of an audit action (the run's record of the same offline dir)."""


@cache
def trees() -> dict[str, ast.Module]:
    paths = sorted(p for p in (ROOT / "console").rglob("*.py") if "__pycache__" not in p.parts)
    return {p.relative_to(ROOT).as_posix(): ast.parse(p.read_text(encoding="utf-8")) for p in paths}


def constants(tree: ast.Module) -> dict[str, str]:
    out: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            out.update((t.id, node.value.value) for t in node.targets if isinstance(t, ast.Name))
    return out


def finding_codes() -> dict[str, list[str]]:
    """Every finding code by where it is named (a constant of a code module, or a literal code)."""
    codes: dict[str, list[str]] = defaultdict(list)
    for path in CODE_MODULES:
        for name, value in constants(trees()[path]).items():
            if value and " " not in value and value == value.lower() and "-" in value:
                codes[value].append(f"{path}:{name}")
    for path, tree in trees().items():
        named = constants(tree) if path not in CODE_MODULES else {}
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and node.args):
                continue
            called = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", "")
            code = node.args[0]
            if called not in ("Finding", "note"):
                continue
            if isinstance(code, ast.Constant) and isinstance(code.value, str):
                codes[code.value].append(f"{path}:{node.lineno}")
            elif isinstance(code, ast.Name) and code.id in named and f"{path}:{code.id}" not in codes[named[code.id]]:
                codes[named[code.id]].append(f"{path}:{code.id}")
    return codes


def test_each_finding_code_is_one_string_named_once() -> None:
    codes = finding_codes()
    assert {"adding-on-ineligible-broker", "drain-incomplete", "log-dir-offline"} <= set(codes)
    twice = {c: where for c, where in codes.items() if len(where) > 1}
    assert not twice, f"finding codes named in two places (one code, one meaning): {twice}"
    spelled: dict[str, list[str]] = defaultdict(list)
    for path, tree in trees().items():
        for node in ast.walk(tree):
            is_code = isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in codes
            if is_code and ALSO_AN_AUDIT_ACTION.get(node.value) != path:
                spelled[node.value].append(f"{path}:{node.lineno}")
    again = {c: where for c, where in spelled.items() if len(where) > 1}
    assert not again, f"finding codes spelled again (import the constant): {again}"


def test_each_hint_is_defined_in_one_module() -> None:
    where: dict[str, set[str]] = defaultdict(set)
    for path, tree in trees().items():
        for name in constants(tree):
            if name.endswith(("_HINT", "_WHY")):
                where[name].add(path)
    twice = {name: sorted(paths) for name, paths in where.items() if len(paths) > 1}
    assert not twice, f"hints defined in two modules (define once, import it): {twice}"
