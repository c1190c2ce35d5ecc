"""The package installs from a wheel into a fresh virtualenv (no clone on the path), and its
command and its public surface work there against the sandbox."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = """
import sys, console
from console import connect, parse_plan, diff, validate, rollback
assert "site-packages" in console.__file__, console.__file__
with connect(sys.argv[1]) as cluster:
    state = cluster.snapshot()
p = state.partitions[0]
plan = parse_plan('{"version":1,"partitions":[{"topic":"%s","partition":%d,"replicas":%s}]}'
                  % (p.topic, p.partition, list(reversed(p.replicas))))
print(len(state.partitions), len(diff(state, plan).changes), len(validate(state, plan)), rollback(state, plan).to_json())
"""


def run(cmd: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    return subprocess.run(cmd, cwd=cwd, env={**clean, **env}, capture_output=True, text=True, timeout=900)


def test_the_wheel_installs_and_runs_in_a_fresh_virtualenv(demo_sandbox, tmp_path) -> None:
    built = run([sys.executable, "-m", "build", "--wheel", "--outdir", str(tmp_path / "dist"), str(ROOT)], tmp_path)
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    wheel = next((tmp_path / "dist").glob("reassignment_console-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    assert "console/pipeline/log4j2.properties" in names and "console/sandbox/pom.xml" in names
    assert not any(n.startswith(("tests/", "views/", "components/", "bench/")) for n in names)

    venv = tmp_path / "venv"
    assert run([sys.executable, "-m", "venv", str(venv)], tmp_path).returncode == 0
    py = venv / "bin" / "python"
    # the pinned versions of requirements.txt, so pip's cache serves them
    installed = run([str(py), "-m", "pip", "install", "-q", str(wheel), "-c", str(ROOT / "requirements.txt")], tmp_path)
    assert installed.returncode == 0, installed.stderr[-3000:]

    helped = run([str(venv / "bin" / "reassignment-console"), "--help"], tmp_path)
    assert helped.returncode == 0 and "generate" in helped.stdout and "reassignment-console" in helped.stdout
    ran = run([str(py), "-c", SCRIPT, demo_sandbox.bootstrap_servers], tmp_path)
    assert ran.returncode == 0, ran.stderr[-3000:]
    partitions, changes, _, back = ran.stdout.split(maxsplit=3)
    assert int(partitions) > 0 and int(changes) == 1 and back.startswith('{"version":1,"partitions":[')
    # the light install has no Spark and no Streamlit; the pipeline's extra brings Spark
    assert run([str(py), "-c", "import pyspark"], tmp_path).returncode != 0
    assert run([str(py), "-c", "import streamlit"], tmp_path).returncode != 0
