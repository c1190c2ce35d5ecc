"""The tests' own layout: fixtures in conftest.py files, shared helpers in helper modules, and no
test module imported by anything (pytest collects each test module once, on its own; a test module
that imports another one runs on that module's fixtures and helpers by accident). One directory per
tier, each a registered marker; the unit tier never starts a Kafka cluster.

Imports are read with `ast` from every .py file under tests/, at any depth (inside functions too).
"""

from __future__ import annotations

import ast
import re
import tomllib
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TESTS = ROOT / "tests"
CLUSTER_FIXTURES = {"sandbox", "demo_sandbox", "zk_sandbox", "zk_demo_sandbox", "kafka4", "any_kafka"}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def python_files() -> list[Path]:
    return sorted(p for p in TESTS.rglob("*.py") if "__pycache__" not in p.parts)


def imported(path: Path) -> Iterator[tuple[int, str]]:
    return imports_in(path.read_text(encoding="utf-8"), module_name(path), path.name == "__init__.py")


def imports_in(source: str, module: str, is_package: bool = False) -> Iterator[tuple[int, str]]:
    """(line, module) of every import in ``source`` (of ``module``); ``from a import b`` gives both
    ``a`` and ``a.b`` (``b`` may be a module), relative imports made absolute."""
    tree = ast.parse(source)
    package = module.split(".") if is_package else module.split(".")[:-1]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package[: len(package) - node.level + 1] + ([base] if base else []))
            yield node.lineno, base
            for alias in node.names:
                yield node.lineno, f"{base}.{alias.name}"


def is_test_module(module: str) -> bool:
    parts = module.split(".")
    return parts[0] == "tests" and (parts[-1].startswith("test_") or parts[-1] == "conftest")


def test_no_module_under_tests_imports_a_test_module_or_a_conftest() -> None:
    found = [
        f"{path.relative_to(ROOT)}:{line} imports {module}"
        for path in python_files()
        for line, module in imported(path)
        if is_test_module(module)
    ]
    assert not found, (
        "fixtures go to a conftest.py (tests/conftest.py for every tier, tests/<tier>/conftest.py for one), "
        "shared functions and constants to a helper module (tests/support.py, tests/<tier>/...):\n" + "\n".join(found)
    )


def test_the_layout_check_sees_every_spelling_of_a_test_module_import() -> None:
    for source in (
        "from tests.unit.test_plans import snapshot",
        "from tests.unit import test_plans",
        "import tests.e2e.test_live_browser",
        "from .test_plans import snapshot",
        "from . import conftest",
        "def f():\n    from tests.conftest import wait_for",
    ):
        assert any(is_test_module(m) for _, m in imports_in(source, "tests.unit.sample")), source
    for source in ("from tests.unit.builders import ids", "from .builders import ids", "import tests.support"):
        assert not any(is_test_module(m) for _, m in imports_in(source, "tests.unit.sample")), source


def tiers() -> set[str]:
    return {p.parent.relative_to(TESTS).parts[0] for p in TESTS.rglob("test_*.py") if p.parent != TESTS}


def test_each_tier_is_a_registered_marker_and_a_test_path() -> None:
    pytest_config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["pytest"]
    options = pytest_config["ini_options"]
    markers = {m.split(":")[0].strip() for m in options["markers"]}
    assert tiers() == {"unit", "integration", "app", "e2e"}
    assert tiers() <= markers
    assert sorted(options["testpaths"]) == sorted(f"tests/{t}" for t in tiers())
    assert "--strict-markers" in options["addopts"].split()


def test_no_unit_test_asks_for_a_cluster() -> None:
    # tests/conftest.py refuses it at collection too; this names the line
    found = []
    for path in sorted((TESTS / "unit").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                names = {a.arg for a in node.args.args + node.args.kwonlyargs}
                if names & CLUSTER_FIXTURES:
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name}")
            elif (
                isinstance(node, ast.ImportFrom)
                and node.module in ("console.sandbox.cluster", "tests.support")
                and any(a.name in ("up", "own_sandbox") for a in node.names)
            ):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno} imports {node.module}")
    assert not found, "the unit tier starts no Kafka cluster: move these to tests/integration:\n" + "\n".join(found)


FIXED_WAIT = re.compile(r"\b(?:time|asyncio)\.sleep\(|\bwait_for_timeout\(")
"""A call that waits a fixed time: ``time.sleep``, ``asyncio.sleep``, Playwright's ``wait_for_timeout``."""
SLEEP_IMPORT = re.compile(r"^\s*from\s+(?:time|asyncio)\s+import\s+.*\bsleep\b", re.MULTILINE)


def reason_given(lines: list[str], n: int) -> bool:
    """Line ``n`` (1-based), or the comment lines just above it, say ``fixed wait:``."""
    if "fixed wait:" in lines[n - 1]:
        return True
    k = n - 2
    while k >= 0 and lines[k].lstrip().startswith("#"):
        if "fixed wait:" in lines[k]:
            return True
        k -= 1
    return False


def fixed_waits(source: str) -> list[int]:
    """The lines of ``source`` (1-based) that wait a fixed time with no ``fixed wait:`` comment on
    that line or in the comment just above it (saying why time must pass there: a fault's duration,
    a poll's own interval), and those importing ``sleep`` by its bare name (which the search would
    not see)."""
    lines = source.splitlines()
    found = [n for n, line in enumerate(lines, 1) if FIXED_WAIT.search(line) and not reason_given(lines, n)]
    return found + [source.count("\n", 0, m.start()) + 1 for m in SLEEP_IMPORT.finditer(source)]


def test_no_test_waits_a_fixed_time_where_a_condition_can_be_waited_for() -> None:
    found = [
        f"{path.relative_to(ROOT)}:{n}: {path.read_text(encoding='utf-8').splitlines()[n - 1].strip()}"
        for path in python_files()
        for n in fixed_waits(path.read_text(encoding="utf-8"))
    ]
    assert not found, (
        "wait for the condition the time stands for (tests/support.py: wait_for, settled; Playwright: expect(...) "
        "with a timeout, page.wait_for_function); where time itself must pass, say why in a comment starting "
        "with 'fixed wait:' on that line or just above it:\n" + "\n".join(found)
    )


def test_the_fixed_wait_check_sees_each_spelling_and_the_reason_given() -> None:
    call = "(2)"  # the samples are put together here, so that this file is not a finding itself
    sleep, pause, nap = "time.sleep" + call, "page.wait_for_timeout" + call, "asyncio.sleep" + call
    assert fixed_waits(f"x = 1\n{sleep}\n") == [2]
    assert fixed_waits(f"    {pause}  # the chart drawn\n") == [1]
    assert fixed_waits(f"await {nap}\n") == [1]
    assert fixed_waits("from time import monotonic, sleep\n") == [1]
    assert fixed_waits(f"{sleep}  # fixed wait: the fault lasts two seconds\n") == []
    assert fixed_waits(f"# fixed wait: the fault lasts\n# two seconds\n{sleep}\n") == []
    assert fixed_waits(f"# fixed wait: too far above\nx = 1\n{sleep}\n") == [3]
    assert fixed_waits("wait_for(lambda: done(), what='done')\nmonkeypatch.setattr('time.sleep', no)\n") == []


def test_each_module_on_the_zookeeper_sandbox_or_in_process_spark_is_in_its_workers_group() -> None:
    """``make test`` keeps the modules sharing the session's ZooKeeper sandbox, and those running
    Spark in the test process, on one worker each (tests/scheduling.py): one of each started."""
    from tests.scheduling import group_of

    zk = {"zk_sandbox", "zk_demo_sandbox", "any_kafka"}
    for path in sorted(TESTS.rglob("test_*.py")):
        if path.parent.name == "unit":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        asks = {
            a.arg
            for node in ast.walk(tree)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            for a in node.args.args + node.args.kwonlyargs
        }
        if asks & zk:
            assert group_of(str(path.relative_to(ROOT))) == "zookeeper", path
    assert group_of("tests/unit/test_test_layout.py") is None  # names the fixtures, starts nothing
    for module in ("test_pipeline_history", "test_pipeline_review", "test_pipeline_generate"):
        assert group_of(f"tests/unit/{module}.py") == "spark"
    assert group_of("tests/integration/test_pipeline_spark_clusters.py") == "spark"
    assert group_of("tests/unit/test_plans.py") is None
