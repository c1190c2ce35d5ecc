"""The history job run in a child process of the console's server: its stage lines as they come,
and the child always waited for (a page's script run may end mid-job)."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

from console.core.errors import ConfigError


def job_lines(proc: subprocess.Popen[str], said: list[str]) -> Iterator[str]:
    """The stage lines a job child writes to stderr (each also appended to ``said``), then its exit
    waited for. When the reader stops early (the page's script run ended mid-job: a rerun, the
    browser gone), the job runs on and a thread drains its output and waits for it, so the server
    is never left with a ``<defunct>`` child."""
    assert proc.stderr is not None
    done = False
    try:
        for raw in proc.stderr:
            line = raw.rstrip()
            if line.startswith(("[", "Error:", "history:", "  ")) or (said and said[-1].startswith("Error:")):
                said.append(line)
                yield line
        proc.wait()
        done = True
    finally:
        if not done:
            threading.Thread(target=_drain_and_reap, args=(proc,), name=f"job-{proc.pid}-reaper", daemon=True).start()


def _drain_and_reap(proc: subprocess.Popen[str]) -> None:
    """Read what is left of the child's stderr (a full pipe would block it) and wait for its exit."""
    if proc.stderr is not None:
        for _ in proc.stderr:
            pass
        proc.stderr.close()
    proc.wait()


def history_in_subprocess(snapshots: str, out: str, master: str = "local[2]") -> Iterator[str]:
    """Run the history job in a child process (``python -m console pipeline history``), yielding
    its stage lines as they come: how the console's server updates the History page without a
    Spark session of its own. Raises :class:`ConfigError` with the job's message when it fails."""
    root = Path(__file__).resolve().parents[2]
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep),
    }
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "console",
            "pipeline",
            "history",
            "--snapshots",
            snapshots,
            "--out",
            out,
            "--master",
            master,
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=root,
    )
    said: list[str] = []
    yield from job_lines(proc, said)
    if proc.returncode != 0:
        at = next((i for i, x in enumerate(said) if x.startswith("Error:")), None)
        if at is None:
            raise ConfigError(
                f"The history job failed (exit {proc.returncode}).",
                "Run it in a terminal to see why: python -m console pipeline history",
            )
        raise ConfigError(said[at].removeprefix("Error: "), said[at + 1] if at + 1 < len(said) else "")
