"""``python -m console ...``: the command line.

Exit codes: 0 success; 1 the cluster could not give what was asked, or (validate) the plan
has errors (message on stderr); 2 bad usage, settings, or a plan file that cannot be used.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Sequence

from console.errors import ConfigError, ConsoleError
from console.model import ClusterState, Finding, SourceStatus


def _connection_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--bootstrap-server", required=True, help="host:port[,host:port...] of the cluster")
    p.add_argument("--zookeeper", help="ZooKeeper connect string with the cluster's chroot, e.g. zk:2181/kafka")
    p.add_argument("--command-config", help="properties file with security settings, as for the Kafka tools")
    p.add_argument("--timeout", type=float, default=10.0, help="seconds to wait for each answer (default 10)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m console", description="Kafka partition reassignment console")
    sub = parser.add_subparsers(dest="command", required=True)

    sb = sub.add_parser("sandbox", help="a local Kafka 3.9 cluster for trying things out")
    sbsub = sb.add_subparsers(dest="action", required=True)
    up = sbsub.add_parser("up", help="start ZooKeeper + 3 brokers (or 3 KRaft nodes); prints one JSON line")
    up.add_argument("--kraft", action="store_true", help="KRaft mode (no ZooKeeper)")
    up.add_argument("--data-dir", type=Path, help="where data, logs and state go")
    up.add_argument("--brokers", type=int, default=3)
    up.add_argument("--demo", action="store_true", help="create demo topics with a few MB each")
    up.add_argument("--demo-reassignment", action="store_true", help="also start a throttled reassignment (implies --demo)")
    for name, text in (("status", "print the running sandbox (exit 1 if none)"), ("down", "stop every sandbox process")):
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
        _connection_args(a)
        a.add_argument("--reassignment-json-file", required=True, help="the plan, in the official format")
        if name != "rollback":
            a.add_argument("--json", action="store_true")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        if args.command == "sandbox":
            return _sandbox(args)
        if args.command in ("validate", "diff", "rollback"):
            return _plan_command(args)
        return _read(args)
    except ConfigError as e:
        _err(e)
        return 2
    except ConsoleError as e:
        _err(e)
        return 1
    except KeyboardInterrupt:
        return 130


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

            load_demo(sb.bootstrap_servers, [int(b["id"]) for b in sb.brokers],  # type: ignore[call-overload]
                      reassignment=args.demo_reassignment, log=lambda m: print(m, file=sys.stderr, flush=True))
        print(json.dumps(sb.info()), flush=True)
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
    from console.export import list_json, list_text, state_json
    from console.reader import ClusterReader
    from console.settings import settings_from_args

    settings = settings_from_args(args.bootstrap_server, args.zookeeper, args.command_config, timeout_s=args.timeout)
    with ClusterReader(settings) as reader:
        state = reader.snapshot()
    if state.status.metadata is not SourceStatus.OK and state.status.zookeeper is not SourceStatus.OK:
        _print_findings(state)
        return 1
    if args.command == "list":
        if state.status.reassignments is not SourceStatus.OK:
            if state.status.zookeeper is not SourceStatus.OK:
                _print_findings(state)
                return 1
            print("Warning: ListPartitionReassignments did not answer; this list comes from ZooKeeper.",
                  file=sys.stderr)
        print(json.dumps(list_json(state)) if args.json else list_text(state))
        return 0
    if args.json:
        print(json.dumps(state_json(state)))
    else:
        from console.live import state_text

        print(state_text(state))
    return 0


def _plan_command(args: argparse.Namespace) -> int:
    from console import review
    from console.diff import diff
    from console.plans import parse_plan, rollback
    from console.reader import ClusterReader
    from console.settings import settings_from_args
    from console.validate import errors, validate

    try:
        text = Path(args.reassignment_json_file).read_bytes()
    except OSError as e:
        raise ConfigError(f"Cannot read {args.reassignment_json_file}: {e.strerror or e}.",
                          "Check the path given to --reassignment-json-file.") from None
    plan = parse_plan(text)  # PlanFormatError is a ConfigError: exit 2, nothing sent anywhere
    settings = settings_from_args(args.bootstrap_server, args.zookeeper, args.command_config, timeout_s=args.timeout)
    with ClusterReader(settings) as reader:
        state = reader.snapshot()
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
        print(review.findings_text(findings))
        print(f"{len(bad)} errors, {len(findings) - len(bad)} other findings: "
              + ("the plan must not be submitted." if bad else "no errors."), file=sys.stderr)
    return 1 if bad else 0


def _short(f: Finding) -> dict[str, object]:
    d = f.to_dict()
    return {k: d[k] for k in ("code", "severity", "topic", "partition", "message")}
