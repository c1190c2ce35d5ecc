"""The names the console's pages know clusters by, per cluster key (its id).

Runs, plans and the audit log name a cluster by its id (:func:`console.core.model.cluster_key`:
two configured names for one cluster are one cluster). The pages remember here the configured name
they read each cluster under, so that the audit log and ``python -m console runs`` show a name
where one is known, and the id where none is.
"""

from __future__ import annotations

import time
from collections.abc import Mapping

from console.storage.db import StorePart

SCHEMA = """
CREATE TABLE IF NOT EXISTS cluster_names (
    key     TEXT PRIMARY KEY,
    name    TEXT NOT NULL,
    seen_at REAL NOT NULL
);
"""


class ClusterNames(StorePart):
    def remember(self, key: str, name: str) -> None:
        """``name`` is what cluster ``key`` was last read as (a key that is its own name is not kept)."""
        if name and name != key:
            self.db.execute(
                "INSERT INTO cluster_names (key, name, seen_at) VALUES (?, ?, ?) "
                "ON CONFLICT(key) DO UPDATE SET name = excluded.name, seen_at = excluded.seen_at",
                (key, name, time.time()),
            )

    def names(self) -> dict[str, str]:
        """Cluster key → the name it was last read as."""
        return {str(r[0]): str(r[1]) for r in self.db.query("SELECT key, name FROM cluster_names")}


def name_of(key: str, names: Mapping[str, str]) -> str:
    """A cluster as people name it: its known name, else its key (its id, or the name it was keyed by)."""
    return names.get(key, key)
