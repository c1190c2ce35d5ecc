"""``cancel`` on the command line over the fake cluster (Kafka 4): a cancel that would leave a
partition without a leader, or below min.insync.replicas, is refused with the reason of each
partition and nothing is sent; with ``--force-at-risk`` it is sent."""

from __future__ import annotations

import getpass
import json
from pathlib import Path

import pytest

from console import cli
from console.cli import runs as runs_cli
from console.cli.exits import Exit
from console.core.model import BrokerId
from console.services.guard import REFUSED
from console.storage.store import Store
from tests.fakes.cluster import FakeCluster, FakeReader

pytestmark = pytest.mark.unit
ARGS = ["cancel", "--bootstrap-server", "fake:9092", "--all", "--yes", "--wait", "0"]


def at_risk(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> FakeCluster:
    """t-0 moving off 2 (min ISR 2) with 2 fenced: only 1 could lead after a cancel; u-0 moving off
    3 with 3 fenced: nothing could."""
    fake = FakeCluster.of(4, {"t": [[1, 2]], "u": [[3]]}, size=10**6, copy_rate=1)
    fake.kafka4 = True
    fake.min_isr = {"t": 2, "u": 1}
    fake.alter_reassignments({("t", 0): (BrokerId(0), BrokerId(1)), ("u", 0): (BrokerId(0),)})
    fake.stop_broker(2)
    fake.stop_broker(3)
    monkeypatch.setenv("CONSOLE_DATA_DIR", str(tmp_path))
    monkeypatch.setattr(runs_cli, "connect", lambda args: FakeReader(fake))
    return fake


def cancels(fake: FakeCluster) -> list[set[tuple[str, int]]]:
    return [set(c.args[0]) for c in fake.calls_to("alter_reassignments") if set(c.args[0].values()) == {None}]


def test_cancel_refuses_partitions_at_risk_saying_why_each_is(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fake = at_risk(monkeypatch, tmp_path)
    assert cli.main(ARGS) == Exit.FAILED
    err = capsys.readouterr().err
    assert (
        "Refused, nothing was sent: u-0 may be left without a leader; t-0 would refuse writes with acks=all "
        "(fewer than min.insync.replicas could lead). Add --force-at-risk to cancel them anyway." in err
    )
    assert "t-0: only 1 of its original replicas (1,2) could lead, fewer than min.insync.replicas=2" in err
    assert "u-0: none of its original replicas (3) is in sync" in err
    assert not cancels(fake)
    assert {k for k, p in fake.parts.items() if p.adding} == {("t", 0), ("u", 0)}
    # the refusal is the service's, audited once with who, what and why (it was said, not audited)
    (entry,) = Store(tmp_path / "console.db").audit.entries()
    assert (entry.user, entry.action, entry.cluster, entry.outcome) == (
        getpass.getuser(),
        "cancel",
        fake.cluster_id,
        REFUSED,
    )
    assert json.loads(entry.response or "{}")["why"] == (
        "u-0 may be left without a leader; t-0 would refuse writes with acks=all (fewer than min.insync.replicas "
        "could lead)."
    )
    assert sorted(json.loads(entry.request)["at_risk"]) == ["t-0", "u-0"]


def test_cancel_sends_them_with_force_at_risk(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fake = at_risk(monkeypatch, tmp_path)
    assert cli.main([*ARGS, "--force-at-risk"]) == Exit.OK
    assert cancels(fake) == [{("t", 0), ("u", 0)}]
    assert not [k for k, p in fake.parts.items() if p.adding]  # back to their original replicas
    assert "Refused" not in capsys.readouterr().err


def test_a_partition_only_below_min_isr_is_not_said_to_lose_its_leader(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fake = at_risk(monkeypatch, tmp_path)
    fake.start_broker(3)  # u-0's original is back in sync: only t-0 is at risk, below min ISR
    assert cli.main(ARGS) == Exit.FAILED
    refused = next(x for x in capsys.readouterr().err.splitlines() if x.startswith("Refused"))
    assert "t-0 would refuse writes with acks=all" in refused and "without a leader" not in refused
    assert not cancels(fake)


def test_cancel_of_a_run_stops_its_log_dir_moves_too(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from console.access.auth import Identity
    from console.plans.logdirs import current_dir, dir_moves_in_flight
    from console.plans.plan import Plan, PlanEntry
    from console.runs.executor import Executor
    from console.services import runs as run_service
    from console.storage.store import Store

    monkeypatch.setattr("time.sleep", lambda _s: None)
    fake = FakeCluster.of(4, {"t": [[0, 1], [1, 2]]}, size=10_000, copy_rate=10, log_dirs=("/k/d1", "/k/d2"))
    monkeypatch.setenv("CONSOLE_DATA_DIR", str(tmp_path))
    monkeypatch.setattr(runs_cli, "connect", lambda args: FakeReader(fake))
    store = Store()
    plan = Plan.of([PlanEntry("t", 1, (BrokerId(1), BrokerId(2)), ("any", "/k/d2"))])  # only a dir move
    run_id = run_service.start_run(
        store, fake, fake.snapshot(), run_service.RunRequest(Identity.cli("ann"), plan, "dir"), users=None
    )
    Executor(store, fake, "ann").tick(run_id)
    fake.advance(1)
    assert dir_moves_in_flight(fake.snapshot())
    capsys.readouterr()
    args = ["cancel", "--bootstrap-server", "fake:9092", "--run", str(run_id), "--yes", "--wait", "0"]
    assert cli.main(args) == Exit.OK
    said = capsys.readouterr().err
    assert "log dir move of t-1 on broker 2: /k/d1 → /k/d2 (stays in /k/d1)" in said
    now = fake.snapshot()
    assert not dir_moves_in_flight(now) and current_dir(now.partition("t", 1), BrokerId(2)) == "/k/d1"
    assert [e.action for e in store.audit.entries() if e.action == "cancel-log-dir-moves"]


def test_cancel_of_one_partition_leaves_its_run_to_go_on_and_cancel_of_a_run_ends_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``cancel --topic T --partition P`` cancels that partition of a run, which completes the rest
    and says so in ``runs``; ``cancel --run ID`` cancels the run as a run."""
    import json

    from console.access.auth import Identity
    from console.core.states import RunState
    from console.plans.plan import Plan, PlanEntry
    from console.runs.executor import Executor
    from console.services import runs as run_service
    from console.storage.store import Store

    monkeypatch.setattr("time.sleep", lambda _s: None)
    fake = FakeCluster(
        {b: f"r{b}" for b in range(3)},
        {("s", 0): ((0, 1), 1000), ("s", 1): ((0, 1), 1000), ("s", 2): ((0, 1), 10**9), ("u", 0): ((0, 1), 10**9)},
        copy_rate=100,
    )
    monkeypatch.setenv("CONSOLE_DATA_DIR", str(tmp_path))
    monkeypatch.setattr(runs_cli, "connect", lambda args: FakeReader(fake))
    store = Store()
    two = (BrokerId(2), BrokerId(0))
    runs = [
        run_service.start_run(
            store,
            fake,
            fake.snapshot(),
            run_service.RunRequest(Identity.cli("ann"), Plan.of(PlanEntry(*k, two) for k in keys), name),
            users=None,
        )
        for name, keys in (("s", [("s", 0), ("s", 1), ("s", 2)]), ("u", [("u", 0)]))
    ]
    for run_id in runs:
        ex = Executor(store, fake, "ann")
        ex.tick(run_id)
        store.runs.release(run_id, ex.owner)  # no worker holds them: the command cleans up itself

    base = ["cancel", "--bootstrap-server", "fake:9092", "--yes", "--wait", "5", "--json"]
    assert cli.main([*base, "--topic", "s", "--partition", "2"]) == Exit.OK
    assert json.loads(capsys.readouterr().out)["accepted"] == ["s-2"]
    assert store.runs.require(runs[0]).state is RunState.RUNNING  # it goes on with s-0 and s-1
    fake.advance(20)
    done = Executor(store, fake, "ann", settle_s=0).drive(runs[0], every=0)
    assert done.state is RunState.PARTLY_CANCELLED

    assert cli.main([*base, "--run", str(runs[1])]) == Exit.OK
    assert store.runs.require(runs[1]).state is RunState.CANCELLED
    requests = [json.loads(e.request) for e in store.audit.entries(action="cancel") if e.outcome == "sending"]
    assert [(r["runs"], r.get("runs_cancelled")) for r in requests] == [([runs[0]], None), ([runs[1]], [runs[1]])]

    capsys.readouterr()
    assert cli.main(["runs", "--json"]) == Exit.OK
    listed = {r["run"]: r for r in json.loads(capsys.readouterr().out)}
    assert (listed[runs[0]]["state"], listed[runs[0]]["waves"]) == ("partly cancelled", "1/1")
    assert listed[runs[0]]["cancelled"] == ["s-2"] and listed[runs[0]]["problems"] == "1 partition cancelled: s-2"
    assert (listed[runs[1]]["state"], listed[runs[1]]["cancelled"]) == ("cancelled", ["u-0"])
    assert cli.main(["runs"]) == Exit.OK
    line = next(x for x in capsys.readouterr().out.splitlines() if x.split()[:2] == [str(runs[0]), "fake-cluster"])
    assert "partly cancelled" in line and "1 partition cancelled: s-2" in line


@pytest.mark.parametrize("part", ["snapshot", "snapshot:reassignments"])
def test_cancel_on_a_read_that_failed_says_which_read_and_sends_nothing(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str], part: str
) -> None:
    from console.core.errors import ClusterUnavailable

    fake = at_risk(monkeypatch, tmp_path)
    fake.fail_next(part, ClusterUnavailable("The cluster did not answer (timed out).", "Check the brokers."))
    assert cli.main(ARGS) == Exit.FAILED
    which = "Metadata" if part == "snapshot" else "ListPartitionReassignments"
    assert (
        f"Cannot cancel: {which} did not answer (unavailable): what is in flight is not known, nothing was sent. "
        "Try again." in capsys.readouterr().err
    )
    assert not cancels(fake)
