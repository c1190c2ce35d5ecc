"""Cancel for on-call, on the real cluster: through the CLI, with confirmation, with the adding
broker down; every request is in the audit log before it is sent."""

from __future__ import annotations

import json
import threading

from console import cli
from console.core.model import SourceStatus
from console.state.reader import ClusterReader
from console.storage.store import Store
from tests.integration.helpers import (
    BROKERS,
    clear_throttles,
    in_flight,
    make_topic,
    reassign,
    set_broker_rates,
    throttle_topic_all,
)
from tests.support import settings_for, wait_for, write_plan


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
        assert Store().audit.entries(action="cancel-complete")[0].outcome == (
            "left the in-flight list; every broker shows the original replicas"
        )
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


def test_a_partition_cancelled_mid_run_leaves_the_run_to_complete_the_rest(sandbox, tmp_path, monkeypatch, capsys):
    """The operator's report, in the shell: ``submit`` drives a throttled run of four partitions;
    three small ones move while the big one copies at 2 KB/s, and the progress counts them. The big
    one is cancelled with ``cancel --topic --partition``: the run completes the rest, ends partly
    cancelled naming it, elects the leaders of the three that moved, and leaves no throttle."""
    monkeypatch.setenv("CONSOLE_DATA_DIR", str(tmp_path))
    bs = sandbox.bootstrap_servers
    make_topic(bs, "pc-small", 3, 2, 1, assignment=[[0, 1]] * 3)
    make_topic(bs, "pc-big", 1, 2, 600, assignment=[[0, 1]])
    plan = write_plan(tmp_path / "plan.json", [("pc-small", p, [2, 0]) for p in range(3)] + [("pc-big", 0, [2, 0])])
    submitted: list[int] = []
    said, printed = "", ""

    def submit() -> None:
        args = ["submit", "--bootstrap-server", bs, "--reassignment-json-file", str(plan), "--throttle", "2000"]
        submitted.append(run_cli(*args, "--yes", "--json"))

    def progress(line: str) -> bool:
        nonlocal said, printed
        got = capsys.readouterr()
        said, printed = said + got.err, printed + got.out
        return line in said

    try:
        with ClusterReader(settings_for(sandbox)) as reader:
            before = reader.snapshot().throttles
            driving = threading.Thread(target=submit, daemon=True)
            driving.start()
            wait_for(lambda: progress("run 1: wave 1: 3 of 4 done"), timeout=120, what="three of four done")
            assert in_flight(bs) == {("pc-big", 0)}
            assert run_cli("cancel", "--bootstrap-server", bs, "--topic", "pc-big", "--partition", "0", "--yes") == 0
            driving.join(timeout=120)
            assert submitted == [3]  # partly done
            assert progress(
                "run 1: run completed, 1 partition cancelled: pc-big-0; preferred leader election: 3 elected"
            )
            out = [json.loads(x) for x in printed.splitlines() if x.startswith("{")]
            (record,) = [o for o in out if o.get("run") == 1]
            assert record["state"] == "partly cancelled" and record["cancelled"] == ["pc-big-0"]
            state = reader.snapshot()
            assert [(p.replicas, p.leader) for p in (state.partition("pc-small", n) for n in range(3))] == [
                ((2, 0), 2)
            ] * 3
            assert state.partition("pc-big", 0).replicas == (0, 1)
            wait_for(lambda: reader.snapshot().throttles == before, timeout=30, what="no throttle left behind")
        store = Store()
        assert store.runs.get(1).state == "partly cancelled" and not store.runs.ledger()
        assert [w.state for w in store.runs.waves(1)] == ["completed"]
        elected = [json.loads(e.request) for e in store.audit.entries(action="elect-leaders") if e.outcome == "sending"]
        assert sorted(tuple(x[:2]) for e in elected for x in e["partitions"]) == [("pc-small", n) for n in range(3)]
        cancels = [json.loads(e.request) for e in store.audit.entries(action="cancel")]
        assert [c["runs"] for c in cancels] == [[1], [1]] and "runs_cancelled" not in cancels[0]
    finally:
        clear_throttles(bs, BROKERS, ["pc-small", "pc-big"])
