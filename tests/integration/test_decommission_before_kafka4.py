"""The decommission flow from the command line on Kafka 3.9 in KRaft mode (a cluster of the
module's own: its broker 3 is taken out for good). No cordons there (said, and drained anyway), and
no fenced brokers in DescribeCluster: a stopped broker leaves Metadata while the controller still
holds its registration, so the flow sends UnregisterBroker and the controller takes it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from console import cli
from console.core.model import BrokerId
from console.sandbox.cluster import Sandbox
from console.sandbox.versions import ZOOKEEPER_KAFKA
from console.state.reader import ClusterReader
from tests.integration.helpers import decommission_cli, make_topic
from tests.support import own_sandbox, settings_for, wait_for


@pytest.fixture(scope="module")
def kraft39(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sandbox]:
    """Kafka 3.9 KRaft with four brokers (0–2 are also the controllers), the module's own."""
    yield from own_sandbox(
        tmp_path_factory, "sandbox-39-decommission", kraft=True, brokers=4, kafka_version=ZOOKEEPER_KAFKA
    )


def test_decommission_on_kraft_3_9_drains_and_unregisters_a_broker_metadata_no_longer_lists(
    kraft39: Sandbox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    sb, bs = kraft39, kraft39.bootstrap_servers
    monkeypatch.setenv("CONSOLE_DATA_DIR", str(tmp_path))
    make_topic(bs, "dec39", 3, 2, 100, assignment=[[3, 0], [1, 3], [0, 2]])
    plan_file = tmp_path / "drain.json"

    def run(*args: str) -> tuple[int, dict[str, Any]]:
        return decommission_cli(capsys, bs, *args)

    code, flow = run("--broker", "3", "--plan-file", str(plan_file))
    assert (code, flow["step"], flow["blocked"]) == (0, "review", None), flow
    assert any("Cordons are not available on this cluster" in n for n in flow["notes"])
    submit = ["submit", "--bootstrap-server", bs, "--reassignment-json-file", str(plan_file)]
    assert cli.main([*submit, "--plan-id", str(flow["plan_id"]), "--yes", "--no-elect-leaders"]) == 0
    capsys.readouterr()
    code, flow = run("--id", str(flow["id"]))
    assert (code, flow["step"]) == (1, "shut down") and "Broker 3 is still running" in flow["blocked"]
    sb.stop("broker-3")
    with ClusterReader(settings_for(sb)) as reader:
        # Kafka 3.9 lists no fenced broker: the stopped broker, holding nothing, is gone from the snapshot
        wait_for(lambda: reader.snapshot().broker(BrokerId(3)) is None, timeout=60, what="broker 3 out of Metadata")
        code, flow = run("--id", str(flow["id"]))
        assert (code, flow["step"], flow["blocked"]) == (0, "unregister", None), flow
        code, flow = run("--id", str(flow["id"]), "--unregister", "--yes")
        assert (code, flow["step"]) == (0, "done"), flow
        assert flow["notes"][-1].startswith("Unregistered broker 3"), flow["notes"]
        # the controller took it: asked again, it answers that broker 3 is not registered
        assert reader.kafka.unregister_broker(BrokerId(3)) is False
