"""Validation of a plan against a snapshot, as findings (pure).

An **error** blocks submission; a **warning** needs acknowledging; **info** is reported. Each
finding names the partition (or broker), says what is wrong and what to do. The checks cover
what the controller itself would reject with INVALID_REPLICA_ASSIGNMENT (empty list, duplicate
or negative ids, adding replicas on brokers that are not alive), so nothing it would refuse is
ever sent.
"""

from __future__ import annotations

from collections import Counter
from typing import Iterable, Mapping

from console.diff import ChangeKind, PartitionChange, PlanDiff, diff
from console.perf import without_gc
from console.model import BrokerId, ClusterState, Finding, Severity
from console.plans import ANY, Plan, PlanEntry

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

REQUEST_LIMIT = 2_000
"""Partitions per AlterPartitionReassignments request the console sends at most (DESIGN §6)."""
ZNODE_LIMIT_BYTES = 1_000_000
"""ZooKeeper's default jute.maxbuffer (~1 MB): the legacy znode path must stay well under it."""

_ORDER = {Severity.ERROR: 0, Severity.WARNING: 1, Severity.INFO: 2}


def _f(code: str, sev: Severity, c: PartitionChange | PlanEntry, message: str, hint: str) -> Finding:
    return Finding(code, sev, message, hint, topic=c.topic, partition=c.partition)


@without_gc
def validate(state: ClusterState, plan: Plan, plan_diff: PlanDiff | None = None) -> list[Finding]:
    """Every finding for ``plan`` against ``state``, errors first (then by topic and partition)."""
    d = plan_diff if plan_diff is not None else diff(state, plan)
    out: list[Finding] = []
    topics = set(state.topics)
    brokers = state.broker_index
    min_isr = state.min_insync_index
    index = state.partition_index
    available_racks = {b.rack for b in state.brokers if b.eligible and b.rack}
    partitions_of: Counter[str] | None = None
    rack_of = {b.id: b.rack for b in state.brokers if b.rack}
    for e, c in zip(plan.entries, d.changes):
        r = e.replicas
        if not r or min(r) < 0 or len(set(r)) != len(r) or (e.log_dirs is not None and len(e.log_dirs) != len(r)):
            out.extend(_shape(e))
        if c.kind is ChangeKind.UNKNOWN:
            if e.topic not in topics:
                out.append(_f(UNKNOWN_TOPIC, Severity.ERROR, e, f"Topic {e.topic} does not exist.",
                              "Check the name (topic names are case-sensitive) or remove its entries."))
            else:
                if partitions_of is None:
                    partitions_of = Counter(t for t, _ in index)
                out.append(_f(UNKNOWN_PARTITION, Severity.ERROR, e,
                              f"Partition {e.name} does not exist ({e.topic} has {partitions_of[e.topic]} partitions).",
                              "Remove the entry; add partitions with kafka-topics.sh --alter first if intended."))
            continue
        p = index[c.key]
        for b in c.adding:  # the controller checks only the adding replicas for liveness
            broker = brokers.get(b)
            if broker is None:
                out.append(_f(UNKNOWN_BROKER, Severity.ERROR, e, f"{e.name}: broker {b} is unknown to the cluster.",
                              "Use a broker id the cluster knows (see Overview)."))
            elif not broker.eligible:
                why = "is not live" if not broker.live else "is not eligible for new replicas (KIP-841)"
                out.append(_f(BROKER_NOT_ELIGIBLE, Severity.ERROR, e,
                              f"{e.name}: broker {b} {why}; the controller refuses adding a replica there "
                              "(or the reassignment would stall).",
                              "Wait until the broker is back, or pick another broker."))
        if e.log_dirs is not None:
            for b, path in zip(e.replicas, e.log_dirs):
                broker = brokers.get(b)
                if path != ANY and broker is not None and broker.log_dirs and path not in {ld.path for ld in broker.log_dirs}:
                    out.append(_f(UNKNOWN_LOG_DIR, Severity.ERROR, e, f"{e.name}: broker {b} has no log dir {path}.",
                                  "Use one of the broker's log dirs (see Overview) or \"any\"."))
        out.extend(_partition_checks(c, p.isr, min_isr.get(e.topic), rack_of, available_racks))
        basis = plan.basis.get(c.key)
        if basis is not None and basis != p.replicas:
            out.append(_f(STALE, Severity.ERROR, e,
                          f"{e.name} changed since the plan was drafted: replicas were {_ids(basis)}, now {_ids(p.replicas)}.",
                          "Review the plan again against the current cluster."))
    out.extend(_space(state, d))
    out.extend(_size(plan))
    out.sort(key=lambda f: (_ORDER[f.severity], f.topic or "", f.partition if f.partition is not None else -1))
    return out


def _ids(ids: Iterable[int]) -> str:
    return ",".join(str(b) for b in ids) or "none"


def _shape(e: PlanEntry) -> list[Finding]:
    """What the controller rejects with INVALID_REPLICA_ASSIGNMENT, for plans built in code."""
    out = []
    if not e.replicas:
        out.append(_f(EMPTY_REPLICAS, Severity.ERROR, e, f"{e.name}: the replica list is empty.",
                      "Give at least one broker."))
    if any(b < 0 for b in e.replicas):
        out.append(_f(NEGATIVE_BROKER, Severity.ERROR, e, f"{e.name}: invalid broker id in {list(e.replicas)}.",
                      "Broker ids are non-negative integers."))
    if len(set(e.replicas)) != len(e.replicas):
        out.append(_f(DUPLICATE_BROKER, Severity.ERROR, e, f"{e.name}: duplicate broker in {list(e.replicas)}.",
                      "Each broker may hold one replica of a partition."))
    if e.log_dirs is not None and len(e.log_dirs) != len(e.replicas):
        out.append(_f(LOG_DIRS_LENGTH, Severity.ERROR, e, f"{e.name}: {len(e.log_dirs)} log dirs for {len(e.replicas)} replicas.",
                      "Give one log dir (or \"any\") per replica."))
    return out


def _partition_checks(c: PartitionChange, isr: tuple[BrokerId, ...], min_isr: int | None,
                      rack_of: Mapping[BrokerId, str], available_racks: set[str]) -> list[Finding]:
    out = []
    if c.kind is ChangeKind.NONE:
        return [_f(NO_CHANGE, Severity.INFO, c, f"{c.name} already has replicas {_ids(c.target)}: skipped.",
                   "Nothing to do; it is left out of the submission.")]
    if c.kind is ChangeKind.REORDER:
        out.append(_f(REORDER_ONLY, Severity.INFO, c,
                      f"{c.name}: only the order changes ({_ids(c.current)} → {_ids(c.target)}); it completes at once.",
                      "The leader does not move without a preferred leader election."))
    if c.needs_election and c.kind is not ChangeKind.REORDER:
        out.append(_f(LEADER_NEEDS_ELECTION, Severity.INFO, c,
                      f"{c.name}: broker {c.leader_after} stays leader; the preferred leader becomes {c.preferred_leader}.",
                      "Run a preferred leader election after the move to make it lead."))
    if c.in_flight:
        out.append(_f(ALREADY_REASSIGNING, Severity.WARNING, c,
                      f"{c.name} is already being reassigned: the controller keeps its original replicas "
                      f"{_ids(c.current)} and drops adding replicas that are not in the new target.",
                      "Acknowledge, or wait for the current reassignment to finish (or cancel it) first."))
    if c.leader_before is None:
        out.append(_f(OFFLINE_NOW, Severity.WARNING, c, f"{c.name} has no leader now: nothing can be copied.",
                      "Bring a replica back first; the new replicas cannot catch up without a leader."))
    if len(c.target) != len(c.current):
        out.append(_f(RF_CHANGE, Severity.WARNING, c,
                      f"{c.name}: the replication factor changes from {len(c.current)} to {len(c.target)}.",
                      "Acknowledge if intended; the official tool changes it the same way."))
    if min_isr is not None:
        if len(c.target) < min_isr:
            out.append(_f(RF_BELOW_MIN_ISR, Severity.ERROR, c,
                          f"{c.name}: {len(c.target)} replicas is fewer than min.insync.replicas={min_isr}; "
                          "producers with acks=all would fail.",
                          "Keep at least min.insync.replicas replicas, or lower the topic's min.insync.replicas first."))
        in_sync = sum(1 for b in c.current if b in isr)
        if in_sync < min_isr:
            out.append(_f(BELOW_MIN_ISR_NOW, Severity.WARNING, c,
                          f"{c.name} is below min ISR now ({in_sync} of {min_isr} in sync).",
                          "Fix the partition's health before moving it, unless the move is the fix."))
    racks_before = {rack_of[b] for b in c.current if b in rack_of}
    racks_after = {rack_of[b] for b in c.target if b in rack_of}
    if racks_before and len(racks_after) < len(racks_before):
        out.append(_f(RACK_SPREAD_REDUCED, Severity.WARNING, c,
                      f"{c.name}: replicas spread over {len(racks_after)} racks instead of {len(racks_before)}.",
                      "Pick brokers in different racks so a rack failure cannot take the partition down."))
    elif available_racks and len(racks_after) < min(len(c.target), len(available_racks)):
        out.append(_f(RACKS_UNDERUSED, Severity.WARNING, c,
                      f"{c.name}: {len(c.target)} replicas on {len(racks_after)} racks while {len(available_racks)} are available.",
                      "Spread the replicas over more racks."))
    return out


def _space(state: ClusterState, d: PlanDiff) -> list[Finding]:
    out = []
    for b in d.brokers:
        broker = state.broker(b.broker)
        if broker is None or broker.usable_bytes is None or b.bytes_in == 0:
            continue
        if b.bytes_in > broker.usable_bytes:
            out.append(Finding(EXCEEDS_FREE_SPACE, Severity.ERROR,
                               f"Broker {b.broker} would receive {b.bytes_in:,} bytes but has {broker.usable_bytes:,} usable.",
                               "Move fewer partitions to it, or free space first.", broker=b.broker))
    return out


def _size(plan: Plan) -> list[Finding]:
    moving = len(plan)
    out = []
    if moving > REQUEST_LIMIT:
        out.append(Finding(TOO_LARGE, Severity.WARNING,
                           f"The plan has {moving:,} partitions, more than {REQUEST_LIMIT:,} per request.",
                           "It is submitted in waves (each request stays under the limit)."))
    size = legacy_znode_bytes(plan) if moving > 1_000 else 0
    if size > ZNODE_LIMIT_BYTES // 2:
        out.append(Finding(TOO_LARGE_FOR_ZNODE, Severity.WARNING,
                           f"The plan is {size:,} bytes of JSON: too large for one /admin/reassign_partitions znode "
                           "(legacy clusters).",
                           "On the legacy path it is split into waves well under 1 MB each."))
    return out


def legacy_znode_bytes(plan: Plan) -> int:
    """Exact size of the plan as ``/admin/reassign_partitions`` content (no log dirs), without
    building the JSON."""
    per_entry = len('{"topic":"","partition":,"replicas":[]},')
    return len('{"version":1,"partitions":[]}') - 1 + sum(
        per_entry + len(e.topic) + len(str(e.partition)) + sum(len(str(b)) for b in e.replicas) + len(e.replicas) - 1
        for e in plan.entries)


def errors(findings: Iterable[Finding]) -> list[Finding]:
    return [f for f in findings if f.severity is Severity.ERROR]


def warnings(findings: Iterable[Finding]) -> list[Finding]:
    return [f for f in findings if f.severity is Severity.WARNING]


def counts(findings: Iterable[Finding]) -> dict[str, int]:
    c = Counter(f.severity.value for f in findings)
    return {s.value: c.get(s.value, 0) for s in Severity}
