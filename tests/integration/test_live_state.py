"""The console's picture of a real ZooKeeper-mode cluster against the official tool and against
itself (Admin API view vs ZooKeeper view)."""

from __future__ import annotations

import json
import subprocess
import sys

from kazoo.client import KazooClient

from console.core.model import ReplicaRole, Source, SourceStatus
from console.state.merge import merge
from console.state.reader import ClusterReader
from tests.integration.helpers import (
    BROKERS,
    assignment,
    clear_throttles,
    make_topic,
    no_throttles_left,
    set_broker_rates,
    throttle_topic_all,
)
from tests.support import official, settings_for, wait_for, write_plan


def official_list(sb) -> list[str]:
    out = official(sb, "--list")
    assert out.returncode == 0, out.stderr
    return [line for line in out.stdout.strip().splitlines() if line.strip()]


def test_official_throttled_reassignment_matches_console(zk_sandbox, tmp_path):
    bs = zk_sandbox.bootstrap_servers
    make_topic(bs, "it-move", 3, 2, 300, assignment=[[0, 1], [1, 2], [2, 0]])
    plan = write_plan(tmp_path / "plan.json", [("it-move", 0, [2, 1]), ("it-move", 1, [0, 2]), ("it-move", 2, [1, 0])])
    ran = official(zk_sandbox, "--execute", "--reassignment-json-file", str(plan), "--throttle", "2000")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    with ClusterReader(settings_for(zk_sandbox)) as reader:
        # in flight: the console's R / AR / RR equal the official --list, line for line
        state = wait_for(lambda: (s := reader.snapshot()).in_flight and s, what="reassignment in flight")
        from console.present.text import list_text

        assert list_text(state).splitlines() == official_list(zk_sandbox)
        # the CLI prints the same
        cli = subprocess.run(
            [sys.executable, "-m", "console", "list", "--bootstrap-server", bs, "--zookeeper", zk_sandbox.zookeeper],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert cli.returncode == 0, cli.stderr
        assert cli.stdout.strip().splitlines() == official_list(zk_sandbox)
        listed = json.loads(
            subprocess.run(
                [sys.executable, "-m", "console", "list", "--bootstrap-server", bs, "--json"],
                capture_output=True,
                text=True,
                timeout=60,
            ).stdout
        )
        assert [(e["topic"], e["partition"]) for e in listed["partitions"]] == [("it-move", p) for p in range(3)]
        p0 = state.partition("it-move", 0)
        assert set(p0.adding) == {2} and set(p0.removing) == {0} and p0.source is Source.API
        assert p0.role(2) is ReplicaRole.ADDING and not p0.under_replicated
        assert state.throttles.topic_map()["it-move"]  # the official tool's throttle shows up
        # the ZooKeeper view equals the Admin API view while in flight
        api_only = merge(reader.kafka.read(), None)
        zk_only = merge(None, reader.zookeeper.read())
        assert assignment(api_only, True) == assignment(zk_only, True) != {}
        assert not [f for f in state.findings if f.code.endswith("mismatch")]
        prog = p0.progress(state.logs_known)
        assert prog and prog[0].leader_bytes and prog[0].leader_bytes > 250_000

        # let it finish, then both views agree again and no throttle is left behind
        set_broker_rates(bs, BROKERS, 50_000_000)
        wait_for(lambda: not reader.snapshot().in_flight, timeout=120, what="completion")
        done = official(zk_sandbox, "--verify", "--reassignment-json-file", str(plan))
        assert "is completed" in done.stdout, done.stdout
        assert official_list(zk_sandbox) == ["No partition reassignments found."]
        api_only = merge(reader.kafka.read(), None)
        zk_only = merge(None, reader.zookeeper.read())
        assert assignment(api_only) == assignment(zk_only)
        assert api_only.partition("it-move", 0).replicas == (2, 1)
        final = reader.snapshot()
        assert no_throttles_left(final), final.throttles


def test_legacy_znode_submission_shows_as_legacy(zk_sandbox):
    bs = zk_sandbox.bootstrap_servers
    make_topic(bs, "it-legacy", 2, 1, 400, assignment=[[0], [1]])
    set_broker_rates(bs, BROKERS, 2000)
    throttle_topic_all(bs, "it-legacy")
    zk = KazooClient(hosts=zk_sandbox.zookeeper)
    zk.start(timeout=10)
    try:
        zk.create(
            "/admin/reassign_partitions",
            json.dumps(
                {
                    "version": 1,
                    "partitions": [
                        {"topic": "it-legacy", "partition": 0, "replicas": [2]},
                        {"topic": "it-legacy", "partition": 1, "replicas": [2]},
                    ],
                }
            ).encode(),
            makepath=True,
        )
        with ClusterReader(settings_for(zk_sandbox)) as reader:
            state = wait_for(lambda: len((s := reader.snapshot()).in_flight) == 2 and s, what="legacy reassignment")
            for p in state.in_flight:
                assert p.source is Source.LEGACY, p
                assert p.adding == (2,)
            set_broker_rates(bs, BROKERS, 50_000_000)
            wait_for(lambda: not reader.snapshot().in_flight, timeout=120, what="legacy completion")
            wait_for(lambda: zk.exists("/admin/reassign_partitions") is None, what="znode deleted by the controller")
            clear_throttles(bs, BROKERS, ["it-legacy"])
            # config deletes reach every broker a moment later
            wait_for(
                lambda: no_throttles_left(s := reader.snapshot()) or print(s.throttles),
                timeout=30,
                what="no throttle left behind",
            )
    finally:
        zk.stop()
        zk.close()


def test_unreachable_cluster_gives_a_message_not_a_trace():
    cli = subprocess.run(
        [
            sys.executable,
            "-m",
            "console",
            "list",
            "--bootstrap-server",
            "127.0.0.1:1",
            "--zookeeper",
            "127.0.0.1:1/x",
            "--timeout",
            "2",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert cli.returncode == 1
    assert "Traceback" not in cli.stderr and "did not answer" in cli.stderr


def test_snapshot_reads_the_demo_topics(zk_demo_sandbox):
    with ClusterReader(settings_for(zk_demo_sandbox)) as reader:
        state = reader.snapshot()
    status = state.status.to_dict()
    assert status.pop("fenced") == "unsupported"  # Kafka 3.9's DescribeCluster does not say which are fenced
    assert status.pop("elr") in ("ok", "unsupported")  # asked only when a replica is out of sync; none in 3.9
    assert status == dict.fromkeys(status, "ok")
    assert {"orders", "payments", "clickstream"} <= set(state.topics)
    assert [b.rack for b in state.brokers] == ["rack-a", "rack-b", "rack-c"]
    assert all(b.live and b.eligible and len(b.log_dirs) == 2 for b in state.brokers)
    orders = state.partition("orders", 0)
    assert len(orders.replicas) == 3 and all(orders.size_on(b) for b in orders.replicas)
    assert state.status.zookeeper is SourceStatus.OK


def test_shared_snapshot_and_zookeeper_watch_on_reassignment_start(zk_sandbox):
    from kafka.admin import KafkaAdminClient
    from kafka.structs import TopicPartition

    bs = zk_sandbox.bootstrap_servers
    make_topic(bs, "it-watch", 1, 1, 200, assignment=[[0]])
    set_broker_rates(bs, BROKERS, 2000)
    throttle_topic_all(bs, "it-watch")
    with ClusterReader(settings_for(zk_sandbox)) as reader:
        first = reader.snapshot(max_age_s=60)
        assert reader.snapshot(max_age_s=60) is first  # shared between viewers
        generation = reader.zookeeper_generation
        kp = KafkaAdminClient(bootstrap_servers=bs.split(","))
        try:
            kp.alter_partition_reassignments({TopicPartition("it-watch", 0): [1]})
            # the topic znode's data watch fires when AR / RR are written (KIP-455 API path)
            wait_for(lambda: reader.zookeeper_generation > generation, timeout=10, what="ZooKeeper watch")
            fresh = reader.snapshot(max_age_s=60)  # a fired watch forces a fresh read
            assert fresh is not first and fresh.partition("it-watch", 0).reassigning
            set_broker_rates(bs, BROKERS, 50_000_000)
            wait_for(lambda: not kp.list_partition_reassignments(), timeout=120, what="completion")
        finally:
            kp.close()
        clear_throttles(bs, BROKERS, ["it-watch"])
