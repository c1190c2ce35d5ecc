"""``python -m console ...``: the command line.

Exit codes: 0 success; 1 the cluster could not give what was asked, (validate) the plan has
errors, (cancel) the console refused and sent nothing, or (rebase) nothing is left to do; 2 bad usage, settings, or a plan file
that cannot be used; 3 (cancel) the controller accepted only part of the request.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from console.cli_goals import read_file
from console.core.errors import ConfigError, ConsoleError
from console.core.format import human_rate, plural
from console.core.limits import MOVES_PER_BROKER, PARTITIONS_PER_WAVE
from console.core.model import ClusterState, Finding, SourceStatus

if TYPE_CHECKING:
    from console.core.calibration import Calibration
    from console.state.reader import ClusterReader
    from console.storage.store import Store


def _connection_args(p: argparse.ArgumentParser, offline: bool = False) -> None:
    """The cluster to read; with ``offline``, a snapshot file may stand in for it (``--state-file``)."""
    if offline:
        where = p.add_mutually_exclusive_group(required=True)
        where.add_argument("--bootstrap-server", help="host:port[,host:port...] of the cluster")
        where.add_argument("--state-file", help="a snapshot saved with 'state --json', instead of the live cluster")
    else:
        p.add_argument("--bootstrap-server", required=True, help="host:port[,host:port...] of the cluster")
    p.add_argument("--zookeeper", help="ZooKeeper connect string with the cluster's chroot, e.g. zk:2181/kafka")
    p.add_argument("--command-config", help="properties file with security settings, as for the Kafka tools")
    p.add_argument("--timeout", type=float, default=10.0, help="seconds to wait for each answer (default 10)")


def build_parser() -> argparse.ArgumentParser:
    installed = os.path.basename(sys.argv[0]) == "reassignment-console"
    parser = argparse.ArgumentParser(
        prog="reassignment-console" if installed else "python -m console",
        description="Kafka partition reassignment console",
    )
    sub = parser.add_subparsers(dest="command", required=True)

    sb = sub.add_parser("sandbox", help="a local Kafka 3.9 cluster for trying things out")
    sbsub = sb.add_subparsers(dest="action", required=True)
    up = sbsub.add_parser("up", help="start ZooKeeper + 3 brokers (or 3 KRaft nodes); prints one JSON line")
    up.add_argument("--kraft", action="store_true", help="KRaft mode (no ZooKeeper)")
    up.add_argument("--data-dir", type=Path, help="where data, logs and state go")
    up.add_argument("--brokers", type=int, default=3)
    up.add_argument("--demo", action="store_true", help="create demo topics with a few MB each")
    up.add_argument(
        "--demo-reassignment", action="store_true", help="also start a throttled reassignment (implies --demo)"
    )
    for name, text in (
        ("status", "print the running sandbox (exit 1 if none)"),
        ("down", "stop every sandbox process"),
    ):
        a = sbsub.add_parser(name, help=text)
        a.add_argument("--data-dir", type=Path)

    ls = sub.add_parser("list", help="in-flight reassignments (like kafka-reassign-partitions.sh --list)")
    _connection_args(ls)
    ls.add_argument("--json", action="store_true")

    st = sub.add_parser("state", help="the whole cluster snapshot")
    _connection_args(st)
    st.add_argument("--json", action="store_true")

    for name, text in (
        ("validate", "check a reassignment JSON file against the live cluster (exit 1 on errors)"),
        ("diff", "what a reassignment JSON file would do: per partition, broker, rack, and movement"),
        ("rollback", "the rollback JSON of a plan (the current assignment of its partitions), on one line"),
    ):
        a = sub.add_parser(name, help=text)
        _connection_args(a, offline=True)
        a.add_argument("--reassignment-json-file", required=True, help="the plan, in the official format")
        if name != "rollback":
            a.add_argument("--json", action="store_true")

    _generate_args(sub)
    from console.cli_pipeline import add_commands

    add_commands(sub, _connection_args)

    rb = sub.add_parser(
        "rebase",
        help="bring a stale plan up to date: same targets, against the cluster as it is now",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Say per partition what changed since the plan was drafted (moved by someone else, "
        "reassigning now, at its target already, gone, unchanged) and print the plan brought up to "
        "date on stdout (official JSON; the report goes to stderr).\n\n"
        "The official JSON carries no record of the replicas a plan was drafted against; give it with "
        "--basis-json-file (a plan JSON of the replicas at drafting time, e.g. the rollback JSON saved "
        "with the plan). Without it (or for partitions it does not list) a partition that moved "
        "cannot be told from one that did not: only partitions reassigning now, already at their "
        "target, or gone are detected; the others are reported as 'no basis' and kept.\n\n"
        "Exit 0 with a plan on stdout; 1 when nothing is left to do (every kept partition is at its "
        "target, or none is kept; nothing on stdout) or the cluster cannot be read; 2 when a file "
        "cannot be used.",
    )
    _connection_args(rb)
    rb.add_argument("--reassignment-json-file", required=True, help="the plan, in the official format")
    rb.add_argument(
        "--basis-json-file",
        help="the partitions' replicas when the plan was drafted, in the same format (e.g. its rollback JSON)",
    )
    rb.add_argument("--drop-completed", action="store_true", help="leave out partitions already at their target")
    rb.add_argument("--drop-gone", action="store_true", help="leave out partitions whose topic or partition is gone")
    rb.add_argument("--report-json", metavar="FILE", help="also write the per-partition report as JSON to FILE")

    cc = sub.add_parser("cancel", help="cancel reassignments in flight (KIP-455: back to the original replicas)")
    _connection_args(cc)
    scope = cc.add_mutually_exclusive_group(required=True)
    scope.add_argument(
        "--all", action="store_true", help="every reassignment in flight in the cluster, whoever started it"
    )
    scope.add_argument("--topic", help="the reassignments of this topic")
    scope.add_argument("--run", type=int, help="the partitions in flight of this console's run")
    cc.add_argument("--partition", type=int, action="append", default=[], help="only these partitions (with --topic)")
    cc.add_argument(
        "--include-others",
        action="store_true",
        help="also cancel reassignments this console did not start (implied by --all)",
    )
    cc.add_argument(
        "--force-at-risk",
        action="store_true",
        help="cancel even partitions whose original replicas are all out of sync (may leave them leaderless)",
    )
    cc.add_argument(
        "--wait",
        type=float,
        default=60.0,
        help="seconds to wait for the partitions to leave the in-flight list (default 60; 0: do not wait)",
    )
    cc.add_argument("--yes", action="store_true", help="do not ask for confirmation")
    cc.add_argument("--json", action="store_true")

    sm = sub.add_parser("submit", help="carry out a reassignment JSON file: reviewed, throttled, in waves")
    _connection_args(sm)
    sm.add_argument("--reassignment-json-file", required=True, help="the plan, in the official format")
    sm.add_argument("--throttle", type=int, help="replication throttle in bytes/s while the run moves data")
    sm.add_argument(
        "--max-moves-per-broker",
        type=int,
        default=MOVES_PER_BROKER,
        help=f"adding replicas per broker per wave (default {MOVES_PER_BROKER})",
    )
    sm.add_argument(
        "--max-partitions-per-request",
        type=int,
        default=PARTITIONS_PER_WAVE,
        help=f"partitions per wave (default {PARTITIONS_PER_WAVE})",
    )
    sm.add_argument("--max-bytes-per-wave", type=int, help="bytes to copy per wave (default: no limit)")
    sm.add_argument("--name", help="a name for the run (default: the file name)")
    sm.add_argument("--detach", action="store_true", help="record the run and leave it to a running executor")
    sm.add_argument(
        "--path",
        choices=["api", "zookeeper"],
        default="api",
        help="api: AlterPartitionReassignments (falls back to the znode on clusters older than 2.4 when "
        "--zookeeper is given); zookeeper: the /admin/reassign_partitions znode (cannot be cancelled)",
    )
    sm.add_argument("--yes", action="store_true", help="do not ask: acknowledge warnings and confirm")
    sm.add_argument(
        "--plan-id",
        type=int,
        help="the saved plan this file is (needed when the two-person rule is on: it must be approved)",
    )
    sm.add_argument(
        "--no-elect-leaders",
        action="store_true",
        help="do not end the run with a preferred leader election of its partitions (by default it does "
        "when the plan changes some partition's first replica)",
    )

    th = sub.add_parser("throttle", help="change the throttle of a run in flight, or remove throttles nothing needs")
    _connection_args(th)
    what = th.add_mutually_exclusive_group(required=True)
    what.add_argument("--run", type=int, help="the run whose throttle changes (with --rate)")
    what.add_argument("--sweep", action="store_true", help="remove throttles that nothing in flight needs")
    th.add_argument("--rate", type=int, help="bytes/s")
    th.add_argument("--yes", action="store_true", help="with --sweep: do not ask")

    ex = sub.add_parser("executor", help="drive the cluster's unfinished runs until stopped (Ctrl-C or SIGTERM)")
    _connection_args(ex)
    ex.add_argument("--every", type=float, default=1.0, help="seconds between steps (default 1)")

    rn = sub.add_parser("runs", help="runs recorded by this console (newest first); --abandon ID stops driving one")
    rn.add_argument("--cluster", help="only this cluster's runs")
    rn.add_argument("--json", action="store_true")
    rn.add_argument(
        "--abandon",
        type=int,
        metavar="ID",
        help="stop driving this run for good: its throttles come off, its reassignments stay as they are",
    )
    rn.add_argument("--why", help="with --abandon: the reason, for the audit log")
    rn.add_argument(
        "--cancel-reassignments",
        action="store_true",
        help="with --abandon: also cancel the run's reassignments in flight (back to their original replicas)",
    )
    rn.add_argument("--bootstrap-server", help="with --abandon: the run's cluster")
    rn.add_argument("--zookeeper", help="with --abandon: the cluster's ZooKeeper connect string")
    rn.add_argument("--command-config", help="with --abandon: properties file with security settings")
    rn.add_argument("--timeout", type=float, default=10.0, help="seconds to wait for each answer (default 10)")
    return parser


def _generate_args(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from console.cli_goals import add_goal_args

    gen = sub.add_parser(
        "generate",
        help="make a plan for a goal: decommission, add brokers, rebalance, replication factor, racks",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Make a reassignment plan that reaches one goal while moving as little data as it can, and say "
        "how close to the least possible it is.\n\n"
        "The plan (only partitions that change, official JSON) goes to stdout; the report to stderr "
        "(--report-json FILE also writes it as JSON). Only live, eligible brokers receive replicas; "
        "partitions being reassigned are left alone; racks are kept spread.\n\n"
        "Exit 0 with a plan (nothing on stdout when the goal is already met); 1 when the goal cannot be "
        "reached (the reason is printed); 2 when the input cannot be used.",
    )
    _connection_args(gen, offline=True)
    add_goal_args(gen)
    gen.add_argument("--report-json", metavar="FILE", help="also write the report as JSON to FILE")


def run() -> None:
    """The ``reassignment-console`` command (the same as ``python -m console``)."""
    sys.exit(main())


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        handlers: dict[str, Callable[[argparse.Namespace], int]] = {
            "sandbox": _sandbox,
            "validate": _plan_command,
            "diff": _plan_command,
            "rollback": _plan_command,
            "rebase": _rebase,
            "generate": _generate,
            "cancel": _cancel,
            "submit": _submit,
            "runs": _runs,
            "throttle": _throttle,
            "executor": _executor,
            "collect": _collect,
            "pipeline": _pipeline,
        }
        return handlers.get(args.command, _read)(args)  # list, state: read the cluster
    except ConfigError as e:
        _err(e)
        return 2
    except ConsoleError as e:
        _err(e)
        return 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # the reader of our output went away (e.g. `| head`)
        return 0


def _collect(args: argparse.Namespace) -> int:
    from console.cli_pipeline import run_collect

    return run_collect(args, _connect)


def _pipeline(args: argparse.Namespace) -> int:
    from console.cli_pipeline import run_pipeline

    return run_pipeline(args)


def _err(e: ConsoleError) -> None:
    print(f"Error: {e.message}", file=sys.stderr)
    if e.hint:
        print(e.hint, file=sys.stderr)


def _print_findings(state: ClusterState) -> None:
    for f in state.findings:
        print(f"Error: {f.message}\n{f.hint}", file=sys.stderr)


def _sandbox(args: argparse.Namespace) -> int:
    from console.sandbox import cluster

    if args.action == "up":
        sb = cluster.up(args.data_dir, kraft=args.kraft, brokers=args.brokers)
        if args.demo or args.demo_reassignment:
            from console.sandbox.demo import load_demo

            load_demo(
                sb.bootstrap_servers,
                [int(b["id"]) for b in sb.brokers],  # type: ignore[call-overload]
                reassignment=args.demo_reassignment,
                log=lambda m: print(m, file=sys.stderr, flush=True),
            )
        from console.access.auth import SANDBOX_USERS, write_users
        from console.core.paths import users_file

        info = sb.info()
        path = users_file()
        if not path.exists():  # the console's own users for the sandbox (sandbox-only passwords)
            write_users(path, {n: (pw, list(roles)) for n, (pw, roles) in SANDBOX_USERS.items()})
            info["console_users"] = {n: {"password": pw, "roles": roles} for n, (pw, roles) in SANDBOX_USERS.items()}
            info["console_users_file"] = str(path)
        print(json.dumps(info), flush=True)
        return 0
    if args.action == "status":
        running = cluster.status(args.data_dir)
        if running is None:
            print("No sandbox is running" + (f" in {args.data_dir}." if args.data_dir else "."), file=sys.stderr)
            return 1
        print(json.dumps(running.info()))
        return 0
    stopped = cluster.down(args.data_dir)
    print("Sandbox stopped." if stopped else "No sandbox was running.", file=sys.stderr)
    return 0


def _read(args: argparse.Namespace) -> int:
    from console.present.text import list_json, list_text, state_json

    with _connect(args) as reader:
        state = reader.snapshot()
    if state.status.metadata is not SourceStatus.OK and state.status.zookeeper is not SourceStatus.OK:
        _print_findings(state)
        return 1
    if args.command == "list":
        if state.status.reassignments is not SourceStatus.OK:
            if state.status.zookeeper is not SourceStatus.OK:
                _print_findings(state)
                return 1
            print(
                "Warning: ListPartitionReassignments did not answer; this list comes from ZooKeeper.", file=sys.stderr
            )
        print(json.dumps(list_json(state)) if args.json else list_text(state))
        return 0
    if args.json:
        print(json.dumps(state_json(state)))
    else:
        from console.present.text import state_text

        print(state_text(state))
    return 0


def _plan_command(args: argparse.Namespace) -> int:
    from console.plans.diff import diff
    from console.plans.plan import parse_plan, rollback
    from console.plans.validate import errors, validate
    from console.present import review
    from console.present.findings import findings_text

    try:
        text = Path(args.reassignment_json_file).read_bytes()
    except OSError as e:
        raise ConfigError(
            f"Cannot read {args.reassignment_json_file}: {e.strerror or e}.",
            "Check the path given to --reassignment-json-file.",
        ) from None
    plan = parse_plan(text)  # PlanFormatError is a ConfigError: exit 2, nothing sent anywhere
    state = _snapshot(args)
    if state.status.metadata is not SourceStatus.OK and state.status.zookeeper is not SourceStatus.OK:
        if args.command == "validate" and args.json:
            print(json.dumps({"valid": False, "findings": [_short(f) for f in state.findings]}))
        _print_findings(state)
        return 1
    if args.command == "rollback":
        print(rollback(state, plan).to_json())
        return 0
    d = diff(state, plan)
    racks = review.rack_map(state)
    if args.command == "diff":
        print(json.dumps(review.diff_json(d, racks)) if args.json else review.diff_text(d, racks))
        return 0
    findings = validate(state, plan, d)
    bad = errors(findings)
    if args.json:
        print(json.dumps({"valid": not bad, "findings": [_short(f) for f in findings]}))
    else:
        print(findings_text(findings))
        print(
            f"{plural(len(bad), 'error')}, {plural(len(findings) - len(bad), 'other finding')}: "
            + ("the plan must not be submitted." if bad else "no errors."),
            file=sys.stderr,
        )
    return 1 if bad else 0


def _rebase(args: argparse.Namespace) -> int:
    """A stale plan brought up to date: the report on stderr, the new plan on stdout."""
    from console.plans.plan import Plan, parse_plan
    from console.plans.rebase import RebaseOptions, rebase, report_json, report_text

    plan = parse_plan(read_file(args.reassignment_json_file, "--reassignment-json-file"))
    if args.basis_json_file:
        was = parse_plan(read_file(args.basis_json_file, "--basis-json-file"))
        planned = set(plan.keys)
        plan = Plan(plan.entries, {e.key: e.replicas for e in was.entries if e.key in planned})
        missing = len(planned) - len(plan.basis)
        if missing:
            print(
                f"Warning: the basis file does not list {missing} of the plan's partitions: whether they moved "
                "cannot be told.",
                file=sys.stderr,
            )
    with _connect(args) as reader:
        state = reader.snapshot()
    if state.status.metadata is not SourceStatus.OK and state.status.zookeeper is not SourceStatus.OK:
        _print_findings(state)
        return 1
    if state.status.reassignments is not SourceStatus.OK and state.status.zookeeper is not SourceStatus.OK:
        print(
            "Warning: neither ListPartitionReassignments nor ZooKeeper answered: reassignments in flight may "
            "not be seen.",
            file=sys.stderr,
        )
    report = rebase(state, plan, RebaseOptions(drop_completed=args.drop_completed, drop_gone=args.drop_gone))
    if args.report_json:
        _write_json(args.report_json, report_json(report), "--report-json")
    print(report_text(report), file=sys.stderr)
    if not report.left_to_do:
        print("Nothing left to do: no plan printed.", file=sys.stderr)
        return 1
    print(report.plan.to_json())
    return 0


def _snapshot(args: argparse.Namespace) -> ClusterState:
    """The snapshot from --state-file, or read from the cluster now."""
    if getattr(args, "state_file", None):
        from console.state.snapshot_file import read_state

        return read_state(args.state_file)
    with _connect(args) as reader:
        return reader.snapshot()


def _write_json(path: str, doc: object, option: str) -> None:
    try:
        Path(path).write_text(json.dumps(doc))
    except OSError as e:
        raise ConfigError(f"Cannot write {path}: {e.strerror or e}.", f"Check the path given to {option}.") from None


def _generate(args: argparse.Namespace) -> int:
    """A plan for a goal: the plan on stdout, the report on stderr."""
    from console.cli_goals import goal_options
    from console.moves.waves import WaveLimits, plan_estimate
    from console.plans.generate import generate

    options = goal_options(args)
    state = _snapshot(args)
    if state.status.metadata is not SourceStatus.OK and state.status.zookeeper is not SourceStatus.OK:
        _print_findings(state)
        return 1
    made = generate(state, options)
    report = made.report
    if args.throttle:
        report = report.with_estimate(
            plan_estimate(state, made.plan, args.throttle, WaveLimits(moves_per_broker=args.max_moves_per_broker)),
            args.throttle,
        )
    if args.report_json:
        _write_json(args.report_json, report.to_dict(), "--report-json")
    print(report.text(), file=sys.stderr)
    if not len(made.plan):
        print("Nothing to do: the goal is met already (no plan printed).", file=sys.stderr)
        return 0
    print(made.plan.to_json())
    return 0


def _calibration(state: ClusterState, name: str) -> Calibration | None:
    """What the history job last learned about this cluster's copy rates (the console's history dir)."""
    from console.core.model import cluster_key
    from console.core.paths import history_dir
    from console.pipeline.calibration import load_calibration

    return load_calibration(history_dir() / "tables", cluster_key(state, name))


def _connect(args: argparse.Namespace) -> ClusterReader:
    from console.access.settings import settings_from_args
    from console.state.reader import ClusterReader

    return ClusterReader(
        settings_from_args(args.bootstrap_server, args.zookeeper, args.command_config, timeout_s=args.timeout)
    )


def _cancel(args: argparse.Namespace) -> int:
    """Cancel for on-call: read what is in flight, say what cancel means, send, wait, record."""
    import getpass

    from console.access.auth import Identity
    from console.core.model import cluster_key
    from console.moves.cancel import keys_of, plan_cancel
    from console.services import cancel as cancel_service
    from console.storage.store import Store

    if args.partition and not args.topic:
        raise ConfigError("--partition needs --topic.", "Name the topic the partitions belong to.")
    store = Store()
    user = getpass.getuser()
    with _connect(args) as reader:
        name = reader.settings.name
        state = reader.snapshot()
        if state.status.reassignments is not SourceStatus.OK:
            _print_findings(state)
            print(
                "Cannot cancel: ListPartitionReassignments did not answer (cancel needs the Admin API of "
                "Kafka 2.4 or newer, and ALTER on CLUSTER).",
                file=sys.stderr,
            )
            return 1
        cluster = cluster_key(state, name)
        ours = store.runs.active_partitions(cluster)
        if args.run is not None:
            keys: list[tuple[str, int]] | None = [k for k, r in ours.items() if r == args.run]
            if not keys:
                raise ConfigError(
                    f"Run {args.run} has nothing in flight in this cluster.",
                    "List the runs with `python -m console runs`.",
                )
        else:
            keys = None if args.all else keys_of(state, args.topic, args.partition)
            if keys is not None and not keys:
                raise ConfigError(f"Topic {args.topic} has no such partitions in the cluster.", "Check the topic name.")
        plan = plan_cancel(state, keys, ours, include_others=args.include_others)
        for line in plan.explain():
            print(line, file=sys.stderr)
        if not plan.cancel:
            print(
                "Nothing to cancel."
                + (
                    " Use --include-others to cancel the reassignments this console did not start."
                    if plan.not_ours
                    else ""
                ),
                file=sys.stderr,
            )
            return 0 if not plan.not_ours else 1
        if plan.at_risk and not args.force_at_risk:
            print(
                "Refused: some partitions could be left without a leader; nothing was sent. "
                "Add --force-at-risk to cancel them anyway.",
                file=sys.stderr,
            )
            return 1
        if not args.yes:
            answer = input(f"Type the cluster's name ({name}) to send the cancel: ")
            if answer.strip() != name:
                print("Not confirmed: nothing was sent.", file=sys.stderr)
                return 1
        # sent for what was shown, as the cluster is now (a partition may have completed meanwhile)
        report = cancel_service.cancel_seen(
            store,
            reader.gateway(),
            Identity.cli(user),
            cluster,
            plan,
            ours,
            force_at_risk=args.force_at_risk,
            wait_s=args.wait,
        )
    result = report.result
    rejected = result.rejected if result is not None else ()
    if args.json:
        print(
            json.dumps(
                {
                    "accepted": [o.name for o in result.accepted] if result else [],
                    "rejected": [o.to_dict() for o in rejected],
                    "still_in_flight": [f"{t}-{p}" for t, p in sorted(result.still_in_flight)] if result else [],
                    "seconds_to_accept": round(result.seconds_to_accept, 3) if result else 0.0,
                    "outcomes": report.rows(),
                }
            )
        )
    else:
        print(f"Cancel: {report.summary()}")
        for row in report.rows():
            print(f"  {row['partition']}: {row['outcome']}" + (f" ({row['detail']})" if row["detail"] else ""))
    return 0 if not rejected else 3


def _submit(args: argparse.Namespace) -> int:
    """Preflight (the plan is reviewed now), confirmation, then the run, driven here."""
    import getpass

    from console.access.auth import Identity, load_users
    from console.core.format import human_bytes, human_duration
    from console.core.states import RunState, SubmitPath
    from console.moves.waves import WaveLimits
    from console.plans.diff import first_replica_changes
    from console.plans.plan import parse_plan
    from console.present.findings import findings_text
    from console.runs.executor import Executor
    from console.services import runs as run_service
    from console.storage.runs import ELECTION_WAVE
    from console.storage.store import Store

    path = Path(args.reassignment_json_file)
    try:
        text = path.read_bytes()
    except OSError as e:
        raise ConfigError(
            f"Cannot read {path}: {e.strerror or e}.", "Check the path given to --reassignment-json-file."
        ) from None
    plan = parse_plan(text)
    if args.throttle is not None and args.throttle <= 0:
        raise ConfigError(
            "--throttle must be a positive number of bytes/s.", "For example --throttle 10485760 (10.0 MB/s)."
        )
    limits = WaveLimits(args.max_moves_per_broker, args.max_partitions_per_request, args.max_bytes_per_wave)
    store = Store()
    users = load_users()
    refusal = run_service.two_person_problem(store, users, args.plan_id, plan)
    if refusal:
        print(f"Refused: {refusal} Nothing was sent.", file=sys.stderr)
        return 1
    user = getpass.getuser()
    with _connect(args) as reader:
        name = reader.settings.name
        state = reader.snapshot()
        if state.status.metadata is not SourceStatus.OK or state.status.reassignments is not SourceStatus.OK:
            _print_findings(state)
            print("Refused: the cluster's state could not be read in full; nothing was sent.", file=sys.stderr)
            return 1
        pre = run_service.preflight(state, plan, limits, args.throttle, _calibration(state, name))
        bad, warn = pre.errors, pre.warnings
        if bad:
            print(findings_text(bad), file=sys.stderr)
            print(f"Refused: {plural(len(bad), 'error')}; nothing was sent.", file=sys.stderr)
            return 1
        if warn:
            print(findings_text(warn), file=sys.stderr)
            if (
                not args.yes
                and input(
                    f"Acknowledge {'this warning' if len(warn) == 1 else f'these {len(warn)} warnings'}? [yes/no] "
                )
                .strip()
                .lower()
                != "yes"
            ):
                print("Not acknowledged: nothing was sent.", file=sys.stderr)
                return 1
        if not pre.waves:
            print("Nothing to do: every partition is already at its target.", file=sys.stderr)
            return 0
        print(
            f"Will send {plural(pre.partitions, 'partition')} in {plural(len(pre.waves), 'wave')} "
            f"(at most {plural(limits.moves_per_broker, 'adding replica')} per broker, "
            f"{plural(limits.partitions, 'partition')} per wave); "
            f"{human_bytes(pre.bytes_to_copy)} to copy"
            + (f"; throttled at {human_rate(args.throttle)}" if args.throttle else "; not throttled")
            + (
                f" (≈ {human_duration(pre.estimate.seconds)}, {pre.estimate.basis})"
                if pre.estimate and pre.estimate.seconds
                else ""
            )
            + ".",
            file=sys.stderr,
        )
        elect = not args.no_elect_leaders and first_replica_changes(state, plan)
        print(
            "Then a preferred leader election of its partitions (--no-elect-leaders: none)."
            if elect
            else "No preferred leader election at the end"
            + (" (--no-elect-leaders)." if args.no_elect_leaders else ": no partition gets another first replica."),
            file=sys.stderr,
        )
        for i, w in enumerate(pre.waves, 1):
            print(
                f"  wave {i}: "
                + ", ".join(f"{e.name}→{','.join(map(str, e.replicas))}" for e in w[:8])
                + (f" … and {len(w) - 8} more" if len(w) > 8 else ""),
                file=sys.stderr,
            )
        if not args.yes and input(f"Type the cluster's name ({name}) to start: ").strip() != name:
            print("Not confirmed: nothing was sent.", file=sys.stderr)
            return 1
        if args.path == "zookeeper":
            print(
                "The ZooKeeper path cannot be cancelled: once started, the partitions move to their targets "
                "(roll back afterwards if needed).",
                file=sys.stderr,
            )
        gateway = reader.gateway()
        run_id = run_service.start_run(
            store,
            gateway,
            Identity.cli(user),
            state,
            plan,
            args.name or path.name,
            args.throttle,
            limits,
            SubmitPath(args.path),
            elect_leaders=elect,
            users=users,
            plan_id=args.plan_id,
        )
        print(f"Run {run_id} recorded.", file=sys.stderr)
        if args.detach:
            print(run_id)
            return 0
        run = Executor(store, gateway, user).drive(
            run_id, progress=lambda s: print(f"run {s.run.id}: {s.did}", file=sys.stderr)
        )
        failed = [o for o in store.runs.outcomes(run_id) if not o.accepted]
    # an election that failed for some partitions leaves them led as they were: shown, not a failure
    rejected = [o for o in failed if o.wave != ELECTION_WAVE]
    not_elected = [o for o in failed if o.wave == ELECTION_WAVE]
    for o in rejected:
        print(f"Rejected in wave {o.wave}: {o.name}: {o.message}", file=sys.stderr)
    for o in not_elected:
        print(f"Preferred leader not elected: {o.name}: {o.code}: {o.message}", file=sys.stderr)
    print(
        json.dumps(
            {
                "run": run_id,
                "state": run.state.value,
                "rejected": [o.name for o in rejected],
                "elect_leaders": elect,
                "not_elected": [o.name for o in not_elected],
            }
        )
    )
    if run.state is not RunState.COMPLETED:
        return 1
    return 3 if rejected else 0


def _throttle(args: argparse.Namespace) -> int:
    import getpass

    from console.access.auth import Identity
    from console.moves.throttles import leftover_throttles
    from console.present.live import throttle_value_text
    from console.services import runs as run_service
    from console.storage.store import Store

    store = Store()
    if args.sweep:
        with _connect(args) as reader:
            left = leftover_throttles(reader.snapshot())
            for lo in left:
                print(f"{lo.kind} {lo.name}: {lo.key} = {throttle_value_text(lo.key, lo.value)}", file=sys.stderr)
            if not left:
                print("No throttle is left over.", file=sys.stderr)
                return 0
            if (
                not args.yes
                and input(f"Remove {'this setting' if len(left) == 1 else f'these {len(left)} settings'}? [yes/no] ")
                .strip()
                .lower()
                != "yes"
            ):
                print("Not confirmed: nothing was changed.", file=sys.stderr)
                return 1
            run_service.sweep(store, reader.gateway(), Identity.cli(getpass.getuser()), left)
        print(f"Removed {plural(len(left), 'throttle setting')}.", file=sys.stderr)
        return 0
    if args.rate is None or args.rate <= 0:
        raise ConfigError("--rate must be a positive number of bytes/s.", "For example --rate 10485760 (10.0 MB/s).")
    run = store.runs.get(args.run)
    if run is None or not run.active:
        raise ConfigError(f"Run {args.run} is not running.", "List the runs with `python -m console runs`.")
    with _connect(args) as reader:
        run_service.change_throttle(store, reader.gateway(), Identity.cli(getpass.getuser()), args.run, args.rate)
    print(f"Run {args.run}: throttle set to {human_rate(args.rate)}.", file=sys.stderr)
    return 0


def _executor(args: argparse.Namespace) -> int:
    import getpass
    import signal

    from console.runs.worker import Worker
    from console.storage.store import Store

    with _connect(args) as reader:
        worker = Worker(
            Store(),
            reader.gateway(),
            getpass.getuser(),
            args.every,
            progress=lambda s: print(f"run {s.run.id}: {s.did}", file=sys.stderr, flush=True),
        )
        for sig in (signal.SIGTERM, signal.SIGINT):  # finish the step, hand the runs over, exit
            signal.signal(sig, lambda *_: worker.stop())
        print(
            f"Executor driving the unfinished runs of {reader.settings.name} (Ctrl-C to stop).",
            file=sys.stderr,
            flush=True,
        )
        worker.run_forever()
    return 0


def _runs(args: argparse.Namespace) -> int:
    from console.present.history import run_json, runs_text
    from console.storage.store import Store

    store = Store()
    if args.abandon is not None:
        return _abandon(args, store)
    runs = [
        (r, store.runs.waves(r.id), store.runs.stuck(r.id) if r.active else None) for r in store.runs.list(args.cluster)
    ]
    if args.json:
        print(json.dumps([run_json(r, waves, stuck) for r, waves, stuck in runs]))
    else:
        print(runs_text(runs))  # the throttle human (``--json`` keeps ``rate`` in bytes/s)
    return 0


def _abandon(args: argparse.Namespace, store: Store) -> int:
    """Stop driving a run for good: throttles off, reassignments left alone (cancel separately)."""
    import getpass

    from console.access.auth import Identity
    from console.services import runs as run_service

    if not args.bootstrap_server:
        raise ConfigError(
            "--abandon needs --bootstrap-server: the run's throttles are taken off the cluster.",
            "Give the cluster's bootstrap servers (and --zookeeper, --command-config as usual).",
        )
    run = store.runs.get(args.abandon)
    if run is None:
        raise ConfigError(f"Run {args.abandon} is not in the store.", "List the runs with `python -m console runs`.")
    with _connect(args) as reader:
        step, report = run_service.abandon(
            store,
            reader.gateway(),
            Identity.cli(getpass.getuser()),
            args.abandon,
            args.why or "",
            cancel_reassignments=args.cancel_reassignments,
        )
    print(
        f"Run {step.run.id} abandoned: its throttles are off; "
        + (
            f"its reassignments in flight: {report.summary()}"
            if report is not None
            else "its reassignments in flight were left as they are (cancel them with `python -m console cancel "
            "--topic T --include-others`)."
        ),
        file=sys.stderr,
    )
    print(
        json.dumps(
            {
                "run": step.run.id,
                "state": step.run.state.value,
                "cancelled": report.rows() if report is not None else [],
            }
        )
    )
    return 0


def _short(f: Finding) -> dict[str, object]:
    d = f.to_dict()
    return {k: d[k] for k in ("code", "severity", "topic", "partition", "message")}
