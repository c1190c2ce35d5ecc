"""A cluster-wide default throttle (``kafka-configs --entity-default``) on Kafka 4.x KRaft and 3.9
ZooKeeper: read as the cluster default (never as each broker's), kept by a sweep unless
``--include-cluster-default``, and a sweep reports what the brokers say afterwards. The sweep's
question without a terminal ends with exit 2 and sends nothing."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from console.core.limits import FOLLOWER_RATE, LEADER_RATE
from console.core.model import DEFAULT_BROKER
from console.state.reader import ClusterReader
from console.storage.store import Store
from tests.support import connection_args, kafka_configs, settings_for, wait_for

RATE = "7000000"  # 7.0 MB/s


@pytest.fixture(params=["sandbox", "zk_sandbox"], ids=["kafka4-kraft", "kafka3.9-zookeeper"])
def cluster(request: pytest.FixtureRequest):
    sb = request.getfixturevalue(request.param)
    yield sb
    kafka_configs(
        sb,
        "--alter",
        "--entity-type",
        "brokers",
        "--entity-default",
        "--delete-config",
        f"{LEADER_RATE},{FOLLOWER_RATE}",
    )


def console(sb, tmp_path, *args: str) -> subprocess.CompletedProcess[str]:
    """The CLI as a script runs it: no terminal on stdin."""
    env = {**os.environ, "CONSOLE_DATA_DIR": str(tmp_path)}
    return subprocess.run(
        [sys.executable, "-m", "console", *args, *connection_args(sb)],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )


def test_a_cluster_default_throttle_is_shown_kept_and_swept_only_when_asked(cluster, tmp_path, monkeypatch):
    monkeypatch.setenv("CONSOLE_DATA_DIR", str(tmp_path))
    set_default = kafka_configs(
        cluster,
        "--alter",
        "--entity-type",
        "brokers",
        "--entity-default",
        "--add-config",
        f"{LEADER_RATE}={RATE},{FOLLOWER_RATE}={RATE}",
    )
    assert set_default.returncode == 0, set_default.stderr
    with ClusterReader(settings_for(cluster)) as reader:
        wait_for(
            lambda: (
                reader.snapshot().throttles.broker_map().get(DEFAULT_BROKER, {}).keys() == {LEADER_RATE, FOLLOWER_RATE}
            ),
            timeout=30,
            what="the cluster default read",
        )
        # the default once, as the cluster's: no broker is said to have set it
        assert list(reader.snapshot().throttles.broker_map()) == [DEFAULT_BROKER]

    state = console(cluster, tmp_path, "state")
    assert state.returncode == 0, state.stderr
    assert f"cluster default (every broker)  {FOLLOWER_RATE}  7.0 MB/s" in " ".join(state.stdout.split("\n"))
    assert "broker 0" not in state.stdout

    # the question without a terminal: exit 2, nothing sent, nothing audited
    asked = console(cluster, tmp_path, "throttle", "--sweep", "--include-cluster-default")
    assert asked.returncode == 2, asked.stderr
    assert "Not at a terminal" in asked.stderr and "--yes" in asked.stderr and "Traceback" not in asked.stderr
    assert Store().audit.entries(action="throttle-sweep") == []

    # a sweep keeps the default and says so; it removes nothing, every time
    for _ in range(2):
        kept = console(cluster, tmp_path, "throttle", "--sweep", "--yes")
        assert kept.returncode == 0, kept.stderr
        assert "No throttle is left over: nothing was changed." in kept.stderr
        assert f"Kept: the cluster default {LEADER_RATE} = 7.0 MB/s" in kept.stderr
        assert "Removed" not in kept.stderr
    assert Store().audit.entries(action="throttle-sweep") == []

    # asked for: removed, read back, audited
    swept = console(cluster, tmp_path, "throttle", "--sweep", "--include-cluster-default", "--yes")
    assert swept.returncode == 0, swept.stderr
    assert f"cluster default: {LEADER_RATE} = 7.0 MB/s" in swept.stderr
    assert "Removed 2 throttle settings." in swept.stderr
    entries = Store().audit.entries(action="throttle-sweep")
    assert [e.outcome for e in entries] == ["sending", "removed"]
    assert json.loads(entries[0].request)["cluster_default"] == [FOLLOWER_RATE, LEADER_RATE]
    with ClusterReader(settings_for(cluster)) as reader:
        wait_for(lambda: not reader.snapshot().throttles, timeout=30, what="no throttle left")
    again = console(cluster, tmp_path, "throttle", "--sweep", "--include-cluster-default", "--yes")
    assert again.returncode == 0 and "No throttle is left over" in again.stderr
