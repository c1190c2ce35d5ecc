"""The app tier's fixtures (AppTest runs the pages in-process): the console on the in-memory fake
cluster for what tests a page, or on a real cluster for what tests Kafka itself."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from components import deps
from console.access.auth import SANDBOX_USERS, write_users, write_users_file
from console.sandbox.cluster import Sandbox
from tests.fakes.app import AppCluster, FakeParts, demo_cluster
from tests.support import point_console_at


@pytest.fixture
def fake_cluster(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[AppCluster]:
    """The console on an in-memory fake of the demo sandbox (brokers 0-2 on racks rack-a..c, the
    demo topics), named "test", with its data (store, users file) in ``tmp_path``. The pages read
    it and the server's worker drives runs on it; the test changes it with ``fake_cluster.held()``."""
    cluster = AppCluster(demo_cluster())
    factory = FakeParts(cluster)
    monkeypatch.setenv("CONSOLE_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("CONSOLE_BOOTSTRAP_SERVERS", "fake-broker:9092")
    monkeypatch.setenv("CONSOLE_CLUSTER_NAME", "test")
    monkeypatch.delenv("CONSOLE_ZOOKEEPER", raising=False)
    deps.use_parts(factory)
    try:
        yield cluster
    finally:
        deps.use_parts(None)
        factory.stop()


@pytest.fixture(scope="session")
def sandbox_users_body(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The sandbox's users file, hashed once for the session (each hash costs half a second)."""
    path = tmp_path_factory.mktemp("users") / "users.json"
    write_users(path, {n: (pw, list(r)) for n, (pw, r) in SANDBOX_USERS.items()})
    return path.read_text()


@pytest.fixture
def sandbox_users(tmp_path: Path, sandbox_users_body: str) -> Path:
    """The sandbox's users (viewer, operator, approver, admin) in the data dir's users file."""
    path = tmp_path / "users.json"
    write_users_file(path, json.loads(sandbox_users_body))
    return path


@pytest.fixture
def env_cluster(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Callable[..., None]:
    """``env_cluster(bootstrap, zookeeper=None)`` points the console at a cluster named "test" through
    its environment; its data dir is ``tmp_path`` (no sandbox discovered from the default place)."""
    monkeypatch.setenv("CONSOLE_DATA_DIR", str(tmp_path))

    def point(bs: str, zk: str | None = None) -> None:
        monkeypatch.setenv("CONSOLE_BOOTSTRAP_SERVERS", bs)
        monkeypatch.setenv("CONSOLE_CLUSTER_NAME", "test")
        if zk:
            monkeypatch.setenv("CONSOLE_ZOOKEEPER", zk)
        else:
            monkeypatch.delenv("CONSOLE_ZOOKEEPER", raising=False)

    return point


@pytest.fixture(autouse=True)
def no_internal_error(caplog: pytest.LogCaptureFixture) -> Iterator[None]:
    """app.py shows a bug in a page as an internal-error box (logged with its traceback) instead of
    an exception on the page: a test that saw one fails, as it would have on the exception."""
    with caplog.at_level(logging.ERROR, logger="console.app"):
        yield
    bugs = [r for r in caplog.records if r.name == "console.app" and r.levelno >= logging.ERROR]
    assert not bugs, "a page hit a bug:\n" + "\n".join(caplog.text.splitlines()[-40:])


@pytest.fixture(autouse=True)
def no_metrics_served(monkeypatch: pytest.MonkeyPatch) -> None:
    """A page test runs as a server without a metrics address would, whatever an earlier test of
    the session served (prometheus-client's server lives as long as the process)."""
    from console.metrics import server

    monkeypatch.setattr(server, "_served", None)


@pytest.fixture
def console_on_sandbox(sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Sandbox:
    """The console on the real sandbox (named "test"), data in ``tmp_path``: for what tests Kafka itself."""
    point_console_at(sandbox, monkeypatch, tmp_path)
    return sandbox


@pytest.fixture
def closed_port() -> int:
    """A local port nothing listens on: a receiver that is down."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
