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
from console.plans.rules.codes import EXCEEDS_FREE_SPACE, TIERED_LOCAL_ONLY, TOO_LARGE, TOO_LARGE_FOR_ZNODE


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
