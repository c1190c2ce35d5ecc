"""``validate``, ``diff``, ``rollback``: a plan read against the cluster (or a saved snapshot);
``generate``: a plan for a goal; ``rebase``: a stale plan brought up to date. Nothing is sent."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from typing import TYPE_CHECKING

from console.cli.cluster import connect, connection_args, snapshot, unreadable
from console.cli.exits import Exit
from console.cli.files import plan_file_args, read_file, read_plan, write_json
from console.cli.goals import add_goal_args
from console.cli.output import print_findings, rate_arg, short
from console.core.format import plural
from console.core.model import ClusterState, SourceStatus

if TYPE_CHECKING:
    from console.moves.impact import Impact
    from console.plans.diff import PlanDiff


def add_review_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    for name, text in (
        ("validate", "check a reassignment JSON file against the live cluster (exit 1 on errors)"),
        ("diff", "what a reassignment JSON file would do: per partition, broker, rack, and movement"),
        ("rollback", "the rollback JSON of a plan (the current assignment of its partitions), on one line"),
    ):
        a = sub.add_parser(name, help=text)
        connection_args(a, offline=True)
        plan_file_args(a)
        if name != "rollback":
            a.add_argument("--json", action="store_true")
        if name == "validate":
            impact_args(a)
        a.set_defaults(handler=review_plan)


def impact_args(a: argparse.ArgumentParser) -> None:
    """What the plan's impact is priced and timed with."""
    a.add_argument(
        "--pricing",
        metavar="FILE",
        help="a TOML file with [pricing] (currency, per_gb_cross_zone, [pricing.zones]) and [impact] tables, "
        "as in secrets.toml (which will do): the impact in money too",
    )
    a.add_argument(
        "--throttle",
        type=rate_arg,
        help="time each broker's copy at this throttle: a number alone is bytes/s, as in Kafka's tools; or 10MB/s",
    )


def add_generate(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    gen = sub.add_parser(
        "generate",
        help="make a plan for a goal: decommission, add brokers, rebalance, replication factor, racks, a log dir",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Make a reassignment plan that reaches one goal while moving as little data as it can, and say "
        "how close to the least possible it is.\n\n"
        "The plan (only partitions that change, official JSON) goes to stdout; the report to stderr "
        "(--report-json FILE also writes it as JSON). Only live, eligible brokers receive replicas; "
        "partitions being reassigned are left alone; racks are kept spread.\n\n"
        "Exit 0 with a plan (nothing on stdout when the goal is already met); 1 when the goal cannot be "
        "reached (the reason is printed); 2 when the input cannot be used.",
    )
    connection_args(gen, offline=True)
    add_goal_args(gen)
    gen.add_argument(
        "--pricing",
        metavar="FILE",
        help="a TOML file with [pricing] (currency, per_gb_cross_zone, [pricing.zones]), as in secrets.toml: the "
        "report's impact in money too, and the zones of racks that are not zones",
    )
    gen.add_argument("--report-json", metavar="FILE", help="also write the report as JSON to FILE")
    gen.set_defaults(handler=generate_plan)


def add_rebase(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    rb = sub.add_parser(
        "rebase",
        help="bring a stale plan up to date: same targets, against the cluster as it is now",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Say per partition what changed since the plan was drafted (moved by someone else, "
        "reassigning now, at its target already, gone, unchanged) and print the plan brought up to "
        "date on stdout (official JSON; the report goes to stderr).\n\n"
        "The official JSON carries no record of the replicas a plan was drafted against; give it with "
        "--basis-json-file (a plan JSON of the replicas at drafting time, e.g. the rollback JSON saved "
        "with the plan). Without it (or for partitions it does not list) a partition that moved "
        "cannot be told from one that did not: only partitions reassigning now, already at their "
        "target, or gone are detected; the others are reported as 'no basis' and kept.\n\n"
        "Exit 0 with a plan on stdout; 1 when nothing is left to do (every kept partition is at its "
        "target, or none is kept; nothing on stdout) or the cluster cannot be read; 2 when a file "
        "cannot be used.",
    )
    connection_args(rb)
    plan_file_args(rb)
    rb.add_argument(
        "--basis-json-file",
        help="the partitions' replicas when the plan was drafted, in the same format (e.g. its rollback JSON)",
    )
    rb.add_argument("--drop-completed", action="store_true", help="leave out partitions already at their target")
    rb.add_argument("--drop-gone", action="store_true", help="leave out partitions whose topic or partition is gone")
    rb.add_argument("--report-json", metavar="FILE", help="also write the per-partition report as JSON to FILE")
    rb.set_defaults(handler=rebase_plan)


def review_plan(args: argparse.Namespace) -> int:
    """``validate``, ``diff`` or ``rollback`` of a plan file."""
    from console.plans.diff import diff
    from console.plans.plan import parse_plan, rollback
    from console.plans.validate import errors, validate, with_overall
    from console.present import review
    from console.present.findings import findings_text

    text = read_plan(args)
    plan = parse_plan(text)  # PlanFormatError is a ConfigError: exit 2, nothing sent anywhere
    # what the cluster is, as submit reads it: a rollback names log dirs where the official tool of
    # the cluster's release does (4.2 and later), and a finding may depend on the release (4.4's
    # controller refuses a move onto a wholly cordoned broker)
    state = snapshot(args, info=True)
    if unreadable(state):
        if args.command == "validate" and args.json:
            print(json.dumps({"valid": False, "findings": [short(f) for f in state.findings]}))
        print_findings(state)
        return Exit.FAILED
    if len(plan) > len(state.partitions) or int(plan.target_columns[1].max(initial=0)) > len(state.brokers):
        # read before the cluster was known: now held to its brokers and partitions, as the pages do
        plan = parse_plan(text, brokers=len(state.brokers), partitions=len(state.partitions))
    if args.command == "rollback":
        print(rollback(state, plan).to_json())
        return Exit.OK
    d = diff(state, plan)
    racks = review.rack_map(state)
    if args.command == "diff":
        tiered = state.tiered
        print(
            json.dumps(review.diff_json(d, racks, tiered)) if args.json else review.diff_text(d, racks, tiered=tiered)
        )
        return Exit.OK
    im = plan_impact(args, state, d)
    findings = with_overall(validate(state, plan, d), im.findings)
    bad = errors(findings)
    if args.json:
        print(json.dumps({"valid": not bad, "findings": [short(f) for f in findings], "impact": im.to_dict()}))
    else:
        print(findings_text(findings))
        print(im.text(), file=sys.stderr)
        print(
            f"{plural(len(bad), 'error')}, {plural(len(findings) - len(bad), 'other finding')}: "
            + ("the plan must not be submitted." if bad else "no errors."),
            file=sys.stderr,
        )
    return Exit.FAILED if bad else Exit.OK


def plan_impact(args: argparse.Namespace, state: ClusterState, d: PlanDiff) -> Impact:
    """The plan's impact, priced with ``--pricing`` (a problem in the file said on stderr, its prices
    left out), steady traffic from the history's produce rates, copy times at ``--throttle``."""
    from console.access.pricing import read_pricing_file
    from console.cli.cluster import topic_rates
    from console.moves.impact import ImpactLimits
    from console.moves.impact_columns import impact

    pricing, limits, problems = (
        read_pricing_file(args.pricing, state.name) if args.pricing else (None, ImpactLimits(), [])
    )
    for p in problems:
        print(f"Warning: {p}", file=sys.stderr)
    return impact(d, pricing, topic_rates(state, state.name), args.throttle, limits)


def generate_plan(args: argparse.Namespace) -> int:
    """A plan for a goal: the plan on stdout, the report on stderr."""
    from console.access.pricing import read_pricing_file
    from console.cli.cluster import topic_rates
    from console.cli.goals import goal_options
    from console.moves.impact_columns import impact
    from console.moves.waves import WaveLimits, plan_estimate, tiered_copied
    from console.plans.diff import diff
    from console.plans.generate import generate

    options = goal_options(args)
    state = snapshot(args)
    if unreadable(state):
        print_findings(state)
        return Exit.FAILED
    pricing, limits, problems = read_pricing_file(args.pricing, state.name) if args.pricing else (None, None, [])
    for p in problems:
        print(f"Warning: {p}", file=sys.stderr)
    if pricing is not None and pricing.zones:  # racks that are not zones: the preference's zones too
        options = replace(options, zones=pricing.zones)
    made = generate(state, options)
    im = impact(diff(state, made.plan), pricing, topic_rates(state, state.name), args.throttle, limits)
    report = made.report.with_impact(im.summary())
    if args.throttle:
        report = report.with_estimate(
            plan_estimate(state, made.plan, args.throttle, WaveLimits(moves_per_broker=args.max_moves_per_broker)),
            args.throttle,
            tiered_copied(state, made.plan),
        )
    if args.report_json:
        write_json(args.report_json, report.to_dict(), "--report-json")
    print(report.text(), file=sys.stderr)
    if not len(made.plan):
        print("Nothing to do: the goal is met already (no plan printed).", file=sys.stderr)
        return Exit.OK
    print(made.plan.to_json())
    return Exit.OK


def rebase_plan(args: argparse.Namespace) -> int:
    """A stale plan brought up to date: the report on stderr, the new plan on stdout."""
    from console.plans.plan import Plan, parse_plan
    from console.plans.rebase import RebaseOptions, rebase, report_json, report_text

    plan = parse_plan(read_plan(args))
    if args.basis_json_file:
        was = parse_plan(read_file(args.basis_json_file, "--basis-json-file"))
        planned = set(plan.keys)
        plan = Plan(plan.entries, {e.key: e.replicas for e in was.entries if e.key in planned})
        missing = len(planned) - len(plan.basis)
        if missing:
            print(
                f"Warning: the basis file does not list {missing} of the plan's partitions: whether they moved "
                "cannot be told.",
                file=sys.stderr,
            )
    with connect(args) as reader:
        state = reader.snapshot()
    if unreadable(state):
        print_findings(state)
        return Exit.FAILED
    if state.status.reassignments is not SourceStatus.OK and state.status.zookeeper is not SourceStatus.OK:
        print(
            "Warning: neither ListPartitionReassignments nor ZooKeeper answered: reassignments in flight may "
            "not be seen.",
            file=sys.stderr,
        )
    report = rebase(state, plan, RebaseOptions(drop_completed=args.drop_completed, drop_gone=args.drop_gone))
    if args.report_json:
        write_json(args.report_json, report_json(report), "--report-json")
    print(report_text(report), file=sys.stderr)
    if not report.left_to_do:
        print("Nothing left to do: no plan printed.", file=sys.stderr)
        return Exit.FAILED
    print(report.plan.to_json())
    return Exit.OK
