"""What the unit tests of the services act on (the ``service_world`` fixture in conftest.py builds it)."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from console.core.model import ClusterState
from console.plans.plan import Plan
from console.storage.store import Store
from tests.fakes.cluster import FakeCluster

SHELL_USER = "carl"
"""Who the command line acts as in the ``cli_world`` fixture (the shell's user, as
``getpass.getuser()`` reads it from ``LOGNAME``/``USER``)."""


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


def store_rows(store: Store) -> dict[str, list[tuple[object, ...]]]:
    """Every row of every table but the audit log (and SQLite's own), as committed."""
    assert store.path is not None
    with sqlite3.connect(store.path) as db:
        names = db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        tables = [t for (t,) in names if t != "audit" and not t.startswith("sqlite_")]
        return {t: sorted(db.execute(f'SELECT * FROM "{t}"').fetchall(), key=repr) for t in tables}
