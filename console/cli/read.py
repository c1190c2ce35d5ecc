"""``list`` and ``state``: what the cluster is doing, as the operator reads it or as JSON."""

from __future__ import annotations

import argparse
import json
import sys

from console.cli.cluster import connect, connection_args, unreadable
from console.cli.exits import Exit
from console.cli.output import print_findings
from console.core.model import SourceStatus


def add_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    ls = sub.add_parser("list", help="in-flight reassignments (like kafka-reassign-partitions.sh --list)")
    connection_args(ls)
    ls.add_argument("--json", action="store_true")
    ls.set_defaults(handler=read)

    st = sub.add_parser("state", help="the whole cluster snapshot")
    connection_args(st)
    st.add_argument("--json", action="store_true")
    st.set_defaults(handler=read)


def read(args: argparse.Namespace) -> int:
    from console.present.text import list_json, list_text
    from console.state.document import state_json

    with connect(args) as reader:
        state = reader.snapshot(info=args.command == "state")  # `list` never waits for what the cluster is
    if unreadable(state):
        print_findings(state)
        return Exit.FAILED
    if args.command == "list":
        if not state.status.in_flight_known:
            print_findings(state)
            return Exit.FAILED
        if state.status.reassignments is not SourceStatus.OK:
            print(
                "Warning: ListPartitionReassignments did not answer; this list comes from ZooKeeper.", file=sys.stderr
            )
        print(json.dumps(list_json(state)) if args.json else list_text(state))
        return Exit.OK
    if args.json:
        print(json.dumps(state_json(state)))
    else:
        from console.present.text import state_text

        print(state_text(state))
    return Exit.OK
