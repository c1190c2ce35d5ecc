"""``submit``, ``cancel``, ``throttle``, ``executor`` and ``runs``: the commands that change a
cluster, each after a review and a confirmation (``--yes`` skips it), and the runs they record."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from console.cli import confirm
from console.cli.cluster import calibration, connect, connection_args
from console.cli.exits import Exit
from console.cli.files import read_file
from console.cli.output import print_findings, rate_arg
from console.core.errors import ConfigError, IllegalTransition
from console.core.format import human_rate, plural
from console.core.limits import MOVES_PER_BROKER, PARTITIONS_PER_WAVE
from console.core.model import SourceStatus

if TYPE_CHECKING:
    from console.access.auth import Identity
    from console.core.model import ClusterState
    from console.core.states import RunState
    from console.moves.waves import WaveLimits
    from console.plans.logdirs import DirMoveProgress
    from console.plans.plan import Plan
    from console.present.outcomes import RunOutcomes
    from console.services.cancel import CancelReport
    from console.services.preflight import Preflight
    from console.storage.store import Store


def add_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    _add_cancel(sub)
    _add_submit(sub)
    th = sub.add_parser("throttle", help="change the throttle of a run in flight, or remove throttles nothing needs")
    connection_args(th)
    what = th.add_mutually_exclusive_group(required=True)
    what.add_argument("--run", type=int, help="the run whose throttle changes (with --rate)")
    what.add_argument("--sweep", action="store_true", help="remove throttles that nothing in flight needs")
    th.add_argument("--rate", type=rate_arg, metavar="RATE", help="bytes/s, or with a unit (10MB/s)")
    th.add_argument(
        "--include-cluster-default",
        action="store_true",
        help="with --sweep: also remove the cluster-wide default throttle rates (kafka-configs --entity-default) "
        "that no broker in flight copies at; without it they are shown and kept",
    )
    th.add_argument("--yes", action="store_true", help="with --sweep: do not ask")
    th.set_defaults(handler=throttle)

    ex = sub.add_parser("executor", help="drive the cluster's unfinished runs until stopped (Ctrl-C or SIGTERM)")
    connection_args(ex)
    ex.add_argument("--every", type=float, default=1.0, help="seconds between steps (default 1)")
    ex.set_defaults(handler=executor)

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
    rn.set_defaults(handler=list_runs)


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
    cc.add_argument(
        "--include-others",
        action="store_true",
        help="also cancel reassignments this console did not start (implied by --all)",
    )
    cc.add_argument(
        "--force-at-risk",
        action="store_true",
        help="cancel even partitions the cancel would leave without a leader (no original replica in sync or "
        "eligible) or below min.insync.replicas",
    )
    cc.add_argument(
        "--wait",
        type=float,
        default=60.0,
        help="seconds to wait for the partitions to leave the in-flight list (default 60; 0: do not wait)",
    )
    cc.add_argument(
        "--log-dir-moves",
        action="store_true",
        help="cancel the log dir moves in flight instead (with --all, or --topic): each replica stays in its "
        "current dir",
    )
    cc.add_argument("--yes", action="store_true", help="do not ask for confirmation")
    cc.add_argument("--json", action="store_true")
    cc.set_defaults(handler=cancel)


def _add_submit(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    sm = sub.add_parser("submit", help="carry out a reassignment JSON file: reviewed, throttled, in waves")
    connection_args(sm)
    sm.add_argument("--reassignment-json-file", required=True, help="the plan, in the official format")
    sm.add_argument(
        "--throttle",
        type=rate_arg,
        metavar="RATE",
        help="replication throttle while the run moves data: bytes/s, or with a unit (10MB/s, 500KB/s; 1 KB = 1000 bytes)",
    )
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
        "--allow-cordoned",
        action="store_true",
        help="submit even though the plan sends replicas to cordoned brokers or log dirs (KIP-1066: the "
        "controller takes such a reassignment; the console refuses it unless told): recorded in the audit log",
    )
    sm.add_argument(
        "--allow-other-moves",
        action="store_true",
        help="submit even though reassignments this console did not start are in flight (another balancer, "
        "a script, the official tool: they compete for the same brokers, bandwidth and throttles): audited",
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
    from console.core.model import cluster_key
    from console.moves.cancel import keys_of, plan_cancel
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
            print(
                "Cannot cancel: ListPartitionReassignments did not answer (cancel needs the Admin API of "
                "Kafka 2.4 or newer, and ALTER on CLUSTER).",
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
        print("\n".join(plan.explain() + [_dir_move_line(m) for m in dir_moves]), file=sys.stderr)
        if not plan.cancel and not dir_moves:
            print(
                "Nothing to cancel."
                + (
                    " Use --include-others to cancel the reassignments this console did not start."
                    if plan.not_ours
                    else ""
                ),
                file=sys.stderr,
            )
            return Exit.OK if not plan.not_ours else Exit.FAILED
        if plan.at_risk and not args.force_at_risk:
            print(
                f"Refused, nothing was sent: {plan.risk_summary()}. Add --force-at-risk to cancel them anyway.",
                file=sys.stderr,
            )
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
        )
    return _cancel_said(args, report)


def _cancel_said(args: argparse.Namespace, report: CancelReport) -> int:
    """What became of a cancel, as text or JSON; its exit code."""
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
    from console.core.model import cluster_key
    from console.core.states import SubmitPath
    from console.moves.waves import WaveLimits
    from console.plans.diff import first_replica_changes
    from console.plans.plan import parse_plan
    from console.present.outcomes import group_outcomes
    from console.runs.executor import Executor
    from console.services import runs as run_service
    from console.services.preflight import preflight
    from console.storage.store import Store

    path = Path(args.reassignment_json_file)
    plan = parse_plan(read_file(str(path), "--reassignment-json-file"))
    if args.throttle is not None and args.throttle <= 0:
        raise ConfigError(
            "--throttle must be a positive rate.", "For example --throttle 10MB/s (or 10000000, in bytes/s)."
        )
    limits = WaveLimits(args.max_moves_per_broker, args.max_partitions_per_request, args.max_bytes_per_wave)
    store = Store()
    users = load_users()
    refusal = run_service.two_person_problem(store, users, args.plan_id, plan)
    if refusal:
        print(f"Refused: {refusal} Nothing was sent.", file=sys.stderr)
        return Exit.FAILED
    user = getpass.getuser()
    with connect(args) as reader:
        name = reader.settings.name
        state = reader.snapshot(info=True)  # the release: the run's rollback names log dirs from Kafka 4.2 on
        pre = preflight(state, plan, limits, args.throttle, calibration(state, name))
        asked: dict[str, object] = {"name": args.name or path.name, "plan": args.plan_id, "partitions": len(plan)}
        _check(store, Identity.cli(user), cluster_key(state, name), pre, args.allow_cordoned, asked)
        if _other_movers_refuse(args, store, Identity.cli(user), state, name, plan) or not _acknowledged(args, pre):
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
            allow_cordoned=args.allow_cordoned,
            allow_other_moves=args.allow_other_moves,
            checked=pre,
        )
        print(f"Run {run_id} recorded.", file=sys.stderr)
        if args.detach:
            print(run_id)
            return Exit.OK
        run = Executor(store, gateway, user).drive(
            run_id, progress=lambda s: print(f"run {s.run.id}: {s.did}", file=sys.stderr)
        )
        got = group_outcomes(store.runs.outcomes(run_id), store.runs.dir_moves(run_id))
    return _said(store, run_id, run.state, elect, got)


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
    from console.present.estimate import run_summary
    from console.present.review import local_only_topics, tiered_note

    summary = run_summary(
        pre.partitions, len(pre.waves), pre.bytes_to_copy, pre.dir_bytes_to_copy, args.throttle, pre.estimate, limits
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


def _said(store: Store, run_id: int, state: RunState, elect: bool, got: RunOutcomes) -> int:
    """What became of a run driven by ``submit``, on stderr and as one JSON line; its exit code."""
    from console.core.states import RunState
    from console.present.history import min_isr_warnings

    for o in got.rejected:
        print(f"Rejected in wave {o.wave}: {o.name}: {o.message}", file=sys.stderr)
    for o in got.not_in_dir:
        print(f"Not in its log dir (wave {o.wave}): {o.name}: {o.message}", file=sys.stderr)
    for o in got.gone:
        print(f"No longer exists (wave {o.wave}): {o.name}: {o.message}", file=sys.stderr)
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
    print(
        json.dumps(
            {
                "run": run_id,
                "state": state.value,
                "rejected": [o.name for o in got.rejected],
                "not_in_log_dir": [o.name for o in got.not_in_dir],
                "gone": [o.name for o in got.gone],
                "elect_leaders": elect,
                "not_elected": [o.name for o in got.not_elected],
                "log_dirs_not_taken": [d.to_dict() for d in got.dirs_not_taken],
            }
        )
    )
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


def throttle(args: argparse.Namespace) -> int:
    import getpass

    from console.access.auth import Identity
    from console.moves.throttles import cluster_default_kept, leftover_throttles
    from console.present.live import throttle_value_text
    from console.services import runs as run_service
    from console.storage.store import Store

    store = Store()
    if args.sweep:
        with connect(args) as reader:
            state = reader.snapshot()
            left = leftover_throttles(state, include_cluster_default=args.include_cluster_default)
            for lo in left:
                print(f"{lo.where}: {lo.key} = {throttle_value_text(lo.key, lo.value)}", file=sys.stderr)
            for lo in cluster_default_kept(state, left):
                print(
                    f"Kept: the cluster default {lo.key} = {throttle_value_text(lo.key, lo.value)} "
                    + (
                        "(a broker in flight copies at it)."
                        if args.include_cluster_default
                        else "(set for every broker on purpose; --include-cluster-default removes it too)."
                    ),
                    file=sys.stderr,
                )
            if not left:
                print("No throttle is left over: nothing was changed.", file=sys.stderr)
                return Exit.OK
            if not args.yes and not confirm.said_yes(
                f"Remove {'this setting' if len(left) == 1 else f'these {len(left)} settings'}? [yes/no] "
            ):
                print("Not confirmed: nothing was changed.", file=sys.stderr)
                return Exit.FAILED
            report = run_service.sweep(store, reader.gateway(), Identity.cli(getpass.getuser()), left)
        print(f"Removed {plural(len(report.removed), 'throttle setting')}.", file=sys.stderr)
        for lo in report.still_set:
            print(f"Still set after the sweep: {lo.where}: {lo.key}.", file=sys.stderr)
        for lo in report.unconfirmed:
            print(f"Sent, not confirmed (could not be read back): {lo.where}: {lo.key}.", file=sys.stderr)
        return Exit.OK if len(report.removed) == len(left) else Exit.PARTLY
    if args.rate is None or args.rate <= 0:
        raise ConfigError("--rate must be a positive rate.", "For example --rate 10MB/s (or 10000000, in bytes/s).")
    run = store.runs.get(args.run)
    if run is None:
        raise ConfigError(f"Run {args.run} is not in the store.", "List the runs with `python -m console runs`.")
    if not run.active:
        raise IllegalTransition(
            f"Run {args.run} is {run.state}: its throttle cannot change.",
            "List the runs with `python -m console runs`.",
        )
    with connect(args) as reader:
        run_service.change_throttle(store, reader.gateway(), Identity.cli(getpass.getuser()), args.run, args.rate)
    print(f"Run {args.run}: throttle set to {human_rate(args.rate)}.", file=sys.stderr)
    return Exit.OK


def executor(args: argparse.Namespace) -> int:
    import getpass
    import signal

    from console.metrics.server import serve_metrics
    from console.notify.hub import notifier
    from console.runs.worker import Worker
    from console.storage.store import Store

    store = Store()
    notifier()  # notify.toml read and Apprise imported now, not at a run's first event
    served = serve_metrics(store)
    if served is not None:
        print(f"Metrics on http://{served}/metrics", file=sys.stderr, flush=True)
    with connect(args) as reader:
        worker = Worker(
            store,
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
    return Exit.OK


def list_runs(args: argparse.Namespace) -> int:
    from console.present.history import not_in_dir_text, run_json, runs_text
    from console.storage.store import Store

    store = Store()
    if args.abandon is not None:
        return abandon(args, store)
    runs = [
        (r, store.runs.waves(r.id), store.runs.stuck(r.id) if r.active else None) for r in store.runs.list(args.cluster)
    ]
    problems = {r.id: not_in_dir_text(store.runs.outcomes(r.id)) for r, _, _ in runs}
    names = store.clusters.names()  # runs keep the cluster's id; the pages remember its name
    if args.json:
        print(json.dumps([run_json(r, waves, stuck, problems[r.id], names) for r, waves, stuck in runs]))
    else:
        print(runs_text(runs, problems, names))  # the throttle human (``--json`` keeps ``rate`` in bytes/s)
    return Exit.OK


def abandon(args: argparse.Namespace, store: Store) -> int:
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
    with connect(args) as reader:
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
    return Exit.OK
