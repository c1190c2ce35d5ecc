"""``save`` and ``approve``: a plan file saved in the console's store (a plan of the cluster it is
saved on, with its rollback and basis) and a saved plan approved, so that a team working from a
shell keeps the two-person rule: one saves, someone who authored no version approves, and the plan
is submitted as the saved plan (``submit --plan-id``). Both go through the services the pages call,
with the same role checks and audit entries; the command line acts as the shell's user."""

from __future__ import annotations

import argparse
import sys

from console.cli.cluster import connect, connection_args, unreadable
from console.cli.exits import Exit
from console.cli.files import plan_file_args, read_file, read_plan
from console.cli.output import print_findings
from console.core.format import plural


def add_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    sv = sub.add_parser(
        "save",
        help="save a plan file in the console's store, as a plan of the cluster (prints its id)",
    )
    connection_args(sv)
    plan_file_args(sv)
    sv.add_argument("--name", required=True, help="the saved plan's name (unique among the cluster's saved plans)")
    sv.add_argument(
        "--replace",
        action="store_true",
        help="save over the cluster's plan of that name (its authors stay authors; a save by someone other than "
        "its last author clears its approvals); without it, a name another plan has is refused",
    )
    sv.set_defaults(handler=save)

    ap = sub.add_parser("approve", help="approve a saved plan of the cluster (the two-person rule)")
    connection_args(ap)
    ap.add_argument("--plan-id", type=int, required=True, help="the saved plan to approve")
    ap.add_argument(
        "--reassignment-json-file",
        help="the plan file you reviewed: the approval is refused unless the saved plan has its content",
    )
    ap.set_defaults(handler=approve)


def save(args: argparse.Namespace) -> int:
    """Read the plan and the cluster, save the plan (its basis: the replicas as they are now)."""
    import getpass

    from console.access.auth import Identity, load_users
    from console.core.errors import PlanNameTaken
    from console.core.model import cluster_key
    from console.plans.plan import parse_plan
    from console.services import plans as plan_service
    from console.storage.store import Store

    text = read_plan(args)
    plan = parse_plan(text)  # PlanFormatError: exit 2, nothing saved
    with connect(args) as reader:
        name = reader.settings.name
        state = reader.snapshot(info=True)  # the rollback names log dirs from Kafka 4.2 on
    if unreadable(state):
        print_findings(state)
        return Exit.FAILED
    if len(plan) > len(state.partitions) or int(plan.target_columns[1].max(initial=0)) > len(state.brokers):
        # read before the cluster was known: now held to its brokers and partitions, as the pages do
        plan = parse_plan(text, brokers=len(state.brokers), partitions=len(state.partitions))
    plan = plan.with_basis(state)  # the replicas as they are now: the stale check's basis
    store = Store()
    try:
        plan_id = plan_service.save_plan(
            store,
            Identity.cli(getpass.getuser()),
            state,
            name,
            args.name,
            plan,
            draft_of="any" if args.replace else None,
        )
    except PlanNameTaken as e:
        print(f"Error: {e.message}\n{e.hint} Or add --replace to save over plan {e.plan_id}.", file=sys.stderr)
        return Exit.UNUSABLE
    users = load_users()
    print(
        f"Saved plan {plan_id} ({args.name.strip()}) of cluster {cluster_key(state, name)}: {plural(len(plan), 'partition')}."
        + (
            f" The two-person rule is on: someone with the approver role who authored no version of it approves it "
            f"(approve --plan-id {plan_id}), then it is submitted as the saved plan (submit --plan-id {plan_id})."
            if users is not None and users.two_person_rule
            else ""
        ),
        file=sys.stderr,
    )
    print(plan_id)
    return Exit.OK


def approve(args: argparse.Namespace) -> int:
    """Approve a saved plan of the cluster read, as the shell's user (never one of its authors)."""
    import getpass

    from console.access.auth import Identity
    from console.core.model import cluster_key
    from console.plans.plan import parse_plan
    from console.services import runs as run_service
    from console.storage.store import Store

    reviewed = None
    if args.reassignment_json_file:
        reviewed = parse_plan(read_file(args.reassignment_json_file, "--reassignment-json-file"))
    with connect(args) as reader:
        name = reader.settings.name
        state = reader.snapshot(lean=True)  # which cluster this is: its id
    if unreadable(state):
        print_findings(state)
        return Exit.FAILED
    store = Store()
    user = getpass.getuser()
    run_service.approve(store, Identity.cli(user), cluster_key(state, name), args.plan_id, reviewed)
    saved = store.plans.load(args.plan_id)
    if saved is not None:
        print(
            f"Plan {args.plan_id} ({saved.summary.name}) approved by {user} on cluster {saved.summary.cluster}, "
            f"as it is now ({plural(len(saved.plan), 'partition')}; authors: {', '.join(sorted(store.plans.authors(args.plan_id)))}). "
            f"A change to it needs a new approval. Submit it with --plan-id {args.plan_id}.",
            file=sys.stderr,
        )
    return Exit.OK
