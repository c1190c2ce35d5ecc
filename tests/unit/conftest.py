"""The unit tier's fixtures: the pure core and the write path on the in-memory fake cluster; no
Kafka cluster, no browser (a test asking for the ``sandbox`` fixture here is refused at collection)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest

from console.access.auth import APPROVER, OPERATOR, VIEWER, Identity
from console.core.model import BrokerId
from console.plans.plan import Plan, PlanEntry
from console.runs import executor as executor_module
from console.runs import submitting, throttling, watching
from console.services import cancel as cancel_service
from console.services import plans as plan_service
from console.services import runs as run_service
from console.storage.store import Store
from tests.fakes.cluster import FakeCluster, FakeReader
from tests.unit.world import SHELL_USER, ServiceWorld


@pytest.fixture
def guest() -> Identity:
    """Who acts in a window that never signed in (the users file exists)."""
    return Identity("guest", frozenset({VIEWER}), "not signed in")


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
    run_id = run_service.start_run(store, fake, state, run_service.RunRequest(carol, moving, "r"), users=None)
    flow_id = store.decommissions.create(fake.cluster_id, (BrokerId(2),), "carol")
    fake.calls.clear()
    yield ServiceWorld(store, fake, state, plan_id, plan, run_id, flow_id)
    store.close()


@pytest.fixture
def cli_world(service_world: ServiceWorld, monkeypatch: pytest.MonkeyPatch) -> ServiceWorld:
    """The ``service_world`` as the command line finds it: its store is the console's store
    (``CONSOLE_DATA_DIR``), every command that reads a cluster reads its fake cluster, and the
    shell's user is :data:`SHELL_USER` (``USER``/``LOGNAME``: set them again to act as another)."""
    from console.cli import cordons, decommission, plans, run_control, runs, saved

    assert service_world.store.path is not None
    monkeypatch.setenv("CONSOLE_DATA_DIR", str(service_world.store.path.parent))
    for name in ("CONSOLE_USERS_FILE", "CONSOLE_STORE_URL"):
        monkeypatch.delenv(name, raising=False)
    for name in ("LOGNAME", "USER"):
        monkeypatch.setenv(name, SHELL_USER)
    for module in (cordons, decommission, plans, run_control, runs, saved):
        monkeypatch.setattr(module, "connect", lambda args: FakeReader(service_world.fake))
    return service_world


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    """An empty store in ``tmp_path``, closed after the test."""
    s = Store(tmp_path / "c.db")
    yield s
    s.close()


@pytest.fixture
def no_sleep(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """No real sleep anywhere in the executor or the services (settle/poll/cancel waits); the
    seconds they would have slept, in order. A module uses it for every test with
    ``pytestmark = pytest.mark.usefixtures("no_sleep")``."""
    slept: list[float] = []
    shim = SimpleNamespace(sleep=slept.append, monotonic=time.monotonic, perf_counter=time.perf_counter, time=time.time)
    for part in (executor_module, submitting, throttling, watching):  # every part of the executor that waits
        monkeypatch.setattr(part, "time", shim)
    monkeypatch.setattr(run_service, "time", shim)
    monkeypatch.setattr(cancel_service, "time", shim)
    return slept
