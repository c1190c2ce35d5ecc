"""The rules that decide a submit live in the service: :func:`run_service.start_run` itself refuses a
plan with blocking errors and a snapshot whose Metadata or ListPartitionReassignments did not answer
(audited, nothing recorded, nothing sent), whoever calls it; the command line says the service's
refusal in the service's words (issue: only the front ends refused errors, and only the CLI refused
a cluster not read in full)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from console import cli
from console.access.auth import Identity
from console.cli import runs as runs_cli
from console.cli.exits import Exit
from console.core.errors import ClusterUnavailable, SubmitRefused
from console.core.model import BrokerId
from console.plans.plan import Plan, PlanEntry
from console.services import runs as run_service
from console.services.guard import REFUSED
from console.services.preflight import preflight
from console.storage.store import Store
from tests.fakes.cluster import FakeCluster, FakeReader

pytestmark = pytest.mark.usefixtures("no_sleep")

ANN = Identity.cli("ann")
GOOD = Plan.of([PlanEntry("t", 0, (BrokerId(1), BrokerId(2)))])
ONTO_NOBODY = Plan.of([PlanEntry("t", 0, (BrokerId(1), BrokerId(9)))])  # broker 9 does not exist


def cluster() -> FakeCluster:
    return FakeCluster.of(3, {"t": [[0, 1], [1, 2]]}, size=10**6, copy_rate=10**6)


def assert_refused_and_nothing_sent(store: Store, fake: FakeCluster) -> None:
    entry = store.audit.entries()[-1]
    assert (entry.user, entry.action, entry.outcome) == ("ann", "submit", REFUSED)
    assert store.runs.list() == []
    assert not fake.calls_to("alter_reassignments") and not fake.calls_to("alter_configs")


@pytest.mark.parametrize(
    ("fault", "unread"),
    [("snapshot:reassignments", "ListPartitionReassignments"), ("snapshot", "Metadata and ListPartitionReassignments")],
)
def test_a_snapshot_whose_essential_reads_failed_is_refused_by_start_run(store: Store, fault: str, unread: str) -> None:
    fake = cluster()
    fake.fail_next(fault, ClusterUnavailable("timed out"))
    state = fake.snapshot()
    with pytest.raises(SubmitRefused, match=f"could not be read in full \\({unread} did not answer\\)") as refused:
        run_service.start_run(store, fake, state, run_service.RunRequest(ANN, GOOD, "notebook run"), users=None)
    assert refused.value.hint
    assert_refused_and_nothing_sent(store, fake)
    request = store.audit.entries()[-1].request
    assert "ListPartitionReassignments" in (request if isinstance(request, str) else json.dumps(request))


def test_a_plan_with_blocking_errors_is_refused_by_start_run_with_its_findings(store: Store) -> None:
    fake = cluster()
    state = fake.snapshot()
    with pytest.raises(SubmitRefused, match="The plan has 1 error against the cluster as it is now") as refused:
        run_service.start_run(store, fake, state, run_service.RunRequest(ANN, ONTO_NOBODY, "x"), users=None)
    assert [f.severity.value for f in refused.value.findings] == ["error"]
    assert_refused_and_nothing_sent(store, fake)


def test_a_preflight_of_another_plan_does_not_let_a_bad_plan_through(store: Store) -> None:
    fake = cluster()
    state = fake.snapshot()
    clean = preflight(state, GOOD)
    assert clean.refusal() is None
    with pytest.raises(SubmitRefused):
        run_service.start_run(
            store, fake, state, run_service.RunRequest(ANN, ONTO_NOBODY, "x", checked=clean), users=None
        )
    assert_refused_and_nothing_sent(store, fake)


def test_the_preflight_confirmed_is_what_start_run_uses(store: Store) -> None:
    fake = cluster()
    state = fake.snapshot()
    run_id = run_service.start_run(
        store, fake, state, run_service.RunRequest(ANN, GOOD, "x", checked=preflight(state, GOOD)), users=None
    )
    assert store.runs.require(run_id).name == "x"
    assert store.audit.entries()[-1].outcome == "run recorded"


def submit_cli(fake: FakeCluster, plan: Plan, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> int:
    monkeypatch.setenv("CONSOLE_DATA_DIR", str(tmp_path))
    monkeypatch.setattr(runs_cli, "connect", lambda args: FakeReader(fake))
    path = tmp_path / "plan.json"
    path.write_text(plan.to_json())
    return cli.main(["submit", "--bootstrap-server", "fake:9092", "--reassignment-json-file", str(path), "--yes"])


def test_the_cli_says_the_services_refusal_of_a_cluster_not_read_in_full(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    fake = cluster()
    fake.fail_next("snapshot:reassignments", ClusterUnavailable("timed out"))
    assert submit_cli(fake, GOOD, tmp_path, monkeypatch) == Exit.FAILED
    err = capsys.readouterr().err
    assert "Error: The cluster's state could not be read in full (ListPartitionReassignments did not answer)" in err
    assert "Check that the cluster answers" in err
    store = Store()
    assert [e.outcome for e in store.audit.entries() if e.action == "submit"] == [REFUSED]
    assert not fake.calls_to("alter_reassignments")


def test_the_cli_says_the_services_refusal_of_blocking_errors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    fake = cluster()
    assert submit_cli(fake, ONTO_NOBODY, tmp_path, monkeypatch) == Exit.FAILED
    err = capsys.readouterr().err
    assert "[error]" in err and "Error: The plan has 1 error against the cluster as it is now: nothing was sent." in err
    assert not fake.calls_to("alter_reassignments")
