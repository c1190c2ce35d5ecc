"""The two-person rule from a shell on the real sandbox (``save`` and ``approve`` read the cluster:
which cluster the plan is of, its replicas as the basis): ann saves, ann's own approval is
refused, bob approves, ann submits the saved plan and the run completes."""

from __future__ import annotations

import json

from console import cli
from console.access.auth import write_users_file
from console.cli.exits import Exit
from console.core.model import BrokerId
from console.plans.plan import Plan, PlanEntry, plan_hash
from console.services.guard import REFUSED
from console.state.reader import ClusterReader
from console.storage.store import Store
from tests.integration.helpers import make_topic
from tests.support import connection_args, settings_for

TOPIC = "two-person-shell"


def test_save_approve_submit_by_two_people_from_a_shell(sandbox, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("CONSOLE_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("CONSOLE_STORE_URL", raising=False)
    monkeypatch.delenv("CONSOLE_USERS_FILE", raising=False)
    write_users_file(tmp_path / "users.json", {"users": {}, "two_person_rule": True})

    def as_user(name: str) -> None:
        for var in ("LOGNAME", "USER"):
            monkeypatch.setenv(var, name)

    make_topic(sandbox.bootstrap_servers, TOPIC, 1, 2, 10, assignment=[[0, 1]])
    plan = Plan.of([PlanEntry(TOPIC, 0, (BrokerId(1), BrokerId(2)))])
    path = tmp_path / "plan.json"
    path.write_text(plan.to_json())
    conn = connection_args(sandbox)
    capsys.readouterr()

    as_user("ann")
    assert cli.main(["save", *conn, "--reassignment-json-file", str(path), "--name", "shell"]) == Exit.OK
    plan_id = int(capsys.readouterr().out.strip())
    with ClusterReader(settings_for(sandbox)) as reader:
        cluster = reader.snapshot().cluster_id
    store = Store()
    saved = store.plans.load(plan_id)
    assert saved is not None and saved.summary.cluster == cluster and saved.summary.author == "ann"
    assert saved.plan.basis == {(TOPIC, 0): (BrokerId(0), BrokerId(1))}
    assert cli.main(["approve", *conn, "--plan-id", str(plan_id)]) == Exit.FAILED
    refused = store.audit.entries(action="approve")
    assert [(e.user, e.cluster, e.outcome) for e in refused] == [("ann", cluster, REFUSED)]

    as_user("bob")
    approve = ["approve", *conn, "--plan-id", str(plan_id), "--reassignment-json-file", str(path)]
    assert cli.main(approve) == Exit.OK
    assert [(a.approver, a.cluster) for a in store.plans.approvals(plan_id)] == [("bob", cluster)]

    as_user("ann")
    capsys.readouterr()
    submit = ["submit", *conn, "--reassignment-json-file", str(path), "--plan-id", str(plan_id), "--yes", "--json"]
    assert cli.main([*submit, "--throttle", "10MB/s"]) == Exit.OK
    said = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    run = store.runs.require(said["run"])
    assert (said["state"], run.author, run.plan_hash) == ("completed", "ann", plan_hash(plan))
    with ClusterReader(settings_for(sandbox)) as reader:
        assert reader.snapshot().partition(TOPIC, 0).replicas == (BrokerId(1), BrokerId(2))
