"""Real Spark services on loopback for the tests and benches, from the PySpark distribution: a
standalone master with one worker, and a Spark Connect server. Each runs in its own process
group (stopped as a whole) with its logs and work files under a given directory."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pyspark

from tests.support import QUICK_JVM, wait_for

SPARK_HOME = Path(pyspark.__file__).parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _env(base: Path) -> dict[str, str]:
    (base / "work").mkdir(parents=True, exist_ok=True)
    (base / "logs").mkdir(parents=True, exist_ok=True)
    return {
        **os.environ,
        "SPARK_HOME": str(SPARK_HOME),
        "SPARK_LOCAL_IP": "127.0.0.1",
        "SPARK_LOCAL_HOSTNAME": "localhost",
        "SPARK_WORKER_DIR": str(base / "work"),
        "SPARK_LOG_DIR": str(base / "logs"),
        "PYSPARK_PYTHON": sys.executable,
        "SPARK_NO_DAEMONIZE": "1",
        "SPARK_DAEMON_JAVA_OPTS": QUICK_JVM,  # the standalone master and worker
    }


def _start(cmd: list[str], env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(cmd, env=env, stdout=log.open("wb"), stderr=subprocess.STDOUT, start_new_session=True)


def _stop(*procs: subprocess.Popen[bytes]) -> None:
    for p in procs:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGTERM)
    for p in procs:
        try:
            p.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()


def _wait(
    ready: Callable[[], bool], procs: list[subprocess.Popen[bytes]], log: Path, what: str, timeout: float = 120
) -> None:

    def up() -> bool:
        if ready():
            return True
        if any(p.poll() is not None for p in procs):
            raise RuntimeError(f"{what} exited: {log.read_text(errors='replace')[-3000:]}")
        return False

    try:
        wait_for(up, timeout=timeout, every=0.2, what=f"{what} ready")
    except AssertionError:
        raise RuntimeError(
            f"{what} not ready after {timeout:.0f} s: {log.read_text(errors='replace')[-3000:]}"
        ) from None


def _master_json(ui: int) -> dict[str, object] | None:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{ui}/json/", timeout=1) as r:
            doc = json.load(r)
            return doc if isinstance(doc, dict) else None
    except (OSError, ValueError):
        return None


@contextmanager
def standalone(base: Path, cores: int = 2, memory: str = "2g") -> Iterator[str]:
    """A standalone master and one worker; yields the master's ``spark://`` URL."""
    env = _env(base)
    port, ui, worker_ui = free_port(), free_port(), free_port()
    cls = str(SPARK_HOME / "bin" / "spark-class")
    master = _start(
        [
            cls,
            "org.apache.spark.deploy.master.Master",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--webui-port",
            str(ui),
        ],
        env,
        base / "master.out",
    )
    procs = [master]
    try:
        _wait(lambda: (_master_json(ui) or {}).get("status") == "ALIVE", procs, base / "master.out", "the Spark master")
        url = f"spark://127.0.0.1:{port}"
        worker = _start(
            [
                cls,
                "org.apache.spark.deploy.worker.Worker",
                "--host",
                "127.0.0.1",
                "--cores",
                str(cores),
                "--memory",
                memory,
                "--webui-port",
                str(worker_ui),
                "--work-dir",
                str(base / "work"),
                url,
            ],
            env,
            base / "worker.out",
        )
        procs.append(worker)
        _wait(
            lambda: str((_master_json(ui) or {}).get("aliveworkers", 0)) not in ("0", "None"),
            procs,
            base / "worker.out",
            "the Spark worker",
        )
        yield url
    finally:
        _stop(*reversed(procs))


@contextmanager
def connect_server(base: Path, master: str = "local[2]") -> Iterator[str]:
    """A Spark Connect server (its driver on ``master``); yields its ``sc://`` address."""
    env = _env(base)
    port = free_port()
    cmd = [
        str(SPARK_HOME / "bin" / "spark-submit"),
        "--class",
        "org.apache.spark.sql.connect.service.SparkConnectServer",
        "--name",
        "Spark Connect server",
        "--master",
        master,
        "--conf",
        "spark.connect.grpc.binding.address=127.0.0.1",
        "--conf",
        f"spark.connect.grpc.binding.port={port}",
        "--conf",
        "spark.driver.host=127.0.0.1",
        "--conf",
        "spark.driver.bindAddress=127.0.0.1",
        "--conf",
        "spark.ui.enabled=false",
        "--conf",  # as the console's own local sessions: two cores want a few shuffle partitions, not 200
        "spark.sql.shuffle.partitions=4",
        "--conf",
        f"spark.sql.warehouse.dir={base / 'warehouse'}",
        "spark-internal",
    ]
    server = _start(cmd, env, base / "connect.out")

    def listening() -> bool:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return True
        except OSError:
            return False

    try:
        _wait(listening, [server], base / "connect.out", "the Spark Connect server")
        yield f"sc://127.0.0.1:{port}"
    finally:
        _stop(server)
