"""Fixtures shared by the integration, app and e2e tiers: a real sandbox cluster per session."""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from console.access.settings import ConnectionSettings
from console.sandbox import cluster
from console.sandbox.cluster import Sandbox

_SANDBOXES: list[Sandbox] = []


def _log(msg: str) -> None:
    print(msg, flush=True)


@pytest.fixture(scope="session")
def sandbox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sandbox]:
    """ZooKeeper + 3 brokers, shared by every test that does not break it."""
    data = tmp_path_factory.mktemp("sandbox-zk")
    sb = cluster.up(data, log=_log)
    _SANDBOXES.append(sb)
    yield sb
    cluster.down(data, log=_log)


@pytest.fixture(scope="session")
def demo_sandbox(sandbox: Sandbox) -> Sandbox:
    from console.sandbox.demo import DEMO_TOPICS, create_topics, produce

    small = tuple(t.__class__(t.name, t.partitions, t.replication, 0.5) for t in DEMO_TOPICS)
    create_topics(sandbox.bootstrap_servers, small, log=_log)
    produce(sandbox.bootstrap_servers, small, log=_log)
    return sandbox


def own_sandbox(
    tmp_path_factory: pytest.TempPathFactory, name: str, kraft: bool = False, brokers: int = 3
) -> Iterator[Sandbox]:
    """A cluster of a module's own (for tests that break brokers, or need more brokers), stopped with
    the module: ``yield from own_sandbox(...)`` in a module-scoped fixture."""
    data = tmp_path_factory.mktemp(name)
    sb = cluster.up(data, kraft=kraft, brokers=brokers, log=print)
    _SANDBOXES.append(sb)
    yield sb
    cluster.down(data, log=print)
    _SANDBOXES.remove(sb)


def point_console_at(sb: Sandbox, monkeypatch: pytest.MonkeyPatch, data_dir: Path) -> None:
    """The console (AppTest or `streamlit run` started after this) on ``sb``, named "test", with its
    data (store, users file) in ``data_dir``."""
    monkeypatch.setenv("CONSOLE_DATA_DIR", str(data_dir))
    monkeypatch.setenv("CONSOLE_BOOTSTRAP_SERVERS", sb.bootstrap_servers)
    monkeypatch.setenv("CONSOLE_CLUSTER_NAME", "test")
    monkeypatch.setenv("CONSOLE_ZOOKEEPER", sb.zookeeper)


def settings_for(sb: Sandbox, zookeeper: bool = True) -> ConnectionSettings:
    return ConnectionSettings(
        {"bootstrap.servers": sb.bootstrap_servers},
        zookeeper=sb.zookeeper if zookeeper else None,
        name="sandbox",
        timeout_s=5.0,
    )


def official(sb: Sandbox, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Run the official ReassignPartitionsCommand from the fetched jars."""
    return subprocess.run(
        [
            "java",
            "-Xmx256m",
            "-XX:TieredStopAtLevel=1",
            "-cp",
            sb.kafka_classpath,
            "-Dlog4j.configuration=file:" + str(Path(sb.data_dir) / "config" / "log4j.properties"),
            f"-Dkafka.logs.dir={sb.data_dir}/logs",
            "-Dsandbox.name=tools",
            "org.apache.kafka.tools.reassign.ReassignPartitionsCommand",
            "--bootstrap-server",
            sb.bootstrap_servers,
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def wait_for(cond: Any, timeout: float = 60.0, every: float = 0.5, what: str = "condition") -> Any:
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        last = cond()
        if last:
            return last
        time.sleep(every)
    raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what} (last: {last!r})")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    outcome = yield
    rep = outcome.get_result()
    if rep.when == "call" and rep.failed and _SANDBOXES:
        for sb in _SANDBOXES:
            for log in sorted(Path(sb.data_dir, "logs").glob("*-server.log")):
                tail = log.read_text(errors="replace").splitlines()[-25:]
                rep.sections.append((f"{log.name} ({sb.mode})", "\n".join(tail)))


def write_plan(path: Path, entries: list[tuple[str, int, list[int]]]) -> Path:
    path.write_text(
        json.dumps({"version": 1, "partitions": [{"topic": t, "partition": p, "replicas": r} for t, p, r in entries]})
    )
    return path


os.environ.setdefault("PYTHONUNBUFFERED", "1")
