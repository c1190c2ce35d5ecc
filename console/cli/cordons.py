"""``cordon`` and ``uncordon``: a broker, or one of its log dirs, no longer (or again) receives new
replicas (KIP-1066, Kafka 4.3 and later), after a confirmation (``--yes`` skips it)."""

from __future__ import annotations

import argparse
import json
import sys

from console.cli import confirm
from console.cli.cluster import connect, connection_args, unreadable
from console.cli.exits import Exit
from console.cli.output import print_findings


def add_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    for name, words in (
        ("cordon", "stop a broker (or one of its log dirs) from receiving new replicas (KIP-1066, Kafka 4.3+)"),
        ("uncordon", "let a cordoned broker (or one of its log dirs) receive new replicas again"),
    ):
        cmd = sub.add_parser(name, help=words)
        connection_args(cmd)
        cmd.add_argument("--broker", type=int, required=True, help="the broker id")
        cmd.add_argument(
            "--log-dir",
            help="only this log dir of the broker (as DescribeLogDirs names it); default: the whole broker",
        )
        cmd.add_argument("--yes", action="store_true", help="do not ask for confirmation")
        cmd.add_argument("--json", action="store_true", help='print {"broker", "log_dir", "before", "after", ...}')
        cmd.set_defaults(handler=change)


def change(args: argparse.Namespace) -> int:
    """Read the cluster, refuse what the service would refuse (before asking), say what changes,
    confirm, send (through the service: audited), report."""
    import getpass

    from console.access.auth import Identity
    from console.core.model import cluster_key
    from console.present.cluster import cordon_words
    from console.services import cordons as cordon_service
    from console.storage.store import Store

    store = Store()
    who = Identity.cli(getpass.getuser())
    what = f"log dir {args.log_dir} of broker {args.broker}" if args.log_dir else f"broker {args.broker}"
    with connect(args) as reader:
        state = reader.snapshot(info=True)
        if unreadable(state):
            print_findings(state)
            return Exit.FAILED
        key = cluster_key(state, reader.settings.name)
        broker = cordon_service.check_change(
            store, who, args.command, key, state, state.info, args.broker, args.log_dir
        )
        print(f"Broker {args.broker} now: {cordon_words(broker, True)}.", file=sys.stderr)  # cordons supported
        if not args.yes and not confirm.said_yes(f"{args.command.capitalize()} {what}? [yes/no] "):
            print("Not confirmed: nothing was sent.", file=sys.stderr)
            return Exit.FAILED
        report = cordon_service.change(store, reader.gateway(), who, args.command, args.broker, args.log_dir)
    print(report.summary(), file=sys.stderr)
    if args.json:
        print(
            json.dumps(
                {
                    "action": report.action,
                    "broker": int(report.broker),
                    "log_dir": report.log_dir,
                    "before": list(report.before),
                    "after": list(report.wanted),
                    "reported": None if report.reported is None else list(report.reported),
                    "changed": report.changed,
                    "confirmed": report.confirmed,
                }
            )
        )
    return Exit.OK if report.confirmed else Exit.PARTLY
