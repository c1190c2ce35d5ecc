"""The app tier's fixtures (AppTest runs the pages in-process)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
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


@pytest.fixture(autouse=True)
def no_internal_error(caplog: pytest.LogCaptureFixture) -> Iterator[None]:
    """app.py shows a bug in a page as an internal-error box (logged with its traceback) instead of
    an exception on the page: a test that saw one fails, as it would have on the exception."""
    with caplog.at_level(logging.ERROR, logger="console.app"):
        yield
    bugs = [r for r in caplog.records if r.name == "console.app" and r.levelno >= logging.ERROR]
    assert not bugs, "a page hit a bug:\n" + "\n".join(caplog.text.splitlines()[-40:])
