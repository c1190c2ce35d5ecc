"""``python -m console collect`` and ``python -m console pipeline JOB``: the data pipeline's commands
(argument parsing and printing; the work is in :mod:`console.pipeline`)."""

from __future__ import annotations

import argparse
import signal
import sys
import threading
import time
from datetime import UTC
from typing import TYPE_CHECKING

from console.cli.cluster import connect, connection_args
from console.cli.exits import Exit
from console.cli.goals import add_goal_args
from console.cli.options import wave_args
from console.cli.output import rate_arg
from console.core.format import human_bytes, human_duration, timestamp
from console.core.paths import history_dir

if TYPE_CHECKING:
    from console.core.model import ClusterState
    from console.pipeline.collect import Written
    from console.pipeline.jobs import JobResult
    from console.pipeline.spark import SparkSettings


def add_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    _add_collect(sub)
    pl = sub.add_parser(
        "pipeline",
        help="run a data-pipeline job on Spark (history, review, generate, compact)",
        description="Jobs over the snapshot history, on Spark: local[*] by default, a Spark cluster "
        "with --master, a Spark Connect server with --remote. Exit 2 when the input "
        "cannot be used or Spark does not answer; nothing is written half-way.",
    )
    pl.set_defaults(handler=run_pipeline)
    jobs = pl.add_subparsers(dest="job", required=True)
    _add_history(jobs)
    _add_review(jobs)
    _add_generate(jobs)
    _add_compact(jobs)


def _add_collect(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    co = sub.add_parser(
        "collect",
        help="append snapshots of a cluster to the history (Parquet), every --every seconds",
        description="Append snapshots of the cluster to DIR as Parquet (one row per replica, one "
        "header per snapshot, partitioned by cluster and date) until --for seconds have "
        "passed or Ctrl-C. The pipeline's jobs read DIR.",
    )
    connection_args(co)
    co.set_defaults(handler=run_collect)
    co.add_argument(
        "--out",
        default=str(history_dir() / "snapshots"),
        help="snapshot directory (default: the console's history dir, $CONSOLE_HISTORY_DIR)",
    )
    co.add_argument(
        "--every", type=float, default=30.0, metavar="SECONDS", help="seconds between snapshots (default 30)"
    )
    co.add_argument(
        "--for", dest="for_s", type=float, metavar="SECONDS", help="stop after this long (default: run until stopped)"
    )


def _add_history(jobs: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    hi = jobs.add_parser("history", help="moves, copy rates, broker load and incidents from the snapshots")
    _spark_args(hi)
    hi.add_argument("--snapshots", default=str(history_dir() / "snapshots"), help="snapshot directory or URI")
    hi.add_argument("--out", default=str(history_dir() / "tables"), help="where the tables go (a local directory)")
    hi.add_argument(
        "--stuck-after",
        type=float,
        metavar="SECONDS",
        help="a move in flight whose bytes have not grown this long is stuck (default 600)",
    )


def _add_review(jobs: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    rv = jobs.add_parser(
        "review",
        help="a plan against a cluster's stored snapshot: diff, brokers, findings, waves, "
        "ETA, rollback (the Review page's answers, at fleet scale)",
    )
    _spark_args(rv)
    rv.add_argument("--snapshots", default=str(history_dir() / "snapshots"), help="snapshot directory or URI")
    rv.add_argument("--reassignment-json-file", required=True, help="the plan (official JSON)")
    rv.add_argument("--cluster", help="the cluster id the plan is for (needed when the history holds several)")
    rv.add_argument(
        "--at", help="the last snapshot at or before this time (ISO 8601 or epoch seconds; default: the last)"
    )
    rv.add_argument("--out", required=True, help="where the tables go (a local directory)")
    rv.add_argument(
        "--throttle",
        type=rate_arg,
        metavar="RATE",
        help="estimate the duration at this throttle: a number alone is bytes/s, as in Kafka's tools; or 10MB/s",
    )
    wave_args(rv)
    rv.add_argument(
        "--pricing",
        metavar="FILE",
        help="a TOML file with [pricing] (currency, per_gb_cross_zone, [pricing.zones]) and [impact] tables, "
        "as in secrets.toml: each plan's impact in money too",
    )
    rv.add_argument(
        "--no-impact", action="store_true", help="leave out the impact (what it costs to compute, for comparison)"
    )


def _add_generate(jobs: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    ge = jobs.add_parser(
        "generate",
        help="a plan generator on every cluster of the history (or every topic): a plan "
        "and a quality report per cluster, and a fleet summary",
        description="Run one goal of `generate` on each cluster's last stored snapshot (at or "
        "before --at), every cluster in a Spark task of its own (--per-topic: every "
        "topic). Writes plans/<cluster>.json and reports/<cluster>.json for each cluster "
        "that could be planned, and the tables summary, units, brokers and findings. "
        "Exit 0 when every cluster was planned (or needs nothing), 1 when the goal "
        "cannot be reached on some (the summary says why), 2 when the input cannot be "
        "used.",
    )
    _spark_args(ge)
    ge.add_argument("--snapshots", default=str(history_dir() / "snapshots"), help="snapshot directory or URI")
    ge.add_argument("--out", required=True, help="where the plans, reports and tables go (a local directory)")
    ge.add_argument(
        "--cluster",
        action="append",
        default=[],
        metavar="ID",
        help="only this cluster (repeatable; default: every cluster in the history)",
    )
    ge.add_argument(
        "--at", help="the last snapshot at or before this time (ISO 8601 or epoch seconds; default: the last)"
    )
    ge.add_argument(
        "--per-topic",
        action="store_true",
        help="plan each topic on its own (even within each topic), each topic a task",
    )
    add_goal_args(ge)


def _add_compact(jobs: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    cp = jobs.add_parser(
        "compact", help="merge each past day's snapshot files into a few sorted files per cluster and day"
    )
    _spark_args(cp)
    cp.add_argument("--snapshots", default=str(history_dir() / "snapshots"), help="snapshot directory (local)")
    cp.add_argument("--before", metavar="YYYY-MM-DD", help="compact days before this one (default: today, UTC)")


def _spark_args(p: argparse.ArgumentParser) -> None:
    where = p.add_mutually_exclusive_group()
    where.add_argument(
        "--master", help="Spark master URL: local[N], spark://HOST:PORT, yarn, k8s://... (default local[*])"
    )
    where.add_argument("--remote", help="Spark Connect server: sc://HOST:PORT")
    p.add_argument("--ui", action="store_true", help="keep Spark's web UI on while the job runs")
    p.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE", help="extra Spark setting (repeatable)")


def _settings(args: argparse.Namespace) -> SparkSettings:
    from console.core.errors import ConfigError
    from console.pipeline.spark import SparkSettings

    conf = {}
    for kv in args.conf:
        key, sep, value = kv.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"--conf takes KEY=VALUE, not {kv!r}.")
        conf[key.strip()] = value.strip()
    return SparkSettings(master=args.master, remote=args.remote, ui=args.ui, conf=conf)


def _time(text: str | None) -> float | None:
    """``--at``: epoch seconds, or an ISO 8601 time (UTC unless it says otherwise)."""
    from datetime import datetime

    from console.core.errors import ConfigError

    if text is None:
        return None
    try:
        return float(text)
    except ValueError:
        pass
    try:
        t = datetime.fromisoformat(text)
    except ValueError:
        raise ConfigError(
            f"--at takes epoch seconds or an ISO 8601 time (2026-11-23T10:00:00Z), not {text!r}."
        ) from None
    return (t if t.tzinfo else t.replace(tzinfo=UTC)).timestamp()


class _Bar:
    """A one-line progress bar on stderr for a terminal; plain stage lines otherwise."""

    def __init__(self) -> None:
        self.tty = sys.stderr.isatty()
        self.stage = ""
        self.lock = threading.Lock()
        self.started = time.monotonic()

    def line(self, text: str) -> None:
        with self.lock:
            self.stage = text
            print(
                ("\r\033[K" if self.tty else "") + f"[{time.monotonic() - self.started:5.0f} s] {text}",
                file=sys.stderr,
                end="\n" if not self.tty else "",
                flush=True,
            )

    def tasks(self, done: int, total: int) -> None:
        if not self.tty:
            return
        with self.lock:
            width = 24
            filled = int(width * done / total) if total else 0
            print(
                f"\r\033[K[{time.monotonic() - self.started:5.0f} s] {self.stage} [{'#' * filled}{'.' * (width - filled)}] "
                f"{done}/{total} tasks",
                file=sys.stderr,
                end="",
                flush=True,
            )

    def end(self) -> None:
        if self.tty:
            print(file=sys.stderr)


def run_pipeline(args: argparse.Namespace) -> int:
    from console.pipeline.jobs import compact_job, generate_job, history_job, review_job

    bar = _Bar()
    if args.job == "generate":
        from console.cli.goals import goal_options
        from console.moves.waves import WaveLimits

        result = generate_job(
            args.snapshots,
            goal_options(args),
            args.out,
            _settings(args),
            args.cluster,
            at=_time(args.at),
            per_topic=args.per_topic,
            throttle=args.throttle,
            limits=WaveLimits(moves_per_broker=args.max_moves_per_broker),
            report=bar.line,
            tasks=bar.tasks,
        )
    elif args.job == "review":
        from console.access.pricing import read_pricing_file
        from console.moves.waves import WaveLimits
        from console.pipeline.review_steps import ImpactSettings

        pricing, impact_limits, problems = read_pricing_file(args.pricing) if args.pricing else (None, None, [])
        for p in problems:
            print(f"Warning: {p}", file=sys.stderr)

        result = review_job(
            args.snapshots,
            {args.cluster: args.reassignment_json_file},
            args.out,
            _settings(args),
            at=_time(args.at),
            throttle=args.throttle,
            limits=WaveLimits(args.max_moves_per_broker, args.max_partitions_per_request),
            report=bar.line,
            tasks=bar.tasks,
            priced=ImpactSettings(pricing, {}, str(history_dir() / "tables"), impact_limits, args.no_impact),
        )
    elif args.job == "compact":
        result = compact_job(args.snapshots, _settings(args), args.before, report=bar.line, tasks=bar.tasks)
    else:
        result = history_job(
            args.snapshots, args.out, _settings(args), args.stuck_after, report=bar.line, tasks=bar.tasks
        )
    bar.end()
    _summary(result)
    return Exit.FAILED if result.failed else Exit.OK


def _summary(result: JobResult) -> None:
    print(f"{result.job}: done in {human_duration(result.seconds)}; tables in {result.out}:", file=sys.stderr)
    for table, rows in result.tables.items():
        print(f"  {table}: {rows} {'file(s)' if table in result.files else 'row(s)'}", file=sys.stderr)
    for line in result.summary:
        print(line, file=sys.stderr)


def run_collect(args: argparse.Namespace) -> int:
    from console.pipeline.collect import SnapshotWriter, Written, collect

    writer = SnapshotWriter(args.out)
    stopping = threading.Event()

    def on_term(*_: object) -> None:
        stopping.set()

    def pause(seconds: float) -> None:
        stopping.wait(seconds)

    previous = signal.signal(signal.SIGTERM, on_term)
    kept = [0, 0, 0.0]  # snapshots, bytes, seconds spent writing
    missed = [0]

    def show(item: Written | ClusterState) -> None:
        if isinstance(item, Written):
            kept[0] += 1
            kept[1] += item.bytes
            kept[2] += item.seconds
            print(
                f"{timestamp(item.taken_at)} {item.cluster}: {item.rows} replica rows, {human_bytes(item.bytes)} "
                f"({item.seconds * 1000:.0f} ms)",
                file=sys.stderr,
                flush=True,
            )
        else:
            missed[0] += 1
            why = "; ".join(f.message for f in item.findings) or "no answer"
            print(
                f"{timestamp(item.taken_at)}: the cluster did not answer, nothing kept ({why})",
                file=sys.stderr,
                flush=True,
            )

    try:
        with connect(args) as reader:
            collect(reader, writer, args.every, args.for_s, show, stop=stopping.is_set, sleep=pause)
    except KeyboardInterrupt:
        pass
    finally:
        signal.signal(signal.SIGTERM, previous)
    if kept[0]:
        print(
            f"Kept {kept[0]} snapshot(s), {human_bytes(kept[1])} in {args.out}; "
            f"{kept[2] / kept[0] * 1000:.0f} ms per snapshot beyond reading the cluster.",
            file=sys.stderr,
        )
    elif missed[0]:
        print(
            "Error: the cluster never answered; nothing was kept.\nCheck --bootstrap-server (and "
            "--command-config) with: python -m console state --bootstrap-server HOST:PORT",
            file=sys.stderr,
        )
        return Exit.FAILED
    return Exit.OK
