"""The history job's child process, as the server runs it for the History page: its stage lines come
through, and it is waited for even when the page stops reading mid-job (a rerun, the browser gone);
a ``<defunct>`` child of the server was left after a history job."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from console.pipeline.child import job_lines
from tests.support import wait_for

JOB = """
import sys
for i in range(1, 4):
    print(f"[{i}/3] stage {i}", file=sys.stderr, flush=True)
    sys.stdin.readline()  # the next stage once the test lets it go on (at once when its stdin is closed)
print("noise", file=sys.stderr)
"""


def _child(held: bool = False) -> subprocess.Popen[str]:
    """The job; ``held``: it stops after each stage until its stdin is closed (still mid-job however
    slow the machine), else it runs straight through."""
    return subprocess.Popen(
        [sys.executable, "-c", JOB],
        stdin=subprocess.PIPE if held else subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )


def _gone(pid: int) -> bool:
    """The process is neither running nor a zombie (a zombie keeps its /proc entry, state Z)."""
    return not Path(f"/proc/{pid}").exists()


def test_a_job_read_to_the_end_says_its_stages_and_is_waited_for() -> None:
    proc = _child()
    said: list[str] = []
    assert list(job_lines(proc, said)) == ["[1/3] stage 1", "[2/3] stage 2", "[3/3] stage 3"] == said
    assert proc.returncode == 0 and _gone(proc.pid)


def test_a_job_the_page_stops_reading_mid_way_runs_on_and_leaves_no_defunct_child() -> None:
    proc = _child(held=True)
    lines = job_lines(proc, [])
    assert next(lines) == "[1/3] stage 1"
    lines.close()  # what a script run that ends mid-job does to the generator
    del lines
    assert proc.poll() is None and proc.stdin is not None  # the job is mid-way: it waits at its first stage
    proc.stdin.close()  # it goes on to its end, read by no page
    wait_for(lambda: _gone(proc.pid), timeout=20, every=0.1, what="the job's child waited for, not defunct")
    assert proc.returncode == 0  # it ran to its end
