"""What the unit tests of the services act on (the ``service_world`` fixture in conftest.py builds it)."""

from __future__ import annotations

from dataclasses import dataclass

from console.core.model import ClusterState
from console.plans.plan import Plan
from console.storage.store import Store
from tests.fakes.cluster import FakeCluster


@dataclass(frozen=True)
class ServiceWorld:
    """A store and a fake cluster with something for every service to act on: a saved plan by
    carol (not approved), an active run of another plan, started by carol, and an open
    decommission flow; the fake's call log is empty."""

    store: Store
    fake: FakeCluster
    state: ClusterState
    """The cluster as the caller read it (read before the call log was emptied)."""
    plan_id: int
    plan: Plan
    run_id: int
    flow_id: int
    """An open decommission flow of broker 2, at its first step (nothing done yet)."""
