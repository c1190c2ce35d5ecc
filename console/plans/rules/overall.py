"""The findings about the whole plan or a broker, from the review's totals (computed once per
review by either runner: the bytes each broker receives, the tiered topics moving, the plan's size):
errors and warnings that no single entry makes."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from operator import itemgetter

import numpy as np

from console.core.format import human_bytes, plural
from console.core.limits import REQUEST_LIMIT, ZNODE_LIMIT_BYTES
from console.core.model import BrokerId, Finding, Severity
from console.plans.columns import PAD, digits
from console.plans.plan import Plan
from console.plans.rules.codes import (
    CROSS_ZONE_GROWTH,
    DIR_PEAK_FILL,
    EXCEEDS_FREE_SPACE,
    LEADERS_CONCENTRATED,
    TIERED_LOCAL_ONLY,
    TOO_LARGE,
    TOO_LARGE_FOR_ZNODE,
)


def space_findings(usable: Mapping[BrokerId, int | None], bytes_in: Iterable[tuple[BrokerId, int]]) -> list[Finding]:
    """Brokers that would receive more than their usable space (in the order of ``bytes_in``)."""
    out = []
    for broker, incoming in bytes_in:
        room = usable.get(broker)
        if room is None or incoming == 0:
            continue
        if incoming > room:
            out.append(
                Finding(
                    EXCEEDS_FREE_SPACE,
                    Severity.ERROR,
                    f"Broker {broker} would receive {incoming:,} bytes but has {room:,} usable.",
                    "Move fewer partitions to it, or free space first.",
                    broker=broker,
                )
            )
    return out


def tiered_findings(moving: Iterable[tuple[str, int, int]]) -> list[Finding]:
    """One (info) finding per tiered topic (``remote.storage.enable=true``) the plan adds replicas
    of, in topic order: ``moving`` gives each such topic, how many of its partitions gain a replica
    and the bytes to copy. A new replica of a tiered topic copies the leader's local log only (what
    DescribeLogDirs reports, and what the console counts); the remote segments are not copied."""
    return [
        Finding(
            TIERED_LOCAL_ONLY,
            Severity.INFO,
            f"Topic {topic} uses tiered storage (remote.storage.enable=true): moving {plural(n, 'partition')} "
            f"copies the local log only ({human_bytes(size)}, what DescribeLogDirs reports); the segments in "
            "remote storage stay where they are and are not copied.",
            "Sizes, waves and the estimate count the local log. A new replica first rebuilds the leader epochs "
            "and producer state of the remote part from remote storage, then copies the leader's local log.",
            topic=topic,
        )
        for topic, n, size in sorted(moving)
    ]


def plan_size_findings(plan: Plan) -> list[Finding]:
    """Findings about the plan's size: more partitions than one request, too large for the legacy znode."""
    moving = len(plan)
    out = []
    if moving > REQUEST_LIMIT:
        out.append(
            Finding(
                TOO_LARGE,
                Severity.WARNING,
                f"The plan has {moving:,} partitions, more than {REQUEST_LIMIT:,} per request.",
                "It is submitted in waves (each request stays under the limit).",
            )
        )
    size = legacy_znode_bytes(plan) if moving > 1_000 else 0
    if size > ZNODE_LIMIT_BYTES // 2:
        out.append(
            Finding(
                TOO_LARGE_FOR_ZNODE,
                Severity.WARNING,
                f"The plan is {size:,} bytes of JSON: too large for one /admin/reassign_partitions znode "
                "(legacy clusters).",
                "On the legacy path it is split into waves well under 1 MB each.",
            )
        )
    return out


def legacy_znode_bytes(plan: Plan) -> int:
    """Size of the plan as ``/admin/reassign_partitions`` content (no log dirs), without building
    the JSON."""
    if not plan.entries:
        return len('{"version":1,"partitions":[]}')
    target, lens = plan.target_columns
    numbers = np.fromiter(map(itemgetter(1), plan.entries), np.int64, len(plan))
    per_entry = len('{"topic":"","partition":,"replicas":[]},')
    return int(
        len('{"version":1,"partitions":[]}')
        - 1
        + len(plan) * per_entry
        + sum(map(len, map(itemgetter(0), plan.entries)))
        + digits(numbers).sum()
        + digits(target[target != PAD]).sum()
        + np.maximum(lens - 1, 0).sum()
    )


def dir_fill_findings(peaks: Iterable[tuple[BrokerId, str, int, int]], fill: float) -> list[Finding]:
    """Log dirs whose peak during the plan (current + adding, before removing: ``peaks`` gives
    broker, path, peak and size in bytes) passes ``fill`` of their size, fullest first."""
    over = [(p / total, b, path, p, total) for b, path, p, total in peaks if total > 0 and p / total > fill]
    return [
        Finding(
            DIR_PEAK_FILL,
            Severity.WARNING,
            f"Log dir {path} of broker {b} would peak at {share * 100:.0f} % full ({human_bytes(p)} of "
            f"{human_bytes(total)}) while the plan copies: new replicas land before the old ones are removed.",
            f"Above {fill * 100:.0f} %: move fewer partitions to it at once (smaller waves), free space first, "
            "or send replicas elsewhere.",
            broker=b,
        )
        for share, b, path, p, total in sorted(over, key=lambda x: (-x[0], x[1], x[2]))
    ]


def steady_growth_findings(before: float, after: float, share: float) -> list[Finding]:
    """The steady replication traffic across zones (bytes per day) of the partitions a plan changes
    growing by more than ``share``: a cost paid every day after the plan, not once."""
    if after <= before or (before > 0 and (after - before) / before <= share):
        return []
    grows = f"by {(after - before) / before * 100:.0f} %" if before > 0 else "from none"
    return [
        Finding(
            CROSS_ZONE_GROWTH,
            Severity.WARNING,
            f"Steady replication across zones of the partitions this plan changes grows {grows}: "
            f"{human_bytes(before)}/day now, {human_bytes(after)}/day after (followers in another zone than "
            "their leader replicate every byte produced).",
            f"Above {share * 100:.0f} %: keep followers in their leader's zone where the rack rules allow, or "
            "accept the cost (Review's impact panel prices it when [pricing] is set).",
        )
    ]


def leader_concentration_findings(leaders: Iterable[tuple[BrokerId, int, int]], factor: float) -> list[Finding]:
    """Brokers that lead more than ``factor`` times the mean after the plan, and more than before
    (``leaders``: each broker that leads before or after, with the partitions it leads then)."""
    rows = list(leaders)
    if len(rows) < 2:
        return []
    mean = sum(after for _, _, after in rows) / len(rows)
    return [
        Finding(
            LEADERS_CONCENTRATED,
            Severity.WARNING,
            f"Broker {b} would lead {after:,} partitions after the plan ({before:,} now), "
            f"{after / mean:.1f} times the mean of the brokers that lead before or after it ({mean:,.1f}).",
            "Give the partitions it would lead other first replicas, or run a preferred leader election over "
            "a plan that evens the first replicas out (generate --rebalance leaders).",
            broker=b,
        )
        for b, before, after in sorted(rows, key=lambda r: (-r[2], r[0]))
        if after > factor * mean and after > before
    ]
