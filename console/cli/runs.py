"""``submit`` and ``cancel``: the commands that start and cancel reassignments, each after a review
and a confirmation (``--yes`` skips it); ``throttle``, ``executor`` and ``runs``, the commands over
the runs they record, are :mod:`console.cli.run_control`'s."""

from __future__ import annotations

import argparse
import getpass
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from console.cli import confirm, run_control
from console.cli.cluster import calibration, connect, connection_args
from console.cli.exits import Exit
from console.cli.files import plan_file, plan_file_args, read_plan
from console.cli.options import switches, wave_args
from console.cli.output import print_findings, rate_arg
from console.cli.progress import RunProgress
from console.core.errors import ConfigError, IllegalTransition
from console.core.format import plural
from console.core.model import SourceStatus, cluster_key

if TYPE_CHECKING:
    from collections.abc import Callable

    from console.access.auth import Identity, Users
    from console.core.model import ClusterState
    from console.core.states import RunState
    from console.moves.cancel import CancelPlan
    from console.moves.waves import WaveLimits
    from console.plans.logdirs import DirMoveProgress
    from console.plans.plan import Plan
    from console.present.outcomes import RunOutcomes
    from console.runs.gateway import ClusterGateway
    from console.services.cancel import CancelReport
    from console.services.preflight import Preflight
    from console.storage.store import Store


def add_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    _add_cancel(sub)
    _add_submit(sub)
    run_control.add_commands(sub)


def _add_cancel(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    cc = sub.add_parser("cancel", help="cancel reassignments in flight (KIP-455: back to the original replicas)")
    connection_args(cc)
    scope = cc.add_mutually_exclusive_group(required=True)
    scope.add_argument(
        "--all", action="store_true", help="every reassignment in flight in the cluster, whoever started it"
    )
    scope.add_argument("--topic", help="the reassignments of this topic")
    scope.add_argument("--run", type=int, help="the partitions in flight of this console's run")
    cc.add_argument("--partition", type=int, action="append", default=[], help="only these partitions (with --topic)")
    switches(
        cc,
        ("--include-others", "also cancel reassignments this console did not start (implied by --all)"),
        (
            "--force-at-risk",
            "cancel even partitions the cancel would leave without a leader (no original replica in sync or "
            "eligible) or below min.insync.replicas",
        ),
    )
    cc.add_argument(
        "--wait",
        type=float,
        default=60.0,
        help="seconds to wait for the partitions to leave the in-flight list (default 60; 0: do not wait)",
    )
    switches(
        cc,
        (
            "--log-dir-moves",
            "cancel the log dir moves in flight instead (with --all, or --topic): each replica stays in its "
            "current dir",
        ),
        (
            "--clear-throttles",
            "after the cancel, also remove the throttles another tool (kafka-reassign-partitions --throttle) left "
            "on the cancelled partitions' topics and brokers that nothing in flight needs (the official --cancel "
            "clears them by default); without it they are listed with the command that removes them",
        ),
        ("--yes", "do not ask for confirmation"),
    )
    cc.add_argument("--json", action="store_true")
    cc.set_defaults(handler=cancel)


def _add_submit(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    sm = sub.add_parser("submit", help="carry out a reassignment JSON file: reviewed, throttled, in waves")
    connection_args(sm)
    plan_file_args(sm)
    sm.add_argument(
        "--throttle",
        type=rate_arg,
        metavar="RATE",
        help="replication throttle while the run moves data: a number alone is bytes/s, as in Kafka's tools; or "
        "with a unit (10MB/s, 500KB/s; 1 KB = 1000 bytes)",
    )
    sm.add_argument(
        "--allow-unthrottled",
        action="store_true",
        help="submit even though --throttle is above the cluster's ceiling (CONSOLE_MAX_THROTTLE, default "
        "10 GB/s), more than its broker links carry, so effectively unthrottled: audited",
    )
    wave_args(sm)
    sm.add_argument("--max-bytes-per-wave", type=int, help="bytes to copy per wave (default: no limit)")
    sm.add_argument(
        "--name", help="a name for the run (default: the saved plan's name with --plan-id, else the file name)"
    )
    switches(
        sm,
        ("--detach", "record the run and leave it to a running executor"),
        ("--json", "end with one JSON line on stdout: the run, its state and what did not go as asked"),
    )
    sm.add_argument(
        "--path",
        choices=["api", "zookeeper"],
        default="api",
        help="api: AlterPartitionReassignments (falls back to the znode on clusters older than 2.4 when "
        "--zookeeper is given); zookeeper: the /admin/reassign_partitions znode (cannot be cancelled)",
    )
    switches(
        sm,
        ("--yes", "do not ask: acknowledge warnings and confirm"),
        (
            "--allow-cordoned",
            "submit even though the plan sends replicas to cordoned brokers or log dirs (KIP-1066: the "
            "controller takes such a reassignment; the console refuses it unless told): recorded in the audit log",
        ),
        (
            "--allow-other-moves",
            "submit even though reassignments this console did not start are in flight (another balancer, "
            "a script, the official tool: they compete for the same brokers, bandwidth and throttles): audited",
        ),
    )
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
    sm.set_defaults(handler=submit)


def cancel(args: argparse.Namespace) -> int:
    """Cancel for on-call: read what is in flight, say what cancel means, send, wait, record."""
    import getpass

    from console.access.auth import Identity
    from console.core.errors import NotPermitted
    from console.moves.cancel import keys_of, not_read, plan_cancel
    from console.services import cancel as cancel_service
    from console.storage.store import Store

    if args.partition and not args.topic:
        raise ConfigError("--partition needs --topic.", "Name the topic the partitions belong to.")
    store = Store()
    user = getpass.getuser()
    if args.log_dir_moves:
        return _cancel_dir_moves(args, store, Identity.cli(user))
    with connect(args) as reader:
        name = reader.settings.name
        state = reader.snapshot(lean=True)  # metadata and what is in flight: a cancel needs no sizes or configs
        if state.status.reassignments is not SourceStatus.OK:
            print_findings(state)
            refused = state.status.reassignments in (SourceStatus.UNSUPPORTED, SourceStatus.UNAUTHORIZED)
            print(
                f"Cannot cancel: {not_read(state, True) or not_read(state, False)}"
                + (
                    " (cancel needs the Admin API of Kafka 2.4 or newer, and ALTER on CLUSTER)."
                    if refused
                    else ": what is in flight is not known, nothing was sent. Try again."
                ),
                file=sys.stderr,
            )
            return Exit.FAILED
        cluster = cluster_key(state, name)
        ours = store.runs.active_partitions(cluster)
        if args.run is not None:
            keys: list[tuple[str, int]] | None = [k for k, r in ours.items() if r == args.run]
        else:
            keys = None if args.all else keys_of(state, args.topic, args.partition)
            if keys is not None and not keys:
                raise ConfigError(f"Topic {args.topic} has no such partitions in the cluster.", "Check the topic name.")
        # the log dir moves the console's runs among these partitions asked for stop with them (as on the pages)
        runs = {args.run} if args.run is not None else {r for k, r in ours.items() if keys is None or k in keys}
        dir_moves = cancel_service.runs_dir_moves(store, reader.snapshot, runs, None if args.run is not None else keys)
        if args.run is not None and not keys and not dir_moves:
            raise IllegalTransition(
                f"Run {args.run} has nothing in flight in this cluster.",
                "List the runs with `python -m console runs`.",
            )
        plan = plan_cancel(state, keys, ours, include_others=args.include_others)
        if not plan.cancel and not dir_moves:  # said first: what cancel would mean does not apply
            print("\n".join([_nothing_to_cancel(state, plan), *plan.notes()]), file=sys.stderr)
            return Exit.OK if not plan.not_ours else Exit.FAILED
        print("\n".join(plan.explain() + [_dir_move_line(m) for m in dir_moves]), file=sys.stderr)
        try:  # all or nothing from here: the service refuses a cancel with partitions at risk, audited
            cancel_service.check_at_risk(store, Identity.cli(user), cluster, plan, args.force_at_risk)
        except NotPermitted as e:
            print(f"Refused, nothing was sent: {e.message} {e.hint}", file=sys.stderr)
            return Exit.FAILED
        if not args.yes and not confirm.typed_name(f"Type the cluster's name ({name}) to send the cancel: ", name):
            print("Not confirmed: nothing was sent.", file=sys.stderr)
            return Exit.FAILED
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
            dir_moves=[m.key for m in dir_moves],
            whole_runs=_cancelled_as_runs(args, plan, ours),
        )
        lines, said, cleared = _throttles_after(args, store, reader.gateway(), cluster, plan, report)
    code = _cancel_said(args, report, said)
    if lines:
        print("\n".join(lines), file=sys.stderr)
    return Exit.PARTLY if code == Exit.OK and not cleared else code


def _cancelled_as_runs(args: argparse.Namespace, plan: CancelPlan, ours: dict[tuple[str, int], int]) -> set[int]:
    """The runs ``cancel`` cancels as runs: ``--run``'s, or with ``--all`` every run with a partition
    in flight; ``--topic`` (and ``--partition``) cancels some of their partitions, and they go on."""
    if args.run is not None:
        return {args.run}
    return {ours[p.key] for p in plan.cancel if p.key in ours} if args.all else set()


def _nothing_to_cancel(state: ClusterState, plan: CancelPlan) -> str:
    """The first (or only) line of a cancel with nothing to send."""
    if not state.in_flight:
        return "Nothing in flight: no reassignment to cancel."
    if plan.not_ours:
        return "Nothing to cancel. Use --include-others to cancel the reassignments this console did not start."
    return "Nothing to cancel."


def _throttles_after(
    args: argparse.Namespace,
    store: Store,
    gateway: ClusterGateway,
    cluster: str,
    plan: CancelPlan,
    report: CancelReport,
) -> tuple[list[str], dict[str, object], bool]:
    """Once the cancel's partitions left the in-flight list: the throttles another tool left on
    their topics and brokers (nothing in flight needs them, no run of the console set them), said
    with the command that removes them, or with ``--clear-throttles`` removed (the sweep, read
    back). Lines for stderr, the JSON part, and whether all asked were removed."""
    from console.access.auth import Identity
    from console.present.throttles import cleared_lines, involved_text, setting_line, sweep_command
    from console.services import other_throttles

    left = set(report.result.left) if report.result is not None else set()
    others = other_throttles.left_by_others(store, gateway, cluster, [p for p in plan.cancel if p.key in left])
    if not others.read:
        return ["The throttle configs could not be read after the cancel: nothing is said of them."], {}, True
    if not others.settings:
        return [], {"left_by_other_tools": []}, True
    said: dict[str, object] = {"left_by_other_tools": [f"{lo.where}: {lo.key}" for lo in others.settings]}
    lines = [
        f"Throttles {other_throttles.LEFT_BY_OTHERS}, on {involved_text(others.topics, others.brokers)}; nothing "
        "in flight needs them (they slow down any replica that falls out of sync):",
        *(f"  {setting_line(lo)}" for lo in others.settings),
    ]
    if not args.clear_throttles:
        conn = [x for f, v in _connection(args) for x in (f, v)]
        return (
            [*lines, f"Remove them: {sweep_command(others.settings, conn)}  (or cancel with --clear-throttles)"],
            said,
            True,
        )
    done = other_throttles.clear_left_by_others(
        store,
        gateway,
        Identity.cli(getpass.getuser()),
        others.settings,
        {"after_cancel": report.result.request if report.result else {}},
    )
    rep = done.sweep
    said["throttles_cleared"] = [f"{lo.where}: {lo.key}" for lo in rep.removed]
    lines += [
        f"  {x}" for x in cleared_lines(rep.removed, rep.still_set, rep.unconfirmed, done.needed_now, done.gone_already)
    ]
    return lines, said, not (rep.still_set or rep.unconfirmed)


def _connection(args: argparse.Namespace) -> list[tuple[str, str]]:
    """The connection options given, to repeat in a command said."""
    given = (
        ("--bootstrap-server", args.bootstrap_server),
        ("--zookeeper", args.zookeeper),
        ("--command-config", args.command_config),
    )
    return [(f, v) for f, v in given if v]


def _cancel_said(args: argparse.Namespace, report: CancelReport, more: dict[str, object] | None = None) -> int:
    """What became of a cancel, as text or JSON (``more`` added to the JSON); its exit code."""
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
                    **(more or {}),
                }
            )
        )
    else:
        print(f"Cancel: {report.summary()}")
        for row in report.rows():
            print(f"  {row['partition']}: {row['outcome']}" + (f" ({row['detail']})" if row["detail"] else ""))
    return Exit.OK if not rejected else Exit.PARTLY


def _dir_move_line(m: DirMoveProgress) -> str:
    return f"  log dir move of {m.topic}-{m.partition} on broker {m.broker}: {m.from_dir} → {m.to_dir} (stays in {m.from_dir})"


def _cancel_dir_moves(args: argparse.Namespace, store: Store, who: Identity) -> int:
    """``cancel --log-dir-moves``: the log dir moves in flight (all, or of --topic), each replica
    asked back into its current dir, after a confirmation."""
    from console.plans.logdirs import dir_moves_in_flight
    from console.services import cancel as cancel_service

    if args.run is not None or args.partition:
        raise ConfigError("--log-dir-moves takes --all or --topic.", "Cancel a run's reassignments without it.")
    with connect(args) as reader:
        moves = [m for m in dir_moves_in_flight(reader.snapshot()) if args.topic is None or m.topic == args.topic]
        if not moves:
            print("No log dir move in flight" + (f" for topic {args.topic}." if args.topic else "."), file=sys.stderr)
            if args.json:
                print(json.dumps({"cancelled": [], "refused": [], "runs": []}))
            return Exit.OK
        for m in moves:
            print(f"  {m.topic}-{m.partition} on broker {m.broker}: {m.from_dir} → {m.to_dir} (stays in {m.from_dir})")
        if not args.yes and not confirm.said_yes(f"Cancel {plural(len(moves), 'log dir move')}? [yes/no] "):
            print("Not confirmed: nothing was sent.", file=sys.stderr)
            return Exit.FAILED
        done = cancel_service.cancel_dir_moves(store, reader.gateway(), who, reader.settings.name, args.topic)
    ok = [a for a in done.answers if a.accepted]
    bad = [a for a in done.answers if not a.accepted]
    print(
        f"Cancelled {plural(len(ok), 'log dir move')}" + (f"; {len(bad)} refused" if bad else "") + ".", file=sys.stderr
    )
    if args.json:
        print(
            json.dumps(
                {
                    "cancelled": [a.to_dict() for a in ok],
                    "refused": [a.to_dict() for a in bad],
                    "runs": list(done.runs),
                }
            )
        )
    return Exit.PARTLY if bad else Exit.OK


def submit(args: argparse.Namespace) -> int:
    """Preflight (the plan is reviewed now), confirmation, then the run, driven here."""
    import getpass

    from console.access.auth import Identity, load_users
    from console.core.states import SubmitPath
    from console.moves.waves import WaveLimits
    from console.plans.diff import first_replica_changes
    from console.present.outcomes import group_outcomes
    from console.runs.executor import Executor
    from console.services import runs as run_service
    from console.services.preflight import preflight
    from console.storage.store import Store

    if args.throttle is not None and args.throttle <= 0:
        raise ConfigError(
            "--throttle must be a positive rate.", "For example --throttle 10MB/s (or 10000000, in bytes/s)."
        )
    limits = WaveLimits(args.max_moves_per_broker, args.max_partitions_per_request, args.max_bytes_per_wave)
    store = Store()
    plan, path = _plan_to_submit(args, store)
    users = load_users()
    user = getpass.getuser()
    with connect(args) as reader:
        name = reader.settings.name
        # the release: the run's rollback names log dirs from Kafka 4.2 on; every size read now, for the checks
        state = reader.snapshot(info=True, full=True)
        cal = calibration(state, name)
        pre = preflight(state, plan, limits, args.throttle, cal)
        run_name = _run_name(args, store, path)
        gateway = reader.gateway()
        who = Identity.cli(user)
        if _refused(args, store, who, state, run_name, name, plan, pre, gateway.max_throttle, users):
            return Exit.FAILED
        if not pre.waves:
            print("Nothing to do: every partition is already at its target.", file=sys.stderr)
            return Exit.OK
        elect = not args.no_elect_leaders and first_replica_changes(state, plan)
        _show_run(args, pre, limits, elect)
        if not args.yes and not confirm.typed_name(f"Type the cluster's name ({name}) to start: ", name):
            print("Not confirmed: nothing was sent.", file=sys.stderr)
            return Exit.FAILED
        if args.path == "zookeeper":
            print(
                "The ZooKeeper path cannot be cancelled: once started, the partitions move to their targets "
                "(roll back afterwards if needed).",
                file=sys.stderr,
            )
        how = run_service.RunSettings(
            rate=args.throttle,
            limits=limits,
            path=SubmitPath(args.path),
            elect_leaders=elect,
            allow_cordoned=args.allow_cordoned,
            allow_other_moves=args.allow_other_moves,
            unthrottled_ok=args.allow_unthrottled,
        )
        request = run_service.RunRequest(who, plan, run_name, how, plan_id=args.plan_id, checked=pre)
        run_id = run_service.start_run(store, gateway, state, request, users=users)
        print(f"Run {run_id} recorded.", file=sys.stderr)
        if args.detach:
            print(run_id)
            return Exit.OK
        key = cluster_key(state, name)
        reader.follow(lambda: store.runs.active_partitions(key))  # their sizes at every read while it runs
        run = Executor(store, gateway, user, guardrails=reader.settings.guardrails).drive(
            run_id, progress=RunProgress(store, reader.snapshot, cal)
        )
        got = group_outcomes(store.runs.outcomes(run_id), store.runs.dir_moves(run_id))
    return _said(store, run_id, run.state, elect, got, args.json)


def _refused(
    args: argparse.Namespace,
    store: Store,
    who: Identity,
    state: ClusterState,
    run_name: str,
    name: str,
    plan: Plan,
    pre: Preflight,
    ceiling: int,
    users: Users | None,
) -> bool:
    """The service's checks before the question, in its words (``start_run`` makes them again):
    the plan's blocking errors (raised), the two-person rule, a throttle above the cluster's
    ``ceiling``, other movers in flight; then the warnings acknowledged. True: refused or not
    acknowledged, nothing sent (each refusal audited by its service)."""
    from console.core.model import cluster_key
    from console.services.runs import check_approval

    key = cluster_key(state, name)
    asked: dict[str, object] = {"name": run_name, "plan": args.plan_id, "partitions": len(plan)}
    _check(store, who, key, pre, args.allow_cordoned, asked)  # a cluster not read in full first
    return (
        _said_refused(lambda: check_approval(store, who, key, users, args.plan_id, plan, asked))  # two-person rule
        or _unthrottled_refuse(args, store, who, key, ceiling, asked)
        or _other_movers_refuse(args, store, who, state, name, plan)
        or not _acknowledged(args, pre)
    )


def _check(
    store: Store, who: Identity, key: str, pre: Preflight, allow_cordoned: bool, asked: dict[str, object]
) -> None:
    """The service's rule, in its words, audited (start_run applies it again): its findings on stderr."""
    from console.core.errors import SubmitRefused
    from console.present.findings import findings_text
    from console.services.preflight import check_submit

    try:
        check_submit(store, who, key, pre, allow_cordoned, asked)
    except SubmitRefused as refused:
        if refused.findings:
            print(findings_text(list(refused.findings)), file=sys.stderr)
        raise


def _said_refused(check: Callable[[], object]) -> bool:
    """Whether a service's check refuses the submit (``NotPermitted``, audited by the service): said
    on stderr."""
    from console.core.errors import NotPermitted

    try:
        check()
    except NotPermitted as e:
        print(f"Refused: {e.message} Nothing was sent.\n{e.hint}", file=sys.stderr)
        return True
    return False


def _acknowledged(args: argparse.Namespace, pre: Preflight) -> bool:
    """The cordoned destinations allowed said, the warnings acknowledged (``--yes``: at once)."""
    from console.present.findings import findings_text

    if pre.cordoned:
        print(findings_text(pre.cordoned), file=sys.stderr)
        print(
            f"Allowed (--allow-cordoned): {plural(len(pre.cordoned), 'replica')} onto cordoned brokers or log "
            "dirs; the audit log records it.",
            file=sys.stderr,
        )
    warn = pre.warnings
    if warn:
        print(findings_text(warn), file=sys.stderr)
        if not args.yes and not confirm.said_yes(
            f"Acknowledge {'this warning' if len(warn) == 1 else f'these {len(warn)} warnings'}? [yes/no] "
        ):
            print("Not acknowledged: nothing was sent.", file=sys.stderr)
            return False
    return True


def _show_run(args: argparse.Namespace, pre: Preflight, limits: WaveLimits, elect: bool) -> None:
    """What the run will send: its summary sentence, the tiered topics, the election, its waves."""
    from console.present.estimate import estimate_text, run_summary
    from console.present.review import local_only_topics, tiered_note

    summary = run_summary(
        estimate_text(
            pre.partitions, len(pre.waves), pre.bytes_to_copy, pre.dir_bytes_to_copy, args.throttle, pre.estimate
        ),
        limits,
    )
    print(f"Will send {summary}", file=sys.stderr)
    local_only = sorted(set(local_only_topics(pre.findings)) | set(pre.tiered_topics))
    if local_only:
        print(tiered_note(local_only), file=sys.stderr)
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


def _plan_to_submit(args: argparse.Namespace, store: Store) -> tuple[Plan, Path]:
    """The plan file given; with none, the saved plan ``--plan-id`` names (as ``save`` and
    ``approve`` tell to submit it), and its file name for the run's name."""
    from console.plans.plan import parse_plan

    if args.plan is None and args.reassignment_json_file is None and args.plan_id is not None:
        saved = store.plans.load(args.plan_id)
        if saved is None:
            raise ConfigError(
                f"Plan {args.plan_id} is not in the store.",
                "Save it first with `python -m console save FILE --name NAME`.",
            )
        return saved.plan, Path(f"plan-{args.plan_id}.json")
    return parse_plan(read_plan(args)), Path(plan_file(args))


def _run_name(args: argparse.Namespace, store: Store, path: Path) -> str:
    """``--name``; else the saved plan's name (``--plan-id``); else the plan file's name."""
    saved = store.plans.load(args.plan_id) if args.plan_id is not None else None
    return args.name or (saved.summary.name if saved is not None else path.name)


def _said(store: Store, run_id: int, state: RunState, elect: bool, got: RunOutcomes, as_json: bool) -> int:
    """What became of a run driven by ``submit``, on stderr (with ``as_json``, also as one JSON line
    on stdout); its exit code."""
    from console.core.states import RunState
    from console.present.history import min_isr_warnings

    for o in got.rejected:
        print(f"Rejected in wave {o.wave}: {o.name}: {o.message}", file=sys.stderr)
    for o in got.not_in_dir:
        print(f"Not in its log dir (wave {o.wave}): {o.name}: {o.message}", file=sys.stderr)
    for o in got.gone:
        print(f"No longer exists (wave {o.wave}): {o.name}: {o.message}", file=sys.stderr)
    for o in got.cancelled:
        print(f"Cancelled (wave {o.wave}): {o.name}: {o.message}", file=sys.stderr)
    for said in min_isr_warnings(store.audit.entries(action="min-isr-changed"), run_id):
        print(f"Warning: {said}", file=sys.stderr)
    for o in got.not_elected:
        print(f"Preferred leader not elected: {o.name}: {o.code}: {o.message}", file=sys.stderr)
    for d in got.dirs_not_taken:
        print(
            f"Log dir not taken: {d.topic}-{d.partition} on broker {d.broker} into {d.log_dir}: {d.code} "
            "(the replica is in another dir of the broker)",
            file=sys.stderr,
        )
    if as_json:  # the run's end in words is its last progress line
        print(
            json.dumps(
                {
                    "run": run_id,
                    "state": state.value,
                    "rejected": [o.name for o in got.rejected],
                    "not_in_log_dir": [o.name for o in got.not_in_dir],
                    "gone": [o.name for o in got.gone],
                    "cancelled": [o.name for o in got.cancelled],
                    "elect_leaders": elect,
                    "not_elected": [o.name for o in got.not_elected],
                    "log_dirs_not_taken": [d.to_dict() for d in got.dirs_not_taken],
                }
            )
        )
    if state is RunState.PARTLY_CANCELLED:  # completed but for the partitions an operator cancelled
        return Exit.PARTLY
    if state is not RunState.COMPLETED:
        return Exit.FAILED
    return Exit.PARTLY if got.partly else Exit.OK


def _other_movers_refuse(
    args: argparse.Namespace, store: Store, who: Identity, state: ClusterState, name: str, plan: Plan
) -> bool:
    """Name the reassignments in flight that this console did not start; without
    ``--allow-other-moves`` the submit is refused (audited, by the same check ``start_run`` makes)."""
    from console.core.errors import NotPermitted
    from console.core.model import cluster_key
    from console.moves.others import moves_text, since_text
    from console.services.other_moves import check_other_moves, others_in_flight

    key = cluster_key(state, name)
    others = others_in_flight(store, key, state)
    if not others:
        return False
    if args.allow_other_moves:
        print(
            f"Allowed (--allow-other-moves): {moves_text(others)} {since_text(others)} The audit log records it.",
            file=sys.stderr,
        )
        return False
    try:
        check_other_moves(
            store, who, key, state, False, {"name": args.name, "plan": args.plan_id, "partitions": len(plan)}
        )
    except NotPermitted as e:
        print(f"Refused: {e.message} Nothing was sent.\n{e.hint}", file=sys.stderr)
        return True
    return False  # gone since they were read


def _unthrottled_refuse(
    args: argparse.Namespace, store: Store, who: Identity, key: str, ceiling: int, asked: dict[str, object]
) -> bool:
    """A ``--throttle`` above the cluster's ceiling: without ``--allow-unthrottled`` the submit is
    refused (audited, by the same check ``start_run`` makes) and True; allowed, it is said."""
    from console.core.errors import NotPermitted
    from console.services.unthrottled import check_ceiling, unthrottled_problem

    try:
        check_ceiling(store, who, "submit", key, args.throttle, ceiling, args.allow_unthrottled, asked)
    except NotPermitted as e:
        print(f"Refused: {e.message} Nothing was sent.\n{e.hint}", file=sys.stderr)
        return True
    if problem := unthrottled_problem(args.throttle, ceiling):
        print(f"Allowed (--allow-unthrottled): {problem} The audit log records it.", file=sys.stderr)
    return False
