"""The code stays typed: mypy --strict (configured in pyproject.toml) passes over console/, the
Streamlit widgets in components/, the pages in views/ and app.py, and the tests' fake cluster
(checked there against the gateway protocol it stands in for), conftest files and helper modules,
in one run."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CHECKED = ["console", "components", "views", "app.py", "serve.py", "tests"]


def test_mypy_configuration_covers_the_whole_app_and_what_the_tests_lean_on() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]
    assert config.get("strict") is True
    assert sorted(config["files"]) == sorted(CHECKED), "[tool.mypy] files must list every checked package"
    # of tests/, only the test modules are left out: the fake cluster, conftest files and helpers are checked
    excluded = [re.compile(pattern) for pattern in config.get("exclude", [])]
    for path in sorted((ROOT / "tests").rglob("*.py")):
        name = path.relative_to(ROOT).as_posix()
        assert any(p.search(name) for p in excluded) == path.name.startswith("test_"), name


def test_console_components_views_and_the_fake_cluster_pass_mypy_strict() -> None:
    # Plain `mypy`: the files and options come from pyproject.toml, as when a developer runs it.
    done = subprocess.run([sys.executable, "-m", "mypy"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
