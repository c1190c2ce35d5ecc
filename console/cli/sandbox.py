"""``sandbox up | status | down``: a local Kafka cluster for trying things out."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from console.cli.exits import Exit
from console.cli.output import error
from console.core.errors import SandboxError
from console.sandbox.versions import DEFAULT_KAFKA, ZOOKEEPER_KAFKA, sandbox_options


def add_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    sb = sub.add_parser(
        "sandbox", help="a local Kafka cluster (4.x KRaft, or 3.9 KRaft or ZooKeeper) for trying things out"
    )
    sb.set_defaults(handler=sandbox)
    sbsub = sb.add_subparsers(dest="action", required=True)
    up = sbsub.add_parser(
        "up", help=f"start 3 KRaft nodes of Kafka {DEFAULT_KAFKA} (or another release); prints one JSON line"
    )
    up.add_argument(
        "--kafka",
        metavar="VERSION",
        help=f"the Kafka release: 4.x or 3.9.x (default {DEFAULT_KAFKA}); server and tools jars of that release",
    )
    up.add_argument(
        "--zookeeper",
        action="store_true",
        help=f"ZooKeeper mode (3.x only; {ZOOKEEPER_KAFKA} unless --kafka names another)",
    )
    up.add_argument("--kraft", action="store_true", help="KRaft mode (the default)")
    up.add_argument(
        "--tiered-storage",
        action="store_true",
        help="tiered storage on Kafka's LocalTieredStorage (a local dir as the remote store); the releases "
        "whose kafka-storage test jar Maven Central has (4.3.1, 3.9.1; not 4.4.0)",
    )
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


def sandbox(args: argparse.Namespace) -> int:
    from console.sandbox import cluster

    if args.action == "up":
        try:  # a release or mode that cannot be is refused before anything starts
            sandbox_options(args.kafka, zookeeper=args.zookeeper, kraft=args.kraft)
        except SandboxError as e:
            error(e)
            return Exit.UNUSABLE
        sb = cluster.up(
            args.data_dir,
            kafka_version=args.kafka,
            zookeeper=args.zookeeper,
            kraft=args.kraft,
            brokers=args.brokers,
            tiered_storage=args.tiered_storage,
        )
        if args.demo or args.demo_reassignment:
            from console.sandbox.demo import load_demo

            load_demo(
                sb.bootstrap_servers,
                [int(b["id"]) for b in sb.brokers],  # type: ignore[call-overload]
                reassignment=args.demo_reassignment,
                log=lambda m: print(m, file=sys.stderr, flush=True),
            )
        from console.access.auth import SANDBOX_USERS
        from console.access.sandbox_users import ensure_sandbox_users, published_passwords_in
        from console.core.paths import users_file

        real = users_file()
        if real.exists() and real.parent != Path(sb.data_dir) and (weak := published_passwords_in(real)):
            print(
                f"The console's users file {real} lets {', '.join(weak)} sign in with the sandbox's published "
                "passwords (an older `sandbox up` wrote them there): remove the file or change those passwords.",
                file=sys.stderr,
                flush=True,
            )

        info = sb.info()
        # the sandbox's console users in its own file (never the console's real users file)
        info["console_users_file"] = str(ensure_sandbox_users(Path(sb.data_dir)))
        info["console_users"] = {n: {"password": pw, "roles": roles} for n, (pw, roles) in SANDBOX_USERS.items()}
        print(json.dumps(info), flush=True)
        return Exit.OK
    if args.action == "status":
        running = cluster.status(args.data_dir)
        if running is None:
            print("No sandbox is running" + (f" in {args.data_dir}." if args.data_dir else "."), file=sys.stderr)
            return Exit.FAILED
        print(json.dumps(running.info()))
        return Exit.OK
    stopped = cluster.down(args.data_dir)
    print("Sandbox stopped." if stopped else "No sandbox was running.", file=sys.stderr)
    return Exit.OK
