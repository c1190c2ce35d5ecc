"""The goal arguments of ``generate`` and ``pipeline generate`` (one cluster now, or every cluster
of the history): parsing them into :class:`~console.plans.generate.GenerateOptions`."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from console.cli.files import read_file
from console.cli.output import rate_arg
from console.core.errors import ConfigError, ConsoleError

if TYPE_CHECKING:
    from console.plans.generators.options import GenerateOptions


def ids_arg(text: str | None, option: str) -> tuple[int, ...]:
    from console.plans.drafting import parse_ids

    if text is None:
        return ()
    try:
        return tuple(parse_ids(text))
    except ConsoleError:
        raise ConfigError(f"{option} takes broker ids separated by commas, e.g. 1,2,3; not {text!r}.") from None


def log_dir_arg(text: str) -> tuple[int, str]:
    """``BROKER:DIR`` (``1:/var/lib/kafka/d1``) as the broker id and the dir."""
    broker, sep, path = text.partition(":")
    if not sep or not broker.strip().isdigit() or not path.strip().startswith("/"):
        raise ConfigError(
            f"--drain-log-dir takes BROKER:DIR, a broker id and one of its log dirs (an absolute path), "
            f"e.g. 1:/var/lib/kafka/d1; not {text!r}.",
            "The Overview page lists each broker's log dirs (python -m console state --json too).",
        )
    return int(broker), path.strip()


def _names(text: str | None) -> tuple[str, ...]:
    return tuple(dict.fromkeys(t.strip() for t in (text or "").split(",") if t.strip()))


def add_goal_args(gen: argparse.ArgumentParser) -> None:
    """One goal (required) and what narrows it."""
    goal = gen.add_mutually_exclusive_group(required=True)
    goal.add_argument("--decommission", metavar="IDS", help="drain these brokers (comma-separated ids)")
    goal.add_argument(
        "--decommission-rack", metavar="RACKS", help="drain every broker on these racks (comma-separated rack names)"
    )
    goal.add_argument("--add-brokers", metavar="IDS", help="fill these (new) brokers until the cluster is even")
    goal.add_argument(
        "--rebalance",
        choices=["count", "bytes", "leaders"],
        help="even out replicas, bytes, or preferred leaders (leaders: reorders only, no data moves)",
    )
    goal.add_argument("--replication-factor", type=int, metavar="N", help="change the topics' replication factor to N")
    goal.add_argument("--fix-racks", action="store_true", help="spread partitions whose replicas share a rack")
    goal.add_argument(
        "--drain-log-dir",
        metavar="BROKER:DIR",
        help="empty one log dir of a broker: into its other dirs while they have room, else to other brokers",
    )
    goal.add_argument(
        "--official",
        action="store_true",
        help="what kafka-reassign-partitions.sh --generate proposes (with --broker-list)",
    )
    gen.add_argument("--broker-list", metavar="IDS", help="with --official: the brokers to assign to")
    gen.add_argument("--topics", metavar="T,...", help="only these topics (all by default)")
    gen.add_argument(
        "--topics-to-move-json-file",
        metavar="FILE",
        help='the topics as the official tool takes them: {"version":1,"topics":[{"topic":"t"}]}',
    )
    gen.add_argument(
        "--exclude-topics", metavar="REGEX", help="leave alone topics this regular expression matches in full"
    )
    gen.add_argument("--exclude-brokers", metavar="IDS", help="never move replicas to these brokers")
    gen.add_argument("--max-moves", type=int, metavar="N", help="rebalance / add brokers: at most N replica moves")
    gen.add_argument("--max-bytes", type=int, metavar="N", help="rebalance / add brokers: at most N bytes moved")
    gen.add_argument(
        "--tolerance",
        type=float,
        default=0.05,
        help="rebalance bytes: how far from the mean a broker may end (default 0.05 = 5%%)",
    )
    gen.add_argument(
        "--least-cross-zone",
        type=float,
        nargs="?",
        const=0.0,
        metavar="WEIGHT",
        help="decommission, add brokers, rebalance count/bytes: prefer copies within the leader's zone (racks are "
        "zones unless [pricing.zones] maps them): alone, a tie-breaker that keeps the balance; with a WEIGHT, a "
        "byte copied across zones counts as WEIGHT bytes of load on its destination (balance traded for it)",
    )
    gen.add_argument("--seed", type=int, default=0, help="tie-breaks (and --official's random start); default 0")
    gen.add_argument(
        "--throttle",
        type=rate_arg,
        metavar="RATE",
        help="estimate the duration at this throttle: a number alone is bytes/s, as in Kafka's tools; or 10MB/s",
    )
    gen.add_argument(
        "--max-moves-per-broker",
        type=int,
        default=5,
        help="for the estimate: adding replicas per broker per wave (default 5, as submit)",
    )


def goal_options(args: argparse.Namespace) -> GenerateOptions:
    """The options the goal arguments ask for, checked as far as they can be without a cluster."""
    from console.plans.generators.options import GenerateOptions, Goal, Metric, check_options
    from console.plans.plan import parse_topics_to_move

    topics = _names(args.topics)
    if args.topics_to_move_json_file:
        topics += parse_topics_to_move(read_file(args.topics_to_move_json_file, "--topics-to-move-json-file"))
    if args.broker_list and not args.official:
        raise ConfigError("--broker-list goes with --official.")
    if args.official and not args.broker_list:
        raise ConfigError("--official needs --broker-list, as kafka-reassign-partitions.sh --generate does.")
    if args.max_moves_per_broker < 1:
        raise ConfigError("--max-moves-per-broker must be 1 or more.")
    goal, metric = Goal.FIX_RACKS, Metric.COUNT
    brokers: tuple[int, ...] = ()
    racks = _names(args.decommission_rack)
    if args.decommission_rack is not None:
        if not racks:
            raise ConfigError("--decommission-rack takes rack names separated by commas, e.g. rack-c.")
        goal = Goal.DECOMMISSION
    for option, g in (
        ("decommission", Goal.DECOMMISSION),
        ("add_brokers", Goal.ADD_BROKERS),
        ("broker_list", Goal.OFFICIAL),
    ):
        if getattr(args, option):
            goal, brokers = g, ids_arg(getattr(args, option), "--" + option.replace("_", "-"))
    if args.rebalance:
        goal, metric = Goal.REBALANCE, Metric(args.rebalance)
    if args.replication_factor is not None:
        goal = Goal.REPLICATION_FACTOR
    log_dir = None
    if args.drain_log_dir is not None:
        broker, log_dir = log_dir_arg(args.drain_log_dir)
        goal, brokers = Goal.DRAIN_LOG_DIR, (broker,)
    options = GenerateOptions(
        goal,
        brokers,
        metric,
        args.replication_factor,
        tuple(dict.fromkeys(topics)),
        args.exclude_topics,
        ids_arg(args.exclude_brokers, "--exclude-brokers"),
        args.max_moves,
        args.max_bytes,
        args.seed,
        args.tolerance,
        racks,
        log_dir,
        args.least_cross_zone,
    )
    check_options(options)
    return options
