"""``decommission``: take brokers out of the cluster the way Kafka documents it (cordon, drain,
verify, shut down, unregister), one step after the other, resumable (the flow is kept in the
store). The drain plan is reviewed and submitted with ``submit --plan-id`` like any plan."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from console.cli import confirm
from console.cli.cluster import connect, connection_args
from console.cli.exits import Exit
from console.cli.files import write_json
from console.cli.options import switches


def add_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    dc = sub.add_parser(
        "decommission",
        help="cordon, drain, verify and unregister brokers, step by step (resumable); without --broker or --id: "
        "the flows recorded",
    )
    connection_args(dc)
    which = dc.add_mutually_exclusive_group()
    which.add_argument(
        "--broker", type=int, action="append", default=[], help="start (or resume) the flow of these brokers"
    )
    which.add_argument("--id", type=int, help="the flow to move on (or to unregister, or to abandon)")
    switches(
        dc,
        ("--unregister", "with --id: unregister its brokers (once shut down)"),
        ("--abandon", "with --id: stop the flow (cordons stay)"),
    )
    dc.add_argument("--why", default="", help="with --abandon: the reason, for the audit log")
    dc.add_argument(
        "--unregister-idle",
        type=int,
        metavar="N",
        help="unregister broker N, fenced and holding nothing, outside a flow (asks first)",
    )
    dc.add_argument(
        "--plan-file",
        help="where the drain plan is written when it is generated (default: decommission-<id>.json here)",
    )
    dc.add_argument("--yes", action="store_true", help="do not ask for confirmation (--unregister, --abandon)")
    dc.add_argument("--json", action="store_true")
    dc.set_defaults(handler=decommission)


def _flow_json(flow: object) -> dict[str, object]:
    from console.services.decommission import describe
    from console.storage.decommissions import Decommission

    assert isinstance(flow, Decommission)
    return {
        "id": flow.id,
        "cluster": flow.cluster,
        "brokers": [int(b) for b in flow.brokers],
        "step": flow.step.value,
        "blocked": flow.blocked,
        "plan_id": flow.plan_id,
        "run_id": flow.run_id,
        "notes": list(flow.notes),
        "status": describe(flow),
    }


def decommission(args: argparse.Namespace) -> int:
    import getpass

    from console.access.auth import Identity
    from console.core.errors import ConfigError
    from console.core.states import DecommissionStep
    from console.services import decommission as flow_service
    from console.storage.store import Store

    store = Store()
    if args.unregister_idle is not None:
        return _unregister_idle(args, store)
    if not args.broker and args.id is None:
        flows = store.decommissions.list()
        if args.json:
            print(json.dumps([_flow_json(f) for f in flows]))
        else:
            for f in flows:
                print(flow_service.describe(f))
            if not flows:
                print("No decommission recorded. Start one with: decommission --bootstrap-server … --broker N")
        return Exit.OK
    if (args.unregister or args.abandon) and args.id is None:
        raise ConfigError("--unregister and --abandon need --id.", "List the flows with: decommission")
    who = Identity.cli(getpass.getuser())
    refused = False
    if args.abandon:
        flow = store.decommissions.get(args.id)
        if flow is not None and not args.yes and not confirm.said_yes(f"Abandon decommission {args.id}? [yes/no] "):
            print("Not confirmed: nothing changed.", file=sys.stderr)
            return Exit.FAILED
        flow = flow_service.abandon(store, who, args.id, args.why)
    else:
        with connect(args) as reader:
            gateway = reader.gateway()
            name = reader.settings.name
            if args.id is None:
                flow = flow_service.start(store, gateway, who, name, tuple(args.broker))
            else:
                flow = flow_service.advance(store, gateway, who, name, args.id)
            if args.unregister and flow.step is not DecommissionStep.UNREGISTER:
                print(f"Not unregistered (the flow is at {flow.step.value}): nothing was sent.", file=sys.stderr)
                refused = True
            elif args.unregister:
                ids = ",".join(str(b) for b in flow.brokers)
                if not args.yes and not confirm.said_yes(
                    f"Unregister broker {ids} (UnregisterBroker: the cluster forgets them)? [yes/no] "
                ):
                    print("Not confirmed: nothing was sent.", file=sys.stderr)
                    return Exit.FAILED
                flow = flow_service.unregister(store, gateway, who, flow.id)
    for note in flow.notes:
        print(f"  {note}", file=sys.stderr)
    print(flow_service.describe(flow), file=sys.stderr)
    if flow.step is DecommissionStep.REVIEW and flow.plan_id is not None:
        saved = store.plans.load(flow.plan_id)
        path = Path(args.plan_file or f"decommission-{flow.id}.json")
        if saved is not None:
            write_json(str(path), json.loads(saved.plan.to_json()), "--plan-file")
        print(
            f"Drain plan {flow.plan_id} written to {path}. Review it on the Review page, or submit it from here: "
            f"submit --bootstrap-server … --reassignment-json-file {path} --plan-id {flow.plan_id} --throttle RATE; "
            f"then decommission --id {flow.id} again.",
            file=sys.stderr,
        )
    if args.json:
        print(json.dumps(_flow_json(flow)))
    return Exit.FAILED if flow.blocked or refused else Exit.OK


def _unregister_idle(args: argparse.Namespace, store: object) -> int:
    import getpass

    from console.access.auth import Identity
    from console.services import decommission as flow_service
    from console.storage.store import Store

    assert isinstance(store, Store)
    n = args.unregister_idle
    with connect(args) as reader:  # the cluster named (or found) before the question
        if not args.yes and not confirm.said_yes(
            f"Unregister broker {n} (shut down for good, holds nothing)? [yes/no] "
        ):
            print("Not confirmed: nothing was sent.", file=sys.stderr)
            return Exit.FAILED
        said = flow_service.unregister_idle(
            store, reader.gateway(), Identity.cli(getpass.getuser()), reader.settings.name, n
        )
    print(said, file=sys.stderr)
    if args.json:
        print(json.dumps({"unregistered": n}))
    return Exit.OK
