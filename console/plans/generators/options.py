"""What a plan generator is asked: the goal, the metric, the brokers, topics and limits
(:class:`GenerateOptions`), checked before anything is planned (:func:`check_options`)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from enum import Enum

from console.core.errors import ConfigError
from console.core.format import ids_text
from console.core.model import ClusterState


class Goal(str, Enum):
    DECOMMISSION = "decommission"
    ADD_BROKERS = "add-brokers"
    REBALANCE = "rebalance"
    REPLICATION_FACTOR = "replication-factor"
    FIX_RACKS = "fix-racks"
    OFFICIAL = "official"
    DRAIN_LOG_DIR = "drain-log-dir"


class Metric(str, Enum):
    """What a rebalance evens out."""

    COUNT = "count"
    """Replicas per broker (±1)."""
    BYTES = "bytes"
    """Bytes per broker (within the tolerance of the mean)."""
    LEADERS = "leaders"
    """Preferred leaders per broker (±1), by reordering replicas: no data moves."""


@dataclass(frozen=True)
class GenerateOptions:
    goal: Goal
    brokers: tuple[int, ...] = ()
    """decommission: the brokers to drain; add brokers: the new ones; official: the broker list;
    drain a log dir: the broker of the dir (one)."""
    metric: Metric = Metric.COUNT
    replication_factor: int | None = None
    topics: tuple[str, ...] = ()
    """Only these topics (all when empty; required for the replication factor and official goals)."""
    exclude_topics: str | None = None
    """A regular expression; topics it matches in full are left alone."""
    exclude_brokers: tuple[int, ...] = ()
    """Never a destination (and, for balance goals, left alone)."""
    max_moves: int | None = None
    max_bytes: int | None = None
    seed: int = 0
    tolerance: float = 0.05
    """Bytes balance: how far from the mean a broker may end (0.05 = 5 %)."""
    racks: tuple[str, ...] = ()
    """decommission: also drain every broker on these racks (the same request fits every cluster of a fleet)."""
    log_dir: str | None = None
    """drain a log dir: the dir (an absolute path, one of the broker's ``log.dirs``)."""
    zone_weight: float | None = None
    """Least cross-zone bytes (decommission, add brokers, rebalance by count or bytes); None: not
    asked (the plans as without it). 0: a tie-breaker: of the choices the goal rates alike, the one
    whose copy stays in its leader's zone. Above 0: a weight: a byte copied across zones counts as
    that many bytes of load on its destination, so balance is traded for it (see
    :mod:`~console.plans.generators.zones`)."""
    zones: tuple[tuple[str, str], ...] = ()
    """Rack → zone where racks are not zones (``[pricing.zones]``); a rack not named is its zone."""

    def describe(self) -> str:
        return self.goal_text() + self._zone_text()

    def _zone_text(self) -> str:
        if self.zone_weight is None:
            return ""
        return " (least cross-zone bytes" + (f", weight {self.zone_weight:g})" if self.zone_weight else ")")

    def goal_text(self) -> str:
        g = self.goal
        if g is Goal.DECOMMISSION:
            on = f"rack {', '.join(self.racks)}" if self.racks else ""
            if on and self.brokers:
                return f"decommission {on} ({ids_text(self.brokers)})"
            return f"decommission {on or ids_text(self.brokers)}"
        if g is Goal.ADD_BROKERS:
            return f"add brokers {ids_text(self.brokers)}"
        if g is Goal.REBALANCE:
            return f"rebalance {self.metric.value}"
        if g is Goal.REPLICATION_FACTOR:
            return f"replication factor {self.replication_factor} for {', '.join(self.topics)}"
        if g is Goal.FIX_RACKS:
            return "fix racks"
        if g is Goal.DRAIN_LOG_DIR:
            return f"drain log dir {self.log_dir} of broker {ids_text(self.brokers)}"
        return f"official --generate on brokers {ids_text(self.brokers)}"


def topics_matching(topics: Iterable[str], pattern: str) -> tuple[str, ...]:
    """The topics a regular expression matches in full (how the pages pick topics by pattern)."""
    try:
        compiled = re.compile(pattern)
    except re.error as e:
        raise ConfigError(
            f"{pattern!r} is not a regular expression: {e}.", "Fix the pattern, e.g. 'orders-.*'."
        ) from None
    return tuple(t for t in topics if compiled.fullmatch(t))


def chosen_topics(options: GenerateOptions, topics: Iterable[str]) -> set[str]:
    """Of ``topics``, those the goal works on: the topics named (all when none are), less those
    ``exclude_topics`` matches in full."""
    named = set(options.topics)
    excluded = re.compile(options.exclude_topics) if options.exclude_topics else None
    return {t for t in topics if (not named or t in named) and not (excluded and excluded.fullmatch(t))}


def check_options(options: GenerateOptions) -> None:
    """What can be said of ``options`` without a cluster: a :class:`ConfigError` naming the first
    problem (a fleet job checks once before it starts; :func:`generate` checks again)."""
    if options.exclude_topics:
        try:
            re.compile(options.exclude_topics)
        except re.error as e:
            raise ConfigError(
                f"--exclude-topics is not a regular expression: {e}.", "Fix the pattern, e.g. '__.*|test-.*'."
            ) from None
    for name, value in (("--max-moves", options.max_moves), ("--max-bytes", options.max_bytes)):
        if value is not None and value < 0:
            raise ConfigError(f"{name} must be 0 or more, not {value}.")
    if not 0 <= options.tolerance < 1:
        raise ConfigError(f"The tolerance is a fraction of the mean from 0 to 1 (0.05 = 5 %), not {options.tolerance}.")
    goal, n = options.goal, options.replication_factor
    _check_zone_weight(options)
    if options.racks and goal is not Goal.DECOMMISSION:
        raise ConfigError("Racks are drained by the decommission goal only.")
    if goal is Goal.DECOMMISSION and not options.brokers and not options.racks:
        raise ConfigError("Name the brokers to drain.")
    if goal is Goal.ADD_BROKERS and not options.brokers:
        raise ConfigError("Name the brokers to fill.")
    if options.log_dir is not None and goal is not Goal.DRAIN_LOG_DIR:
        raise ConfigError("A log dir is drained by the drain-log-dir goal only.")
    if goal is Goal.DRAIN_LOG_DIR:
        if len(options.brokers) != 1:
            raise ConfigError(
                f"Name one broker whose log dir is drained, not {len(options.brokers)}.",
                "Drain one dir at a time, e.g. --drain-log-dir 1:/var/lib/kafka/d1.",
            )
        if not options.log_dir or not options.log_dir.startswith("/"):
            raise ConfigError(
                f"The log dir to drain is an absolute path, not {options.log_dir!r}.",
                "Give one of the broker's log.dirs, e.g. --drain-log-dir 1:/var/lib/kafka/d1.",
            )
    if goal is Goal.REPLICATION_FACTOR:
        if n is None or n < 1:
            raise ConfigError(f"The replication factor must be 1 or more, not {n}.")
        if not options.topics:
            raise ConfigError("Name the topics whose replication factor changes.")
    if goal is Goal.OFFICIAL:
        if not options.brokers:
            raise ConfigError("--official needs --broker-list.")
        if not options.topics:
            raise ConfigError("--official needs the topics to move (--topics or --topics-to-move-json-file).")


ZONE_GOALS = (Goal.DECOMMISSION, Goal.ADD_BROKERS, Goal.REBALANCE)
"""The goals the least cross-zone preference applies to (those that choose where replicas go by load)."""


def _check_zone_weight(options: GenerateOptions) -> None:
    w = options.zone_weight
    if w is None:
        return
    if not (0 <= w <= 1_000):  # also refuses NaN
        raise ConfigError(
            f"The least cross-zone weight is a number from 0 to 1000, not {w}.",
            "0 makes it a tie-breaker only; 1 counts a byte copied across zones as a byte of load.",
        )
    if options.goal not in ZONE_GOALS or (options.goal is Goal.REBALANCE and options.metric is Metric.LEADERS):
        raise ConfigError(
            "Least cross-zone bytes applies to decommission, add brokers and rebalance by count or bytes "
            f"(not {options.goal_text()}): the other goals choose no destination by load.",
            "Leave the preference out for this goal.",
        )


def on_racks(state: ClusterState, options: GenerateOptions) -> GenerateOptions:
    """``options`` with the brokers of its racks added to the brokers to drain (a
    :class:`ConfigError` when no broker of this cluster is on one of them)."""
    if not options.racks:
        return options
    by_rack: dict[str, list[int]] = {}
    for b in state.brokers:
        if b.rack is not None:
            by_rack.setdefault(b.rack, []).append(int(b.id))
    missing = [r for r in options.racks if r not in by_rack]
    if missing:
        raise ConfigError(
            f"No broker on rack {', '.join(missing)} in this cluster (its racks: "
            f"{', '.join(sorted(by_rack)) or 'none'}).",
            "Check the rack names (python -m console state).",
        )
    drained = set(options.brokers) | {b for r in options.racks for b in by_rack[r]}
    return replace(options, brokers=tuple(sorted(drained)))
