"""The code stays typed: mypy --strict (configured in pyproject.toml) passes over console/, the
Streamlit widgets in components/, the pages in views/ and app.py, in one run."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CHECKED = ["console", "components", "views", "app.py"]


def test_mypy_configuration_covers_the_whole_app() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]
    assert config.get("strict") is True
    assert sorted(config["files"]) == sorted(CHECKED), "[tool.mypy] files must list every checked package"


def test_console_components_and_views_pass_mypy_strict() -> None:
    # Plain `mypy`: the files and options come from pyproject.toml, as when a developer runs it.
    done = subprocess.run([sys.executable, "-m", "mypy"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
