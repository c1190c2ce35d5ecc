"""Kafka 4's safety model on a real Kafka 4.x KRaft cluster of the module's own (its tests stop
brokers): eligible leader replicas and last known ones read as the official tool prints them (the
latter after hard kills), fenced brokers, Kafka 4's health counts and the cancel projection; the
decommission flow from the command line, from cordon to unregister."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from console import cli
from console.core.health import kafka_health, project_cancel
from console.core.model import BrokerId, Partition, ReplicaRole
from console.moves.cancel import plan_cancel
from console.sandbox.cluster import Sandbox
from console.state.merge import REPLICA_ON_FENCED_BROKER
from console.state.reader import ClusterReader
from tests.integration.helpers import (
    BROKERS,
    decommission_cli,
    make_topic,
    reassign,
    set_broker_rates,
    set_min_isr,
    throttle_topic_all,
)
from tests.support import kafka_tool, own_sandbox, settings_for, wait_for


@pytest.fixture(scope="module")
def safety_sandbox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sandbox]:
    """Kafka 4.x KRaft with five brokers (0–2 are also the controllers; 3 and 4 are brokers only, so
    both may be killed with the quorum kept), the module's own: its tests stop brokers, and the last
    one takes broker 3 out for good."""
    yield from own_sandbox(tmp_path_factory, "sandbox-safety", brokers=5)


def official_elr(sb: Sandbox, topic: str) -> dict[int, tuple[tuple[int, ...], tuple[int, ...]]]:
    """Partition → (Elr, LastKnownElr) as the official ``kafka-topics --describe`` prints them."""
    done = kafka_tool(sb, "org.apache.kafka.tools.TopicCommand", "--describe", "--topic", topic)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    got: dict[int, tuple[tuple[int, ...], tuple[int, ...]]] = {}
    for line in out.splitlines():
        fields = dict(f.split(": ", 1) if ": " in f else (f.rstrip(":"), "") for f in line.strip().split("\t"))
        if "Partition" in fields:
            ids = lambda v: tuple(int(x) for x in v.split(",") if x)  # noqa: E731
            got[int(fields["Partition"])] = (ids(fields.get("Elr", "")), ids(fields.get("LastKnownElr", "")))
    return got


def test_elr_fenced_broker_health_and_cancel_projection(
    safety_sandbox: Sandbox, capsys: pytest.CaptureFixture[str]
) -> None:
    sb, bs = safety_sandbox, safety_sandbox.bootstrap_servers
    # two partitions on brokers 1 and 2, min ISR 2: stopping broker 2 leaves ISR {1} and ELR {2}
    make_topic(bs, "elr", 2, 2, 200, assignment=[[1, 2], [2, 1]])
    set_min_isr(bs, "elr", 2)
    set_broker_rates(bs, BROKERS, 2000)
    throttle_topic_all(bs, "elr")
    with ClusterReader(settings_for(sb)) as reader:
        reassign(bs, {("elr", 1): [0, 1]})  # adding 0, removing 2: stays in flight under the throttle
        wait_for(lambda: reader.snapshot().partition("elr", 1).reassigning, what="move in flight")
        healthy = reader.snapshot()
        assert healthy.status.fenced.value == "ok" and healthy.broker(2).fenced is False
        assert not project_cancel(healthy, healthy.partition("elr", 1)).at_risk
        sb.stop("broker-2")
        try:
            state = wait_for(
                lambda: (s := reader.snapshot()).partition("elr", 0).elr == (2,) and s.partition("elr", 1).elr and s,
                timeout=60,
                what="broker 2 in the ELR",
            )
            official = official_elr(sb, "elr")
            assert {p.partition: (p.elr, p.last_known_elr) for p in state.partitions if p.topic == "elr"} == official
            b2 = state.broker(2)
            assert b2.registered and b2.fenced is True and not b2.live and not b2.eligible
            assert state.partition("elr", 0).role(2) is ReplicaRole.ELIGIBLE
            assert any(f.code == REPLICA_ON_FENCED_BROKER and f.broker == 2 for f in state.findings)
            health = kafka_health(state)
            assert {p.key for p in health.under_min_isr} == {("elr", 0), ("elr", 1)}
            assert not health.nothing_electable
            # the cancel goes back to 2,1: only 1 could lead (2 is fenced), fewer than min ISR 2
            plan = plan_cancel(state, [("elr", 1)], include_others=True)
            assert [p.key for p in plan.at_risk] == [("elr", 1)]
            assert "fewer than min.insync.replicas=2" in plan.risks[("elr", 1)]
            lean = reader.snapshot(lean=True)  # what the cancel dialog and the CLI read
            assert lean.partition("elr", 1).elr == (2,) and lean.min_insync_index == {"elr": 2}
            assert plan_cancel(lean, [("elr", 1)], include_others=True).risks == plan.risks
            # state --json carries them
            assert cli.main(["state", "--bootstrap-server", bs, "--json"]) == 0
            doc = json.loads(capsys.readouterr().out)
            parts = {p["partition"]: p for p in doc["partitions"]}
            assert (parts[0]["elr"], parts[0]["last_known_elr"]) == ([2], [])
            assert doc["counts"]["under_min_isr"] == 2
            assert next(b for b in doc["brokers"] if b["id"] == 2)["fenced"] is True
        finally:
            sb.start("broker-2")
        wait_for(lambda: (b := reader.snapshot().broker(2)) is not None and b.live, timeout=90, what="broker 2 back")
        reassign(bs, {("elr", 1): None})
        wait_for(lambda: not reader.snapshot().in_flight, timeout=60, what="cancelled")
        # broker 2 back in both ISRs: under load its copy of elr-1 caught up after elr-0's ELR cleared
        wait_for(
            lambda: not (s := reader.snapshot()).partition("elr", 0).elr and not kafka_health(s).under_min_isr,
            timeout=90,
            what="ELR cleared, nothing under min ISR",
        )


def test_last_known_elr_after_hard_kills_as_the_official_tool_prints_it(safety_sandbox: Sandbox) -> None:
    """Both replicas of a min-ISR-2 partition killed hard, one after the other: the ISR empties, both
    are eligible, and the last one in the ISR is the last known ELR; the first one back, having shut
    down uncleanly, leaves the ELR. At each step the console reads what ``kafka-topics --describe``
    prints, and says the partition is offline with nothing electable while its brokers are down."""
    sb, bs = safety_sandbox, safety_sandbox.bootstrap_servers
    make_topic(bs, "lke", 1, 2, 50, assignment=[[3, 4]])
    set_min_isr(bs, "lke", 2)

    def both_say(reader: ClusterReader, elr: tuple[int, ...], last_known: tuple[int, ...]) -> Partition:
        """Wait until the official tool prints ``elr`` and ``last_known``; the console then reads the same."""
        wait_for(lambda: official_elr(sb, "lke")[0] == (elr, last_known), timeout=90, what=f"ELR {elr}, {last_known}")
        p = wait_for(
            lambda: (
                (q := reader.snapshot().partition("lke", 0)) is not None
                and (q.elr, q.last_known_elr) == (elr, last_known)
                and q
            ),
            timeout=30,
            what="the console to read the same",
        )
        assert (p.elr, p.last_known_elr) == official_elr(sb, "lke")[0]
        return p

    with ClusterReader(settings_for(sb)) as reader:
        try:
            sb.stop("broker-4", hard=True)
            assert both_say(reader, (4,), ()).isr == (3,)
            sb.stop("broker-3", hard=True)
            down = both_say(reader, (3, 4), (3,))
            assert down.isr == () and down.leader is None
            assert ("lke", 0) in {p.key for p in kafka_health(reader.snapshot()).nothing_electable}
            sb.start("broker-4")  # back after an unclean shutdown: no longer eligible
            assert both_say(reader, (3,), (3,)).leader is None
        finally:
            sb.start("broker-3")
            sb.start("broker-4")
        back = wait_for(
            lambda: (p := reader.snapshot().partition("lke", 0)) is not None and p.isr == (3, 4) and p,
            timeout=90,
            what="both back in the ISR",
        )
        assert (back.elr, back.last_known_elr) == ((), ()) == official_elr(sb, "lke")[0]


def test_decommission_from_the_command_line_cordons_drains_and_unregisters(
    safety_sandbox: Sandbox,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    sb, bs = safety_sandbox, safety_sandbox.bootstrap_servers
    monkeypatch.setenv("CONSOLE_DATA_DIR", str(tmp_path))
    make_topic(bs, "dec", 4, 2, 100, assignment=[[3, 0], [1, 3], [3, 2], [0, 1]])
    plan_file = tmp_path / "drain.json"

    def run(*args: str) -> tuple[int, dict[str, Any]]:
        return decommission_cli(capsys, bs, *args)

    code, flow = run("--broker", "3", "--plan-file", str(plan_file))
    assert (code, flow["step"], flow["blocked"]) == (0, "review", None), flow
    with ClusterReader(settings_for(sb)) as reader:
        b3 = reader.snapshot().broker(BrokerId(3))
        assert b3 is not None and b3.cordoned is True  # cordoned.log.dirs=*, read back
        drain = json.loads(plan_file.read_text())["partitions"]
        assert {(e["topic"], e["partition"]) for e in drain} >= {("dec", 0), ("dec", 1), ("dec", 2)}
        assert all(3 not in e["replicas"] for e in drain)
        submit = ["submit", "--bootstrap-server", bs, "--reassignment-json-file", str(plan_file)]
        assert cli.main([*submit, "--plan-id", str(flow["plan_id"]), "--yes", "--no-elect-leaders"]) == 0
        capsys.readouterr()
        code, flow = run("--id", str(flow["id"]))
        assert (code, flow["step"]) == (1, "shut down") and "Broker 3 is still running" in flow["blocked"]
        # an unregister now is refused before anything is sent
        code, flow = run("--id", str(flow["id"]), "--unregister", "--yes")
        assert code == 1 and flow["step"] == "shut down"
        sb.stop("broker-3")
        wait_for(lambda: (b := reader.snapshot().broker(BrokerId(3))) is not None and b.fenced, what="broker 3 fenced")
        code, flow = run("--id", str(flow["id"]))
        assert (code, flow["step"], flow["blocked"]) == (0, "unregister", None), flow
        code, flow = run("--id", str(flow["id"]), "--unregister", "--yes")
        assert (code, flow["step"]) == (0, "done"), flow
        # the controller took it; the broker answering DescribeCluster may learn it a moment later
        wait_for(
            lambda: (r := reader.kafka.reads.describe_registered()) is not None and 3 not in {b.id for b in r},
            timeout=30,
            what="broker 3 gone from DescribeCluster",
        )
        assert reader.snapshot().broker(BrokerId(3)) is None
