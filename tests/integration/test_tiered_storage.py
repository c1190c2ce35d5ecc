"""Tiered storage (KIP-405) on a real cluster: a sandbox of the module's own with Kafka's
LocalTieredStorage (Kafka 4.3.1: Maven Central has no kafka-storage test jar for 4.4.0). The console
reads which topics are tiered, and a move of one copies the local log only, as Review says; the
rollback of that release names each replica's log dir, as the official tool prints it; the
console's own submit of a tiered topic says so and copies the local log only too."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from console import cli
from console.core.model import BrokerId, ClusterState
from console.plans.diff import diff
from console.plans.plan import Plan, PlanEntry, rollback
from console.plans.rules.codes import TIERED_LOCAL_ONLY
from console.plans.validate import errors, validate
from console.present.review import local_only_topics, tiered_note
from console.sandbox.cluster import Sandbox
from console.sandbox.demo import create_assigned_topic, fill
from console.state.document import state_json
from console.state.reader import ClusterReader
from tests.integration.helpers import settle
from tests.support import OTHER_KAFKA4, official, own_sandbox, settings_for, wait_for

KB = 3_000
"""Kilobytes written to the tiered partition: three 1 MB segments, two of them rolled and offloaded."""


@pytest.fixture(scope="module")
def tiered(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sandbox]:
    yield from own_sandbox(tmp_path_factory, "sandbox-tiered", kafka_version=OTHER_KAFKA4, tiered_storage=True)


def ids(*b: int) -> tuple[BrokerId, ...]:
    return tuple(BrokerId(x) for x in b)


def offloaded(reader: ClusterReader) -> ClusterState | None:
    """The snapshot once the tiered partition keeps less than half of what was written locally (its
    size read now: it is not moving, so a snapshot between two full reads carries it over)."""
    state = reader.snapshot(info=True, full=True)
    p = state.partition("tiered-mv", 0)
    size = p.size if p is not None else None
    return state if size is not None and size < KB * 1024 // 2 else None


def test_a_move_of_a_tiered_topic_copies_its_local_log_only(tiered, tmp_path, monkeypatch, capsys):
    bs = tiered.bootstrap_servers
    monkeypatch.setenv("CONSOLE_DATA_DIR", str(tmp_path))
    assert tiered.info()["tiered_storage"] is True
    create_assigned_topic(
        bs,
        "tiered-mv",
        [[0, 1]],
        configs={"remote.storage.enable": "true", "local.retention.bytes": "1", "retention.ms": "-1"},
    )
    create_assigned_topic(bs, "local-mv", [[0, 1]])
    fill(bs, "tiered-mv", 1, KB)
    fill(bs, "local-mv", 1, 100)
    with ClusterReader(settings_for(tiered)) as reader:
        state = wait_for(lambda: offloaded(reader), timeout=90, what="the rolled segments to move to remote storage")
        remote = [f for f in Path(tiered.data_dir, "remote").rglob("*.log") if "tiered-mv-0" in str(f)]
        assert remote, "LocalTieredStorage holds the offloaded segments"
        assert state.tiered_topics == ("tiered-mv",)
        assert state_json(state)["tiered_topics"] == ["tiered-mv"]
        local = state.partition("tiered-mv", 0).size_on(BrokerId(0))

        plan = Plan.of([PlanEntry("tiered-mv", 0, ids(2, 1)), PlanEntry("local-mv", 0, ids(2, 1))])
        d = diff(state, plan)
        assert d.changes[1].bytes_to_copy == local  # what DescribeLogDirs reports: the local log
        found = validate(state, plan, d)
        assert not errors(found)
        said = [f for f in found if f.code == TIERED_LOCAL_ONLY]
        assert [f.topic for f in said] == ["tiered-mv"], found
        assert local_only_topics(found) == ["tiered-mv"]
        assert "copies their local log only" in tiered_note(["tiered-mv"])

        path = tmp_path / "plan.json"
        path.write_text(plan.to_json())
        ran = official(tiered, "--execute", "--reassignment-json-file", str(path))
        assert ran.returncode == 0, ran.stdout + ran.stderr
        # Kafka 4.3: the official rollback names each replica's log dir, and so does the console's
        printed = re.search(r"Current partition replica assignment\s*\n\s*\n(\{.*\})\s*\n", ran.stdout).group(1)
        assert printed == rollback(state, plan).to_json()
        assert "/broker-0/d" in printed
        settle(reader)
        after = reader.snapshot()
        moved = after.partition("tiered-mv", 0)
        assert moved.replicas == ids(2, 1)
        # the new replica holds the leader's local log, not the segments in remote storage
        assert moved.size_on(BrokerId(2)) is not None
        assert moved.size_on(BrokerId(2)) < KB * 1024 // 2

        # the console's own submit moves it on, and says what it copies
        back = tmp_path / "back.json"
        back.write_text(Plan.of([PlanEntry("tiered-mv", 0, ids(0, 1))]).to_json())
        code = cli.main(
            ["submit", "--bootstrap-server", bs, "--reassignment-json-file", str(back), "--yes", "--no-elect-leaders"]
        )
        said = capsys.readouterr().err
        assert code == 0, said
        assert "copies their local log only" in said
        again = wait_for(
            lambda: (
                (p := reader.snapshot().partition("tiered-mv", 0)).replicas == ids(0, 1) and not p.reassigning and p
            ),
            timeout=60,
            what="the console's move completed",
        )
        assert again.size_on(BrokerId(0)) is not None and again.size_on(BrokerId(0)) < KB * 1024 // 2
