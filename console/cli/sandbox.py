"""``sandbox up | status | down``: a local Kafka cluster for trying things out."""

from __future__ import annotations

import argparse
import json
import sys
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from console.cli.exits import Exit
from console.cli.options import switches
from console.cli.output import error
from console.core.errors import SandboxError
from console.sandbox.versions import DEFAULT_KAFKA, ZOOKEEPER_KAFKA, sandbox_options

if TYPE_CHECKING:
    from console.sandbox.cluster import Sandbox


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
    switches(
        up,
        ("--zookeeper", f"ZooKeeper mode (3.x only; {ZOOKEEPER_KAFKA} unless --kafka names another)"),
        ("--kraft", "KRaft mode (the default)"),
        (
            "--tiered-storage",
            "tiered storage on Kafka's LocalTieredStorage (a local dir as the remote store); the releases "
            "whose kafka-storage test jar Maven Central has (4.3.1, 3.9.1; not 4.4.0)",
        ),
    )
    up.add_argument("--data-dir", type=Path, help="where data, logs and state go")
    up.add_argument("--brokers", type=int, default=3)
    switches(
        up,
        ("--demo", "create demo topics with a few MB each"),
        ("--demo-reassignment", "also start a throttled run of the console moving the payments topic (implies --demo)"),
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
        said = partial(print, file=sys.stderr, flush=True)
        if args.demo or args.demo_reassignment:
            from console.sandbox.demo import load_demo

            load_demo(sb.bootstrap_servers, log=said)
        from console.access.sandbox_users import published_passwords_in
        from console.core.paths import users_file

        real = users_file()
        if real.exists() and real.parent != Path(sb.data_dir) and (weak := published_passwords_in(real)):
            print(
                f"The console's users file {real} lets {', '.join(weak)} sign in with the sandbox's published "
                "passwords (an older `sandbox up` wrote them there): remove the file or change those passwords.",
                file=sys.stderr,
                flush=True,
            )
        record = _record(sb)
        if args.demo_reassignment:
            from console.cli.demo import start_demo_run

            users = Path(str(record["console_users_file"]))
            record["demo_run"] = start_demo_run(sb.bootstrap_servers, sb.zookeeper, users, log=said)
        print(_how_a_console_finds_it(sb), file=sys.stderr, flush=True)
        print(json.dumps(record), flush=True)
        return Exit.OK
    if args.action == "status":
        running = cluster.status(args.data_dir)
        if running is None:
            print("No sandbox is running" + (f" in {args.data_dir}." if args.data_dir else "."), file=sys.stderr)
            return Exit.FAILED
        print(json.dumps(_record(running)))
        return Exit.OK
    stopped = cluster.down(args.data_dir)
    print("Sandbox stopped." if stopped else "No sandbox was running.", file=sys.stderr)
    return Exit.OK


def _record(sb: Sandbox) -> dict[str, object]:
    """What ``sandbox up`` and ``sandbox status`` print, the same fields: the sandbox
    (:meth:`Sandbox.info`), its console users, in its own users file (written when missing, never
    the console's real one), and the environment that points a console at it (``console_env``)."""
    from console.access.auth import SANDBOX_USERS
    from console.access.sandbox_users import ensure_sandbox_users

    info = sb.info()
    info["console_users_file"] = str(ensure_sandbox_users(Path(sb.data_dir)))
    info["console_users"] = {n: {"password": pw, "roles": roles} for n, (pw, roles) in SANDBOX_USERS.items()}
    info["console_env"] = _console_env(sb)
    return info


def _console_env(sb: Sandbox) -> dict[str, str]:
    """The environment of a console (the server, the command line) pointed at this sandbox, with its users."""
    from console.access.clusters import SANDBOX
    from console.access.sandbox_users import sandbox_users_file

    env = {"CONSOLE_BOOTSTRAP_SERVERS": sb.bootstrap_servers, "CONSOLE_CLUSTER_NAME": SANDBOX}
    if sb.zookeeper:
        env["CONSOLE_ZOOKEEPER"] = sb.zookeeper
    return {**env, "CONSOLE_USERS_FILE": str(sandbox_users_file(Path(sb.data_dir)))}


def _how_a_console_finds_it(sb: Sandbox) -> str:
    """How a console reaches this sandbox and signs its users in: on its own in the default place
    (the data dir's ``sandbox``), through the environment from anywhere else (``--data-dir``)."""
    from console.sandbox.cluster import default_data_dir

    env = _console_env(sb)
    users = f"CONSOLE_USERS_FILE={env['CONSOLE_USERS_FILE']}"
    if Path(sb.data_dir).resolve() == default_data_dir().resolve():
        return (
            "A console with this data dir (streamlit run serve.py, python -m console) finds this sandbox on its "
            f"own; its users sign in once {users} is set."
        )
    exports = " ".join(f"{k}={v}" for k, v in env.items())
    return (
        f"A console looks for a sandbox in {default_data_dir()} only: start it (streamlit run serve.py, "
        f"python -m console) with {exports} to use this one and sign its users in; `sandbox status` and "
        f"`sandbox down` need --data-dir {sb.data_dir}."
    )
