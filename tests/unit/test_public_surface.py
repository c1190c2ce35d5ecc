"""What a notebook reaches from ``import console`` alone: every service module through the lazy
``console.services`` (a fresh interpreter, so nothing imported it first)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_every_service_module_is_reachable_from_the_package() -> None:
    on_disk = sorted(p.stem for p in (ROOT / "console" / "services").glob("*.py") if not p.stem.startswith("_"))
    assert {"cordons", "decommission", "runs", "cancel"} <= set(on_disk)
    code = "import console\n" + "".join(f"console.services.{name}.__name__\n" for name in on_disk)
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
