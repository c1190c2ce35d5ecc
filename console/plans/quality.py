"""The quality report of a generated plan (pure): what it moves, the least any plan must move for
the same result, and the per-broker balance before and after.

**Lower bound.** The least that must move to reach the balance the plan reaches:

* decommission: every replica on the drained brokers (of the partitions that may move);
* balance goals: the replicas (bytes) above the highest per-broker figure after the plan, or
  below the lowest, whichever is more: every broker above must shed at least its excess and
  every broker below must receive at least its shortfall. When the goal's balance is reached
  (±1 replica, or within the byte tolerance) this is the goal's own lower bound;
* replication factor: every replica added (each one must be copied); fix racks: one move per
  rack a partition lacks;
* drain a log dir: every replica that leaves the dir (a move between the dirs of one broker is
  copied too, and counts as a replica moved).

So the bound never exceeds what the plan moves, and the ratio (moved / bound) says how much more
than necessary the plan moves: 1.00 is optimal.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np

from console.core.format import human_bytes, human_duration, plural, table_text
from console.core.model import Finding
from console.plans.columns import Ints

if TYPE_CHECKING:
    import pandas as pd


@dataclass(frozen=True)
class BrokerLoad:
    """One broker's share: replicas held, partitions it is the preferred leader of, bytes."""

    broker: int
    rack: str | None
    replicas: int
    leaders: int
    bytes: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Spread:
    """Max, min and standard deviation of one measure over the brokers that are balanced."""

    max: float
    min: float
    stddev: float

    @staticmethod
    def of(values: Sequence[int] | Ints) -> Spread:
        a = np.asarray(values, np.float64)
        if not len(a):
            return Spread(0, 0, 0)
        return Spread(float(a.max()), float(a.min()), float(a.std()))

    def to_dict(self) -> dict[str, float]:
        return {"max": self.max, "min": self.min, "stddev": round(self.stddev, 3)}


MEASURES = ("replicas", "leaders", "bytes")


@dataclass(frozen=True)
class ImpactSummary:
    """What a generated plan costs, in the figures its report keeps (the impact model's,
    :meth:`console.moves.impact.Impact.summary`, on the plan's diff): the headline, bytes copied,
    bytes across zones (and to or from brokers without a rack), their price when priced, leader
    changes."""

    headline: str
    bytes_to_copy: int
    cross_zone_bytes: int
    unknown_zone_bytes: int
    leader_changes: int
    cross_zone_cost: float | None = None
    currency: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @staticmethod
    def from_dict(d: dict[str, Any] | None) -> ImpactSummary | None:
        if not d:
            return None
        return ImpactSummary(
            str(d["headline"]),
            int(d["bytes_to_copy"]),
            int(d["cross_zone_bytes"]),
            int(d.get("unknown_zone_bytes", 0)),
            int(d.get("leader_changes", 0)),
            d.get("cross_zone_cost"),
            d.get("currency"),
        )

    def across_text(self) -> str:
        money = (
            f" ≈ {self.currency} {self.cross_zone_cost:,.2f}"
            if self.cross_zone_cost is not None and self.currency
            else ""
        )
        return human_bytes(self.cross_zone_bytes) + money


@dataclass(frozen=True)
class Report:
    """Everything said about a generated plan. ``balanced`` names the brokers the spreads are taken over."""

    goal: str
    """The goal as asked, e.g. ``decommission 5`` or ``rebalance bytes``."""
    moved_replicas: int
    moved_bytes: int
    lower_bound_replicas: int
    lower_bound_bytes: int
    leaders_moved: int
    """Partitions whose preferred leader changes."""
    partitions_changed: int
    brokers_before: tuple[BrokerLoad, ...]
    brokers_after: tuple[BrokerLoad, ...]
    balanced: tuple[int, ...]
    rack_violations_before: int
    rack_violations_after: int
    reached: bool
    """Whether the goal's balance was reached (always true for goals without a balance target)."""
    findings: tuple[Finding, ...] = ()
    seconds: float = 0.0
    eta_seconds: float | None = None
    """Estimated duration at ``eta_throttle`` within the run's wave limits (filled in by the caller)."""
    eta_throttle: int | None = None
    lower_bound_leaders: int = 0
    removed_replicas: int = 0
    """Replicas dropped without a copy elsewhere (a lower replication factor)."""
    tiered_topics: tuple[str, ...] = ()
    """The tiered topics (``remote.storage.enable=true``) the plan copies (filled in with the
    estimate): their copies, and so the estimate, count their local log only."""
    impact: ImpactSummary | None = None
    """What the plan costs (filled in by the caller, :meth:`with_impact`): bytes across zones,
    their price, leader changes."""

    @cached_property
    def spreads(self) -> dict[str, dict[str, Spread]]:
        """``{"before"|"after": {measure: Spread}}`` over the balanced brokers."""
        keep = set(self.balanced)
        return {
            when: {m: Spread.of([getattr(b, m) for b in rows if b.broker in keep]) for m in MEASURES}
            for when, rows in (("before", self.brokers_before), ("after", self.brokers_after))
        }

    def __repr__(self) -> str:
        return f"<Report: {self.headline()}>"

    def to_pandas(self) -> pd.DataFrame:
        """One row per broker: rack, and replicas, preferred leaders and bytes before and after."""
        import pandas as pd

        after = {b.broker: b for b in self.brokers_after}
        return pd.DataFrame(
            [
                (b.broker, b.rack, b.replicas, a.replicas, b.leaders, a.leaders, b.bytes, a.bytes)
                for b in self.brokers_before
                for a in (after.get(b.broker, b),)
            ],
            columns=[
                "broker",
                "rack",
                "replicas_before",
                "replicas_after",
                "leaders_before",
                "leaders_after",
                "bytes_before",
                "bytes_after",
            ],
        )

    @property
    def ratio_replicas(self) -> float | None:
        return _ratio(self.moved_replicas, self.lower_bound_replicas)

    @property
    def ratio_bytes(self) -> float | None:
        return _ratio(self.moved_bytes, self.lower_bound_bytes)

    def with_estimate(self, seconds: float | None, throttle: int | None, tiered: Sequence[str] = ()) -> Report:
        """The report with the estimate at ``throttle``; ``tiered``: the tiered topics the plan copies
        (:func:`console.moves.waves.tiered_copied`), which the estimate counts the local log of."""
        return replace(self, eta_seconds=seconds, eta_throttle=throttle, tiered_topics=tuple(tiered))

    def with_impact(self, impact: ImpactSummary) -> Report:
        """The report with the plan's impact (:meth:`console.moves.impact.Impact.summary`)."""
        return replace(self, impact=impact)

    def to_dict(self) -> dict[str, Any]:
        return {
            "goal": self.goal,
            "moved_replicas": self.moved_replicas,
            "moved_bytes": self.moved_bytes,
            "lower_bound_replicas": self.lower_bound_replicas,
            "lower_bound_bytes": self.lower_bound_bytes,
            "ratio_replicas": self.ratio_replicas,
            "ratio_bytes": self.ratio_bytes,
            "lower_bound_leaders": self.lower_bound_leaders,
            "removed_replicas": self.removed_replicas,
            "leaders_moved": self.leaders_moved,
            "partitions_changed": self.partitions_changed,
            "reached": self.reached,
            "brokers_before": [b.to_dict() for b in self.brokers_before],
            "brokers_after": [b.to_dict() for b in self.brokers_after],
            "balanced_brokers": list(self.balanced),
            "spread": {when: {m: s.to_dict() for m, s in v.items()} for when, v in self.spreads.items()},
            "rack_violations_before": self.rack_violations_before,
            "rack_violations_after": self.rack_violations_after,
            "eta_seconds": self.eta_seconds,
            "eta_throttle": self.eta_throttle,
            "tiered_topics": list(self.tiered_topics),
            "findings": [f.to_dict() for f in self.findings],
            "seconds": round(self.seconds, 3),
            "impact": None if self.impact is None else self.impact.to_dict(),
        }

    @staticmethod
    def from_dict(d: dict[str, Any]) -> Report:
        """The report back from :meth:`to_dict` (what a saved plan keeps)."""

        def loads(rows: list[dict[str, Any]]) -> tuple[BrokerLoad, ...]:
            return tuple(BrokerLoad(r["broker"], r.get("rack"), r["replicas"], r["leaders"], r["bytes"]) for r in rows)

        before, after = loads(d["brokers_before"]), loads(d["brokers_after"])
        balanced = tuple(d.get("balanced_brokers", ()))
        findings = tuple(Finding.from_dict(f) for f in d.get("findings", ()))
        return Report(
            d["goal"],
            d["moved_replicas"],
            d["moved_bytes"],
            d["lower_bound_replicas"],
            d["lower_bound_bytes"],
            d["leaders_moved"],
            d["partitions_changed"],
            before,
            after,
            balanced,
            d["rack_violations_before"],
            d["rack_violations_after"],
            d.get("reached", True),
            findings,
            d.get("seconds", 0.0),
            d.get("eta_seconds"),
            d.get("eta_throttle"),
            d.get("lower_bound_leaders", 0),
            d.get("removed_replicas", 0),
            tuple(d.get("tiered_topics", ())),
            ImpactSummary.from_dict(d.get("impact")),
        )

    # -- for people ---------------------------------------------------------------------------
    def summary_rows(self) -> list[dict[str, Any]]:
        """The headline figures: moved, lower bound, ratio."""
        return [
            {
                "": "replicas moved",
                "plan": f"{self.moved_replicas:,}",
                "lower bound": f"{self.lower_bound_replicas:,}",
                "ratio": _ratio_text(self.ratio_replicas),
            },
            {
                "": "bytes moved",
                "plan": human_bytes(self.moved_bytes),
                "lower bound": human_bytes(self.lower_bound_bytes),
                "ratio": _ratio_text(self.ratio_bytes),
            },
            {
                "": "preferred leaders moved",
                "plan": f"{self.leaders_moved:,}",
                "lower bound": f"{self.lower_bound_leaders:,}",
                "ratio": "",
            },
            {
                "": "rack violations",
                "plan": f"{self.rack_violations_before:,} → {self.rack_violations_after:,}",
                "lower bound": "",
                "ratio": "",
            },
        ] + (
            []
            if self.impact is None
            else [{"": "bytes across zones", "plan": self.impact.across_text(), "lower bound": "", "ratio": ""}]
        )

    def spread_rows(self) -> list[dict[str, Any]]:
        """Per measure: max / min / standard deviation before and after, over the balanced brokers."""
        rows = []
        for m in MEASURES:
            fmt = human_bytes if m == "bytes" else (lambda v: f"{v:,.0f}")
            row: dict[str, Any] = {"measure": m}
            for when in ("before", "after"):
                s = self.spreads.get(when, {}).get(m)
                if s is not None:
                    row[when] = (
                        f"max {fmt(s.max)}, min {fmt(s.min)}, sd {fmt(s.stddev) if m == 'bytes' else f'{s.stddev:.2f}'}"
                    )
            rows.append(row)
        return rows

    def broker_rows(self) -> list[dict[str, Any]]:
        """Per broker: before → after of each measure."""
        after = {b.broker: b for b in self.brokers_after}
        rows = []
        for b in self.brokers_before:
            a = after.get(b.broker, b)
            rows.append(
                {
                    "broker": b.broker,
                    "rack": b.rack or "",
                    "replicas": f"{b.replicas:,} → {a.replicas:,}",
                    "leaders": f"{b.leaders:,} → {a.leaders:,}",
                    "bytes": f"{human_bytes(b.bytes)} → {human_bytes(a.bytes)}",
                    "Δ replicas": a.replicas - b.replicas,
                    "Δ bytes": a.bytes - b.bytes,
                }
            )
        return rows

    def chart_rows(self) -> list[dict[str, Any]]:
        """Per broker, each measure before and after, in the rows the before/after bar chart draws."""
        after = {b.broker: b for b in self.brokers_after}
        return [
            {
                "broker": b.broker,
                "rack": b.rack or "",
                **{
                    f"{m} {when}": getattr(row, m)
                    for m in MEASURES
                    for when, row in (("before", b), ("after", after.get(b.broker, b)))
                },
            }
            for b in self.brokers_before
        ]

    def headline(self) -> str:
        """One sentence: what the plan does and how close to the least it is."""
        ratio = self.ratio_replicas
        eta = (
            ""
            if self.eta_seconds is None or not self.eta_throttle
            else (
                f" Copying takes about {human_duration(self.eta_seconds)} at {human_bytes(self.eta_throttle)}/s."
                if self.eta_seconds >= 1
                else f" Copying takes under a second at {human_bytes(self.eta_throttle)}/s."
            )
        )
        removed = f", {plural(self.removed_replicas, 'replica')} removed" if self.removed_replicas else ""
        return (
            f"{self.goal}: {plural(self.partitions_changed, 'partition')} change, "
            f"{plural(self.moved_replicas, 'replica')} ({human_bytes(self.moved_bytes)}) move{removed}; the least possible "
            f"is {self.lower_bound_replicas:,} ({human_bytes(self.lower_bound_bytes)})"
            + (f", ratio {ratio:.2f}" if ratio is not None else "")
            + "."
            + ("" if self.reached else " The goal is not fully reached (see the findings).")
            + eta
            + (self.tiered_text() if eta else "")
            + f" Computed in {self.seconds:.2f} s."
        )

    def tiered_text(self, limit: int = 5) -> str:
        """`` Tiered storage: …`` when the plan copies tiered topics: what the estimate counts of them."""
        topics = self.tiered_topics
        if not topics:
            return ""
        names = ", ".join(topics[:limit]) + (f" and {len(topics) - limit} more" if len(topics) > limit else "")
        return (
            f" Tiered storage: {plural(len(topics), 'topic')} ({names}) with remote.storage.enable=true; a move "
            "copies their local log only, and so does the estimate (the segments in remote storage are not copied)."
        )

    def text(self) -> str:
        """The whole report as the CLI prints it."""
        out = [
            self.headline() + ("" if self.impact is None else f"\nImpact: {self.impact.headline}."),
            table_text(self.summary_rows(), ["", "plan", "lower bound", "ratio"]),
            "Balance over brokers " + ",".join(map(str, self.balanced)) + ":",
            table_text(self.spread_rows(), ["measure", "before", "after"]),
            table_text(self.broker_rows(), ["broker", "rack", "replicas", "leaders", "bytes"]),
        ]
        if self.findings:
            out.append(
                "\n".join(f"[{f.severity.value}] {f.message}" + (f" {f.hint}" if f.hint else "") for f in self.findings)
            )
        return "\n\n".join(out)


def merge_reports(goal: str, parts: Sequence[tuple[str, Report]]) -> Report:
    """One report for plans made topic by topic on the same cluster (``(topic, report)``): moves,
    bounds and rack violations add up (a sum of lower bounds bounds the sum), each broker's load is
    the sum of its loads per topic, the goal is reached when it is for every topic, and each
    finding names its topic."""

    def loads(pick: str) -> tuple[BrokerLoad, ...]:
        total: dict[int, BrokerLoad] = {}
        for _, r in parts:
            for b in getattr(r, pick):
                t = total.get(b.broker)
                total[b.broker] = (
                    b
                    if t is None
                    else BrokerLoad(
                        b.broker, t.rack or b.rack, t.replicas + b.replicas, t.leaders + b.leaders, t.bytes + b.bytes
                    )
                )
        return tuple(total[k] for k in sorted(total))

    def add(name: str) -> Any:
        return sum(getattr(r, name) for _, r in parts)

    return Report(
        goal=goal,
        moved_replicas=add("moved_replicas"),
        moved_bytes=add("moved_bytes"),
        lower_bound_replicas=add("lower_bound_replicas"),
        lower_bound_bytes=add("lower_bound_bytes"),
        leaders_moved=add("leaders_moved"),
        partitions_changed=add("partitions_changed"),
        brokers_before=loads("brokers_before"),
        brokers_after=loads("brokers_after"),
        balanced=tuple(sorted({b for _, r in parts for b in r.balanced})),
        rack_violations_before=add("rack_violations_before"),
        rack_violations_after=add("rack_violations_after"),
        reached=all(r.reached for _, r in parts),
        findings=tuple(f if f.topic else f._replace(topic=topic) for topic, r in parts for f in r.findings),
        seconds=add("seconds"),
        lower_bound_leaders=add("lower_bound_leaders"),
        removed_replicas=add("removed_replicas"),
    )


def _ratio(moved: int, bound: int) -> float | None:
    if bound <= 0:
        return 1.0 if moved == 0 else None
    return moved / bound


def _ratio_text(r: float | None) -> str:
    return "" if r is None else f"{r:.2f}"


def excess_bound(before: Ints, after: Ints) -> int:
    """The least to move from ``before`` to any distribution as even as ``after``: the total above
    ``after``'s maximum, or below its minimum, whichever is larger."""
    if not len(before):
        return 0
    hi, lo = after.max(), after.min()
    return int(max(np.clip(before - hi, 0, None).sum(), np.clip(lo - before, 0, None).sum()))
