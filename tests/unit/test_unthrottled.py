"""A throttle above what a cluster's broker links carry (its ceiling, ``max_throttle``, 10 GB/s
unless set) limits nothing: it is effectively unthrottled. The services refuse a run or a throttle
change above it (audited, nothing recorded, nothing sent) unless told, whoever calls them; the
command line refuses it without ``--allow-unthrottled`` and says why (met in the shell and on the
pages: ``99999 GB/s`` was taken without a word)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from console import cli
from console.access.auth import Identity
from console.cli import runs as runs_cli
from console.cli.exits import Exit
from console.core.errors import NotPermitted
from console.core.limits import MAX_THROTTLE
from console.core.model import BrokerId
from console.plans.plan import Plan, PlanEntry
from console.services import runs as run_service
from console.services.guard import REFUSED
from console.services.unthrottled import unthrottled_problem
from console.storage.store import Store
from tests.fakes.cluster import FakeCluster, FakeReader

pytestmark = pytest.mark.usefixtures("no_sleep")

ANN = Identity.cli("ann")
MOVE = Plan.of([PlanEntry("t", 0, (BrokerId(1), BrokerId(2)))])
HUGE = 99_999 * 10**9  # 99999 GB/s
GB = 10**9


def cluster() -> FakeCluster:
    return FakeCluster.of(3, {"t": [[0, 1], [1, 2]]}, size=10**6, copy_rate=10**3)


def request_of(store: Store) -> dict[str, object]:
    request = store.audit.entries()[-1].request
    assert isinstance(request, str)
    found: dict[str, object] = json.loads(request)
    return found


def test_the_words_name_the_rate_and_the_ceiling() -> None:
    assert MAX_THROTTLE == 10 * GB
    assert unthrottled_problem(None, MAX_THROTTLE) is None  # no throttle asked for: not this rule's
    assert unthrottled_problem(MAX_THROTTLE, MAX_THROTTLE) is None
    said = unthrottled_problem(HUGE, MAX_THROTTLE) or ""
    assert said.startswith("A throttle of 100.0 TB/s (99,999,000,000,000 bytes/s) is above 10.0 GB/s")
    assert said.endswith("it is effectively unthrottled.")


def test_start_run_refuses_a_throttle_above_the_ceiling_audited_nothing_sent(store: Store) -> None:
    fake = cluster()
    with pytest.raises(NotPermitted, match=r"is above 10\.0 GB/s.*effectively unthrottled") as refused:
        run_service.start_run(
            store,
            fake,
            fake.snapshot(),
            run_service.RunRequest(ANN, MOVE, "x", run_service.RunSettings(rate=HUGE)),
            users=None,
        )
    assert "--allow-unthrottled" in refused.value.hint and "Send it effectively unthrottled" in refused.value.hint
    entry = store.audit.entries()[-1]
    assert (entry.user, entry.action, entry.cluster, entry.outcome) == ("ann", "submit", fake.cluster_id, REFUSED)
    assert request_of(store)["max_throttle"] == MAX_THROTTLE and request_of(store)["rate"] == HUGE
    assert store.runs.list() == []
    assert not fake.calls_to("alter_reassignments") and not fake.calls_to("alter_configs")


def test_start_run_takes_it_when_acknowledged_and_the_run_s_entry_says_so(store: Store) -> None:
    fake = cluster()
    run_id = run_service.start_run(
        store,
        fake,
        fake.snapshot(),
        run_service.RunRequest(ANN, MOVE, "x", run_service.RunSettings(rate=HUGE, unthrottled_ok=True)),
        users=None,
    )
    assert store.runs.require(run_id).rate == HUGE
    entry = store.audit.entries()[-1]
    assert (entry.action, entry.outcome) == ("submit", "run recorded")
    assert request_of(store)["unthrottled_ok"] is True and request_of(store)["max_throttle"] == MAX_THROTTLE


def test_the_ceiling_is_the_cluster_s_own(store: Store) -> None:
    fake = cluster()
    fake.max_throttle = 50 * 10**6  # links of 50 MB/s: 60 MB/s is above them, 40 MB/s is not
    with pytest.raises(NotPermitted, match=r"A throttle of 60\.0 MB/s .* is above 50\.0 MB/s"):
        run_service.start_run(
            store,
            fake,
            fake.snapshot(),
            run_service.RunRequest(ANN, MOVE, "x", run_service.RunSettings(rate=60 * 10**6)),
            users=None,
        )
    assert store.runs.list() == []
    run_service.start_run(
        store,
        fake,
        fake.snapshot(),
        run_service.RunRequest(ANN, MOVE, "x", run_service.RunSettings(rate=40 * 10**6)),
        users=None,
    )
    assert len(store.runs.list()) == 1


def test_change_throttle_refuses_above_the_ceiling_unless_acknowledged(store: Store) -> None:
    fake = cluster()
    run_id = run_service.start_run(
        store,
        fake,
        fake.snapshot(),
        run_service.RunRequest(ANN, MOVE, "x", run_service.RunSettings(rate=10**6)),
        users=None,
    )
    fake.calls.clear()
    with pytest.raises(NotPermitted, match="effectively unthrottled"):
        run_service.change_throttle(store, fake, ANN, run_id, HUGE, confirm_s=0)
    entry = store.audit.entries()[-1]
    assert (entry.action, entry.cluster, entry.outcome) == ("throttle", fake.cluster_id, REFUSED)
    assert store.runs.require(run_id).rate == 10**6
    assert not fake.calls_to("alter_configs")  # nothing sent
    run_service.change_throttle(store, fake, ANN, run_id, HUGE, confirm_s=0, unthrottled_ok=True)
    assert store.runs.require(run_id).rate == HUGE
    sent = [e for e in store.audit.entries(action="throttle-rate") if e.outcome == "sending"]
    assert len(sent) == 1 and json.loads(str(sent[0].request))["unthrottled_ok"] is True


# -- the command line ------------------------------------------------------------------------------------
def submit_args(plan: Path, *extra: str) -> list[str]:
    return ["submit", "--bootstrap-server", "fake:9092", "--reassignment-json-file", str(plan), "--yes", *extra]


def test_submit_refuses_a_throttle_above_the_ceiling_without_allow_unthrottled(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    fake = cluster()
    monkeypatch.setenv("CONSOLE_DATA_DIR", str(tmp_path))
    monkeypatch.setattr(runs_cli, "connect", lambda args: FakeReader(fake))
    plan = tmp_path / "plan.json"
    plan.write_text(MOVE.to_json())
    assert cli.main(submit_args(plan, "--throttle", "99999 GB/s", "--detach")) == Exit.FAILED
    err = capsys.readouterr().err
    assert "Refused: A throttle of 100.0 TB/s (99,999,000,000,000 bytes/s) is above 10.0 GB/s" in err
    assert "effectively unthrottled. Nothing was sent." in err and "--allow-unthrottled" in err
    assert not fake.calls_to("alter_reassignments") and not fake.calls_to("alter_configs")
    store = Store()
    assert store.runs.list() == []
    assert (store.audit.entries()[-1].action, store.audit.entries()[-1].outcome) == ("submit", REFUSED)
    store.close()
    # told: the run is recorded, the override said and audited
    assert cli.main(submit_args(plan, "--throttle", "99999 GB/s", "--detach", "--allow-unthrottled")) == Exit.OK
    out, err = capsys.readouterr()
    assert "Allowed (--allow-unthrottled): A throttle of 100.0 TB/s" in err
    store = Store()
    assert store.runs.require(int(out)).rate == HUGE
    store.close()


def test_throttle_refuses_a_rate_above_the_ceiling_without_allow_unthrottled(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    fake = cluster()
    monkeypatch.setenv("CONSOLE_DATA_DIR", str(tmp_path))
    monkeypatch.setattr(runs_cli, "connect", lambda args: FakeReader(fake))
    store = Store()
    run_id = run_service.start_run(
        store,
        fake,
        fake.snapshot(),
        run_service.RunRequest(ANN, MOVE, "x", run_service.RunSettings(rate=10**6)),
        users=None,
    )
    store.close()
    fake.calls.clear()
    base = ["throttle", "--bootstrap-server", "fake:9092", "--run", str(run_id), "--rate", "99999 GB/s"]
    assert cli.main(base) == Exit.FAILED
    err = capsys.readouterr().err
    assert "Refused: A throttle of 100.0 TB/s" in err and "Nothing was sent." in err
    assert not fake.calls_to("alter_configs")
    assert cli.main([*base, "--allow-unthrottled"]) == Exit.OK
    assert "throttle set to 100.0 TB/s" in capsys.readouterr().err
    store = Store()
    assert store.runs.require(run_id).rate == HUGE
    store.close()
    # a number alone is bytes/s, as in Kafka's tools: 20000 is 20 KB/s, under any ceiling
    assert cli.main(["throttle", "--bootstrap-server", "fake:9092", "--run", str(run_id), "--rate", "20000"]) == Exit.OK
    assert "throttle set to 20.0 KB/s" in capsys.readouterr().err
    store = Store()
    assert store.runs.require(run_id).rate == 20_000
    store.close()
