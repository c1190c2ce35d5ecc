"""The same few things on every kind of cluster the console supports: Kafka 4.x in KRaft mode, 3.9 in
KRaft mode and 3.9 in ZooKeeper mode (``any_kafka``, each cluster started once for the module). A
snapshot reads; during a throttled run the console's `list` prints what the official tool of the
same release prints; the run is cancelled back; a generated decommission executes; a reorder ends
with the preferred leader election. Each test leaves the cluster as it found it (the 4.x and the
ZooKeeper clusters are the session's)."""

from __future__ import annotations

import json
import subprocess
import sys

from console import cli
from console.access.auth import Identity
from console.core.model import SourceStatus
from console.plans.plan import Plan, PlanEntry
from console.present.text import list_text
from console.runs.executor import Executor
from console.sandbox.versions import Mode
from console.services import runs as run_service
from console.state.reader import ClusterReader
from console.storage.store import Store
from tests.integration.helpers import BROKERS, clear_throttles, make_topic, no_throttles_left
from tests.support import connection_args, official, settings_for, wait_for, write_plan


def official_list(sb) -> list[str]:
    out = official(sb, "--list")
    assert out.returncode == 0, out.stderr
    assert "No configuration found" not in out.stderr
    return [line for line in out.stdout.strip().splitlines() if line.strip()]


def test_a_snapshot_reads_brokers_racks_dirs_and_partitions(any_kafka):
    make_topic(any_kafka.bootstrap_servers, "xv-read", 3, 2, 20, assignment=[[0, 1], [1, 2], [2, 0]])
    with ClusterReader(settings_for(any_kafka)) as reader:
        state = reader.snapshot()
    assert (state.status.metadata, state.status.reassignments, state.status.log_dirs, state.status.configs) == (
        SourceStatus.OK,
    ) * 4
    zookeeper = SourceStatus.OK if any_kafka.mode is Mode.ZOOKEEPER else SourceStatus.NOT_CONFIGURED
    assert state.status.zookeeper is zookeeper
    assert [(b.id, b.rack) for b in state.brokers] == [(0, "rack-a"), (1, "rack-b"), (2, "rack-c")]
    assert all(b.live and b.eligible and len(b.log_dirs) == 2 for b in state.brokers)
    assert [state.partition("xv-read", p).replicas for p in range(3)] == [(0, 1), (1, 2), (2, 0)]
    assert all(
        state.partition("xv-read", p).size_on(b) for p in range(3) for b in state.partition("xv-read", p).replicas
    )


def test_list_equals_the_official_tool_during_a_throttled_run_then_cancel(any_kafka, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("CONSOLE_DATA_DIR", str(tmp_path))
    bs = any_kafka.bootstrap_servers
    make_topic(bs, "xv-move", 2, 2, 300, assignment=[[0, 1], [1, 0]])
    plan = Plan.of([PlanEntry("xv-move", 0, (0, 2)), PlanEntry("xv-move", 1, (1, 2))])
    try:
        with ClusterReader(settings_for(any_kafka)) as reader:
            before = reader.snapshot().throttles
            executor = Executor(Store(), reader.gateway(), "ann")
            run_id = run_service.start_run(
                executor.store,
                executor.cluster,
                Identity.cli(executor.user),
                reader.snapshot(),
                plan,
                "throttled",
                rate=2000,
                users=None,
            )
            assert executor.tick(run_id).did == "wave 1 submitted (2 partitions)"
            state = wait_for(lambda: len((s := reader.snapshot()).in_flight) == 2 and s, what="both moving")
            assert list_text(state).splitlines() == official_list(any_kafka)
            listed = subprocess.run(
                [sys.executable, "-m", "console", "list", *connection_args(any_kafka)],
                capture_output=True,
                text=True,
                timeout=120,
            )
            assert listed.returncode == 0, listed.stderr
            assert listed.stdout.strip().splitlines() == official_list(any_kafka)

            assert cli.main(["cancel", "--bootstrap-server", bs, "--run", str(run_id), "--yes", "--json"]) == 0
            out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
            assert sorted(out["accepted"]) == ["xv-move-0", "xv-move-1"] and not out["still_in_flight"]
            wait_for(
                lambda: [reader.snapshot().partition("xv-move", p).replicas for p in (0, 1)] == [(0, 1), (1, 0)],
                timeout=30,
                what="back on the original replicas",
            )
            executor.tick(run_id)  # the run's worker cleans up at its next step
            assert Store().runs.get(run_id).state == "cancelled"
            assert wait_for(lambda: reader.snapshot().throttles == before, timeout=30, what="throttles as before")
            assert official_list(any_kafka) == ["No partition reassignments found."]
    finally:
        clear_throttles(bs, BROKERS, ["xv-move"])


def test_a_generated_decommission_executes(any_kafka, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("CONSOLE_DATA_DIR", str(tmp_path))
    bs = any_kafka.bootstrap_servers
    make_topic(bs, "xv-dec", 3, 2, 20, assignment=[[0, 2], [2, 1], [1, 0]])
    code = cli.main(["generate", *connection_args(any_kafka), "--decommission", "2", "--topics", "xv-dec"])
    generated = capsys.readouterr()
    assert code == 0, generated.err
    path = tmp_path / "decommission.json"
    path.write_text(generated.out)
    assert cli.main(["submit", "--bootstrap-server", bs, "--reassignment-json-file", str(path), "--yes"]) == 0
    assert json.loads(capsys.readouterr().out.strip().splitlines()[-1])["state"] == "completed"
    with ClusterReader(settings_for(any_kafka)) as reader:
        state = wait_for(
            lambda: (
                (s := reader.snapshot())
                and all(
                    2 not in s.partition("xv-dec", p).replicas and len(s.partition("xv-dec", p).isr) == 2
                    for p in range(3)
                )
                and s
            ),
            timeout=60,
            what="nothing of xv-dec on broker 2",
        )
        assert state.partition("xv-dec", 2).replicas == (1, 0)  # untouched
        assert not state.in_flight
        wait_for(lambda: no_throttles_left(reader.snapshot()), timeout=30, what="no throttle left behind")


def test_a_reorder_ends_with_the_preferred_leader_election(any_kafka, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("CONSOLE_DATA_DIR", str(tmp_path))
    bs = any_kafka.bootstrap_servers
    make_topic(bs, "xv-elect", 3, 2, 5, assignment=[[0, 1], [1, 2], [2, 0]])
    reordered = [[1, 0], [2, 1], [0, 2]]
    with ClusterReader(settings_for(any_kafka)) as reader:
        wait_for(
            lambda: [reader.snapshot().partition("xv-elect", p).leader for p in range(3)] == [0, 1, 2],
            what="the first replicas leading",
        )
        plan = write_plan(tmp_path / "reorder.json", [("xv-elect", p, r) for p, r in enumerate(reordered)])
        code = cli.main(["submit", "--bootstrap-server", bs, "--reassignment-json-file", str(plan), "--yes"])
        captured = capsys.readouterr()
        out = json.loads(captured.out.strip().splitlines()[-1])
        assert code == 0 and out["state"] == "completed" and out["elect_leaders"] is True, captured.err
        assert not out["rejected"] and not out["not_elected"]
        wait_for(
            lambda: (
                [((p := reader.snapshot().partition("xv-elect", n)).replicas, p.leader) for n in range(3)]
                == [(tuple(r), r[0]) for r in reordered]
            ),
            timeout=30,
            what="the new first replicas leading",
        )
