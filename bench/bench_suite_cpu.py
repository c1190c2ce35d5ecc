"""Where the CPU of a command goes, by kind of process: runs the command (``make test`` by default)
and reads every process's CPU (utime + stime, /proc) every ``--every`` seconds, counting a process
that existed before the command from where it stood then; at the end, the CPU seconds of each kind
(Kafka brokers, Kafka tools, ZooKeeper, Spark drivers and daemons and Python workers, Keycloak,
Chromium, Streamlit servers, the pytest workers, the rest) and the share of the machine's cores
they took. The suite is CPU-bound on two cores: this is what to cut.

A process that lives less than ``--every`` seconds may be missed, and one's last interval before it
exits is lost: read the figures as a lower bound, by kind.

``PYTHONPATH=. .venv/bin/python bench/bench_suite_cpu.py [--every 2] [--out FILE] [-- COMMAND ...]``
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

TICKS = os.sysconf("SC_CLK_TCK")

JAVA_KINDS = (
    ("kafka.Kafka ", "kafka broker"),
    ("QuorumPeerMain", "zookeeper"),
    ("keycloak", "keycloak"),
    ("SparkConnectServer", "spark connect server"),
    ("deploy.master", "spark standalone"),
    ("deploy.worker", "spark standalone"),
    ("CoarseGrainedExecutorBackend", "spark standalone"),
    ("spark", "spark driver"),
    ("kafka", "kafka tool"),
)
"""A JVM's kind: the first whose text is in its command line."""

PYTHON_KINDS = (
    ("pyspark.daemon", "spark python workers"),
    ("streamlit", "streamlit server"),
    ("ipykernel", "notebook kernel"),
    ("mypy", "mypy"),
    ("exec(eval(sys.stdin.readline()))", "pytest workers"),
    ("pytest", "pytest"),
)


def kind(cmdline: str, comm: str) -> str:
    """What a process is, from its command line and name."""
    exe = cmdline.split(" ", 1)[0]
    if exe.endswith("java"):
        return next((k for text, k in JAVA_KINDS if text in cmdline), "other java")
    if "chrom" in comm or "chrom" in exe:
        return "chromium"
    if comm.startswith("postgres"):
        return "postgresql"
    if "python" in exe or "python" in comm:
        return next((k for text, k in PYTHON_KINDS if text in cmdline), "other python")
    return "other"


def read_all() -> dict[tuple[int, str], tuple[float, str]]:
    """Every process now: (pid, start time) → (CPU seconds, kind)."""
    out = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            fields = Path(f"/proc/{d}/stat").read_text().rsplit(")", 1)[1].split()
            cmd = Path(f"/proc/{d}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            comm = Path(f"/proc/{d}/comm").read_text().strip()
        except OSError:
            continue  # gone meanwhile
        out[(int(d), fields[19])] = ((int(fields[11]) + int(fields[12])) / TICKS, kind(cmd, comm))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--every", type=float, default=2.0)
    parser.add_argument("--out", default=None, help="also write the figures as JSON here")
    parser.add_argument("command", nargs="*", default=["make", "test"])
    args = parser.parse_args()
    base = {key: cpu for key, (cpu, _) in read_all().items()}
    last: dict[tuple[int, str], tuple[float, str]] = {}
    started = time.monotonic()
    proc = subprocess.Popen(args.command)
    while proc.poll() is None:
        last.update(read_all())
        time.sleep(args.every)  # fixed wait: the sampling interval
    wall = time.monotonic() - started
    by_kind: dict[str, float] = {}
    for key, (cpu, k) in last.items():
        by_kind[k] = by_kind.get(k, 0.0) + cpu - base.get(key, 0.0)
    total = sum(by_kind.values())
    cores = os.cpu_count() or 1
    print(
        f"{' '.join(args.command)}: exit {proc.returncode}, {wall:.0f} s, CPU {total:.0f} s "
        f"({total / wall / cores:.0%} of {cores} cores)"
    )
    for k, cpu in sorted(by_kind.items(), key=lambda x: -x[1]):
        if cpu >= 1:
            print(f"  {cpu:8.0f} s  {cpu / total:5.1%}  {k}")
    if args.out:
        Path(args.out).write_text(json.dumps({"wall_s": wall, "exit": proc.returncode, "cpu_s": by_kind}, indent=1))
    sys.exit(proc.returncode)


if __name__ == "__main__":
    main()
