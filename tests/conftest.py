"""Fixtures and hooks for every tier: the tier markers, a real sandbox cluster per session (for the
integration, app and e2e tiers; the unit tier never starts one), the cluster logs of a failed test.
Plain helpers shared by the tiers are in tests/support.py."""

from __future__ import annotations

import io
import os
from collections.abc import Callable, Generator, Iterator
from pathlib import Path

import pytest

from console.sandbox import cluster
from console.sandbox.cluster import Sandbox
from tests import postgres
from tests.support import QUICK_JVM, SANDBOXES, log

TESTS = Path(__file__).resolve().parent
TIERS = ("unit", "integration", "app", "e2e")
"""One directory under tests/ per tier, each marked with its name (``pytest -m unit``)."""
# Spark's drivers (in this process, in the jobs' child processes, in the notebooks' kernels, the
# Connect server) start through spark-submit, which adds this to their command line.
os.environ.setdefault("SPARK_SUBMIT_OPTS", f"{QUICK_JVM} -XX:+UseSerialGC")
NEEDS_A_CLUSTER = {"sandbox", "demo_sandbox", "zk_sandbox", "zk_demo_sandbox", "kafka4", "any_kafka"}


def tier_of(nodeid: str) -> str | None:
    """The tier of a test, from its node id (``tests/<tier>/test_x.py::test_y``)."""
    parts = Path(nodeid.split("::")[0]).parts
    return parts[1] if len(parts) > 1 and parts[0] == TESTS.name and parts[1] in TIERS else None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Each test marked with its tier (no test needs a decorator); a unit test that would start a
    Kafka cluster is refused (``make test-unit`` is the inner loop: no cluster, no browser)."""
    for item in items:
        tier = tier_of(item.nodeid)
        if tier is None:
            continue
        item.add_marker(getattr(pytest.mark, tier))
        if tier == "unit" and NEEDS_A_CLUSTER & set(getattr(item, "fixturenames", ())):
            raise pytest.UsageError(f"{item.nodeid} asks for a sandbox cluster: move it to tests/integration")


@pytest.fixture(scope="session")
def sandbox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sandbox]:
    """Kafka 4.x (``DEFAULT_KAFKA``) in KRaft mode, 3 brokers (also the controllers), shared by every
    test that does not break it."""
    yield from _session_sandbox(tmp_path_factory, "sandbox-kraft")


@pytest.fixture(scope="session")
def zk_sandbox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sandbox]:
    """Kafka 3.9 (``ZOOKEEPER_KAFKA``) in ZooKeeper mode, ZooKeeper + 3 brokers, for the ZooKeeper-only
    behaviour (the ZooKeeper reader and its watches, the legacy znode path, API-vs-ZooKeeper
    findings, ACLs in ZooKeeper mode); shared by every test that does not break it."""
    yield from _session_sandbox(tmp_path_factory, "sandbox-zk", zookeeper=True)


def _session_sandbox(tmp_path_factory: pytest.TempPathFactory, name: str, zookeeper: bool = False) -> Iterator[Sandbox]:
    data = tmp_path_factory.mktemp(name)
    sb = cluster.up(data, zookeeper=zookeeper, log=log)
    SANDBOXES.append(sb)
    yield sb
    cluster.down(data, log=log)
    SANDBOXES.remove(sb)


def _with_demo_topics(sb: Sandbox) -> Sandbox:
    from console.sandbox.demo import DEMO_TOPICS, create_topics, produce

    small = tuple(t.__class__(t.name, t.partitions, t.replication, 0.5) for t in DEMO_TOPICS)
    create_topics(sb.bootstrap_servers, small, log=log)
    produce(sb.bootstrap_servers, small, log=log)
    return sb


@pytest.fixture(scope="session")
def demo_sandbox(sandbox: Sandbox) -> Sandbox:
    """The session's sandbox with the demo topics (half a megabyte each)."""
    return _with_demo_topics(sandbox)


@pytest.fixture(scope="session")
def zk_demo_sandbox(zk_sandbox: Sandbox) -> Sandbox:
    """The ZooKeeper-mode sandbox with the demo topics (half a megabyte each)."""
    return _with_demo_topics(zk_sandbox)


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[postgres.PgCluster]:
    """A throwaway PostgreSQL cluster for the session (started on first use, stopped at the end)."""
    server = postgres.start()
    yield server
    server.stop()


@pytest.fixture
def pg_url(pg_cluster: postgres.PgCluster) -> str:
    """The URL of a fresh, empty database on the session's PostgreSQL cluster."""
    return pg_cluster.new_database()


STORE_ON_POSTGRESQL = "CONSOLE_TEST_STORE_SERVER"
"""Set to a PostgreSQL cluster's URL (by ``tests/integration/test_store_on_postgresql.py``), the
tests run here put every store they open by a file path in a fresh database on that cluster
instead: the store's tests run on both back ends."""


@pytest.fixture(autouse=True)
def _stores_on_postgresql(monkeypatch: pytest.MonkeyPatch) -> None:
    server = os.environ.get(STORE_ON_POSTGRESQL)
    if not server:
        return
    import psycopg

    from console.storage import store as store_module
    from console.storage.backends import open_database

    databases: dict[str, str] = {}

    def on_postgresql(location: str | Path) -> object:
        text = str(location)
        if text.startswith("postgresql://"):
            return open_database(text)
        if text not in databases:
            name = f"s_{os.getpid()}_{len(databases)}_{abs(hash(text)) % 10**8}"
            with psycopg.connect(server, autocommit=True) as conn:
                conn.execute(f'CREATE DATABASE "{name}"')
            databases[text] = server.rsplit("/", 1)[0] + "/" + name
        return open_database(databases[text])

    monkeypatch.setattr(store_module, "open_database", on_postgresql)


class Terminal(io.StringIO):
    """Standard input at a terminal, with the answers given typed in advance."""

    def isatty(self) -> bool:
        return True


@pytest.fixture
def at_a_terminal(monkeypatch: pytest.MonkeyPatch) -> Callable[..., None]:
    """``at_a_terminal("yes", "sandbox")``: the command runs at a terminal where these lines are
    typed, one per question (the CLI asks only at a terminal)."""

    def typed(*lines: str) -> None:
        monkeypatch.setattr("sys.stdin", Terminal("".join(f"{line}\n" for line in lines)))

    return typed


TIER_SECONDS: dict[str, float] = {}
"""Seconds spent per tier (setup, call and teardown of its tests, session fixtures included where
they start), for the summary at the end of the run."""


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    tier = tier_of(report.nodeid)
    if tier is not None:
        TIER_SECONDS[tier] = TIER_SECONDS.get(tier, 0.0) + report.duration


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if TIER_SECONDS:
        terminalreporter.write_line(
            "time per tier: " + ", ".join(f"{t} {TIER_SECONDS[t] / 60:.1f} min" for t in TIERS if t in TIER_SECONDS)
        )


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """A failed test's report ends with the tail of each running cluster's broker logs."""
    rep = yield
    if rep.when == "call" and rep.failed and SANDBOXES:
        for sb in SANDBOXES:
            for log_file in sorted(Path(sb.data_dir, "logs").glob("*-server.log")):
                tail = log_file.read_text(errors="replace").splitlines()[-25:]
                rep.sections.append((f"{log_file.name} ({sb.mode})", "\n".join(tail)))
    return rep


os.environ.setdefault("PYTHONUNBUFFERED", "1")


@pytest.fixture
def notify_settings(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Callable[[str], None]]:
    """``notify_settings(toml)`` writes the notification settings the console reads from now on."""
    from console.notify import hub

    def write(text: str) -> None:
        path = tmp_path / "notify.toml"
        path.write_text(text)
        monkeypatch.setenv("CONSOLE_NOTIFY_FILE", str(path))
        hub.reset()

    yield write
    hub.reset()


def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object | None:
    """``--dist loadscope`` with the modules that share the ZooKeeper sandbox or the in-process
    Spark driver kept on one worker each (tests/scheduling.py); any other mode as xdist has it."""
    if config.getoption("dist") != "loadscope":
        return None
    from tests.scheduling import SharedPartsScheduling

    return SharedPartsScheduling(config, log)
