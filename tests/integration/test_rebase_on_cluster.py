"""A plan made stale by a real move, brought up to date with ``python -m console rebase``, and the
controller accepting the result."""

from __future__ import annotations

import json

from console import cli
from console.core.model import BrokerId
from console.plans.plan import Plan, PlanEntry, parse_plan, rollback
from console.plans.rules.codes import STALE
from console.plans.validate import errors, validate
from console.state.reader import ClusterReader
from tests.integration.helpers import make_topic, settle, submit
from tests.support import connection_args, settings_for

TOPIC = "rb-stale"


def ids(*b: int) -> tuple[BrokerId, ...]:
    return tuple(BrokerId(x) for x in b)


def test_a_stale_plan_is_brought_up_to_date_by_the_cli(sandbox, tmp_path, capsys):
    bs = sandbox.bootstrap_servers
    make_topic(bs, TOPIC, 3, 2, 5, assignment=[[0, 1], [1, 2], [2, 0]])
    connection = connection_args(sandbox)
    with ClusterReader(settings_for(sandbox)) as reader:
        drafted = reader.snapshot()
        plan = Plan.of(
            [PlanEntry(TOPIC, 0, ids(2, 1)), PlanEntry(TOPIC, 1, ids(0, 2)), PlanEntry(TOPIC, 2, ids(1, 0))]
        ).with_basis(drafted)
        assert not errors(validate(drafted, plan))
        plan_file, basis_file = tmp_path / "plan.json", tmp_path / "basis.json"
        plan_file.write_text(plan.to_json())
        basis_file.write_text(rollback(drafted, plan).to_json())  # the rollback JSON saved alongside

        # someone else moves partition 1 elsewhere, and partition 2 to the plan's own target
        assert all(
            e is None
            for e in submit(bs, Plan.of([PlanEntry(TOPIC, 1, ids(0, 1)), PlanEntry(TOPIC, 2, ids(1, 0))])).values()
        )
        settle(reader)
        now = reader.snapshot()
        stale = [f for f in validate(now, plan) if f.code == STALE]
        assert [(f.topic, f.partition) for f in stale] == [(TOPIC, 1), (TOPIC, 2)]

        report_file = tmp_path / "report.json"
        capsys.readouterr()
        assert (
            cli.main(
                [
                    "rebase",
                    *connection,
                    "--reassignment-json-file",
                    str(plan_file),
                    "--basis-json-file",
                    str(basis_file),
                    "--drop-completed",
                    "--report-json",
                    str(report_file),
                ]
            )
            == 0
        )
        out = capsys.readouterr()
        assert f"{TOPIC}-1: moved: moved by someone else: was 1,2, now 0,1" in out.err
        assert f"{TOPIC}-2: completed" in out.err and "(dropped)" in out.err
        rebased = parse_plan(out.out)
        assert rebased.entries == (PlanEntry(TOPIC, 0, ids(2, 1)), PlanEntry(TOPIC, 1, ids(0, 2)))  # targets kept
        report = json.loads(report_file.read_text())
        assert report["counts"]["moved"] == 1 and report["counts"]["completed"] == 1
        assert report["counts"]["unchanged"] == 1 and report["dropped"] == [f"{TOPIC}-2"]

        # the output, drafted against the cluster as it is now, is not stale and has no errors
        new_file = tmp_path / "new.json"
        new_file.write_text(out.out)
        found = validate(now, rebased.with_basis(now))
        assert not errors(found) and STALE not in {f.code for f in found}
        assert cli.main(["validate", *connection, "--reassignment-json-file", str(new_file), "--json"]) == 0
        assert json.loads(capsys.readouterr().out)["valid"] is True
        # and rebased again against its own basis (the rollback JSON of now) nothing has changed
        (tmp_path / "now.json").write_text(rollback(now, rebased).to_json())
        assert (
            cli.main(
                [
                    "rebase",
                    *connection,
                    "--reassignment-json-file",
                    str(new_file),
                    "--basis-json-file",
                    str(tmp_path / "now.json"),
                ]
            )
            == 0
        )
        assert "2 unchanged" in capsys.readouterr().err

        # without a basis, only what is in flight, at its target or gone can be told
        assert cli.main(["rebase", *connection, "--reassignment-json-file", str(plan_file)]) == 0
        out = capsys.readouterr()
        assert "1 completed, 2 no basis" in out.err and "No basis given" in out.err
        assert parse_plan(out.out).keys == plan.keys  # nothing dropped without --drop-completed

        # nothing left to do: exit 1, nothing on stdout
        only_done = tmp_path / "done.json"
        only_done.write_text(Plan.of([PlanEntry(TOPIC, 2, ids(1, 0))]).to_json())
        assert cli.main(["rebase", *connection, "--reassignment-json-file", str(only_done), "--drop-completed"]) == 1
        out = capsys.readouterr()
        assert out.out == "" and "Nothing left to do" in out.err

        # the controller takes the rebased plan
        assert all(e is None for e in submit(bs, rebased).values())
        settle(reader)
        after = reader.snapshot()
        assert all(after.partition(*e.key).replicas == e.replicas for e in rebased.entries)
