"""Fixtures and hooks for every tier: the tier markers, a real sandbox cluster per session (for the
integration, app and e2e tiers; the unit tier never starts one), the cluster logs of a failed test.
Plain helpers shared by the tiers are in tests/support.py."""

from __future__ import annotations

import os
from collections.abc import Generator, Iterator
from pathlib import Path

import pytest

from console.sandbox import cluster
from console.sandbox.cluster import Sandbox
from tests.support import SANDBOXES, log

TESTS = Path(__file__).resolve().parent
TIERS = ("unit", "integration", "app", "e2e")
"""One directory under tests/ per tier, each marked with its name (``pytest -m unit``)."""
NEEDS_A_CLUSTER = {"sandbox", "demo_sandbox"}


def tier_of(item: pytest.Item) -> str | None:
    try:
        top = item.path.resolve().relative_to(TESTS).parts[0]
    except ValueError:
        return None
    return top if top in TIERS else None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Each test marked with its tier (no test needs a decorator); a unit test that would start a
    Kafka cluster is refused (``make test-unit`` is the inner loop: no cluster, no browser)."""
    for item in items:
        tier = tier_of(item)
        if tier is None:
            continue
        item.add_marker(getattr(pytest.mark, tier))
        if tier == "unit" and NEEDS_A_CLUSTER & set(getattr(item, "fixturenames", ())):
            raise pytest.UsageError(f"{item.nodeid} asks for a sandbox cluster: move it to tests/integration")


@pytest.fixture(scope="session")
def sandbox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sandbox]:
    """ZooKeeper + 3 brokers, shared by every test that does not break it."""
    data = tmp_path_factory.mktemp("sandbox-zk")
    sb = cluster.up(data, log=log)
    SANDBOXES.append(sb)
    yield sb
    cluster.down(data, log=log)


@pytest.fixture(scope="session")
def demo_sandbox(sandbox: Sandbox) -> Sandbox:
    from console.sandbox.demo import DEMO_TOPICS, create_topics, produce

    small = tuple(t.__class__(t.name, t.partitions, t.replication, 0.5) for t in DEMO_TOPICS)
    create_topics(sandbox.bootstrap_servers, small, log=log)
    produce(sandbox.bootstrap_servers, small, log=log)
    return sandbox


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
