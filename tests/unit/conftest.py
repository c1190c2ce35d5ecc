"""The unit tier's fixtures: the pure core and the write path on the in-memory fake cluster; no
Kafka cluster, no browser (a test asking for the ``sandbox`` fixture here is refused at collection)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from console.access.auth import APPROVER, OPERATOR, VIEWER, Identity
from console.core.model import BrokerId, ClusterState
from console.plans.plan import Plan, PlanEntry
from console.services import plans as plan_service
from console.services import runs as run_service
from console.storage.store import Store
from tests.fakes.cluster import FakeCluster


@dataclass(frozen=True)
class ServiceWorld:
    """A store and a fake cluster with something for every service to act on: a saved plan by
    carol (not approved) and an active run of another plan, started by carol; the fake's call log
    is empty."""

    store: Store
    fake: FakeCluster
    state: ClusterState
    """The cluster as the caller read it (read before the call log was emptied)."""
    plan_id: int
    plan: Plan
    run_id: int


@pytest.fixture
def viewer() -> Identity:
    return Identity("vic", frozenset({VIEWER}), "users file")


@pytest.fixture
def operator() -> Identity:
    return Identity("olga", frozenset({OPERATOR}), "users file")


@pytest.fixture
def approver() -> Identity:
    return Identity("abe", frozenset({APPROVER}), "users file")


@pytest.fixture
def service_world(tmp_path: Path) -> Iterator[ServiceWorld]:
    fake = FakeCluster.of(3, {"t": [[0, 1], [1, 2]], "u": [[0, 2]]})
    store = Store(tmp_path / "console.db")
    carol = Identity.cli("carol")
    state = fake.snapshot()
    plan = Plan.of([PlanEntry("u", 0, (BrokerId(1), BrokerId(2)))]).with_basis(state)
    plan_id = plan_service.save_plan(store, carol, state, fake.name, "p", plan)
    moving = Plan.of([PlanEntry("t", 0, (BrokerId(2), BrokerId(1)))])
    run_id = run_service.start_run(store, fake, carol, state, moving, "r", users=None)
    fake.calls.clear()
    yield ServiceWorld(store, fake, state, plan_id, plan, run_id)
    store.close()


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    """An empty store in ``tmp_path``, closed after the test."""
    s = Store(tmp_path / "c.db")
    yield s
    s.close()
