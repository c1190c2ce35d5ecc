"""Validation of a plan against a snapshot, as findings (pure).

An **error** blocks submission (bar the :data:`OVERRIDABLE` ones, which the operator may override
explicitly, audited); a **warning** needs acknowledging; **info** is reported. Each
finding names the partition (or broker), says what is wrong and what to do. The checks cover
what the controller itself would reject with INVALID_REPLICA_ASSIGNMENT (empty list, duplicate
or negative ids, adding replicas on brokers that are not alive), so nothing it would refuse is
ever sent; and one it would take that the console does not: a replica sent to a cordoned broker or
log dir (KIP-1066), which the controller completes (only new topics avoid cordons); and one it
cannot complete: a replica sent to a log dir that is offline.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import partial
from operator import itemgetter
from typing import Any

import numpy as np

from console.core.format import human_bytes, plural
from console.core.limits import INT32_MAX, REQUEST_LIMIT, ZNODE_LIMIT_BYTES
from console.core.model import Broker, BrokerId, ClusterState, Finding, Findings, Severity
from console.core.perf import without_gc
from console.plans.columns import PAD, Bools, Ints, broker_ids, columns_of, digits, distinct, lookup, member
from console.plans.diff import ChangeKind, PlanDiff, diff
from console.plans.plan import ANY, Plan, PlanEntry

# Findings codes (stable: the CLI's --json and the store use them).
UNKNOWN_TOPIC = "unknown-topic"
UNKNOWN_PARTITION = "unknown-partition"
UNKNOWN_BROKER = "unknown-broker"
BROKER_NOT_ELIGIBLE = "adding-on-ineligible-broker"
EMPTY_REPLICAS = "empty-replica-list"
DUPLICATE_BROKER = "duplicate-broker"
NEGATIVE_BROKER = "invalid-broker-id"
LOG_DIRS_LENGTH = "log-dirs-length"
UNKNOWN_LOG_DIR = "unknown-log-dir"
RF_CHANGE = "replication-factor-change"
RF_BELOW_MIN_ISR = "replication-factor-below-min-isr"
RF_STILL_BELOW_MIN_ISR = "replication-factor-still-below-min-isr"
BELOW_MIN_ISR_NOW = "below-min-isr-now"
RACK_SPREAD_REDUCED = "rack-spread-reduced"
RACKS_UNDERUSED = "racks-underused"
ALREADY_REASSIGNING = "already-reassigning"
NO_CHANGE = "no-change"
REORDER_ONLY = "reorder-only"
LEADER_NEEDS_ELECTION = "leader-needs-election"
EXCEEDS_FREE_SPACE = "exceeds-free-space"
STALE = "stale"
TOO_LARGE = "too-large-for-one-request"
TOO_LARGE_FOR_ZNODE = "too-large-for-znode"
OFFLINE_NOW = "offline-now"
SOURCE_ON_FENCED = "replica-on-fenced-broker"
CORDONED_DESTINATION = "cordoned-destination"
OFFLINE_LOG_DIR = "offline-log-dir"
TIERED_LOCAL_ONLY = "tiered-local-log-only"

OVERRIDABLE = frozenset({CORDONED_DESTINATION})
"""Errors the operator may override explicitly when submitting (``submit --allow-cordoned``, the
Review page's checkbox); the override is audited with the run. Every other error blocks."""
CORDON_WHY = (
    "Kafka 4.3's controller accepts and completes such an explicit reassignment, Kafka 4.4's refuses one onto "
    "a broker whose every log dir is cordoned, and a broker refuses a cordoned dir (a new replica goes to "
    "another of its dirs): this check is the console's own, made before anything is sent."
)
CORDON_HINT = (
    "Pick another broker (or dir), uncordon it first (python -m console uncordon --broker N), or submit "
    "anyway with --allow-cordoned (Review: “Submit onto cordoned brokers anyway”), which the audit log records."
)
OFFLINE_DIR_HINT = (
    'Pick another dir (or "any"). A transient I/O error during a move between log dirs can mark a whole '
    "dir offline (KAFKA-19571): it comes back only when the broker restarts."
)


_new_finding: Callable[[tuple[str, Severity, str, str, str, int, None]], Finding] = partial(tuple.__new__, Finding)


FENCED_WHY = "is fenced (registered but fenced: it takes no replicas)"
"""How a plan check says a broker the cluster knows is fenced (DescribeCluster, KIP-1073)."""


def not_eligible_why(broker: Broker) -> str:
    """Why ``broker`` takes no new replica, as far as the snapshot knows: fenced (registered, and
    DescribeCluster says it is fenced), not live (not registered), or not eligible (KIP-841)."""
    if broker.registered and broker.fenced is True:
        return FENCED_WHY
    return "is not live" if not broker.live else "is not eligible for new replicas (KIP-841)"


def _f(code: str, sev: Severity, e: PlanEntry, message: str, hint: str) -> Finding:
    return _new_finding((code, sev, message, hint, e.topic, e.partition, None))


Build = Callable[[PlanEntry, int, int], Finding]
"""Builds one finding from (plan entry, its row in the plan, a cell of its replica list)."""


class _Found:
    """Findings by check, gathered column-wise and built, in their final order, only at the end."""

    def __init__(self, entries: Sequence[PlanEntry]) -> None:
        self.entries = entries
        self.checks: list[tuple[Ints, Ints, Severity, Build]] = []

    def rows(self, mask: Bools, severity: Severity, build: Build) -> None:
        rows = np.flatnonzero(mask)
        self.checks.append((rows, np.zeros(len(rows), np.int64), severity, build))

    def cells(self, mask: Bools, severity: Severity, build: Build) -> None:
        rows, cells = np.nonzero(mask)
        self.checks.append((rows.astype(np.int64), cells.astype(np.int64), severity, build))

    def listed(self, pairs: list[tuple[int, int]], severity: Severity, build: Build) -> None:
        a = np.array(pairs, np.int64).reshape(-1, 2)
        self.checks.append((a[:, 0], a[:, 1], severity, build))

    def overall(self, findings: list[Finding]) -> None:
        """Findings about the whole plan or a broker: first within their severity."""
        for severity in Severity:
            these = [f for f in findings if f.severity is severity]
            self.checks.append(
                (
                    np.full(len(these), -1, np.int64),
                    np.arange(len(these), dtype=np.int64),
                    severity,
                    lambda e, i, j, these=these: these[j],  # type: ignore[misc]
                )
            )

    def findings(self) -> list[Finding]:
        """Errors first, then by partition (plan order: topic, partition), then in check order."""
        if not self.checks:
            return []
        rows = np.concatenate([c[0] for c in self.checks])
        cells = np.concatenate([c[1] for c in self.checks])
        check = np.concatenate([np.full(len(c[0]), i, np.int64) for i, c in enumerate(self.checks)])
        severity = np.concatenate([np.full(len(c[0]), c[2].rank, np.int64) for c in self.checks])
        order = np.lexsort((cells, check, rows, severity))
        builds, entries = [c[3] for c in self.checks], self.entries
        return [
            builds[k](entries[r], r, j)
            for k, r, j in zip(check[order].tolist(), rows[order].tolist(), cells[order].tolist(), strict=False)
        ]


@without_gc
def validate(state: ClusterState, plan: Plan, plan_diff: PlanDiff | None = None) -> Findings:
    """Every finding for ``plan`` against ``state``, errors first (then by topic and partition)."""
    d = plan_diff if plan_diff is not None else diff(state, plan)
    c = d.columns
    entries = plan.entries
    parts = state.partitions
    brokers = state.broker_index
    rows = c.rows.tolist()
    found = _Found(entries)

    # -- the shape of each entry: what the controller rejects with INVALID_REPLICA_ASSIGNMENT
    t, real = c.target, c.target != PAD
    found.rows(
        c.target_len == 0,
        Severity.ERROR,
        lambda e, i, _: _f(
            EMPTY_REPLICAS, Severity.ERROR, e, f"{e.name}: the replica list is empty.", "Give at least one broker."
        ),
    )
    found.rows(
        (real & ((t < 0) | (t > INT32_MAX))).any(axis=1),
        Severity.ERROR,
        lambda e, i, _: _f(
            NEGATIVE_BROKER,
            Severity.ERROR,
            e,
            f"{e.name}: invalid broker id in {list(e.replicas)}.",
            f"Broker ids are integers from 0 to {INT32_MAX}.",
        ),
    )
    ordered = np.sort(t, axis=1)
    found.rows(
        ((ordered[:, 1:] == ordered[:, :-1]) & (ordered[:, 1:] != PAD)).any(axis=1),
        Severity.ERROR,
        lambda e, i, _: _f(
            DUPLICATE_BROKER,
            Severity.ERROR,
            e,
            f"{e.name}: duplicate broker in {list(e.replicas)}.",
            "Each broker may hold one replica of a partition.",
        ),
    )
    with_dirs = [i for i, e in enumerate(entries) if e.log_dirs is not None]
    found.listed(
        [(i, 0) for i in with_dirs if len(entries[i].log_dirs or ()) != len(entries[i].replicas)],
        Severity.ERROR,
        lambda e, i, _: _f(
            LOG_DIRS_LENGTH,
            Severity.ERROR,
            e,
            f"{e.name}: {len(e.log_dirs or ())} log dirs for {len(e.replicas)} replicas.",
            'Give one log dir (or "any") per replica.',
        ),
    )

    # -- what does not exist
    topics = set(state.topics)
    partitions_of: Counter[str] = Counter()

    def unknown(e: PlanEntry, i: int, _: int) -> Finding:
        if e.topic not in topics:
            return _f(
                UNKNOWN_TOPIC,
                Severity.ERROR,
                e,
                f"Topic {e.topic} does not exist.",
                "Check the name (topic names are case-sensitive) or remove its entries.",
            )
        if not partitions_of:
            partitions_of.update(p.topic for p in parts)
        return _f(
            UNKNOWN_PARTITION,
            Severity.ERROR,
            e,
            f"Partition {e.name} does not exist ({e.topic} has {partitions_of[e.topic]} partitions).",
            "Remove the entry; add partitions with kafka-topics.sh --alter first if intended.",
        )

    found.rows(~c.known, Severity.ERROR, unknown)

    # -- adding replicas: the controller checks only these for liveness
    ids = broker_ids(state)
    by_id = np.argsort(ids)
    status = np.fromiter((0 if b.eligible else 1 for b in state.brokers), np.int64, len(ids))

    def adding(e: PlanEntry, i: int, j: int) -> Finding:
        b = e.replicas[j]
        broker = brokers.get(b)
        if broker is None:
            return _f(
                UNKNOWN_BROKER,
                Severity.ERROR,
                e,
                f"{e.name}: broker {b} is unknown to the cluster.",
                "Use a broker id the cluster knows (see Overview).",
            )
        why = not_eligible_why(broker)
        return _f(
            BROKER_NOT_ELIGIBLE,
            Severity.ERROR,
            e,
            f"{e.name}: broker {b} {why}; the controller refuses adding a replica there "
            "(or the reassignment would stall).",
            "Wait until the broker is back, or pick another broker.",
        )

    found.cells(c.adding & (lookup(ids[by_id], status[by_id], t, missing=-1) != 0), Severity.ERROR, adding)

    # -- cordons (KIP-1066): the controller takes an explicit reassignment onto them; the console does not
    cordoned = np.fromiter((b.cordoned is True for b in state.brokers), np.bool_, len(ids))
    on_cordoned: Bools = np.zeros(t.shape, np.bool_)
    if cordoned.any():
        on_cordoned = c.adding & (lookup(ids[by_id], cordoned[by_id].astype(np.int64), t, missing=0) == 1)

        def cordoned_broker(e: PlanEntry, i: int, j: int) -> Finding:
            return _f(
                CORDONED_DESTINATION,
                Severity.ERROR,
                e,
                f"{e.name}: broker {e.replicas[j]} is cordoned (cordoned.log.dirs) and would receive a replica. "
                + CORDON_WHY,
                CORDON_HINT,
            )

        found.cells(on_cordoned, Severity.ERROR, cordoned_broker)

    def log_dir(e: PlanEntry, i: int, j: int) -> Finding:
        return _f(
            UNKNOWN_LOG_DIR,
            Severity.ERROR,
            e,
            f"{e.name}: broker {e.replicas[j]} has no log dir {(e.log_dirs or ())[j]}.",
            'Use one of the broker\'s log dirs (see Overview) or "any".',
        )

    def cordoned_dir(e: PlanEntry, i: int, j: int) -> Finding:
        return _f(
            CORDONED_DESTINATION,
            Severity.ERROR,
            e,
            f"{e.name}: log dir {(e.log_dirs or ())[j]} of broker {e.replicas[j]} is cordoned and would receive "
            "the replica. " + CORDON_WHY,
            CORDON_HINT,
        )

    def offline_dir(e: PlanEntry, i: int, j: int) -> Finding:
        path = (e.log_dirs or ())[j]
        error = next((d.error for d in brokers[e.replicas[j]].log_dirs if d.path == path), None)
        return _f(
            OFFLINE_LOG_DIR,
            Severity.ERROR,
            e,
            f"{e.name}: log dir {path} of broker {e.replicas[j]} is offline and would receive the replica "
            f"(DescribeLogDirs: {error}).",
            OFFLINE_DIR_HINT,
        )

    bad_dirs = []
    cordoned_dirs = []
    offline_dirs = []
    for i in with_dirs:
        if c.known[i]:
            e = entries[i]
            for j, (b, path) in enumerate(zip(e.replicas, e.log_dirs or (), strict=False)):
                broker = brokers.get(b)
                if path == ANY or broker is None or not broker.log_dirs:
                    continue
                if path not in {ld.path for ld in broker.log_dirs}:
                    bad_dirs.append((i, j))
                    continue
                if (
                    broker.dir_cordoned(path)
                    and not on_cordoned[i, j]  # said once, for the broker
                    and parts[rows[i]].log_dir_on(b) != path  # already there: nothing arrives
                ):
                    cordoned_dirs.append((i, j))
                if (
                    any(ld.path == path and ld.offline for ld in broker.log_dirs)
                    and parts[rows[i]].log_dir_on(b) != path
                ):
                    offline_dirs.append((i, j))
    found.listed(bad_dirs, Severity.ERROR, log_dir)
    found.listed(cordoned_dirs, Severity.ERROR, cordoned_dir)
    found.listed(offline_dirs, Severity.ERROR, offline_dir)
    _partition_checks(found, state, d, rows)

    # -- a plan drafted against an older snapshot
    if plan.basis:
        basis = plan.basis
        stale = [
            (i, 0)
            for i, e in enumerate(entries)
            if rows[i] >= 0
            and (was := basis.get((e.topic, e.partition))) is not None
            and was != parts[rows[i]].replicas
        ]
        found.listed(
            stale,
            Severity.ERROR,
            lambda e, i, _: _f(
                STALE,
                Severity.ERROR,
                e,
                f"{e.name} changed since the plan was drafted: replicas were {_ids(basis[(e.topic, e.partition)])}, "
                f"now {_ids(parts[rows[i]].replicas)}.",
                "Review the plan again against the current cluster.",
            ),
        )
    found.overall(_space(state, d) + plan_size_findings(plan) + _tiered(state, d))
    return Findings(found.findings())


def _ids(ids: Iterable[int]) -> str:
    return ",".join(map(str, ids)) or "none"


def _partition_checks(found: _Found, state: ClusterState, d: PlanDiff, rows: list[int]) -> None:
    """Checks of each known partition that changes (an unchanged one only says so)."""
    c = d.columns
    sc = columns_of(state)
    parts = state.partitions
    t = c.target
    none = c.is_kind(ChangeKind.NONE)
    live = c.known & ~none
    current_len, target_len = c.current_len.tolist(), c.target_len.tolist()
    found.rows(
        none,
        Severity.INFO,
        lambda e, i, _: _f(
            NO_CHANGE,
            Severity.INFO,
            e,
            f"{e.name} already has replicas {_ids(e.replicas)}: skipped.",
            "Nothing to do; it is left out of the submission.",
        ),
    )
    reorder = c.is_kind(ChangeKind.REORDER)
    found.rows(
        reorder,
        Severity.INFO,
        lambda e, i, _: _f(
            REORDER_ONLY,
            Severity.INFO,
            e,
            f"{e.name}: only the order changes ({_ids(parts[rows[i]].original)} → {_ids(e.replicas)}); it completes at once.",
            "The leader does not move without a preferred leader election.",
        ),
    )
    la = c.leader_after
    found.rows(
        live & ~reorder & (la != PAD) & (la != t[:, 0]),
        Severity.INFO,
        lambda e, i, _: _f(
            LEADER_NEEDS_ELECTION,
            Severity.INFO,
            e,
            f"{e.name}: broker {la[i]} stays leader; the preferred leader becomes {e.replicas[0]}.",
            "Run a preferred leader election after the move to make it lead.",
        ),
    )
    found.rows(
        live & c.in_flight,
        Severity.WARNING,
        lambda e, i, _: _f(
            ALREADY_REASSIGNING,
            Severity.WARNING,
            e,
            f"{e.name} is already being reassigned: the controller keeps its original replicas "
            f"{_ids(parts[rows[i]].original)} and drops adding replicas that are not in the new target.",
            "Acknowledge, or wait for the current reassignment to finish (or cancel it) first.",
        ),
    )
    fenced = {b.id for b in state.brokers if b.fenced}
    if fenced:

        def on_fenced(e: PlanEntry, i: int, _: int) -> Finding:
            p = parts[rows[i]]
            there = [b for b in c.current[i].tolist() if b in fenced]
            leader = f"the leader, broker {p.leader}" if p.leader is not None else "a leader, and it has none"
            return _f(
                SOURCE_ON_FENCED,
                Severity.WARNING,
                e,
                f"{e.name}: its replica on broker {_ids(there)} sits on a fenced broker (KIP-1073): its data "
                f"cannot be copied from there; the new replicas copy from {leader}.",
                "Start the broker again if its copy is the one needed; otherwise acknowledge.",
            )

        found.rows(
            live & ~reorder & np.isin(c.current, np.array(sorted(fenced), np.int64)).any(axis=1),
            Severity.WARNING,
            on_fenced,
        )
    found.rows(
        live & (c.leader_before == PAD),
        Severity.WARNING,
        lambda e, i, _: _f(
            OFFLINE_NOW,
            Severity.WARNING,
            e,
            f"{e.name} has no leader now: nothing can be copied.",
            "Bring a replica back first; the new replicas cannot catch up without a leader.",
        ),
    )
    found.rows(
        live & (c.target_len != c.current_len),
        Severity.WARNING,
        lambda e, i, _: _f(
            RF_CHANGE,
            Severity.WARNING,
            e,
            f"{e.name}: the replication factor changes from {current_len[i]} to {target_len[i]}.",
            "Acknowledge if intended; the official tool changes it the same way.",
        ),
    )
    safe = np.where(c.known, c.rows, 0)
    has_min = live & (sc.min_isr[safe] != PAD) if len(parts) else live & False
    min_isr = np.where(has_min, sc.min_isr[safe] if len(parts) else 0, 0)
    min_isr_l = min_isr.tolist()
    _min_isr_rows(
        found, has_min & (c.target_len < min_isr), c.target_len < c.current_len, current_len, target_len, min_isr_l
    )
    in_sync = member(c.current, sc.isr[safe]).sum(axis=1) if len(parts) else np.zeros(len(rows), np.int64)
    in_sync_l = in_sync.tolist()
    found.rows(
        has_min & (in_sync < min_isr),
        Severity.WARNING,
        lambda e, i, _: _f(
            BELOW_MIN_ISR_NOW,
            Severity.WARNING,
            e,
            f"{e.name} is below min ISR now ({in_sync_l[i]} of {min_isr_l[i]} in sync).",
            "Fix the partition's health before moving it, unless the move is the fix.",
        ),
    )
    # racks: how many different racks hold the replicas before and after
    racked = sorted((b.id, b.rack) for b in state.brokers if b.rack)
    names = sorted({r for _, r in racked})
    rack_ids = np.array([b for b, _ in racked], np.int64)
    rack_codes = np.array([names.index(r) for _, r in racked], np.int64)
    before = distinct(lookup(rack_ids, rack_codes, c.current, missing=-1))
    after = distinct(lookup(rack_ids, rack_codes, t, missing=-1))
    before_l, after_l = before.tolist(), after.tolist()
    available = len({b.rack for b in state.brokers if b.eligible and b.rack})
    # fewer racks than before, beyond what fewer replicas force (RF 3 → 2 spans at most 2 racks)
    reduced = live & (before > 0) & (after < np.minimum(before, c.target_len))
    found.rows(
        reduced,
        Severity.WARNING,
        lambda e, i, _: _f(
            RACK_SPREAD_REDUCED,
            Severity.WARNING,
            e,
            f"{e.name}: replicas spread over {after_l[i]} racks instead of {before_l[i]}.",
            "Pick brokers in different racks so a rack failure cannot take the partition down.",
        ),
    )
    if available:
        found.rows(
            live & ~reduced & (after < np.minimum(c.target_len, available)),
            Severity.WARNING,
            lambda e, i, _: _f(
                RACKS_UNDERUSED,
                Severity.WARNING,
                e,
                f"{e.name}: {target_len[i]} replicas on {after_l[i]} racks while {available} are available.",
                "Spread the replicas over more racks.",
            ),
        )


def _min_isr_rows(
    found: _Found,
    below: np.ndarray[Any, np.dtype[np.bool_]],
    lowered: np.ndarray[Any, np.dtype[np.bool_]],
    current_len: list[int],
    target_len: list[int],
    min_isr_l: list[int],
) -> None:
    """Partitions with fewer replicas than min ISR after the plan (``below``): an error where the
    plan makes the partition refuse acks=all writes (it lowers the replication factor,
    ``lowered``); a warning where it was below already and the plan does not lower it: refusing
    the plan protects nothing (a drain between log dirs, a move of its replicas, a step up)."""
    found.rows(
        below & lowered,
        Severity.ERROR,
        lambda e, i, _: _f(
            RF_BELOW_MIN_ISR,
            Severity.ERROR,
            e,
            f"{e.name}: {target_len[i]} replicas is fewer than min.insync.replicas={min_isr_l[i]}; "
            "Kafka completes such a move, and the partition then refuses writes with acks=all.",
            "Keep at least min.insync.replicas replicas, or lower the topic's min.insync.replicas first.",
        ),
    )
    found.rows(
        below & ~lowered,
        Severity.WARNING,
        lambda e, i, _: _f(
            RF_STILL_BELOW_MIN_ISR,
            Severity.WARNING,
            e,
            f"{e.name} has {current_len[i]} replicas now, fewer than min.insync.replicas={min_isr_l[i]}, and "
            f"{target_len[i]} after this plan: it refuses writes with acks=all before and after (the plan does not "
            "cause that).",
            "Acknowledge; raise its replication factor (or lower min.insync.replicas) to let it take acks=all writes.",
        ),
    )


def _space(state: ClusterState, d: PlanDiff) -> list[Finding]:
    usable = {b.id: b.usable_bytes for b in state.brokers}
    return space_findings(usable, [(b.broker, b.bytes_in) for b in d.brokers])


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


def _tiered(state: ClusterState, d: PlanDiff) -> list[Finding]:
    tiered = state.tiered
    if not tiered:
        return []
    moving: dict[str, list[int]] = {}
    for c in d.changes:
        if c.adding and c.topic in tiered:
            n = moving.setdefault(c.topic, [0, 0])
            n[0] += 1
            n[1] += c.bytes_to_copy
    return tiered_findings([(t, n, b) for t, (n, b) in moving.items()])


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


def errors(findings: Iterable[Finding]) -> list[Finding]:
    return [f for f in findings if f.severity is Severity.ERROR]


def blocking(findings: Iterable[Finding], allow_cordoned: bool = False) -> list[Finding]:
    """The errors that block a submission: every error, bar the cordoned destinations the operator
    allowed (``allow_cordoned``)."""
    return [f for f in errors(findings) if not (allow_cordoned and f.code == CORDONED_DESTINATION)]


def overridable_only(findings: Iterable[Finding]) -> bool:
    """Whether there are errors and every one of them may be overridden (:data:`OVERRIDABLE`)."""
    found = errors(findings)
    return bool(found) and all(f.code in OVERRIDABLE for f in found)


def warnings(findings: Iterable[Finding]) -> list[Finding]:
    return [f for f in findings if f.severity is Severity.WARNING]


def counts(findings: Iterable[Finding]) -> dict[str, int]:
    c = Counter(f.severity.value for f in findings)
    return {s.value: c.get(s.value, 0) for s in Severity}
