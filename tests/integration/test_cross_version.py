"""The same few things on every kind of cluster the console supports: Kafka 4.4 (the session's), 4.0,
4.1 and 4.2 in KRaft mode, 3.9 in KRaft mode and 3.9 in ZooKeeper mode (``any_kafka``, each cluster
started once for the module). A snapshot reads; what the cluster says it supports is what its release
brings, and what the console turns on follows it (fenced brokers in DescribeCluster from 4.0, ELR on
for a new cluster and guarded moves from 4.1, rollbacks naming log dirs from 4.2, cordons from 4.3);
during a throttled run the console's `list` prints what the official tool of the same release prints;
the run is cancelled back; the console's rollback is the official tool's, byte for byte, and submitted
puts the replicas back; a guarded RF change is refused only where the controller has the guard, and a
plan mixing a move and an RF change completes everywhere; a cordon is refused, nothing sent, where the
cluster does not enforce cordons; a generated decommission executes; a reorder ends with the preferred
leader election. Each test leaves the cluster as it found it (the 4.4 and the ZooKeeper clusters are
the session's)."""

from __future__ import annotations

import json
import re
import subprocess
import sys

from console import cli
from console.access.auth import Identity
from console.core.cluster_info import (
    ALTER_PARTITION_REASSIGNMENTS,
    CORDON_LEVEL,
    ELR_VERSION,
    METADATA_VERSION,
    RF_GUARD_VERSION,
    ROLLBACK_DIRS_RELEASE,
    capabilities,
    cordons_supported,
    release_number,
    release_number_of,
    rollback_names_dirs,
)
from console.core.model import BrokerId, ClusterMode, SourceStatus
from console.plans.plan import Plan, PlanEntry, parse_plan, rollback
from console.present.text import list_text
from console.runs.executor import Executor
from console.sandbox.versions import Mode
from console.services import runs as run_service
from console.state.reader import ClusterReader
from console.storage.store import Store
from tests.integration.helpers import BROKERS, clear_throttles, make_topic, no_throttles_left, settle
from tests.support import connection_args, official, settings_for, wait_for, write_plan

DESCRIBE_CLUSTER = 60
"""API key of DescribeCluster; from v2 (KIP-1073, Kafka 4.0) it lists fenced brokers, each said so."""


def ids(*b: int) -> tuple[BrokerId, ...]:
    return tuple(BrokerId(x) for x in b)


def line_of(sb) -> tuple[int, int]:
    """The release line the sandbox was started on: ``(4, 1)`` for 4.1.2."""
    line = release_number_of(sb.kafka_version)
    assert line is not None
    return line


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


def test_what_the_cluster_says_it_supports_is_its_releases_and_the_console_follows_it(any_kafka):
    with ClusterReader(settings_for(any_kafka)) as reader:
        state = reader.snapshot(info=True)
    info, line = state.info, line_of(any_kafka)
    assert (info.versions_status, info.features_status) == (SourceStatus.OK, SourceStatus.OK)
    assert release_number(info) == line  # read from the cluster, not from the sandbox
    assert info.mode is (ClusterMode.ZOOKEEPER if any_kafka.mode is Mode.ZOOKEEPER else ClusterMode.KRAFT)
    elr, mv = info.feature(ELR_VERSION), info.feature(METADATA_VERSION)
    apr, dc = info.api(ALTER_PARTITION_REASSIGNMENTS), info.api(DESCRIBE_CLUSTER)
    assert apr is not None and dc is not None

    # what the release brings, as the cluster says it: ELR exists from 4.0 and is on for a new
    # cluster from 4.1; guarded moves (AlterPartitionReassignments v1) from 4.1; DescribeCluster
    # lists fenced brokers (v2) from 4.0; cordons (metadata.version 4.3-IV0) from 4.3
    assert (elr is not None) is (line >= (4, 0))
    assert (elr is not None and elr.level >= 1) is (line >= (4, 1))
    assert (apr.max_version >= RF_GUARD_VERSION) is (line >= (4, 1))
    assert (dc.max_version >= 2) is (line >= (4, 0))
    assert (mv is not None and mv.level >= CORDON_LEVEL) is (line >= (4, 3))
    if any_kafka.mode is Mode.KRAFT:
        assert mv is not None and mv.level == mv.max_supported  # a new cluster: the newest level
    else:
        assert mv is None or mv.level == 0

    # the console turns on what the cluster says it supports, and nothing else
    on = {c.name: c.on for c in capabilities(info)}
    assert on["Eligible leader replicas"] is (elr is not None and elr.level >= 1)
    assert on["Replication-factor guard"] is (apr.max_version >= RF_GUARD_VERSION)
    assert on["Cordoned log dirs"] is (mv is not None and mv.level >= CORDON_LEVEL)
    assert on["Rollback with log dirs"] is (line >= ROLLBACK_DIRS_RELEASE)
    assert on["Controller quorum view"] is (any_kafka.mode is Mode.KRAFT)
    # fenced brokers: each said unfenced where DescribeCluster lists them, not known before
    if dc.max_version >= 2:
        assert state.status.fenced is SourceStatus.OK
        assert [(b.id, b.fenced) for b in state.brokers] == [(0, False), (1, False), (2, False)]
    else:
        assert state.status.fenced is SourceStatus.UNSUPPORTED
        assert all(b.fenced is None and b.registered for b in state.brokers)


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
                reader.snapshot(),
                run_service.RunRequest(
                    Identity.cli(executor.user), plan, "throttled", run_service.RunSettings(rate=2000)
                ),
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
    assert cli.main(["submit", "--bootstrap-server", bs, "--reassignment-json-file", str(path), "--yes", "--json"]) == 0
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
        code = cli.main(["submit", "--bootstrap-server", bs, "--reassignment-json-file", str(plan), "--yes", "--json"])
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


def test_the_rollback_is_the_official_tools_and_submitted_puts_the_replicas_back(
    any_kafka, tmp_path, monkeypatch, capsys
):
    # What the official --execute of the same release prints as "Current partition replica
    # assignment", byte for byte: each replica's log dir from 4.2 (KAFKA-19582), "any" before.
    monkeypatch.setenv("CONSOLE_DATA_DIR", str(tmp_path))
    sb, bs = any_kafka, any_kafka.bootstrap_servers
    make_topic(bs, "xv-back", 3, 2, 20, assignment=[[0, 1], [1, 2], [2, 0]])
    plan = Plan.of(
        [PlanEntry("xv-back", 0, ids(2, 1)), PlanEntry("xv-back", 2, ids(1, 0)), PlanEntry("xv-back", 1, ids(1, 2))]
    )
    path = tmp_path / "plan.json"
    path.write_text(plan.to_json())
    with ClusterReader(settings_for(sb)) as reader:
        before = reader.snapshot(info=True)
        capsys.readouterr()
        assert cli.main(["rollback", *connection_args(sb), "--reassignment-json-file", str(path)]) == 0
        said = capsys.readouterr().out.strip()
        ran = official(sb, "--execute", "--reassignment-json-file", str(path))
        assert ran.returncode == 0, ran.stdout + ran.stderr
        printed = re.search(r"Current partition replica assignment\s*\n\s*\n(\{.*\})\s*\n", ran.stdout).group(1)
        back = rollback(before, plan)
        assert said == printed == back.to_json()
        assert parse_plan(printed) == back
        dirs = {d for e in back.entries for d in e.log_dirs or ("any",)}
        if rollback_names_dirs(before.info):  # 4.2 and later: every replica's own dir
            assert line_of(sb) >= (4, 2)
            assert all(d.startswith(str(sb.data_dir)) and d.endswith(("/d1", "/d2")) for d in dirs), dirs
        else:
            assert line_of(sb) < (4, 2) and dirs == {"any"}
        settle(reader)
        wait_for(  # the brokers' metadata may lag the controller's list by a moment
            lambda: [reader.snapshot().partition("xv-back", p).replicas for p in range(3)] == [(2, 1), (1, 2), (1, 0)],
            timeout=30,
            what="the plan carried out",
        )

        # the official tool's rollback, submitted by the console, puts every replica back (in its dir)
        undo = tmp_path / "rollback.json"
        undo.write_text(printed)
        code = cli.main(["submit", "--bootstrap-server", bs, "--reassignment-json-file", str(undo), "--yes", "--json"])
        captured = capsys.readouterr()
        assert code == 0 and json.loads(captured.out.strip().splitlines()[-1])["state"] == "completed", captured.err
        after = wait_for(
            lambda: (
                (s := reader.snapshot())
                and not s.in_flight
                and all(s.partition("xv-back", p).replicas == before.partition("xv-back", p).replicas for p in range(3))
                and all(not any(log.is_future for log in s.partition("xv-back", p).logs) for p in range(3))
                and s
            ),
            what="the rollback done: every replica back, no future log left",
        )
        for p in range(3):
            was, now = before.partition("xv-back", p), after.partition("xv-back", p)
            if rollback_names_dirs(before.info):  # before 4.2 the broker picks the dir of a returning replica
                assert [now.log_dir_on(b) for b in now.replicas] == [was.log_dir_on(b) for b in was.replicas]
        wait_for(lambda: no_throttles_left(reader.snapshot()), timeout=30, what="no throttle left behind")


def test_a_guarded_rf_change_is_refused_only_where_the_controller_has_the_guard(
    any_kafka, tmp_path, monkeypatch, capsys
):
    monkeypatch.setenv("CONSOLE_DATA_DIR", str(tmp_path))
    bs = any_kafka.bootstrap_servers
    make_topic(bs, "xv-rf", 4, 2, 5, assignment=[[0, 1], [1, 2], [2, 0], [0, 2]])
    with ClusterReader(settings_for(any_kafka)) as reader:
        apr = reader.snapshot(info=True).info.api(ALTER_PARTITION_REASSIGNMENTS)
        guarded = apr is not None and apr.max_version >= RF_GUARD_VERSION
        assert guarded is (line_of(any_kafka) >= (4, 1))
        out = reader.kafka.alter_reassignments(
            {("xv-rf", 0): ids(0, 1, 2), ("xv-rf", 1): ids(2, 1)}, allow_rf_change=False
        )
        if guarded:  # KIP-860: the controller refuses the RF change, takes the move beside it
            assert (out[("xv-rf", 0)].accepted, out[("xv-rf", 0)].code) == (False, "INVALID_REPLICATION_FACTOR")
        else:  # no AlterPartitionReassignments v1: sent unguarded, as before KIP-860
            assert out[("xv-rf", 0)].accepted
        assert out[("xv-rf", 1)].accepted
        settle(reader)
        wanted = [(0, 1) if guarded else (0, 1, 2), (2, 1)]
        wait_for(  # the brokers' metadata may lag the controller's list by a moment
            lambda: [reader.snapshot().partition("xv-rf", p).replicas for p in (0, 1)] == wanted,
            timeout=30,
            what=f"xv-rf-0 and -1 on {wanted}",
        )

        # a plan with a move and an RF change completes on every release (the RF change sent on its
        # own, allowed, where there is a guard)
        plan = write_plan(tmp_path / "mixed.json", [("xv-rf", 2, [2, 1]), ("xv-rf", 3, [0, 2, 1])])
        code = cli.main(["submit", "--bootstrap-server", bs, "--reassignment-json-file", str(plan), "--yes", "--json"])
        captured = capsys.readouterr()
        assert code == 0 and json.loads(captured.out.strip().splitlines()[-1])["state"] == "completed", captured.err
        wait_for(
            lambda: [reader.snapshot().partition("xv-rf", p).replicas for p in (2, 3)] == [(2, 1), (0, 2, 1)],
            timeout=30,
            what="the move and the RF change carried out",
        )
        wait_for(lambda: no_throttles_left(reader.snapshot()), timeout=30, what="no throttle left behind")


def test_a_cordon_is_refused_with_nothing_sent_where_the_cluster_does_not_enforce_cordons(
    any_kafka, tmp_path, monkeypatch, capsys
):
    monkeypatch.setenv("CONSOLE_DATA_DIR", str(tmp_path))
    with ClusterReader(settings_for(any_kafka)) as reader:
        supported = cordons_supported(reader.snapshot(info=True).info)
    assert supported is (line_of(any_kafka) >= (4, 3))
    try:
        code = cli.main(["cordon", *connection_args(any_kafka), "--broker", "2", "--yes", "--json"])
        captured = capsys.readouterr()
        if supported:
            assert code == 0, captured.err
            assert json.loads(captured.out.strip().splitlines()[-1])["reported"] == ["*"]
        else:
            assert code == 1 and "does not support cordoned log dirs" in captured.err
            assert "Nothing was sent" in captured.err
            (entry,) = [e for e in Store().audit.entries() if e.action == "cordon"]
            assert entry.outcome == "refused"
        code = cli.main(["state", *connection_args(any_kafka), "--json"])
        brokers = {b["id"]: b for b in json.loads(capsys.readouterr().out)["brokers"]}
        assert brokers[2]["cordoned"] is (True if supported else None)
    finally:
        if supported:
            assert cli.main(["uncordon", *connection_args(any_kafka), "--broker", "2", "--yes"]) == 0
