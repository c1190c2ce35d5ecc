"""Authorization on the real sandbox's SASL/PLAIN listener (StandardAuthorizer on Kafka 4 KRaft;
AclAuthorizer in ZooKeeper mode): the console reads with read-only ACLs, and a principal without them
gets clear messages and what is still known (with ZooKeeper given, the znodes fill in)."""

from __future__ import annotations

import subprocess
import sys

from console.access.settings import ConnectionSettings
from console.core.model import SourceStatus
from console.state.reader import ClusterReader
from tests.integration.helpers import make_topic


def _settings(sandbox, user: str, zookeeper: bool = False) -> ConnectionSettings:
    return ConnectionSettings(
        sandbox.sasl_properties(user), zookeeper=sandbox.zookeeper if zookeeper else None, name=user, timeout_s=5.0
    )


def test_read_only_acls_are_enough_to_read_everything(sandbox):
    make_topic(sandbox.bootstrap_servers, "auth-visible", 2, 2, 50)
    with ClusterReader(_settings(sandbox, "viewer")) as reader:
        state = reader.snapshot()
    assert (state.status.metadata, state.status.reassignments, state.status.log_dirs, state.status.configs) == (
        SourceStatus.OK,
    ) * 4
    assert state.partition("auth-visible", 1) is not None
    assert state.logs_known and not state.findings


def test_principal_without_acls_gets_clear_findings_and_what_is_known(zk_sandbox, tmp_path):
    make_topic(zk_sandbox.bootstrap_servers, "auth-hidden", 1, 1, 10)
    with ClusterReader(_settings(zk_sandbox, "nobody")) as reader:
        state = reader.snapshot()
    assert state.status.metadata is SourceStatus.OK  # brokers are still known
    assert len(state.brokers) == 3 and not state.partitions
    assert state.status.reassignments is SourceStatus.UNAUTHORIZED
    assert state.status.configs is SourceStatus.UNAUTHORIZED
    codes = {f.code for f in state.findings}
    assert {"reassignments-unreadable", "configs-unreadable", "topics-hidden"} <= codes
    assert all("DESCRIBE" in f.hint for f in state.findings)

    # With ZooKeeper given, the znodes fill in the partitions the Admin API hides.
    with ClusterReader(_settings(zk_sandbox, "nobody", zookeeper=True)) as reader:
        state = reader.snapshot()
    assert state.partition("auth-hidden", 0) is not None

    # The CLI, with the official tools' --command-config: a message with the fix, no trace, exit 1.
    config = tmp_path / "nobody.properties"
    config.write_text(
        "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\n"
        "sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required "
        'username="nobody" password="nobody-secret";\n'
    )
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "console",
            "list",
            "--bootstrap-server",
            zk_sandbox.sasl_bootstrap_servers,
            "--command-config",
            str(config),
            "--timeout",
            "5",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "not authorised" in done.stderr and "Traceback" not in done.stderr
    assert "DESCRIBE" in done.stderr


def test_a_viewer_cannot_cancel_or_submit_from_the_cli(sandbox, tmp_path):
    """The cluster's own ACLs stop a read-only principal: a clear refusal, nothing changed,
    and the attempt is in the audit log."""
    import json
    import os

    from console.storage.store import Store
    from tests.integration.helpers import clear_throttles, reassign, set_broker_rates, throttle_topic_all
    from tests.support import settings_for, wait_for

    bs = sandbox.bootstrap_servers
    make_topic(bs, "auth-move", 1, 1, 200, assignment=[[0]])
    set_broker_rates(bs, [0, 1, 2], 2000)
    throttle_topic_all(bs, "auth-move")
    reassign(bs, {("auth-move", 0): [1]})
    config = tmp_path / "viewer.properties"
    config.write_text(
        "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\n"
        "sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required "
        'username="viewer" password="viewer-secret";\n'
    )
    env = {**os.environ, "CONSOLE_DATA_DIR": str(tmp_path)}
    base = ["--bootstrap-server", sandbox.sasl_bootstrap_servers, "--command-config", str(config), "--timeout", "5"]
    try:
        with ClusterReader(settings_for(sandbox)) as reader:
            wait_for(lambda: reader.snapshot().partition("auth-move", 0).reassigning, what="move in flight")
            done = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "console",
                    "cancel",
                    *base,
                    "--topic",
                    "auth-move",
                    "--include-others",
                    "--yes",
                    "--wait",
                    "0",
                ],
                capture_output=True,
                text=True,
                timeout=120,
                env=env,
            )
            assert done.returncode == 1, done.stdout + done.stderr
            assert "not authorised" in done.stderr and "Traceback" not in done.stderr
            assert reader.snapshot().partition("auth-move", 0).reassigning  # nothing was cancelled
            plan = tmp_path / "plan.json"
            plan.write_text(
                json.dumps({"version": 1, "partitions": [{"topic": "auth-move", "partition": 0, "replicas": [2]}]})
            )
            done = subprocess.run(
                [sys.executable, "-m", "console", "submit", *base, "--reassignment-json-file", str(plan), "--yes"],
                capture_output=True,
                text=True,
                timeout=120,
                env=env,
            )
            assert done.returncode == 1 and "Traceback" not in done.stderr, done.stdout + done.stderr
            assert reader.snapshot().partition("auth-move", 0).target == (1,)  # still moving to 1, not 2
        outcomes = [a.outcome for a in Store(tmp_path / "console.db").audit.entries(action="cancel")]
        assert outcomes == ["sending", "failed"]
    finally:
        set_broker_rates(bs, [0, 1, 2], 50_000_000)
        clear_throttles(bs, [0, 1, 2], ["auth-move"])
