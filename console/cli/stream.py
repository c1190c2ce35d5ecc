"""``audit-stream``: ship the audit log to a JSON-lines file and/or a Kafka topic from the command
line (the server does it itself when ``[audit_stream]`` is set in secrets.toml)."""

from __future__ import annotations

import argparse
import sys

from console.cli.exits import Exit
from console.core.errors import ConfigError


def add_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "audit-stream",
        help="send every audit entry, in order and at least once, to a JSON-lines file and/or a Kafka topic",
        description="Ships the store's audit log to its sinks, resuming after each sink's cursor (kept in the "
        "store): every entry once at least, in id order, each with its id. Runs until Ctrl-C, or --once.",
    )
    p.add_argument("--file", help="a JSON-lines file to append to (created 0600 when missing)")
    p.add_argument("--topic", help="a Kafka topic to produce to (key: the entry's id, value: its JSON)")
    p.add_argument("--bootstrap-server", help="host:port[,host:port...] of the topic's cluster")
    p.add_argument("--command-config", help="properties file with security settings, as for the Kafka tools")
    p.add_argument(
        "--cluster-name",
        help="the cluster's name in the sink's cursor (as [audit_stream] cluster in secrets.toml, so the server "
        "and this command share one cursor); default: the first bootstrap server",
    )
    p.add_argument("--timeout", type=float, default=10.0, help="seconds to wait for the cluster (default 10)")
    p.add_argument("--once", action="store_true", help="ship what is there now and exit")
    p.add_argument("--interval", type=float, default=1.0, help="seconds between looks at the store (default 1)")
    p.set_defaults(handler=audit_stream)


def audit_stream(args: argparse.Namespace) -> int:
    import threading

    from console.access.settings import settings_from_args
    from console.storage.store import Store
    from console.stream.shipper import Shipper
    from console.stream.sinks import FileSink, KafkaSink, Sink

    if not args.file and not args.topic:
        raise ConfigError("Nothing to ship to.", "Give --file PATH and/or --topic NAME with --bootstrap-server.")
    sinks: list[Sink] = []
    if args.file:
        sinks.append(FileSink(args.file))
    if args.topic:
        if not args.bootstrap_server:
            raise ConfigError("--topic needs the topic's cluster.", "Give --bootstrap-server (and --command-config).")
        settings = settings_from_args(
            args.bootstrap_server, None, args.command_config, name=args.cluster_name or "", timeout_s=args.timeout
        )
        sinks.append(KafkaSink(settings, args.topic))
    store = Store()
    shipper = Shipper(store, sinks)
    if not args.once:
        print(f"Shipping the audit log to {', '.join(s.name for s in sinks)} (Ctrl-C stops).", file=sys.stderr)
        shipper.run(threading.Event(), args.interval)  # until Ctrl-C
        return Exit.OK
    shipper.drain()
    for sink in sinks:
        sink.close()
    failed = False
    for name, last in shipper.last.items():
        print(f"{name}: up to entry {last.cursor}" + (f"; {last.problem}" if last.problem else ""), file=sys.stderr)
        failed = failed or last.problem is not None
    return Exit.FAILED if failed else Exit.OK
