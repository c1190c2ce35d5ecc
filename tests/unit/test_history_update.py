"""The history job run on the server on request (History's "Update the history now") is a service:
an operator runs it, audited when it starts and ends; one runs at a time over a history (a second
request while one runs is refused at once, audited, never queued); a failed job is audited with
its message. The job itself is stood in for (the Spark job has its own tests)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from console.access.auth import Identity
from console.core.errors import ConfigError, JobAlreadyRunning
from console.services import history as history_service
from console.services.guard import REFUSED
from console.services.history import ACTION, JOB
from console.storage.store import Store


def outcomes(store: Store) -> list[tuple[str, str]]:
    return [(e.user, e.outcome) for e in store.audit.entries() if e.action in (ACTION, JOB)]


def test_an_operator_updates_the_history_audited(store: Store, operator: Identity, tmp_path: Path) -> None:
    said: list[str] = []

    def job(snapshots: str, tables: str) -> Iterator[str]:
        assert (snapshots, tables) == (str(tmp_path / "s"), str(tmp_path / "t"))
        yield "[1/2] reading"
        yield "[2/2] writing"

    lines = history_service.update_history(store, operator, "c1", tmp_path / "s", tmp_path / "t", said.append, job)
    assert lines == 2 and said == ["[1/2] reading", "[2/2] writing"]
    assert outcomes(store) == [("olga", "started"), ("olga", "updated")]
    assert {e.cluster for e in store.audit.entries(action=JOB)} == {"c1"}


def test_a_second_request_while_one_runs_is_refused_at_once(store: Store, operator: Identity, tmp_path: Path) -> None:
    running, release = threading.Event(), threading.Event()

    def slow(snapshots: str, tables: str) -> Iterator[str]:
        running.set()
        assert release.wait(30)
        yield "done"

    first = threading.Thread(
        target=history_service.update_history,
        args=(store, operator, "c1", tmp_path / "s", tmp_path / "t"),
        kwargs={"job": slow},
    )
    first.start()
    try:
        assert running.wait(30)
        other = Identity("otto", operator.roles, "users file")
        with pytest.raises(JobAlreadyRunning, match=r"running already \(olga since .*\): one runs at a time") as e:
            history_service.update_history(store, other, "c1", tmp_path / "s", tmp_path / "t", job=slow)
        assert "Wait for it to finish" in e.value.hint
    finally:
        release.set()
        first.join(30)
    assert outcomes(store) == [("olga", "started"), ("otto", REFUSED), ("olga", "updated")]
    # once it is over, the next one runs
    history_service.update_history(store, operator, "c1", tmp_path / "s", tmp_path / "t", job=lambda s, t: iter(()))
    assert outcomes(store)[-1] == ("olga", "updated")


def test_a_failed_job_is_audited_with_its_message_and_frees_the_history(
    store: Store, operator: Identity, tmp_path: Path
) -> None:
    def broken(snapshots: str, tables: str) -> Iterator[str]:
        yield "[1/2] reading"
        raise ConfigError("No snapshot in s.", "Collect first.")

    with pytest.raises(ConfigError, match="No snapshot"):
        history_service.update_history(store, operator, "c1", tmp_path / "s", tmp_path / "t", job=broken)
    assert outcomes(store) == [("olga", "started"), ("olga", "failed")]
    assert "No snapshot in s." in (store.audit.entries(action=JOB)[-1].response or "")
    history_service.update_history(store, operator, "c1", tmp_path / "s", tmp_path / "t", job=lambda s, t: iter(()))
    assert outcomes(store)[-1] == ("olga", "updated")
