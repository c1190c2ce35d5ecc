"""The e2e tier's fixtures: the console served by `streamlit run` on the session's sandbox."""

from __future__ import annotations

import os
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from console.sandbox.cluster import Sandbox, free_port
from tests.e2e.browser import ROOT
from tests.support import own_sandbox, wait_for


@pytest.fixture
def app_url(sandbox: Sandbox, tmp_path: Path) -> Iterator[str]:
    """`streamlit run serve.py` (the console and its routes) on the sandbox (Kafka 4.x KRaft, named "sandbox"), its data dir
    ``tmp_path``, its output in ``tmp_path / "streamlit.log"``; the URL once it answers its health check."""
    yield from _serve(sandbox, tmp_path)


@pytest.fixture(scope="module")
def four_brokers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sandbox]:
    """Kafka 4.x KRaft with four brokers (0–2 also the controllers), the module's own: its tests stop
    brokers and take broker 3 out for good."""
    yield from own_sandbox(tmp_path_factory, "sandbox-e2e-kafka4", brokers=4)


@pytest.fixture
def four_app_url(four_brokers: Sandbox, tmp_path: Path) -> Iterator[str]:
    """As ``app_url``, on ``four_brokers``."""
    yield from _serve(four_brokers, tmp_path)


@pytest.fixture
def zk_app_url(zk_sandbox: Sandbox, tmp_path: Path) -> Iterator[str]:
    """As ``app_url``, on the ZooKeeper-mode sandbox (Kafka 3.9), ZooKeeper given to the console."""
    yield from _serve(zk_sandbox, tmp_path)


def _serve(sandbox: Sandbox, tmp_path: Path) -> Iterator[str]:
    port = free_port()
    env = dict(
        os.environ,
        CONSOLE_BOOTSTRAP_SERVERS=sandbox.bootstrap_servers,
        CONSOLE_ZOOKEEPER=sandbox.zookeeper or "",
        CONSOLE_CLUSTER_NAME="sandbox",
        CONSOLE_DATA_DIR=str(tmp_path),
        PYTHONPATH=str(ROOT),
    )
    with open(tmp_path / "streamlit.log", "w") as log:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "streamlit",
                "run",
                str(ROOT / "serve.py"),
                "--server.port",
                str(port),
                "--server.headless",
                "true",
            ],
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )

        def healthy() -> bool:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=1) as answer:
                    return int(answer.status) == 200
            except OSError:
                return False

        try:
            wait_for(healthy, timeout=60, what="streamlit health")
            yield f"http://127.0.0.1:{port}"
        finally:
            proc.terminate()
            proc.wait(10)
