"""View models for the Live and Overview screens (pure; the pages only render these).

Everything here is sized for big clusters: filters run in one pass, tables come a page at a
time, and the broker × partition picture is built only for the rows on screen. What one refresh
of the Live page shows is two records, :class:`LiveSummary` (per snapshot) and :class:`LivePage`
(per snapshot, filters and page), which the app computes once and shares between the sessions
showing the same snapshot.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from enum import Enum
from itertools import repeat
from operator import attrgetter, is_
from typing import Any

from console.core.calibration import Calibration, Estimate, bytes_to_receive, calibrated, follower_throttles
from console.core.cluster_info import active_controller, cordons_supported
from console.core.format import human_bytes, human_duration, human_rate, page, percent_text, plural
from console.core.format import ids_text as _ids
from console.core.health import kafka_health
from console.core.limits import BROKER_THROTTLE_KEYS, FOLLOWER_LIST, FOLLOWER_RATE, LEADER_LIST, LEADER_RATE
from console.core.model import (
    DEFAULT_BROKER,
    Broker,
    BrokerId,
    ClusterState,
    Partition,
    PartitionHealth,
    ReplicaRole,
    broker_rate,
    partition_name,
    replica_listed,
)
from console.core.sources import SourceStatus
from console.moves.eta import InFlightEta, in_flight_eta
from console.plans.logdirs import DirMoveProgress, dir_moves_in_flight
from console.present.cluster import cordon_text


@dataclass(frozen=True)
class LiveFilter:
    topics: tuple[str, ...] = ()
    brokers: tuple[int, ...] = ()
    health: tuple[PartitionHealth, ...] = ()
    in_flight_only: bool = True

    def matches(self, p: Partition) -> bool:
        if self.in_flight_only and not p.reassigning:
            return False
        if self.topics and p.topic not in self.topics:
            return False
        if self.brokers and not any(b in self.brokers for b in p.replicas):
            return False
        return not (self.health and p.health not in self.health)


def in_flight_line(state: ClusterState, named: int = 10, topics: int = 3) -> str:
    """The on-call line of what is in flight now: "unknown" when the read that says it did not
    answer, never "nothing" unseen. Up to ``named`` partitions are named; more are summarised by
    topic (the ``topics`` with most, the rest counted) and by the brokers they are added on, never
    hundreds of names in a sentence."""
    if not state.status.in_flight_known:
        read = state.status
        zk = f", ZooKeeper: {read.zookeeper.value}" if read.zookeeper is not SourceStatus.NOT_CONFIGURED else ""
        return (
            f"**In flight now**: unknown (ListPartitionReassignments: {read.reassignments.value}{zk}). "
            "The Cancel dialog reads the cluster again when it opens."
        )
    moving = state.in_flight
    if len(moving) <= named:
        return f"**In flight now** ({len(moving)}): " + (", ".join(sorted(p.name for p in moving)) or "nothing")
    return f"**In flight now** ({len(moving)}): " + moving_summary(moving, topics)


def moving_summary(moving: Sequence[Partition], topics: int = 3) -> str:
    """``40 topics (orders 120, payments 80, clicks 60 and 37 more); adding on brokers 2 (1,400), 0 (600)``."""
    per_topic = Counter(p.topic for p in moving)
    said = ", ".join(f"{t} {n:,}" for t, n in per_topic.most_common(topics))
    if len(per_topic) > topics:
        said += f" and {len(per_topic) - topics:,} more"
    onto = Counter(b for p in moving for b in p.adding)
    brokers = ", ".join(f"{b} ({n:,})" for b, n in onto.most_common(6))
    if len(onto) > 6:
        brokers += f" and {len(onto) - 6} more"
    return f"{plural(len(per_topic), 'topic')} ({said})" + (f"; adding on brokers {brokers}" if onto else "")


def select(state: ClusterState, f: LiveFilter) -> list[Partition]:
    source: Iterable[Partition] = state.in_flight if f.in_flight_only else state.partitions
    return [p for p in source if f.matches(p)]


@dataclass(frozen=True)
class LiveCounts:
    partitions: int
    reassigning: int
    under_replicated: int
    offline: int
    under_min_isr: int
    """ISR below ``min.insync.replicas`` but a replica electable (KIP-966): writes refused, nothing lost."""
    adding_replicas: int
    adding_copied: int
    stalled: int
    bytes_to_copy: int | None
    dir_moves: int = 0
    """Replicas being copied between the log dirs of their broker (future replicas)."""
    dir_bytes_to_copy: int | None = 0
    """What those copies still have to copy (their source's size less the future replica's); None when unknown."""


def counts(state: ClusterState) -> LiveCounts:
    """The Live page's counts; computed once per snapshot and kept with it (the totals use them too)."""
    return state.memo("live.counts", _counts)


def _counts(state: ClusterState) -> LiveCounts:
    adding = copied = stalled = 0
    to_copy = 0
    known = state.logs_known
    for p in state.in_flight:
        for r in p.progress(known):
            adding += 1
            if r.in_isr:
                copied += 1
            b = state.broker(r.broker)
            if b is not None and not b.eligible and not r.in_isr:
                stalled += 1
            if r.leader_bytes is not None and not r.in_isr:
                to_copy += max(0, r.leader_bytes - (r.copied_bytes or 0))
    offline = sum(map(is_, map(attrgetter("leader"), state.partitions), repeat(None)))  # Partition.offline
    dirs = dir_moves_in_flight(state)
    dir_left = [m.left for m in dirs]
    return LiveCounts(
        partitions=len(state.partitions),
        reassigning=len(state.in_flight),
        under_replicated=len(state.under_replicated),
        offline=offline,
        under_min_isr=len(kafka_health(state).under_min_isr),
        adding_replicas=adding,
        adding_copied=copied,
        stalled=stalled,
        bytes_to_copy=to_copy if known else None,
        dir_moves=len(dirs),
        dir_bytes_to_copy=None if None in dir_left else sum(x or 0 for x in dir_left),
    )


def partition_rows(
    state: ClusterState,
    parts: Sequence[Partition],
    runs: Mapping[tuple[str, int], int] | None = None,
    rates: Mapping[ReplicaKey, float] | None = None,
    finish: Mapping[ReplicaKey, float] | None = None,
) -> list[dict[str, Any]]:
    """One table row per partition: R / I / AR / RR, leader, source, progress, bytes left, the
    throttle in force on its leader and adding replicas, (with ``runs``) which of the console's
    runs started it ("elsewhere" for a reassignment in flight the console did not start), and
    (with ``rates``, the copy rates a :class:`console.moves.progress.CopyTracker` observed) the
    copy rate and ETA (with ``finish``, each adding replica's as the headline ETA counts it).

    Every cell is text or a number, never None, except ``progress`` (a number for the progress
    bar; empty when nothing is copied or sizes are unknown). ``progress`` is the least advanced
    adding replica's :attr:`~console.core.model.ReplicaProgress.percent`, the very figure
    ``adding detail`` prints for it."""
    out = []
    known = state.logs_known
    brokers, topics = state.throttles.broker_map(), state.throttles.topic_map()
    for p in parts:
        prog = p.progress(known)
        percents = [r.percent for r in prog if r.percent is not None]
        est = estimate(p, known, rates or {}, finish)
        leader_throttle, follower_throttle = throttles_in_force(p, brokers, topics)
        out.append(
            {
                "partition": p.name,
                "topic": p.topic,
                "R": _ids(p.replicas),
                "I": _ids(p.isr),
                "AR": _ids(p.adding),
                "RR": _ids(p.removing),
                "ELR": _ids(p.elr),
                "last known ELR": _ids(p.last_known_elr),
                "leader": str(p.leader) if p.leader is not None else "none",
                "source": p.source.value if p.source else "",
                "progress": min(percents) if percents else None,
                "adding detail": "; ".join(
                    f"{r.broker}: {percent_text(r.percent)}"
                    + (
                        f" ({human_bytes(r.copied_bytes)}/{human_bytes(r.leader_bytes)})"
                        if r.leader_bytes is not None and not r.in_isr
                        else ""
                    )
                    for r in prog
                ),
                "left to copy": est.left_text,
                **({"copy rate": est.rate_text, "ETA": est.eta_text} if rates is not None else {}),
                "throttle": throttle_short(leader_throttle, follower_throttle),
                "leader throttle": leader_throttle,
                "follower throttle": follower_throttle,
                "state": p.health.value,
                **(
                    {"started by": (f"run {runs[p.key]}" if p.key in runs else ("elsewhere" if p.reassigning else ""))}
                    if runs is not None
                    else {}
                ),
            }
        )
    return out


# -- copy rate, bytes left, ETA ----------------------------------------------------------------
ReplicaKey = tuple[str, int, BrokerId]
"""An adding replica: topic, partition, broker (as :class:`console.moves.progress.CopyTracker` keys its rates)."""

MEASURING = "measuring…"
NO_VALUE = "—"


class CopyPhase(str, Enum):
    """Where an estimate stands."""

    NOTHING = "nothing to copy"
    """No adding replica (only removing, or not reassigning)."""
    UNKNOWN = "unknown"
    """Log sizes were not read."""
    MEASURING = "measuring"
    """A replica still copying has been seen in one refresh only: no rate yet."""
    COPYING = "copying"
    STALLED = "stalled"
    """Observed, and not growing: no ETA."""
    COPIED = "copied"
    """Every adding replica is in the ISR: the controller completes it at once."""


@dataclass(frozen=True)
class CopyEstimate:
    """Copy rate, bytes left and ETA of one partition, or of everything in flight."""

    phase: CopyPhase
    left: int | None = None
    """Bytes the adding replicas still have to copy."""
    rate: float | None = None
    """Bytes per second, summed over the adding replicas copying (observed over the last refreshes)."""
    eta_s: float | None = None

    @property
    def left_text(self) -> str:
        if self.phase is CopyPhase.NOTHING:
            return NO_VALUE
        return "unknown" if self.left is None else human_bytes(self.left)

    @property
    def rate_text(self) -> str:
        return {
            CopyPhase.NOTHING: NO_VALUE,
            CopyPhase.COPIED: NO_VALUE,
            CopyPhase.UNKNOWN: "unknown",
            CopyPhase.MEASURING: MEASURING,
        }.get(self.phase) or human_rate(self.rate or 0)

    @property
    def eta_text(self) -> str:
        return {
            CopyPhase.NOTHING: NO_VALUE,
            CopyPhase.COPIED: "copied",
            CopyPhase.UNKNOWN: "unknown",
            CopyPhase.MEASURING: MEASURING,
            CopyPhase.STALLED: "no progress",
        }.get(self.phase) or human_duration(self.eta_s or 0.0)


def estimate(
    p: Partition,
    logs_known: bool,
    rates: Mapping[ReplicaKey, float],
    finish: Mapping[ReplicaKey, float] | None = None,
) -> CopyEstimate:
    """One partition: bytes left over its adding replicas, their summed copy rate, and the ETA of
    the slowest (the partition completes when its last adding replica is in sync): when each
    adding replica's copy will be done as the headline ETA counts it (``finish``:
    :attr:`console.moves.eta.InFlightEta.finish`, the rate its brokers share going to those still
    copying as others are done), else its bytes left over its rate now."""
    prog = p.progress(logs_known)
    if not prog:
        return CopyEstimate(CopyPhase.NOTHING)
    copying = [r for r in prog if not r.in_isr]
    if not copying:
        return CopyEstimate(CopyPhase.COPIED, left=0, eta_s=0.0)
    lefts = [r.bytes_left for r in copying]
    if any(x is None for x in lefts):
        return CopyEstimate(CopyPhase.UNKNOWN)
    left = sum(x or 0 for x in lefts)
    observed = [rates.get((p.topic, p.partition, r.broker)) for r in copying]
    if any(x is None for x in observed):
        return CopyEstimate(CopyPhase.MEASURING, left=left)
    rate = sum(x or 0.0 for x in observed)
    keys = [(p.topic, p.partition, r.broker) for r in copying]
    if finish is not None and all(k in finish for k in keys):
        return CopyEstimate(CopyPhase.COPYING, left=left, rate=rate, eta_s=max(finish[k] for k in keys))
    eta = 0.0
    for todo, speed in zip(lefts, observed, strict=False):
        if todo and not speed:
            return CopyEstimate(CopyPhase.STALLED, left=left, rate=rate)
        if todo and speed:
            eta = max(eta, todo / speed)
    return CopyEstimate(CopyPhase.COPYING, left=left, rate=rate, eta_s=eta)


def total_estimate(
    state: ClusterState, rates: Mapping[ReplicaKey, float], dir_rates: Mapping[ReplicaKey, float] | None = None
) -> CopyEstimate:
    """Everything in flight: the bytes left (as :func:`counts` gives them) over the copy rate
    observed for every adding replica still copying, summed. Replicas seen once are left out of
    the rate until measured; while none is, the answer is "measuring". With ``dir_rates`` (the
    copy rates of the replicas being copied between log dirs), those copies count too: their
    bytes left and their rates."""
    dirs = dir_moves_in_flight(state) if dir_rates is not None else []
    if not state.in_flight and not dirs:
        return CopyEstimate(CopyPhase.NOTHING)
    n = counts(state)
    left = n.bytes_to_copy
    if dirs and left is not None:
        left = None if n.dir_bytes_to_copy is None else left + n.dir_bytes_to_copy
    if left is None:
        return CopyEstimate(CopyPhase.UNKNOWN)
    copying = measured = 0
    rate = 0.0
    for m in dirs:
        if m.left:
            copying += 1
            got = (dir_rates or {}).get(m.key)
            if got is not None:
                measured += 1
                rate += got
    for p in state.in_flight:
        for r in p.progress(True):
            if r.in_isr:
                continue
            copying += 1
            got = rates.get((p.topic, p.partition, r.broker))
            if got is not None:
                measured += 1
                rate += got
    if not copying:
        return CopyEstimate(
            CopyPhase.COPIED if dirs or any(p.adding for p in state.in_flight) else CopyPhase.NOTHING, left=0
        )
    if not measured:
        return CopyEstimate(CopyPhase.MEASURING, left=left)
    if rate <= 0:
        return CopyEstimate(CopyPhase.STALLED if left else CopyPhase.COPYING, left=left, rate=0.0, eta_s=0.0)
    return CopyEstimate(CopyPhase.COPYING, left=left, rate=rate, eta_s=left / rate)


# -- one refresh of the Live page -----------------------------------------------------------------
@dataclass(frozen=True)
class LiveSummary:
    """The figures at the top of the Live page for one snapshot: the same whatever the filters."""

    counts: LiveCounts
    total: CopyEstimate
    """Everything in flight: bytes left, copy rate, ETA."""
    rates: Mapping[ReplicaKey, float]
    """The copy rates observed up to this snapshot (as :func:`partition_rows` takes them)."""
    learned: Estimate | None
    """What is left to copy at the rates past moves showed; None without history or nothing in flight."""
    dir_rates: Mapping[ReplicaKey, float] = field(default_factory=dict)
    """The copy rates observed of the replicas being copied between log dirs (as :func:`dir_move_rows` takes them)."""
    eta: InFlightEta = field(default_factory=lambda: InFlightEta(None))
    """The headline ETA: until the last copy in flight is done (its bottleneck broker under its throttle)."""

    @property
    def eta_text(self) -> str:
        """The one ETA the page shows: the last copy's, ``copied`` when nothing is left, or why there is none."""
        if self.total.phase in (CopyPhase.NOTHING, CopyPhase.COPIED):
            return self.total.eta_text
        if self.eta.seconds is not None:
            return human_duration(self.eta.seconds)
        return (
            "no progress" if self.eta.stalled else ("unknown" if self.total.phase is CopyPhase.UNKNOWN else MEASURING)
        )

    @property
    def slowest_text(self) -> str:
        """The broker the last copy waits on (``broker 3``), or why there is none."""
        b = self.eta.bottleneck
        if b is not None:
            return f"broker {b.broker}"
        if self.total.phase in (CopyPhase.NOTHING, CopyPhase.COPIED):
            return "none"
        return "no progress" if self.eta.stalled else MEASURING

    def ends_text(self, taken_at: float) -> str | None:
        """When the last copy is done on the clock (``ends ≈ 14:32``, with the day when not the
        snapshot's), the snapshot taken at ``taken_at``; None without an ETA."""
        if self.total.phase in (CopyPhase.NOTHING, CopyPhase.COPIED) or self.eta.seconds is None:
            return None
        start, end = datetime.fromtimestamp(taken_at), datetime.fromtimestamp(taken_at + self.eta.seconds)
        return f"ends ≈ {end:%H:%M}" if end.date() == start.date() else f"ends ≈ {end:%b %d %H:%M}"


def summary(
    state: ClusterState,
    rates: Mapping[ReplicaKey, float],
    calibration: Calibration | None,
    dir_rates: Mapping[ReplicaKey, float] | None = None,
) -> LiveSummary:
    """``dir_rates``: the copy rates of the replicas being copied between log dirs; with them, the
    total counts those copies too."""
    learned = (
        calibrated(bytes_to_receive(state), follower_throttles(state), calibration)
        if state.in_flight and calibration is not None
        else None
    )
    return LiveSummary(
        counts(state),
        total_estimate(state, rates, dir_rates),
        rates,
        learned,
        dict(dir_rates or {}),
        in_flight_eta(state, rates, dir_rates if dir_rates is not None else {}, calibration),
    )


@dataclass(frozen=True)
class LivePage:
    """One page of the Live table and the broker × partition picture of the same partitions."""

    matching: int
    """Partitions the filters select (on every page)."""
    number: int
    """The page shown (1-based; clamped to the pages there are)."""
    pages: int
    rows: tuple[dict[str, Any], ...]
    """:func:`partition_rows` of the page."""
    chart: dict[str, Any]
    """The broker × partition picture of the page as a Vega-Lite spec (data inline), built and
    validated once: drawing it again costs no chart building. Empty when no partition matches."""


def live_page(
    state: ClusterState,
    f: LiveFilter,
    number: int,
    size: int,
    runs: Mapping[tuple[str, int], int] | None = None,
    rates: Mapping[ReplicaKey, float] | None = None,
    finish: Mapping[ReplicaKey, float] | None = None,
) -> LivePage:
    """Page ``number`` of the partitions ``f`` selects, ``size`` rows a page: the table's rows and
    the picture's spec (only the partitions on the page are drawn)."""
    from console.present.charts import replica_grid

    parts = select(state, f)
    shown, pages = page(parts, number, size)
    spec = replica_grid(replica_cells(state, shown), [p.name for p in shown]).to_dict() if shown else {}
    if spec.get("config") == {"view": {"continuousWidth": 300, "continuousHeight": 300}}:
        del spec["config"]  # Altair's default theme: the app draws its charts with its own
    rows = tuple(partition_rows(state, shown, runs, rates, finish))
    return LivePage(len(parts), min(max(1, number), pages), pages, rows, spec)


LIVE_COLUMNS = (
    "partition",
    "progress",
    "left to copy",
    "copy rate",
    "ETA",
    "throttle",
    "state",
    "started by",
    "AR",
    "leader",
)
"""The Live table's columns an on-call engineer needs, in order: they fit 1440 px; the others are in its details."""
DIR_COLUMNS = ("partition", "broker", "progress", "left to copy", "copy rate", "ETA", "to")
"""The log dir moves table's columns that fit 1440 px, in order; the others are in its details."""


def throttle_short(leader: str, followers: str) -> str:
    """One throttle cell from :func:`throttles_in_force`'s two: the rate when leader and adding
    replicas have the same (``40.0 KB/s``), ``none``, or ``mixed`` (the details list each)."""
    values = {x.split(": ", 1)[1] for x in [leader, *followers.split("; ")] if ": " in x}
    values = {v.replace(" (cluster default)", "") for v in values}
    if not values:
        return NO_VALUE
    return values.pop() if len(values) == 1 else "mixed"


# -- throttles in force --------------------------------------------------------------------------
def throttle_value_text(key: str, value: str) -> str:
    """A throttle config's value as a person reads it: rates human (``9.5 MB/s``), lists as set."""
    if key in BROKER_THROTTLE_KEYS and value.strip().isdigit():
        return human_rate(int(value))
    return value


def throttle_on(
    brokers: Mapping[str, Mapping[str, str]],
    topics: Mapping[str, Mapping[str, str]],
    p: Partition,
    broker: BrokerId,
    follower: bool,
) -> str:
    """The replication throttle in force for ``p``'s replica on ``broker``, as the leader (``follower``
    False) or as a follower copying: the broker's ``leader.``/``follower.replication.throttled.rate``
    (its own, else the cluster default, marked so), when the topic's ``leader.``/``follower.replication.throttled.replicas``
    names ``partition:broker`` or ``*``; ``none`` otherwise (not listed, or no rate set)."""
    list_key, rate_key = (FOLLOWER_LIST, FOLLOWER_RATE) if follower else (LEADER_LIST, LEADER_RATE)
    if not replica_listed(topics.get(p.topic, {}), list_key, p.partition, broker):
        return "none"
    value = broker_rate(brokers, broker, rate_key)
    if not value:
        return "none"
    own = brokers.get(str(broker), {}).get(rate_key)
    return throttle_value_text(rate_key, value) + ("" if own else " (cluster default)")


def throttles_in_force(
    p: Partition, brokers: Mapping[str, Mapping[str, str]], topics: Mapping[str, Mapping[str, str]]
) -> tuple[str, str]:
    """(on the leader, on each adding replica): ``1: 9.5 MB/s`` and ``4: 9.5 MB/s; 5: none``
    (``—`` without a leader, or without adding replicas)."""
    leader = f"{p.leader}: {throttle_on(brokers, topics, p, p.leader, False)}" if p.leader is not None else NO_VALUE
    followers = "; ".join(f"{b}: {throttle_on(brokers, topics, p, b, True)}" for b in p.adding) or NO_VALUE
    return leader, followers


def replica_cells(state: ClusterState, parts: Sequence[Partition]) -> list[dict[str, Any]]:
    """The broker × partition picture: one cell per replica with its role. The leader reads ``L``
    (``L−`` while the reassignment removes it: role "leader (removing)"); an adding replica its
    percent copied, the figure the table shows."""
    out = []
    known = state.logs_known
    for p in parts:
        prog = {r.broker: r for r in p.progress(known)}
        for b in p.replicas:
            role = p.role(b)
            if role is None:
                continue
            label = ""
            if b == p.leader:
                label = "L−" if role is ReplicaRole.LEADER_REMOVING else "L"
            elif role is ReplicaRole.ADDING and b in prog and prog[b].percent is not None:
                label = percent_text(prog[b].percent)
            out.append(
                {
                    "partition": p.name,
                    "broker": str(b),
                    "role": role.value,
                    "label": label,
                    "in sync": "yes" if b in p.isr else "no",
                }
            )
    return out


def dir_move_rows(
    state: ClusterState,
    rates: Mapping[ReplicaKey, float] | None = None,
    finish: Mapping[ReplicaKey, float] | None = None,
) -> list[dict[str, Any]]:
    """Replicas being copied between the log dirs of their broker (DescribeLogDirs' future
    replicas, KIP-113): from and to which dir, bytes copied of the replica's size, percent, bytes
    left; with ``rates`` (:meth:`console.moves.progress.CopyTracker.dir_rates`), the copy rate
    observed and the ETA (as the headline counts it with ``finish``:
    :attr:`console.moves.eta.InFlightEta.dir_finish`; else bytes left over the rate now)."""
    return [
        {
            "partition": partition_name(m.topic, m.partition),
            "broker": int(m.broker),
            "from": m.from_dir or "unknown",
            "to": m.to_dir,
            "copied": f"{human_bytes(m.copied_bytes)} of {human_bytes(m.size) if m.size is not None else 'unknown'}",
            "progress": m.percent,
            "left to copy": "unknown" if m.left is None else human_bytes(m.left),
            **({"copy rate": est.rate_text, "ETA": est.eta_text} if (est := dir_estimate(m, rates, finish)) else {}),
        }
        for m in dir_moves_in_flight(state)
    ]


def dir_estimate(
    m: DirMoveProgress, rates: Mapping[ReplicaKey, float] | None, finish: Mapping[ReplicaKey, float] | None = None
) -> CopyEstimate | None:
    """The copy rate and ETA of one replica being copied between log dirs: what its future replica
    still lacks of its source's size, over the growth observed, or when the headline counts it
    done (``finish``); None without ``rates``."""
    if rates is None:
        return None
    if m.left is None:
        return CopyEstimate(CopyPhase.UNKNOWN)
    if not m.left:
        return CopyEstimate(CopyPhase.COPIED, left=0, eta_s=0.0)
    rate = rates.get(m.key)
    if rate is None:
        return CopyEstimate(CopyPhase.MEASURING, left=m.left)
    if not rate:
        return CopyEstimate(CopyPhase.STALLED, left=m.left, rate=0.0)
    done_in = (finish or {}).get(m.key)
    return CopyEstimate(CopyPhase.COPYING, left=m.left, rate=rate, eta_s=m.left / rate if done_in is None else done_in)


def fenced_text(b: Broker) -> str:
    """``fenced``, ``no``, ``not registered``, or ``unknown`` (clusters before Kafka 4.0 do not say)."""
    if not b.registered:
        return "not registered"
    return "unknown" if b.fenced is None else ("fenced" if b.fenced else "no")


BROKER_HELP = {
    "eligible": "may join the ISR and lead (KIP-841: registered, not fenced). A cordoned broker stays eligible: "
    "it keeps its replicas and can lead; the cordon only keeps new replicas off it.",
    "cordoned": "cordoned.log.dirs (KIP-1066, Kafka 4.3 and later): Kafka places no new partition there; Kafka "
    "4.3 accepts a reassignment onto it, 4.4 refuses one onto a broker whose every dir is cordoned, and the "
    "console flags both.",
}
"""What :func:`broker_rows`' columns whose meaning is Kafka's say (Overview's caption under the table)."""


def broker_rows(state: ClusterState) -> list[dict[str, Any]]:
    """Per broker: rack, liveness, eligibility, cordon (KIP-1066), partition/leader/replica counts and
    bytes; the controller ticked is the active one (:func:`active_controller`: the quorum leader in
    KRaft, none when not known)."""
    totals = state.broker_totals
    supported = cordons_supported(state.info)
    controller = active_controller(state.info, state.controller)
    rows = []
    for b in state.brokers:
        rows.append(
            {
                "broker": b.id,
                "host": f"{b.host}:{b.port}" if b.host else "",
                "rack": b.rack or "",
                "live": b.live,
                "fenced": fenced_text(b),
                "eligible": b.eligible,
                "cordoned": cordon_text(b, supported),
                "controller": b.id == controller,
                "replicas": totals[b.id][0],
                "leaders": totals[b.id][1],
                # a broker whose DescribeLogDirs did not answer (no dir read) has unknown bytes, not 0 B
                "bytes": totals[b.id][2] if state.logs_known and b.log_dirs else None,
                "on disk": human_bytes(totals[b.id][2]) if state.logs_known and b.log_dirs else "unknown",
                "usable": human_bytes(b.usable_bytes) if b.usable_bytes is not None else "unknown",
                "log dirs": len(b.log_dirs),
                "seen in": ", ".join(s for s, on in (("Admin API", b.in_api), ("ZooKeeper", b.in_zookeeper)) if on),
            }
        )
    return rows


def throttle_rows(state: ClusterState) -> list[dict[str, str]]:
    """The throttle configs set now; rates human (``9.5 MB/s``), replica lists as set."""
    rows = []
    for name, cfg in state.throttles.brokers:
        for k, v in cfg:
            rows.append(
                {
                    "entity": f"broker {name}" if name != DEFAULT_BROKER else "cluster default (every broker)",
                    "config": k,
                    "value": throttle_value_text(k, v),
                }
            )
    for name, cfg in state.throttles.topics:
        for k, v in cfg:
            rows.append({"entity": f"topic {name}", "config": k, "value": throttle_value_text(k, v)})
    return rows
