"""``cancel`` on the command line over the fake cluster (Kafka 4): a cancel that would leave a
partition without a leader, or below min.insync.replicas, is refused with the reason of each
partition and nothing is sent; with ``--force-at-risk`` it is sent."""

from __future__ import annotations

from pathlib import Path

import pytest

from console import cli
from console.cli import runs as runs_cli
from console.cli.exits import Exit
from console.core.model import BrokerId
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
    run_id = run_service.start_run(store, fake, Identity.cli("ann"), fake.snapshot(), plan, "dir", None, users=None)
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
