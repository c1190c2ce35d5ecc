"""``throttle``, ``executor`` and ``runs``: the commands over the runs this console recorded (change
a run's throttle or sweep throttles nothing needs, drive the unfinished runs, list the runs and pause,
resume or abandon one)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING

from console.cli import confirm
from console.cli.cluster import connect, connection_args, reach_args
from console.cli.exits import Exit
from console.cli.options import switches
from console.cli.output import rate_arg
from console.core.errors import ConfigError, IllegalTransition
from console.core.format import human_rate, plural

if TYPE_CHECKING:
    from console.storage.store import Store


def add_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    th = sub.add_parser("throttle", help="change the throttle of a run in flight, or remove throttles nothing needs")
    connection_args(th)
    what = th.add_mutually_exclusive_group(required=True)
    what.add_argument("--run", type=int, help="the run whose throttle changes (with --rate)")
    what.add_argument("--sweep", action="store_true", help="remove throttles that nothing in flight needs")
    th.add_argument(
        "--rate",
        type=rate_arg,
        metavar="RATE",
        help="a number alone is bytes/s, as in Kafka's tools; or 10MB/s, 500KB/s",
    )
    switches(
        th,
        (
            "--allow-unthrottled",
            "with --rate: change it even above the cluster's ceiling (CONSOLE_MAX_THROTTLE, default 10 GB/s), "
            "where it is effectively unthrottled: audited",
        ),
        (
            "--include-cluster-default",
            "with --sweep: also remove the cluster-wide default throttle rates (kafka-configs --entity-default) "
            "that no broker in flight copies at; without it they are shown and kept",
        ),
    )
    th.add_argument(
        "--topic",
        action="append",
        default=[],
        help="with --sweep: only the throttles on this topic (repeat it; with --broker: on these topics and "
        "brokers) that no run of this console set: what a cancel lists as left by another tool",
    )
    th.add_argument("--broker", type=int, action="append", default=[], help="with --sweep: only on this broker")
    th.add_argument("--yes", action="store_true", help="with --sweep: do not ask")
    th.set_defaults(handler=throttle)

    ex = sub.add_parser("executor", help="drive the cluster's unfinished runs until stopped (Ctrl-C or SIGTERM)")
    connection_args(ex)
    ex.add_argument("--every", type=float, default=1.0, help="seconds between steps (default 1)")
    ex.set_defaults(handler=executor)

    rn = sub.add_parser(
        "runs",
        help="runs recorded by this console (newest first); --pause, --resume or --abandon ID changes one",
    )
    rn.add_argument("--cluster", help="only this cluster's runs")
    rn.add_argument("--json", action="store_true")
    change = rn.add_mutually_exclusive_group()
    change.add_argument(
        "--pause",
        type=int,
        metavar="ID",
        help="pause this run: the wave in flight finishes, the next waits for --resume",
    )
    change.add_argument("--resume", type=int, metavar="ID", help="resume this paused run: its next wave is sent")
    change.add_argument(
        "--abandon",
        type=int,
        metavar="ID",
        help="stop driving this run for good: its throttles come off, its reassignments stay as they are",
    )
    rn.add_argument("--why", help="with --pause or --abandon: the reason, for the audit log")
    rn.add_argument(
        "--cancel-reassignments",
        action="store_true",
        help="with --abandon: also cancel the run's reassignments in flight (back to their original replicas)",
    )
    rn.add_argument(
        "--bootstrap-server",
        help="with --abandon: the run's cluster, whose throttles are taken off (default: the environment's "
        "cluster, CONSOLE_BOOTSTRAP_SERVERS, else the running sandbox)",
    )
    reach_args(rn, when="with --abandon: ")
    rn.set_defaults(handler=list_runs)


def throttle(args: argparse.Namespace) -> int:
    import getpass

    from console.access.auth import Identity
    from console.core.errors import NotPermitted
    from console.core.model import BrokerId, cluster_key
    from console.moves.throttles import cluster_default_kept, left_on, leftover_throttles
    from console.present.live import throttle_value_text
    from console.services import runs as run_service
    from console.services.other_throttles import set_by_runs
    from console.storage.store import Store

    store = Store()
    if args.sweep:
        with connect(args) as reader:
            state = reader.snapshot()
            left = leftover_throttles(state, include_cluster_default=args.include_cluster_default)
            if args.topic or args.broker:  # those a cancel said another tool left: no run's, no cluster default
                if args.include_cluster_default:
                    raise ConfigError("--topic and --broker sweep no cluster default.", "Leave out one or the other.")
                key = cluster_key(state, reader.settings.name)
                left = left_on(left, args.topic, map(BrokerId, args.broker), set_by_runs(store, key))
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
        try:
            run_service.change_throttle(
                store,
                reader.gateway(),
                Identity.cli(getpass.getuser()),
                args.run,
                args.rate,
                unthrottled_ok=args.allow_unthrottled,
            )
        except NotPermitted as e:
            print(f"Refused: {e.message} Nothing was sent.\n{e.hint}", file=sys.stderr)
            return Exit.FAILED
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
            guardrails=reader.settings.guardrails,
        )
        reader.follow(worker.moving)  # the sizes of what its runs move, at every read
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
    import time

    from console.core.model import partition_name
    from console.present.guardrails import hold_notices
    from console.present.history import cancelled_keys, problems_text, run_json, runs_text
    from console.storage.store import Store

    store = Store()
    if args.abandon is not None:
        return abandon(args, store)
    if args.pause is not None or args.resume is not None:
        return pause_or_resume(args, store)
    runs = [
        (r, store.runs.waves(r.id), store.runs.stuck(r.id) if r.active else None) for r in store.runs.list(args.cluster)
    ]
    outcomes = {r.id: store.runs.outcomes(r.id) for r, _, _ in runs}
    problems = {r.id: problems_text(outcomes[r.id]) for r, _, _ in runs}
    names = store.clusters.names()  # runs keep the cluster's id; the pages remember its name
    active = [r for r, _, _ in runs if r.active]  # what the guardrails hold: one query
    held = {n.run_id: n for n in hold_notices(active, store.holds.shown([r.id for r in active]), time.time())}
    if args.json:
        cancelled = {r.id: [partition_name(*k) for k in cancelled_keys(outcomes[r.id])] for r, _, _ in runs}
        print(
            json.dumps(
                [run_json(r, w, stuck, problems[r.id], names, cancelled[r.id], held.get(r.id)) for r, w, stuck in runs]
            )
        )
    else:
        print(runs_text(runs, problems, names, held))  # the throttle human (``--json`` keeps ``rate`` in bytes/s)
    return Exit.OK


def pause_or_resume(args: argparse.Namespace, store: Store) -> int:
    """``runs --pause ID`` / ``--resume ID``: the Runs page's buttons from a shell, with the same
    rule (the operator role), audited; refused (audited) for a run that cannot go there."""
    import getpass

    from console.access.auth import Identity
    from console.services import runs as run_service

    who = Identity.cli(getpass.getuser())
    if args.pause is not None:
        run_service.pause(store, who, args.pause, args.why or "")
        print(f"Run {args.pause} paused: its wave in flight finishes, the next waits for --resume.", file=sys.stderr)
    else:
        run_service.resume(store, who, args.resume)
        print(f"Run {args.resume} resumed: its next wave is sent at its worker's next step.", file=sys.stderr)
    return Exit.OK


def abandon(args: argparse.Namespace, store: Store) -> int:
    """Stop driving a run for good: throttles off, reassignments left alone (cancel separately)."""
    import getpass

    from console.access.auth import Identity
    from console.services import runs as run_service

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
