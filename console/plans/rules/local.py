"""The in-process runner: the rules over the snapshot's columns and the diff's, in one batch.

:func:`console.plans.validate.validate` is this runner's caller."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from functools import partial

import numpy as np

from console.core.model import ClusterState, Finding, Findings, Severity
from console.core.perf import without_gc
from console.plans.columns import PAD, columns_of
from console.plans.diff import PlanDiff
from console.plans.plan import Plan
from console.plans.rules.batch import BrokerTable, EntryBatch, broker_table
from console.plans.rules.catalog import RULES
from console.plans.rules.engine import Found, evaluate, say
from console.plans.rules.overall import plan_size_findings, space_findings, tiered_findings

_new_finding: Callable[[tuple[str, Severity, str, str, str, int, None]], Finding] = partial(tuple.__new__, Finding)


def entry_batch(state: ClusterState, plan: Plan, d: PlanDiff) -> EntryBatch:
    """The plan's entries joined with their partitions in ``state`` (through the diff ``d``)."""
    c = d.columns
    entries = plan.entries
    parts = state.partitions
    n = len(entries)
    rows = c.rows.tolist()
    safe = np.where(c.known, c.rows, 0)
    sc = columns_of(state) if len(parts) else None
    isr = sc.isr[safe] if sc is not None else np.full((n, 1), PAD, np.int64)
    min_isr = np.where(c.known, sc.min_isr[safe], PAD) if sc is not None else np.full(n, PAD, np.int64)
    topic_partitions = np.full(n, PAD, np.int64)
    unknown = np.flatnonzero(~c.known).tolist()
    if unknown:
        topics = set(state.topics)
        counted = Counter(p.topic for p in parts)
        for i in unknown:
            if entries[i].topic in topics:
                topic_partitions[i] = counted[entries[i].topic]
    log_dirs = {i: e.log_dirs for i, e in enumerate(entries) if e.log_dirs is not None}
    dir_now = {i: tuple(parts[rows[i]].log_dir_on(b) for b in entries[i].replicas) for i in log_dirs if rows[i] >= 0}
    stale = {}
    if plan.basis:
        for i, e in enumerate(entries):
            was = plan.basis.get((e.topic, e.partition)) if rows[i] >= 0 else None
            if was is not None and was != parts[rows[i]].replicas:
                stale[i] = (tuple(map(int, was)), tuple(map(int, parts[rows[i]].replicas)))
    return EntryBatch(
        topic=[e.topic for e in entries],
        partition=np.fromiter((e.partition for e in entries), np.int64, n),
        known=c.known,
        kind=c.kind,
        target=c.target,
        target_len=c.target_len,
        current=c.current,
        current_len=c.current_len,
        adding=c.adding,
        leader_before=c.leader_before,
        leader_after=c.leader_after,
        in_flight=c.in_flight,
        isr=isr,
        min_isr=min_isr,
        topic_partitions=topic_partitions,
        log_dirs=log_dirs,
        dir_now=dir_now,
        stale=stale,
    )


def overall_findings(state: ClusterState, plan: Plan, d: PlanDiff) -> list[Finding]:
    """The findings about the whole plan or a broker, from this review's totals."""
    usable = {b.id: b.usable_bytes for b in state.brokers}
    found = space_findings(usable, [(b.broker, b.bytes_in) for b in d.brokers])
    found += plan_size_findings(plan)
    tiered = state.tiered
    if tiered:
        moving: dict[str, list[int]] = {}
        for ch in d.changes:
            if ch.adding and ch.topic in tiered:
                m = moving.setdefault(ch.topic, [0, 0])
                m[0] += 1
                m[1] += ch.bytes_to_copy
        found += tiered_findings([(t, k, b) for t, (k, b) in moving.items()])
    return found


def in_order(batch: EntryBatch, table: BrokerTable, found: Found, overall: list[Finding]) -> list[Finding]:
    """The findings of ``found`` (ordered) and ``overall``: by severity, the overall ones first
    within theirs, then the entries' in plan order."""
    words = say(batch, table, RULES, found)
    severity = [RULES[k].severity for k in found.rule.tolist()]
    ranks = found.rank
    out: list[Finding] = []
    rows = found.row.tolist()
    for sev in sorted(Severity, key=lambda s: s.rank):
        out += [f for f in overall if f.severity is sev]
        lo, hi = np.searchsorted(ranks, [sev.rank, sev.rank + 1]).tolist()
        out += [
            _new_finding((code, severity[k], message, hint, batch.topic[rows[k]], batch.partition_list[rows[k]], None))
            for k, (code, message, hint) in zip(range(lo, hi), words[lo:hi], strict=True)
        ]
    return out


@without_gc
def review(state: ClusterState, plan: Plan, d: PlanDiff) -> Findings:
    """Every finding for ``plan`` against ``state``, errors first (then by topic and partition)."""
    batch = entry_batch(state, plan, d)
    table = broker_table(state)
    found = evaluate(batch, table, RULES).ordered()
    return Findings(in_order(batch, table, found, overall_findings(state, plan, d)))
