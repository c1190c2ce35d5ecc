"""A plan's impact (:mod:`console.moves.impact`) as the rows and words the Review page, the CLI and
the notebooks show: zone pairs, each broker's disk before / at the peak / after, log dirs, leaders,
the topics touched. Bytes with the console's one formatter, money with its currency code."""

from __future__ import annotations

from typing import Any

from console.core.format import human_bytes, human_duration, human_rate
from console.moves.impact import MONTH_DAYS, BrokerCopy, Impact


def zone_rows(im: Impact) -> list[dict[str, Any]]:
    """One row per zone pair bytes are copied across (then within a zone, then zone unknown)."""
    rows = sorted(im.zone_pairs, key=lambda z: (not z.crosses, not z.known, -z.bytes))
    return [
        {
            "from zone": z.source or "? (no rack)",
            "to zone": z.destination or "? (no rack)",
            "crosses": "yes" if z.crosses else ("?" if not z.known else "no"),
            "replicas": z.replicas,
            "bytes": human_bytes(z.bytes),
            "cost once": (im.pricing.money(z.bytes) if z.crosses else None) or "—",
        }
        for z in rows
    ]


DISK_STAGES = ("before", "peak", "after")


def disk_rows(im: Impact) -> list[dict[str, Any]]:
    """Per broker and stage (before, peak: current + adding before removing, after): its bytes, in
    the long form the chart draws; only brokers the plan changes."""
    out = []
    for b in im.brokers:
        if not (b.bytes_in or b.removed or b.disk_peak != b.disk_before):
            continue
        for stage, value in zip(DISK_STAGES, (b.disk_before, b.disk_peak, b.disk_after), strict=True):
            out.append({"broker": str(b.broker), "stage": stage, "bytes": value, "size": human_bytes(value)})
    return out


def _copy_time(b: BrokerCopy) -> str:
    """A broker's copy timed at the throttle; ``nothing to copy`` for one that only loses replicas or
    leaders (it said "under a second"), ``—`` untimed (no throttle)."""
    if not (b.bytes_in or b.bytes_out):
        return "nothing to copy"
    return human_duration(b.seconds) if b.seconds is not None else "—"


def broker_rows(im: Impact) -> list[dict[str, Any]]:
    """Per broker the plan changes: zone, copy in and out (and its time at the throttle), disk
    before / peak / after, peak fill when its dirs' sizes are known, leaders before and after."""
    leaders = {x.broker: x for x in im.leaders}
    rows = []
    for b in im.brokers:
        led = leaders.get(b.broker)
        if not (b.bytes_in or b.bytes_out or b.removed or (led and (led.gained or led.lost))):
            continue
        rows.append(
            {
                "broker": int(b.broker),
                "zone": b.zone or "?",
                "in": human_bytes(b.bytes_in),
                "out": human_bytes(b.bytes_out),
                "at the throttle": _copy_time(b),
                "disk before": human_bytes(b.disk_before),
                "peak": human_bytes(b.disk_peak),
                "after": human_bytes(b.disk_after),
                "peak fill": f"{b.peak_fill * 100:.0f} %" if b.peak_fill is not None else "?",
                "leaders": f"{led.before:,} → {led.after:,}" if led else "0 → 0",
            }
        )
    return rows


def dir_rows(im: Impact) -> list[dict[str, Any]]:
    """The sized log dirs the plan adds to or frees, fullest peak first."""
    return [
        {
            "broker": int(d.broker),
            "log dir": d.path,
            "size": human_bytes(d.total),
            "used": human_bytes(d.used),
            "peak": human_bytes(d.peak),
            "after": human_bytes(d.after),
            "peak fill": f"{d.peak_fill * 100:.0f} %",
        }
        for d in sorted(im.dirs, key=lambda d: -d.peak_fill)
        if d.peak != d.used or d.after != d.used
    ]


def topic_rows(im: Impact) -> list[dict[str, Any]]:
    """The topics touched, the most produced-to first (the clients most likely to notice)."""
    return [
        {
            "topic": t.topic,
            "partitions changed": t.partitions,
            "bytes copied": human_bytes(t.bytes),
            "produce rate": human_rate(t.rate_bps) if t.rate_bps is not None else "unknown",
        }
        for t in im.topics
    ]


def money_lines(im: Impact) -> list[str]:
    """The figures in money (empty without prices): once, and a month of steady replication."""
    p, s = im.pricing, im.steady
    if not p.priced:
        return []
    lines = [f"Copied across zones once: {human_bytes(im.cross_zone_bytes)} ≈ {im.once_cost}."]
    if s.known_topics:
        lines.append(
            f"Steady replication across zones, a month: {p.money(s.before * MONTH_DAYS)} now, "
            f"{p.money(s.after * MONTH_DAYS)} after."
        )
    return lines
