"""A cancel says what the brokers show, not only what the controller took: after the partitions
leave the in-flight list, each broker is asked for their replica sets (Metadata, one request per
broker), and a partition is "cancelled: back to its original replicas" only once every broker
shows it so; until then "the controller took it; the brokers still show the old replica set",
naming the brokers, with the time it took or the deadline passed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from console import cli
from console.access.auth import Identity
from console.cli import runs as runs_cli
from console.cli.exits import Exit
from console.core.model import BrokerId
from console.core.shown import BrokerView
from console.moves.cancel import CancelVerdict, plan_cancel
from console.moves.readback import ReadBack, Shown
from console.services import cancel as cancel_service
from console.storage.store import Store
from tests.fakes.cluster import FakeCluster, FakeReader

pytestmark = pytest.mark.unit
B0, B1, B2 = BrokerId(0), BrokerId(1), BrokerId(2)


def moving(lag: dict[int, float]) -> FakeCluster:
    """t-0 and t-1 moving from broker 0 onto 2 (copying for ever); broker ``b``'s metadata trails
    the controller's by ``lag[b]`` s."""
    fake = FakeCluster.of(3, {"t": [[0], [0]]}, size=10**9, copy_rate=1)
    fake.alter_reassignments({("t", 0): (B2,), ("t", 1): (B2,)})
    fake.advance(7_200)  # moving for two hours: every broker shows it moving
    fake.broker_lag_s = {BrokerId(b): s for b, s in lag.items()}
    return fake


def cli_cancel(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, fake: FakeCluster, *extra: str) -> tuple[int, str, str]:
    monkeypatch.setenv("CONSOLE_DATA_DIR", str(tmp_path))
    monkeypatch.setattr(runs_cli, "connect", lambda args: FakeReader(fake))
    monkeypatch.setattr("console.services.cancel.LOOK_EVERY_S", 0.01, raising=False)
    code = cli.main(["cancel", "--bootstrap-server", "fake:9092", "--all", "--yes", *extra])
    return code, "", ""


def test_the_cli_does_not_say_cancelled_while_a_broker_still_shows_the_old_replica_set(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fake = moving({1: 3600.0})  # broker 1 applies the controller's change an hour late
    code, _, _ = cli_cancel(monkeypatch, tmp_path, fake, "--wait", "1")
    out = capsys.readouterr().out
    assert code == Exit.OK
    assert not fake.list_reassignments(), "the controller took it"
    assert CancelVerdict.CANCELLED.value not in out
    assert "t-0: the controller took it; the brokers still show the old replica set (broker 1 shows 2,0" in out
    assert "the brokers still show the old replica set of 2 partitions" in out and "(broker 1: 2)" in out
    assert fake.calls_to("replicas_seen"), "the brokers were asked"
    (done,) = Store(tmp_path / "console.db").audit.entries(action="cancel-complete")
    assert done.outcome == "left the in-flight list; the brokers still show the old replica set"
    said = json.loads(done.response or "{}")["brokers"]
    assert said["behind_count"] == 2 and said["shown"] == 0
    assert said["behind"][0] == {"partition": "t-0", "brokers": {"1": [2, 0]}}


def test_the_cli_says_cancelled_once_every_broker_shows_it_with_the_time_it_took(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fake = moving({1: 3.0, 2: 1.0})
    fake.look_takes_s = 1.0  # each look at the brokers takes a second of the fake's time
    code, _, _ = cli_cancel(monkeypatch, tmp_path, fake, "--wait", "30")
    out = capsys.readouterr().out
    assert code == Exit.OK
    assert out.count(CancelVerdict.CANCELLED.value) == 2
    assert "every broker shows all 2 partitions as the controller has it (within" in out
    assert len(fake.calls_to("replicas_seen")) == 3, "asked until broker 1 caught up, then no more"
    (done,) = Store(tmp_path / "console.db").audit.entries(action="cancel-complete")
    assert done.outcome == "left the in-flight list; every broker shows the original replicas"


def test_a_followed_cancel_reads_the_brokers_back_until_they_agree(tmp_path: Path) -> None:
    """The dialog's way (``wait_s=0``, then followed): out of the list is not yet cancelled."""
    fake = moving({1: 5.0})
    store = Store(tmp_path / "console.db")
    seen = plan_cancel(fake.snapshot(), None, {})
    report = cancel_service.cancel_seen(store, fake, Identity.cli("bob"), fake.cluster_id, seen, {}, wait_s=0)
    report = report.leaving(fake.list_reassignments())
    assert [v for _, v, _ in report.verdicts] == [CancelVerdict.UNCONFIRMED] * 2 and not report.settled

    report = cancel_service.look_back(fake, report)
    assert [v for _, v, _ in report.verdicts] == [CancelVerdict.BEHIND] * 2 and not report.settled
    assert report.rows()[0]["outcome"] == "the controller took it; the brokers still show the old replica set"
    assert report.rows()[0]["detail"].startswith("broker 1 shows 2,0 (")
    assert "the controller has 0" in report.rows()[0]["detail"]

    fake.advance(2)
    assert cancel_service.look_back(fake, report).count(CancelVerdict.BEHIND) == 2
    assert len(fake.calls_to("replicas_seen")) == 2
    assert cancel_service.look_back(fake, report, every_s=3600) is report, "not asked again so soon"

    fake.advance(4)
    report = cancel_service.look_back(fake, report)
    assert [v for _, v, _ in report.verdicts] == [CancelVerdict.CANCELLED] * 2 and report.settled
    assert report.rows()[0]["detail"].startswith("every broker shows 0 (")
    calls = len(fake.calls_to("replicas_seen"))
    assert cancel_service.look_back(fake, report) is report and len(fake.calls_to("replicas_seen")) == calls


def test_a_look_that_fails_changes_nothing(tmp_path: Path) -> None:
    from console.core.errors import ClusterUnavailable

    fake = moving({})
    store = Store(tmp_path / "console.db")
    seen = plan_cancel(fake.snapshot(), None, {})
    report = cancel_service.cancel_seen(store, fake, Identity.cli("bob"), fake.cluster_id, seen, {}, wait_s=0)
    report = report.leaving(fake.list_reassignments())
    fake.fail_next("replicas_seen", ClusterUnavailable("down", "wait"))
    assert cancel_service.look_back(fake, report) == report
    assert cancel_service.look_back(fake, report).settled


def test_a_partition_is_shown_only_once_every_broker_answers_and_shows_it() -> None:
    key, other = ("t", 0), ("t", 1)
    rb = ReadBack({key: (B0,), other: (B0,)})
    rb = rb.look(
        [
            BrokerView(B0, {key: (B0,), other: (B0, B2)}),
            BrokerView(B1, {}, "timed out"),
            BrokerView(B2, {key: (B0,), other: (B0,)}),
        ],
        1.5,
    )
    assert rb.state(key) is Shown.UNREAD, "broker 1 did not answer: what it shows is not known"
    assert rb.state(other) is Shown.BEHIND and rb.behind[other] == ((B0, (B0, B2)),)
    assert rb.summary() == (
        "the brokers still show the old replica set of 1 partition 1.5 s after the controller (broker 0: 1); "
        "1 partition not read back from the brokers; no answer from 1 broker 1"
    )
    rb = rb.look([BrokerView(B0, {key: (B0,), other: (B0,)}), BrokerView(B1, {key: (B0,)})], 2.0)
    assert rb.state(key) is Shown.SHOWN and rb.state(other) is Shown.UNREAD, "broker 1 does not know t-1"
    rb = rb.look([BrokerView(B0, {other: (B0,)}), BrokerView(B1, {other: (B0,)})], 3.0)
    assert rb.settled and rb.agreed_s == {key: 2.0, other: 3.0}
    assert rb.summary() == "every broker shows all 2 partitions as the controller has it (within 3.0 s)"
