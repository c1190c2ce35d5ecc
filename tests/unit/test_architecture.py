"""The project's import graph stays acyclic, `console/` stays free of Streamlit, and the
subpackages of `console/` are layered (the package-level graph has no cycle).

Imports are read with `ast` from every .py file under console/, components/, views/ and app.py:
every import statement counts, including those inside functions and under `if TYPE_CHECKING:`.
Only imports of the project's own modules are edges; the implicit import of a parent package's
`__init__` is not counted.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator, Mapping, Set
from functools import cache
from pathlib import Path

from tests.support import project_modules

ROOT = Path(__file__).resolve().parents[2]
CORE = "console"
# The top layer, allowed to import anything: the modules of console/ outside any subpackage, and the
# command line (console/cli/).
TOP_LAYER = frozenset({"console", "console.__main__"})
TOP_PACKAGES = ("console.cli",)

Graph = dict[str, set[str]]

# The rules on top of "no cycle": what some subpackages of console/ may import (of the console).
ONLY_IMPORTS: Mapping[str, Set[str]] = {
    "core": frozenset(),
    # the pure arithmetic of moving replicas (waves, throttle lists, progress, cancel verdicts)
    "moves": frozenset({"core", "plans"}),
}
NEVER_IMPORTS: Mapping[str, Set[str]] = {
    # the read-only pipeline uses the arithmetic of moves/, never the write path or the services
    "pipeline": frozenset({"runs", "services"}),
}
FRONT_ENDS = ("app", "views", "components")
"""The app's modules: no module of console/ imports them (the services least of all)."""


@cache
def import_nodes(module: str) -> tuple[ast.Import | ast.ImportFrom | ast.Call, ...]:
    """Every import statement of `module`, at any depth, and every call (for `import_module`)."""
    path = project_modules()[module]
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    return tuple(n for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom, ast.Call)))


def is_package(module: str) -> bool:
    return project_modules()[module].name == "__init__.py"


def resolve_relative(module: str, target: str | None, level: int) -> str:
    """The absolute name of `from <level dots><target> import ...` written in `module`."""
    if level == 0:
        return target or ""
    package = module.split(".") if is_package(module) else module.split(".")[:-1]
    if level - 1 > len(package) - 1:
        raise ImportError(f"relative import beyond the top-level package in {module}")
    base = package[: len(package) - (level - 1)]
    return ".".join(base + ([target] if target else []))


def imported_names(module: str) -> Iterator[str]:
    """Every dotted name `module` imports, absolute: `from a.b import c` yields `a.b.c` and `a.b`
    (the caller keeps `a.b.c` when it is a module, else `a.b`)."""
    for node in import_nodes(module):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = resolve_relative(module, node.module, node.level)
            for alias in node.names:
                yield f"{base}.{alias.name}" if alias.name != "*" else base


def project_target(name: str, modules: Set[str]) -> str | None:
    """The project module an imported name refers to: the name itself when it is a module, else its
    longest prefix that is (`from a.b import c` where `c` is not a module); None for third-party
    and stdlib names."""
    parts = name.split(".")
    for end in range(len(parts), 0, -1):
        candidate = ".".join(parts[:end])
        if candidate in modules:
            return candidate
    return None


@cache
def module_graph() -> Mapping[str, Set[str]]:
    """Module -> the project modules it imports (self-imports left out)."""
    modules = project_modules().keys()
    graph: Graph = {}
    for module in modules:
        targets = {project_target(name, modules) for name in imported_names(module)}
        graph[module] = {t for t in targets if t is not None and t != module}
    return graph


def strongly_connected(graph: Mapping[str, Set[str]]) -> list[list[str]]:
    """Tarjan's algorithm: the strongly connected components with more than one node, sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for succ in sorted(graph.get(node, ())):
            if succ not in index:
                visit(succ)
                low[node] = min(low[node], low[succ])
            elif succ in on_stack:
                low[node] = min(low[node], index[succ])
        if low[node] == index[node]:
            component: list[str] = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def console_layer(module: str) -> str | None:
    """The layer of a module: its subpackage of console/ (`core`, `plans`, ...), `console` for the
    top layer, None outside console/."""
    if module in TOP_LAYER or any(module == p or module.startswith(p + ".") for p in TOP_PACKAGES):
        return CORE
    head, _, rest = module.partition(".")
    return rest.split(".")[0] if head == CORE and rest else None


def package_graph(graph: Mapping[str, Set[str]]) -> dict[str, set[str]]:
    """Subpackage of console/ -> the other subpackages it imports; the top layer is the node
    `console` (its edges are drawn; it may import anything)."""
    packages: Graph = {}
    for module, targets in graph.items():
        source = console_layer(module)
        if source is not None:
            outgoing = packages.setdefault(source, set())
            outgoing.update(t for t in map(console_layer, targets) if t is not None and t != source)
    return packages


def edges_within(graph: Mapping[str, Set[str]], nodes: Set[str]) -> list[str]:
    return [f"{a} -> {b}" for a in sorted(nodes) for b in sorted(graph[a]) if b in nodes]


def render(graph: Mapping[str, Set[str]]) -> str:
    return "\n".join(f"  {node} -> {', '.join(sorted(graph[node])) or '(nothing)'}" for node in sorted(graph))


def streamlit_imports(module: str) -> list[str]:
    """Where `module` imports streamlit: import statements and `importlib.import_module` /
    `__import__` calls with a literal name."""
    found: list[str] = []
    for node in import_nodes(module):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
            func = node.func
            called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if called in {"import_module", "__import__"} and isinstance(node.args[0].value, str):
                names = [node.args[0].value]
        found.extend(
            f"{module}:{node.lineno} imports {name}"
            for name in names
            if name == "streamlit" or name.startswith("streamlit.")
        )
    return found


def test_the_walk_sees_the_project() -> None:
    modules = project_modules()
    assert {"app", "console.cli", "components", "console.core.model"} <= modules.keys()
    assert any(name.startswith("views.") for name in modules)
    assert module_graph()["app"], "app.py imports project modules; the walk found none"


def test_relative_imports_resolve_against_the_package() -> None:
    assert resolve_relative("console.core.model", "errors", 1) == "console.core.errors"
    assert resolve_relative("console.core.model", None, 2) == "console"
    assert resolve_relative("console.core", "model", 1) == "console.core.model"


def test_tarjan_finds_cycles() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set[str]()}
    assert strongly_connected(graph) == [["a", "b", "c"]]


def test_no_import_cycle_between_modules() -> None:
    graph = module_graph()
    cycles = strongly_connected(graph)
    assert not cycles, "import cycles between modules:\n" + "\n".join(
        f"  {', '.join(cycle)}\n    " + "\n    ".join(edges_within(graph, set(cycle))) for cycle in cycles
    )


def test_console_does_not_import_streamlit() -> None:
    in_console = [module for module in project_modules() if console_layer(module) is not None]
    offenders = [hit for module in in_console for hit in streamlit_imports(module)]
    assert not offenders, "console/ must stay free of Streamlit:\n  " + "\n  ".join(offenders)


def test_console_subpackages_are_layered() -> None:
    packages = package_graph(module_graph())
    # The top layer may import anything; a subpackage importing it is reported on its own (with the
    # top layer's edges, every such import would make one cycle of nearly everything).
    cycles = strongly_connected({p: targets for p, targets in packages.items() if p != CORE})
    upward = sorted(p for p, targets in packages.items() if p != CORE and CORE in targets)
    assert not cycles and not upward, (
        "the subpackages of console/ are not layered:\n"
        + "".join(f"  cycle {', '.join(c)}: " + "; ".join(edges_within(packages, set(c))) + "\n" for c in cycles)
        + "".join(f"  {p} imports the top layer (cli, __init__, __main__)\n" for p in upward)
        + "package graph (`console` is the top layer cli/__init__/__main__, allowed to import anything):\n"
        + render(packages)
    )


def test_page_scripts_have_no_stray_strings() -> None:
    """Streamlit's "magic" draws every bare expression of a page script: a string after the
    module docstring (an attribute docstring, say) would appear on the page."""
    import ast

    stray = []
    for path in [*sorted((ROOT / "views").glob("*.py")), ROOT / "app.py"]:
        body = ast.parse(path.read_text()).body
        stray += [
            f"{path.relative_to(ROOT)}:{node.lineno}"
            for node in body[1:]
            if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)
        ]
    assert not stray, f"bare strings drawn on the page: {stray}"


def test_package_rules() -> None:
    packages = package_graph(module_graph())
    broken = [
        f"  {p} imports {', '.join(sorted(packages.get(p, set()) - allowed))} (it may import only "
        f"{', '.join(sorted(allowed)) or 'nothing of the console'})"
        for p, allowed in ONLY_IMPORTS.items()
        if packages.get(p, set()) - allowed
    ] + [
        f"  {p} imports {', '.join(sorted(packages.get(p, set()) & never))}"
        for p, never in NEVER_IMPORTS.items()
        if packages.get(p, set()) & never
    ]
    assert not broken, "package rules broken:\n" + "\n".join(broken) + "\npackage graph:\n" + render(packages)


def test_console_never_imports_the_app() -> None:
    graph = module_graph()
    offenders = [
        f"  {module} imports {target}"
        for module in sorted(graph)
        if console_layer(module) is not None
        for target in sorted(graph[module])
        if target.split(".")[0] in FRONT_ENDS
    ]
    assert not offenders, "console/ (the services least of all) must not import the app:\n" + "\n".join(offenders)


ARCHITECTURE = ROOT / "docs" / "ARCHITECTURE.md"


def documented_imports() -> dict[str, set[str]]:
    """docs/ARCHITECTURE.md's "imports today" column, by package (parenthesised remarks left out)."""
    out: dict[str, set[str]] = {}
    for line in ARCHITECTURE.read_text(encoding="utf-8").splitlines():
        m = re.match(r"\| `(\w+)` \| (.*?) \| .* \|$", line)
        if m:
            out[m.group(1)] = set(re.findall(r"`(\w+)`", re.sub(r"\([^)]*\)", "", m.group(2))))
    return out


def diagram_levels() -> dict[str, int]:
    """Each package of docs/ARCHITECTURE.md's diagram by its line below the front ends (0 on top)."""
    text = ARCHITECTURE.read_text(encoding="utf-8")
    block = text[text.index("```\n") + 4 :]
    block = block[: block.index("```")]
    layers = block.split("─\n", 1)[1].splitlines()
    return {name: n for n, line in enumerate(layers) for name in re.findall(r"(?:^ |\s{3})(\w+)/", line)}


def test_the_doc_says_what_each_package_imports_today() -> None:
    packages = package_graph(module_graph())
    said = documented_imports()
    wrong = sorted(
        f"{p}: the doc says {sorted(said.get(p, set()))}, the code imports {sorted(packages[p])}"
        for p in packages
        if p != CORE and said.get(p, set()) != packages[p]
    )
    assert not wrong, "docs/ARCHITECTURE.md's 'imports today' column is not the code's:\n" + "\n".join(wrong)


def test_imports_only_go_down_the_diagram() -> None:
    levels = diagram_levels()
    packages = package_graph(module_graph())
    assert set(packages) - {CORE} == set(levels), f"the diagram's packages: {sorted(levels)}"
    up = sorted(f"{a} -> {b}" for a in levels for b in packages[a] if levels[b] <= levels[a])
    assert not up, f"imports that do not go down docs/ARCHITECTURE.md's diagram: {up}"
