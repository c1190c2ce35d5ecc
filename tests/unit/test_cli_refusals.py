"""Every command line command that changes a cluster or the store is refused through the service
that makes the change: driven through ``main`` as a person the role rules refuse (the command line
acts with every role; here its identity is made a viewer's), each exits 1 saying why, writes
exactly one audit entry (outcome ``refused``: who, which action, which cluster, why), writes
nothing else and sends nothing. No command prints a refusal of its own beside the service's. The
commands are found in the parser, not listed: a new one is either a case here or says why it
changes nothing a role guards (the command line's side of tests/unit/test_service_roles.py)."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from console import cli
from console.access.auth import NEEDS, NEEDS_ONE_OF, VIEWER, Identity
from console.cli.exits import Exit
from console.core.limits import FOLLOWER_RATE
from console.core.model import BrokerId
from console.services.guard import REFUSED
from tests.unit.world import SHELL_USER, ServiceWorld, store_rows

pytestmark = pytest.mark.usefixtures("no_sleep")
CONN = ["--bootstrap-server", "fake:9092"]
READS = {"snapshot", "cluster_info", "describe_configs", "list_reassignments"}


@dataclass(frozen=True)
class CliCase:
    action: str
    """The action the refused audit entry names."""
    argv: Callable[[ServiceWorld, Path], list[str]]
    setup: Callable[[ServiceWorld], object] = lambda w: None
    """What the cluster must show for the command to go as far as the change (then the fake's
    call log is emptied)."""


def _plan_file(w: ServiceWorld, tmp_path: Path) -> str:
    path = tmp_path / "plan.json"
    path.write_text(w.plan.to_json())
    return str(path)


def _in_flight(w: ServiceWorld) -> object:
    return w.fake.alter_reassignments({("u", 0): (BrokerId(1), BrokerId(2))})


def _leftover_throttle(w: ServiceWorld) -> None:
    w.fake.alter_configs({BrokerId(2): {FOLLOWER_RATE: "1000"}}, {})


CLI_CASES = {
    "submit": CliCase(
        "submit", lambda w, tmp: ["submit", *CONN, "--reassignment-json-file", _plan_file(w, tmp), "--yes"]
    ),
    "cancel": CliCase("cancel", lambda w, tmp: ["cancel", *CONN, "--all", "--yes", "--wait", "0"], _in_flight),
    "throttle": CliCase("throttle", lambda w, tmp: ["throttle", *CONN, "--run", str(w.run_id), "--rate", "1MB/s"]),
    "throttle --sweep": CliCase("sweep", lambda w, tmp: ["throttle", *CONN, "--sweep", "--yes"], _leftover_throttle),
    "runs": CliCase("abandon", lambda w, tmp: ["runs", "--abandon", str(w.run_id), *CONN, "--why", "no"]),
    "runs --pause": CliCase("pause", lambda w, tmp: ["runs", "--pause", str(w.run_id), "--why", "no"]),
    "runs --resume": CliCase("resume", lambda w, tmp: ["runs", "--resume", str(w.run_id)]),
    "cordon": CliCase("cordon", lambda w, tmp: ["cordon", *CONN, "--broker", "1", "--yes"]),
    "uncordon": CliCase("uncordon", lambda w, tmp: ["uncordon", *CONN, "--broker", "1", "--yes"]),
    "decommission": CliCase("decommission", lambda w, tmp: ["decommission", *CONN, "--broker", "1"]),
    "decommission --id": CliCase("decommission", lambda w, tmp: ["decommission", *CONN, "--id", str(w.flow_id)]),
    "decommission --unregister": CliCase(
        "decommission", lambda w, tmp: ["decommission", *CONN, "--id", str(w.flow_id), "--unregister", "--yes"]
    ),
    "decommission --abandon": CliCase(
        "decommission", lambda w, tmp: ["decommission", "--id", str(w.flow_id), "--abandon", "--yes"]
    ),
    "decommission --unregister-idle": CliCase(
        "unregister", lambda w, tmp: ["decommission", *CONN, "--unregister-idle", "2", "--yes"]
    ),
    "save": CliCase(
        "save plans",
        lambda w, tmp: ["save", *CONN, "--reassignment-json-file", _plan_file(w, tmp), "--name", "mine"],
    ),
    "approve": CliCase("approve", lambda w, tmp: ["approve", *CONN, "--plan-id", str(w.plan_id)]),
}
"""Each way a command changes a cluster or the store, driven as far as the change (a first word is
the command the parser knows)."""

CHANGES_NOTHING_GUARDED = {
    "list": "reads the cluster",
    "state": "reads the cluster",
    "validate": "reads a plan file and the cluster",
    "diff": "reads a plan file and the cluster",
    "rollback": "reads a plan file and the cluster",
    "generate": "prints a plan; saves nothing",
    "rebase": "prints the plan brought up to date; saves nothing (the pages' rebase saves, and is a service)",
    "executor": "drives the runs already recorded, each checked and audited when it was submitted",
    "collect": "appends snapshots to the history files of whoever runs it (files, not the store)",
    "pipeline history": "the Spark jobs over the history files of whoever runs them; the server's run of the "
    "job for a person is the checked service (history.update_history)",
    "pipeline review": "reviews plans in the history files; changes nothing",
    "pipeline generate": "writes plans as files; saves none",
    "pipeline compact": "rewrites the history files of whoever runs it",
    "audit-stream": "ships the audit log to a file or topic; writes only its own cursor",
    "store copy": "whoever can open both stores copies one into an empty one (services.store_copy, audited there)",
    "sandbox up": "a local cluster of one's own",
    "sandbox status": "reads",
    "sandbox down": "stops one's own local cluster",
}
"""Commands that change nothing the role rules guard, and why."""


def command_names(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()) -> set[str]:
    """Every command of the parser that runs something (``pipeline history``, not ``pipeline``)."""
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        return {" ".join(path)}
    return {name for a in subs for cmd, sub in a.choices.items() for name in command_names(sub, (*path, cmd))}


def test_every_command_is_a_refusal_case_or_says_why_it_changes_nothing_guarded() -> None:
    found = command_names(cli.build_parser())
    cased = {name.split(" --")[0] for name in CLI_CASES}
    assert found - cased - set(CHANGES_NOTHING_GUARDED) == set(), "add a case to CLI_CASES (or a reason)"
    assert cased | set(CHANGES_NOTHING_GUARDED) <= found, "a case names a command that is gone"
    assert not cased & set(CHANGES_NOTHING_GUARDED)


@pytest.mark.parametrize("command", CLI_CASES)
def test_a_viewer_is_refused_by_every_command_that_changes_something_with_one_audit_entry(
    command: str,
    cli_world: ServiceWorld,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    w, case = cli_world, CLI_CASES[command]
    monkeypatch.setattr(Identity, "cli", classmethod(lambda cls, name: cls(name, frozenset({VIEWER}), "command line")))
    case.setup(w)
    w.fake.calls.clear()
    argv = case.argv(w, tmp_path)
    before_rows, before = store_rows(w.store), {e.id for e in w.store.audit.entries()}
    assert cli.main(argv) == Exit.FAILED
    need = " or ".join(NEEDS_ONE_OF.get(case.action, ())) or NEEDS[case.action]
    why = f"{SHELL_USER} may not {case.action}: it needs the {need} role"
    assert why in capsys.readouterr().err
    new = [e for e in w.store.audit.entries() if e.id not in before]
    assert [(e.user, e.action, e.cluster, e.outcome) for e in new] == [
        (SHELL_USER, case.action, w.fake.cluster_id, REFUSED)
    ]
    assert json.loads(new[0].response or "{}")["why"].startswith(why)
    assert store_rows(w.store) == before_rows  # nothing else written
    assert {c.method for c in w.fake.calls} <= READS  # nothing sent
