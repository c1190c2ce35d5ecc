"""Helpers shared by the tiers that run against a real sandbox cluster (integration, app, e2e):
plain functions, imported by test modules and conftest files. The fixtures are in conftest.py."""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Callable, Iterator
from functools import cache
from pathlib import Path
from typing import TypeVar

import pytest

from console.access.settings import ConnectionSettings
from console.sandbox import cluster
from console.sandbox.cluster import Sandbox

T = TypeVar("T")

OTHER_KAFKA4 = "4.3.1"
"""A Kafka 4 release other than the default (``DEFAULT_KAFKA``), whose server and tools jars both
resolve: the sandbox is checked on it too (tests/integration/test_sandbox_versions.py)."""

QUICK_JVM = "-XX:TieredStopAtLevel=1"
"""For the JVMs the suite starts beside the sandbox's (Spark's drivers and daemons, Keycloak): the
quick compiler only, as the sandbox's brokers run (console/sandbox/cluster.py). They live minutes and
handle little data, so the optimising compiler's work never pays back: on two cores it cut the Spark
review module's CPU by a third (149 s → 94 s) and Keycloak's start by 30 % (41 s → 29 s)."""

SANDBOXES: list[Sandbox] = []
"""The clusters running for this session; a failed test's report shows the tail of their logs."""


def log(msg: str) -> None:
    print(msg, flush=True)


def own_sandbox(
    tmp_path_factory: pytest.TempPathFactory,
    name: str,
    kraft: bool = False,
    brokers: int = 3,
    kafka_version: str | None = None,
    zookeeper: bool = False,
    tiered_storage: bool = False,
    broker_config: dict[str, object] | None = None,
) -> Iterator[Sandbox]:
    """A cluster of a module's own (for tests that break brokers, or need more brokers, or tiered
    storage, or brokers configured otherwise: ``broker_config``; Kafka 4.x KRaft unless
    ``kafka_version`` / ``zookeeper`` say otherwise), stopped with the module: ``yield from
    own_sandbox(...)`` in a module-scoped fixture."""
    data = tmp_path_factory.mktemp(name)
    sb = cluster.up(
        data,
        kafka_version=kafka_version,
        zookeeper=zookeeper,
        kraft=kraft,
        brokers=brokers,
        log=print,
        tiered_storage=tiered_storage,
        broker_config=broker_config,
    )
    SANDBOXES.append(sb)
    yield sb
    cluster.down(data, log=print)
    if sb in SANDBOXES:
        SANDBOXES.remove(sb)


def point_console_at(sb: Sandbox, monkeypatch: pytest.MonkeyPatch, data_dir: Path) -> None:
    """The console (AppTest or `streamlit run` started after this) on ``sb``, named "test", with its
    data (store, users file) in ``data_dir``."""
    monkeypatch.setenv("CONSOLE_DATA_DIR", str(data_dir))
    monkeypatch.setenv("CONSOLE_BOOTSTRAP_SERVERS", sb.bootstrap_servers)
    monkeypatch.setenv("CONSOLE_CLUSTER_NAME", "test")
    if sb.zookeeper:
        monkeypatch.setenv("CONSOLE_ZOOKEEPER", sb.zookeeper)
    else:  # KRaft
        monkeypatch.delenv("CONSOLE_ZOOKEEPER", raising=False)


def settings_for(sb: Sandbox, zookeeper: bool = True) -> ConnectionSettings:
    return ConnectionSettings(
        {"bootstrap.servers": sb.bootstrap_servers},
        zookeeper=sb.zookeeper if zookeeper else None,
        name="sandbox",
        timeout_s=5.0,
    )


def connection_args(sb: Sandbox) -> list[str]:
    """The CLI's connection flags for ``sb``: ``--bootstrap-server``, and ``--zookeeper`` in ZooKeeper mode."""
    return ["--bootstrap-server", sb.bootstrap_servers, *(["--zookeeper", sb.zookeeper] if sb.zookeeper else [])]


def kafka_tool(sb: Sandbox, main: str, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Run an official Kafka tool (its main class) of the sandbox's release against the sandbox
    (``--bootstrap-server`` given), with its jars and its logging."""
    return subprocess.run(
        sb.tool_argv(main, "--bootstrap-server", sb.bootstrap_servers, *args),
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def kafka_configs(sb: Sandbox, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Run the official ConfigCommand (``kafka-configs.sh``) of the sandbox's release; it moved from
    the core jar to the tools jar in Kafka 4.0."""
    main = "kafka.admin.ConfigCommand" if sb.kafka_version.startswith("3.") else "org.apache.kafka.tools.ConfigCommand"
    return kafka_tool(sb, main, *args, timeout=timeout)


def official(sb: Sandbox, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Run the official ReassignPartitionsCommand of the sandbox's release (its jars, its logging)."""
    return kafka_tool(sb, "org.apache.kafka.tools.reassign.ReassignPartitionsCommand", *args, timeout=timeout)


def wait_for(cond: Callable[[], T], timeout: float = 60.0, every: float = 0.5, what: str = "condition") -> T:
    """``cond()`` called every ``every`` seconds until it returns something true, which is returned;
    an AssertionError naming ``what`` and the last answer after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        last = cond()
        if last:
            return last
        time.sleep(every)  # fixed wait: the poll's own interval
    raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what} (last: {last!r})")


def settled(
    read: Callable[[], T], what: str, timeout: float = 30.0, every: float = 0.1, ok: Callable[[T], bool] = bool
) -> T:
    """What ``read()`` gives once it gives the same twice in a row (and ``ok`` holds for it): a
    place on a page once it stopped moving, a picture once it is drawn; ``wait_for``'s deadline and
    message (naming ``what``)."""
    seen: list[T] = []

    def same() -> bool:
        now = read()
        hit = bool(seen) and now == seen[-1] and ok(now)
        seen[:] = [now]
        return hit

    wait_for(same, timeout=timeout, every=every, what=f"{what}, the same twice in a row")
    return seen[-1]


def write_plan(path: Path, entries: list[tuple[str, int, list[int]]]) -> Path:
    path.write_text(
        json.dumps({"version": 1, "partitions": [{"topic": t, "partition": p, "replicas": r} for t, p, r in entries]})
    )
    return path


# -- the project's modules (for the tests that read the code itself) --------------------------------------
PROJECT_ROOT = Path(__file__).resolve().parents[1]
PROJECT_DIRS = ("console", "components", "views")
"""The packages of the product (the package, the app's components and pages)."""
ENTRY_SCRIPTS = ("app.py", "serve.py")


def module_name(path: Path) -> str:
    """`console/core/model.py` -> `console.core.model`; `components/__init__.py` -> `components`."""
    parts = list(path.relative_to(PROJECT_ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


@cache
def project_modules() -> dict[str, Path]:
    """Every module of the product by dotted name (the entry scripts included)."""
    paths = [PROJECT_ROOT / name for name in ENTRY_SCRIPTS]
    for top in PROJECT_DIRS:
        paths.extend(p for p in (PROJECT_ROOT / top).rglob("*.py") if "__pycache__" not in p.parts)
    return {module_name(p): p for p in sorted(paths)}
