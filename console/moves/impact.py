"""What a plan costs and whom it touches (pure, no I/O): bytes copied across zones once and what
they cost, the steady replication traffic across zones before and after, leaders that move, each
broker's and log dir's disk at its peak, the copy per broker at the throttle, the topics touched.

Racks are zones unless the price table maps them (``[pricing.zones]``). A replica copied into
another zone pays once per byte; a follower in another zone than its leader keeps paying for the
produce traffic it replicates, every day. Without prices the figures are bytes only.

The model is assembled from small totals (:class:`ImpactParts`: per broker, per leader → destination
flow, per topic, per log dir) by :func:`assemble` on its :class:`ImpactTerms`, whoever computed them: the in-process review
from the diff's columns (:func:`console.moves.impact_columns.impact`), the Spark review from its
tables and the per-entry counts of :func:`console.moves.impact_columns.topic_counts` run over its
Arrow batches. Its findings are the rules engine's (:mod:`console.plans.rules.overall`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from console.core.format import human_bytes, human_duration, plural
from console.core.model import BrokerId, Finding
from console.plans.quality import ImpactSummary
from console.plans.rules.overall import dir_fill_findings, leader_concentration_findings, steady_growth_findings

GB = 1_000_000_000
"""Prices are per GB, decimal like every size the console prints."""
DAY_S = 86_400
MONTH_DAYS = 30
PRICING_HINT = (
    "Set prices to see money too: a [pricing] table in .streamlit/secrets.toml (the CLI: --pricing FILE) with "
    'currency = "USD" and per_gb_cross_zone = 0.02 (AWS; about 0.01 on GCP and Azure), and [pricing.zones] '
    "mapping each rack to its zone where racks are not zones."
)
LEADER_NOTE = (
    "With auto.leader.rebalance.enable on, the controller may also move leaders back to preferred replicas "
    "between waves (KAFKA-20075)."
)


@dataclass(frozen=True, slots=True)
class Pricing:
    """The price table: the currency, the price of a GB crossing zones, and the zone of each rack
    (a rack not named is its own zone). No price: the impact is said in bytes only."""

    currency: str | None = None
    per_gb_cross_zone: float | None = None
    zones: tuple[tuple[str, str], ...] = ()
    """Rack → zone, where racks are not zones."""

    @property
    def priced(self) -> bool:
        return self.per_gb_cross_zone is not None and self.currency is not None

    def zone_of(self, rack: str | None) -> str | None:
        """The zone of a broker on ``rack`` (None: the broker has no rack, its zone is unknown)."""
        if rack is None:
            return None
        return dict(self.zones).get(rack, rack)

    def cost(self, nbytes: float) -> float | None:
        return None if self.per_gb_cross_zone is None else nbytes / GB * self.per_gb_cross_zone

    def money(self, nbytes: float) -> str | None:
        """``USD 7.60`` for ``nbytes`` across zones; None without prices."""
        value = self.cost(nbytes)
        return None if value is None or self.currency is None else f"{self.currency} {value:,.2f}"


@dataclass(frozen=True, slots=True)
class ImpactLimits:
    """Where the impact's findings start (``[impact]`` in the settings)."""

    dir_fill: float = 0.85
    """A log dir whose peak (current + adding, before removing) passes this share of its size."""
    steady_growth: float = 0.10
    """Steady cross-zone traffic of the partitions moved growing by more than this share."""
    leader_factor: float = 2.0
    """A broker leading more than this many times the mean of the brokers that lead, after the plan."""


@dataclass(frozen=True, slots=True)
class ImpactTerms:
    """What an impact is worked out with: the prices (None: bytes only), the topics' produce rates
    (bytes/s; a topic missing or None: unknown), the throttle its copies are timed at (None:
    untimed) and where its findings start (None: the defaults)."""

    pricing: Pricing | None = None
    rates: Mapping[str, float | None] | None = None
    throttle: int | None = None
    limits: ImpactLimits | None = None


@dataclass(frozen=True, slots=True)
class ZonePair:
    """Bytes copied once from leaders in ``source`` to new replicas in ``destination``."""

    source: str | None
    destination: str | None
    replicas: int
    bytes: int

    @property
    def crosses(self) -> bool:
        return self.source is not None and self.destination is not None and self.source != self.destination

    @property
    def known(self) -> bool:
        return self.source is not None and self.destination is not None


@dataclass(frozen=True, slots=True)
class BrokerLeaders:
    broker: BrokerId
    before: int
    after: int
    gained: int
    """Partitions it leads after the plan and did not before."""
    lost: int


@dataclass(frozen=True, slots=True)
class DirPeak:
    """One log dir's disk: used now, at the plan's peak (current + adding, before removing) and after."""

    broker: BrokerId
    path: str
    total: int
    used: int
    peak: int
    after: int

    @property
    def peak_fill(self) -> float:
        return self.peak / self.total if self.total > 0 else 0.0


@dataclass(frozen=True, slots=True)
class BrokerCopy:
    """One broker's copy and disk: bytes in and out over the network, bytes its leaving replicas
    free, its disk before / at the peak / after (what DescribeLogDirs counts on it; ``capacity``
    the size of its dirs when known) and the time of its copy at the throttle."""

    broker: BrokerId
    rack: str | None
    zone: str | None
    bytes_in: int
    bytes_out: int
    removed: int
    disk_before: int
    disk_peak: int
    disk_after: int
    capacity: int | None = None
    used: int | None = None
    """The dirs' used bytes now (total − usable), when known: the peak adds to it."""
    seconds: float | None = None
    """max(in, out) at the throttle; None without one."""

    @property
    def peak_fill(self) -> float | None:
        if not self.capacity or self.used is None:
            return None
        return (self.used + self.disk_peak - self.disk_before) / self.capacity


@dataclass(frozen=True, slots=True)
class TopicTouch:
    topic: str
    partitions: int
    """Its partitions the plan changes."""
    bytes: int
    """Bytes copied of it."""
    rate_bps: float | None
    """Its produce rate (bytes/s) in the history; None: unknown."""


@dataclass(frozen=True, slots=True)
class TopicCounts:
    """Per topic, over the plan's entries: partitions in the topic, changed, bytes copied, and
    followers in another zone than their leader before and after (and those whose zone is unknown)."""

    topic: str
    topic_partitions: int
    changed: int
    bytes: int
    cross_before: int
    cross_after: int


@dataclass(frozen=True, slots=True)
class BrokerTotals:
    """What a review computed per broker (:class:`console.plans.diff.BrokerChange` and the bytes freed)."""

    broker: BrokerId
    rack: str | None
    leaders_before: int
    leaders_after: int
    gained: int
    lost: int
    bytes_before: int
    bytes_after: int
    bytes_in: int
    bytes_out: int
    removed: int
    added: int
    """What its disk grows by before anything is removed (an in-flight copy counted once)."""
    capacity: int | None = None
    used: int | None = None


@dataclass(frozen=True, slots=True)
class ImpactParts:
    brokers: tuple[BrokerTotals, ...]
    flows: tuple[tuple[BrokerId, BrokerId, int, int], ...]
    """(source, destination, replicas, bytes)."""
    topics: tuple[TopicCounts, ...]
    bytes_to_copy: int = 0
    dirs: tuple[DirPeak, ...] = ()
    leader_changes: int = 0


@dataclass(frozen=True, slots=True)
class Steady:
    """Replication traffic across zones of the partitions the plan changes, bytes per day."""

    before: float
    after: float
    unknown_topics: int
    """Topics with followers across zones (before or after) whose produce rate is not known."""
    known_topics: int

    @property
    def growth(self) -> float | None:
        """(after − before) / before; None when nothing crosses now."""
        return None if self.before <= 0 else (self.after - self.before) / self.before


TOPICS_SHOWN = 20


@dataclass(frozen=True)
class Impact:
    bytes_to_copy: int
    cross_zone_bytes: int
    unknown_zone_bytes: int
    """Bytes from or to a broker with no rack: whether they cross is not known."""
    zone_pairs: tuple[ZonePair, ...]
    steady: Steady
    leaders: tuple[BrokerLeaders, ...]
    leader_changes: int
    brokers: tuple[BrokerCopy, ...]
    dirs: tuple[DirPeak, ...]
    topics: tuple[TopicTouch, ...]
    """The most produced-to topics touched first (then by bytes), at most :data:`TOPICS_SHOWN`."""
    topics_touched: int
    pricing: Pricing = field(default_factory=Pricing)
    throttle: int | None = None
    findings: tuple[Finding, ...] = ()

    def __repr__(self) -> str:
        return f"<Impact: {self.headline()}>"

    def at(self, throttle: int | None) -> Impact:
        """The same impact with each broker's copy timed at ``throttle`` (None or 0: untimed)."""
        brokers = tuple(
            replace(b, seconds=max(b.bytes_in, b.bytes_out) / throttle if throttle else None) for b in self.brokers
        )
        return replace(self, brokers=brokers, throttle=throttle or None)

    def summary(self) -> ImpactSummary:
        """The figures a generated plan's report keeps (:meth:`console.plans.quality.Report.with_impact`)."""
        p = self.pricing
        return ImpactSummary(
            self.headline(),
            self.bytes_to_copy,
            self.cross_zone_bytes,
            self.unknown_zone_bytes,
            self.leader_changes,
            p.cost(self.cross_zone_bytes) if p.priced else None,
            p.currency if p.priced else None,
        )

    # -- money --------------------------------------------------------------------------------
    @property
    def once_cost(self) -> str | None:
        return self.pricing.money(self.cross_zone_bytes)

    def per_month(self, per_day: float) -> str | None:
        return self.pricing.money(per_day * MONTH_DAYS)

    @property
    def bottleneck(self) -> BrokerCopy | None:
        """The broker whose copy takes longest (most bytes in or out)."""
        busy = [b for b in self.brokers if b.bytes_in or b.bytes_out]
        return max(busy, key=lambda b: (max(b.bytes_in, b.bytes_out), -b.broker)) if busy else None

    @property
    def fullest(self) -> BrokerCopy | None:
        """The broker whose disk peaks fullest (by share when known)."""
        known = [b for b in self.brokers if b.peak_fill is not None and b.disk_peak > b.disk_before]
        return max(known, key=lambda b: (b.peak_fill or 0.0, -b.broker)) if known else None

    def headline(self) -> str:
        """``copies 412.0 GB, 380.0 GB across zones ≈ USD 7.60; 1,204 leader changes; broker 5's disk
        peaks at 91 %`` (bytes only and a note without prices)."""
        parts = [f"copies {human_bytes(self.bytes_to_copy)}"]
        across = f"{human_bytes(self.cross_zone_bytes)} across zones"
        if (money := self.once_cost) is not None:
            across += f" ≈ {money}"
        parts[0] += f", {across}"
        s = self.steady
        if s.known_topics and s.after != s.before:
            steady = f"steady cross-zone replication {human_bytes(s.before)}/day → {human_bytes(s.after)}/day"
            delta = self.per_month(s.after - s.before)
            parts.append(steady + (f" ({'+' if s.after >= s.before else ''}{delta} a month)" if delta else ""))
        parts.append(plural(self.leader_changes, "leader change"))
        if (full := self.fullest) is not None and full.peak_fill is not None:
            parts.append(f"broker {full.broker}'s disk peaks at {full.peak_fill * 100:.0f} %")
        return "; ".join(parts)

    def text(self) -> str:
        """The impact in a few lines (the CLI, the notification's detail)."""
        lines = ["Impact: " + self.headline() + "."]
        for z in self.zone_pairs:
            if z.crosses:
                money = self.pricing.money(z.bytes)
                lines.append(
                    f"  {z.source} → {z.destination}: {human_bytes(z.bytes)} ({plural(z.replicas, 'replica')})"
                    + (f" ≈ {money}" if money else "")
                )
        if self.unknown_zone_bytes:
            lines.append(f"  {human_bytes(self.unknown_zone_bytes)} to or from brokers without a rack (zone unknown)")
        lines.append("  " + self.steady_text())
        if (b := self.bottleneck) is not None:
            lines.append("  " + self.bottleneck_text(b))
        if not self.pricing.priced:
            lines.append("  " + PRICING_HINT)
        return "\n".join(lines)

    def steady_text(self) -> str:
        s = self.steady
        if not s.known_topics and not s.unknown_topics:
            return "Steady replication across zones: none of the partitions it changes has a follower in another zone."
        unknown = (
            f"{plural(s.unknown_topics, 'topic')} with followers in another zone than their leader, before or "
            "after, whose produce rate is not in the history"
        )
        if not s.known_topics:
            return f"Steady replication across zones: not known ({unknown})."
        head = (
            f"Steady replication across zones of the partitions it changes: {human_bytes(s.before)}/day now, "
            f"{human_bytes(s.after)}/day after"
        )
        if (before := self.per_month(s.before)) and (after := self.per_month(s.after)):
            head += f" ({before} → {after} a month)"
        return head + (f"; {unknown}: not counted." if s.unknown_topics else ".")

    def bottleneck_text(self, b: BrokerCopy) -> str:
        side = "takes in" if b.bytes_in >= b.bytes_out else "sends"
        at = f": {human_duration(b.seconds)} at the throttle" if b.seconds is not None else ""
        return f"Bottleneck: broker {b.broker} {side} {human_bytes(max(b.bytes_in, b.bytes_out))}{at}."

    def to_dict(self) -> dict[str, Any]:
        """Every figure, as ``validate --json`` and the review job give them (bytes, bytes/day; money
        with its currency when priced)."""
        p = self.pricing
        s = self.steady
        return {
            "headline": self.headline(),
            "bytes_to_copy": self.bytes_to_copy,
            "cross_zone_bytes": self.cross_zone_bytes,
            "unknown_zone_bytes": self.unknown_zone_bytes,
            "currency": p.currency if p.priced else None,
            "per_gb_cross_zone": p.per_gb_cross_zone if p.priced else None,
            "cross_zone_cost": p.cost(self.cross_zone_bytes) if p.priced else None,
            "zone_pairs": [asdict(z) for z in self.zone_pairs],
            "steady_cross_zone_bytes_per_day": {
                "before": s.before,
                "after": s.after,
                "topics_unknown_rate": s.unknown_topics,
                "cost_per_month_before": p.cost(s.before * MONTH_DAYS) if p.priced else None,
                "cost_per_month_after": p.cost(s.after * MONTH_DAYS) if p.priced else None,
            },
            "leader_changes": self.leader_changes,
            "leaders": [asdict(b) for b in self.leaders],
            "brokers": [asdict(b) | {"peak_fill": b.peak_fill} for b in self.brokers],
            "log_dirs": [asdict(d) | {"peak_fill": d.peak_fill} for d in self.dirs],
            "topics": [asdict(t) for t in self.topics],
            "topics_touched": self.topics_touched,
            "throttle": self.throttle,
            "priced": p.priced,
        }


def assemble(parts: ImpactParts, terms: ImpactTerms = ImpactTerms()) -> Impact:
    """The impact from a review's totals, priced by the ``terms``' prices, its steady traffic from
    their produce rates, its times at their throttle."""
    pricing = terms.pricing or Pricing()
    limits = terms.limits or ImpactLimits()
    rates = terms.rates or {}
    throttle = terms.throttle
    zone = {b.broker: pricing.zone_of(b.rack) for b in parts.brokers}
    pairs, unknown = _zone_pairs(parts.flows, zone)
    brokers = tuple(
        BrokerCopy(
            b.broker,
            b.rack,
            zone.get(b.broker),
            b.bytes_in,
            b.bytes_out,
            b.removed,
            b.bytes_before,
            b.bytes_before + b.added,
            b.bytes_after,
            b.capacity,
            b.used,
            None if not throttle else max(b.bytes_in, b.bytes_out) / throttle,
        )
        for b in parts.brokers
    )
    leaders = tuple(
        BrokerLeaders(b.broker, b.leaders_before, b.leaders_after, b.gained, b.lost)
        for b in parts.brokers
        if b.leaders_before or b.leaders_after
    )
    steady = _steady(parts.topics, rates)
    found = dir_fill_findings([(d.broker, d.path, d.peak, d.total) for d in parts.dirs], limits.dir_fill)
    found += steady_growth_findings(steady.before, steady.after, limits.steady_growth)
    found += leader_concentration_findings([(b.broker, b.before, b.after) for b in leaders], limits.leader_factor)
    return Impact(
        bytes_to_copy=parts.bytes_to_copy,
        cross_zone_bytes=sum(z.bytes for z in pairs if z.crosses),
        unknown_zone_bytes=unknown,
        zone_pairs=pairs,
        steady=steady,
        leaders=leaders,
        leader_changes=parts.leader_changes,
        brokers=brokers,
        dirs=parts.dirs,
        topics=_touched(parts.topics, rates),
        topics_touched=sum(1 for t in parts.topics if t.changed),
        pricing=pricing,
        throttle=throttle,
        findings=tuple(found),
    )


def _zone_pairs(
    flows: Iterable[tuple[BrokerId, BrokerId, int, int]], zone: Mapping[BrokerId, str | None]
) -> tuple[tuple[ZonePair, ...], int]:
    acc: dict[tuple[str | None, str | None], list[int]] = {}
    for src, dst, n, nbytes in flows:
        k = acc.setdefault((zone.get(src), zone.get(dst)), [0, 0])
        k[0] += n
        k[1] += nbytes
    pairs = tuple(
        ZonePair(s, d, n, b)
        for (s, d), (n, b) in sorted(acc.items(), key=lambda kv: (-kv[1][1], str(kv[0][0]), str(kv[0][1])))
    )
    return pairs, sum(z.bytes for z in pairs if not z.known)


def _steady(topics: Sequence[TopicCounts], rates: Mapping[str, float | None]) -> Steady:
    before = after = 0.0
    unknown = known = 0
    for t in topics:
        if not (t.cross_before or t.cross_after):
            continue
        rate = rates.get(t.topic)
        if rate is None or t.topic_partitions <= 0:
            unknown += 1
            continue
        known += 1
        per_partition_day = rate / t.topic_partitions * DAY_S
        before += t.cross_before * per_partition_day
        after += t.cross_after * per_partition_day
    return Steady(before, after, unknown, known)


def _touched(topics: Sequence[TopicCounts], rates: Mapping[str, float | None]) -> tuple[TopicTouch, ...]:
    touched = [TopicTouch(t.topic, t.changed, t.bytes, rates.get(t.topic)) for t in topics if t.changed]
    touched.sort(key=lambda t: (-(t.rate_bps if t.rate_bps is not None else -1.0), -t.bytes, t.topic))
    return tuple(touched[:TOPICS_SHOWN])
