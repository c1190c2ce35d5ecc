"""The unit tier's fixtures: the pure core and the write path on the in-memory fake cluster; no
Kafka cluster, no browser (a test asking for the ``sandbox`` fixture here is refused at collection)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from console.storage.store import Store


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    """An empty store in ``tmp_path``, closed after the test."""
    s = Store(tmp_path / "c.db")
    yield s
    s.close()
