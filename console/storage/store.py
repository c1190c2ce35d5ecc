"""The console's store: plans, runs and the audit log over one SQLite file.

``Store(path)`` opens (or creates) the file; ``store.plans``, ``store.runs`` and ``store.audit``
are the three stores; ``store.transaction()`` groups writes of several of them (a state change
and its audit entry) into one transaction.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from pathlib import Path

from console.core.paths import store_file
from console.storage import (
    audit,
    clusters,
    decommissions,
    drafts,
    notifications,
    plans,
    runs,
    scrape,
    sessions,
    signins,
    stream,
)
from console.storage.db import Database


class Store:
    def __init__(self, path: Path | str | None = None) -> None:
        self.path = Path(path) if path is not None else store_file()
        self.db = Database(
            self.path,
            (
                plans.SCHEMA,
                runs.SCHEMA,
                runs.PROGRESS_SCHEMA,
                audit.SCHEMA,
                sessions.SCHEMA,
                signins.SCHEMA,
                drafts.SCHEMA,
                decommissions.SCHEMA,
                clusters.SCHEMA,
                stream.SCHEMA,
                notifications.SCHEMA,
            ),
        )
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

    def transaction(self) -> AbstractContextManager[Database]:
        """One transaction around every write inside it (re-entrant)."""
        return self.db.transaction()

    def close(self) -> None:
        self.db.close()
