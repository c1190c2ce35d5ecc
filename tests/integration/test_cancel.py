"""Cancel for on-call, on the real cluster: through the CLI, with confirmation, with the adding
broker down; every request is in the audit log before it is sent."""

from __future__ import annotations

import json

from console import cli
from console.core.model import SourceStatus
from console.state.reader import ClusterReader
from console.storage.store import Store
from tests.integration.helpers import (
    BROKERS,
    clear_throttles,
    make_topic,
    reassign,
    set_broker_rates,
    throttle_topic_all,
)
from tests.support import settings_for, wait_for


def slow_move(sb, topic: str, kbytes: int = 400) -> None:
    """A topic on brokers 0,1 whose partition 0 is being copied to broker 2 at 2 KB/s."""
    bs = sb.bootstrap_servers
    make_topic(bs, topic, 2, 2, kbytes, assignment=[[0, 1], [1, 0]])
    set_broker_rates(bs, BROKERS, 2000)
    throttle_topic_all(bs, topic)
    reassign(bs, {(topic, 0): [0, 2]})


def run_cli(*args: str) -> int:
    return cli.main(list(args))


def test_cancel_puts_the_partition_back_and_is_audited(sandbox, tmp_path, monkeypatch, capsys, at_a_terminal):
    monkeypatch.setenv("CONSOLE_DATA_DIR", str(tmp_path))
    bs = sandbox.bootstrap_servers
    slow_move(sandbox, "c-move")
    try:
        with ClusterReader(settings_for(sandbox)) as reader:
            wait_for(lambda: reader.snapshot().partition("c-move", 0).reassigning, what="move in flight")
            # a topic cancel leaves alone what this console did not start, and says so
            assert run_cli("cancel", "--bootstrap-server", bs, "--topic", "c-move", "--yes") == 1
            assert "did not start" in capsys.readouterr().err
            assert reader.snapshot().partition("c-move", 0).reassigning
            # without --yes the cluster's name must be typed; anything else sends nothing
            at_a_terminal("not-the-name")
            assert run_cli("cancel", "--bootstrap-server", bs, "--topic", "c-move", "--include-others") == 1
            assert "nothing was sent" in capsys.readouterr().err
            assert reader.snapshot().partition("c-move", 0).reassigning
            at_a_terminal(bs.split(",")[0])
            assert run_cli("cancel", "--bootstrap-server", bs, "--topic", "c-move", "--include-others", "--json") == 0
            out = json.loads(capsys.readouterr().out)
            assert out["accepted"] == ["c-move-0"] and not out["rejected"] and not out["still_in_flight"]
            wait_for(
                lambda: not (p := reader.snapshot().partition("c-move", 0)).reassigning and p.replicas == (0, 1),
                timeout=30,
                what="back on the original replicas",
            )
        audit = Store().audit.entries(action="cancel")
        assert [a.outcome for a in audit] == ["sending", "accepted"]
        request = json.loads(audit[0].request)
        assert audit[1].ref == audit[0].id and request["cancel"] == [["c-move", 0]]
        assert request["asked"] == [["c-move", 0]] and request["not_sent"] == {}  # what the operator saw, all sent
        assert json.loads(audit[1].response)[0]["accepted"] is True
        assert Store().audit.entries(action="cancel-complete")[0].outcome == "left the in-flight list"
    finally:
        clear_throttles(bs, BROKERS, ["c-move"])


def test_cancel_works_with_the_adding_broker_down(sandbox, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("CONSOLE_DATA_DIR", str(tmp_path))
    bs = sandbox.bootstrap_servers
    slow_move(sandbox, "c-down")
    with ClusterReader(settings_for(sandbox)) as reader:
        try:
            wait_for(lambda: reader.snapshot().partition("c-down", 0).reassigning, what="move in flight")
            sandbox.stop("broker-2", hard=True)
            wait_for(
                lambda: (b := reader.snapshot().broker(2)) is not None and not b.live,
                timeout=60,
                what="broker 2 seen down",
            )
            assert run_cli("cancel", "--bootstrap-server", bs, "--all", "--yes", "--json") == 0
            out = json.loads(capsys.readouterr().out)
            assert "c-down-0" in out["accepted"] and not out["still_in_flight"]
            wait_for(
                lambda: not (p := reader.snapshot().partition("c-down", 0)).reassigning and p.replicas == (0, 1),
                timeout=30,
                what="back on the original replicas",
            )
        finally:
            sandbox.start("broker-2")
            clear_throttles(bs, BROKERS, ["c-down"])
        wait_for(lambda: (b := reader.snapshot().broker(2)) is not None and b.live, timeout=90, what="broker 2 back")
        wait_for(lambda: not reader.snapshot().under_replicated, timeout=90, what="every partition in sync again")


def test_a_lean_read_has_what_a_cancel_needs_and_says_what_it_left_out(sandbox):
    with ClusterReader(settings_for(sandbox)) as reader:
        full, lean = reader.snapshot(), reader.snapshot(lean=True)
    assert (lean.status.metadata, lean.status.reassignments) == (SourceStatus.OK, SourceStatus.OK)
    assert (lean.status.log_dirs, lean.status.configs) == (SourceStatus.NOT_CONFIGURED, SourceStatus.NOT_CONFIGURED)
    assert [(p.key, p.replicas, p.isr) for p in lean.partitions] == [
        (p.key, p.replicas, p.isr) for p in full.partitions
    ]
    assert [b.id for b in lean.brokers] == [b.id for b in full.brokers] and lean.cluster_id == full.cluster_id
