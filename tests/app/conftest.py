"""The app tier's fixtures (AppTest runs the pages in-process)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest


@pytest.fixture
def env_cluster(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Callable[..., None]:
    """``env_cluster(bootstrap, zookeeper=None)`` points the console at a cluster named "test" through
    its environment; its data dir is ``tmp_path`` (no sandbox discovered from the default place)."""
    monkeypatch.setenv("CONSOLE_DATA_DIR", str(tmp_path))

    def point(bs: str, zk: str | None = None) -> None:
        monkeypatch.setenv("CONSOLE_BOOTSTRAP_SERVERS", bs)
        monkeypatch.setenv("CONSOLE_CLUSTER_NAME", "test")
        if zk:
            monkeypatch.setenv("CONSOLE_ZOOKEEPER", zk)
        else:
            monkeypatch.delenv("CONSOLE_ZOOKEEPER", raising=False)

    return point
