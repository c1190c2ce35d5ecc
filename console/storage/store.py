"""The console's store: plans, runs and the audit log, in a SQLite file or a PostgreSQL database.

``Store(location)`` opens (or creates) the store at ``location`` (a path, ``sqlite:///…`` or
``postgresql://…``; by default :func:`console.core.paths.store_url`: ``CONSOLE_STORE_URL``, else
the SQLite file in the data dir) and brings its schema up to date
(:mod:`console.storage.migrations`); ``store.plans``, ``store.runs``, ``store.audit``, … are its
stores; ``store.transaction()`` groups writes of several of them (a state change and its audit
entry) into one transaction.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from pathlib import Path

from console.core.paths import store_url
from console.storage import (
    audit,
    clusters,
    decommissions,
    drafts,
    holds,
    migrations,
    notifications,
    plans,
    runs,
    scrape,
    sessions,
    signins,
    stream,
)
from console.storage.backends import open_database
from console.storage.db import Database


class Store:
    def __init__(self, location: Path | str | None = None) -> None:
        self.location = str(location) if location is not None else store_url()
        self.db = open_database(self.location)
        try:
            migrations.apply(self.db)
        except BaseException:
            self.db.close()
            raise
        self.path = Path(self.db.where) if self.db.dialect == "sqlite" else None
        """The SQLite file (None on PostgreSQL)."""
        self.plans = plans.PlanStore(self.db)
        self.runs = runs.RunStore(self.db)
        self.audit = audit.AuditLog(self.db)
        self.sessions = sessions.SessionStore(self.db)
        """Sign-in sessions (users file)."""
        self.signins = signins.SignInStore(self.db)
        """Failed sign-ins (the back-off) and one-time tickets for the session cookie."""
        self.drafts = drafts.DraftStore(self.db)
        """Autosaved drafts of the Drafts page, per user and cluster."""
        self.decommissions = decommissions.DecommissionStore(self.db)
        """Decommission flows (cordon, drain, verify, unregister), resumable."""
        self.clusters = clusters.ClusterNames(self.db)
        """The names the pages read each cluster (key) under, for the audit log and the runs list."""
        self.stream = stream.StreamCursors(self.db)
        """Where each sink of the audit log as a stream has got to."""
        self.notifications = notifications.NotificationFailures(self.db)
        """Notifications that could not be delivered after their retries."""
        self.scrape = scrape.ScrapeReads(self.db)
        """The runs as the metrics read them at scrape time."""
        self.holds = holds.RunHolds(self.db)
        """The guardrails holding each active run."""

    def transaction(self) -> AbstractContextManager[Database]:
        """One transaction around every write inside it (re-entrant)."""
        return self.db.transaction()

    def close(self) -> None:
        self.db.close()
