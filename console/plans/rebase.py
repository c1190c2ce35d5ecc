"""Bringing a stale plan up to date (pure).

A plan remembers each partition's replicas (R) as they were when it was drafted (its ``basis``,
:meth:`console.plans.plan.Plan.with_basis`); validation calls a partition whose R has changed
since ``stale`` (an error). :func:`rebase` says, per planned partition, what happened since the
draft, and builds the plan brought up to date: the same targets, with the current replicas as
the new basis, optionally without the partitions that already reached their target and without
those that are gone.

What each partition is, first match wins:

* **gone**: its topic, or the partition, is not in the snapshot;
* **in flight**: a reassignment is in progress now (whoever started it; toward the plan's target
  or elsewhere);
* **completed**: not reassigning, and its replicas are the plan's target, in order (and were not
  already so when drafted);
* **moved**: not reassigning, replicas differ from the basis: someone else moved it;
* **unchanged**: replicas as when drafted;
* **no basis**: the plan does not say what the partition was when drafted (a plan read from the
  official JSON, which carries no basis): whether it moved cannot be told.

The rebased plan keeps every target as it was; its basis is each kept partition's R in the
snapshot, so validating it against that snapshot gives no ``stale`` finding. A kept partition
that is gone keeps no basis (validation reports it as unknown).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import Enum
from typing import NamedTuple

from console.core.format import ids_text
from console.core.model import BrokerId, ClusterState, Keyed, Partition, TopicPartition
from console.plans.plan import Plan, PlanEntry


class Since(str, Enum):
    """What happened to a planned partition since the plan was drafted."""

    GONE = "gone"
    """Its topic or the partition no longer exists."""
    IN_FLIGHT = "in flight"
    """A reassignment of it is in progress now."""
    COMPLETED = "completed"
    """It is at the plan's target already (a reassignment finished)."""
    MOVED = "moved"
    """Its replicas changed since the draft, by someone else (not reassigning now)."""
    UNCHANGED = "unchanged"
    """Replicas as when the plan was drafted."""
    NO_BASIS = "no basis"
    """The plan does not record its replicas at drafting time: whether it moved is not known."""


KINDS = tuple(Since)
"""Every kind, in the order reports list them."""


@dataclass(frozen=True)
class RebaseOptions:
    """What :func:`rebase` does besides keeping the targets and taking the current replicas as
    the new basis (which it always does)."""

    drop_completed: bool = False
    """Leave out the partitions already at their target (they would be no-ops)."""
    drop_gone: bool = False
    """Leave out the partitions whose topic or partition no longer exists (they would be errors)."""

    def drops(self, kind: Since) -> bool:
        return (kind is Since.COMPLETED and self.drop_completed) or (kind is Since.GONE and self.drop_gone)


class _RebaseRow(NamedTuple):
    topic: str
    partition: int
    kind: Since
    target: tuple[BrokerId, ...]
    basis: tuple[BrokerId, ...] | None
    """R when the plan was drafted, when the plan records it."""
    current: tuple[BrokerId, ...] | None
    """R now; None when gone."""
    adding: tuple[BrokerId, ...]
    removing: tuple[BrokerId, ...]
    topic_exists: bool
    kept: bool
    """In the rebased plan."""


class RebaseRow(_RebaseRow, Keyed):
    """One planned partition: what happened to it since the draft (a named tuple: one per entry)."""

    __slots__ = ()

    @property
    def changed(self) -> bool:
        """Its replicas differ from the basis (or it is gone while the basis knew it): what the
        ``stale`` finding and unknown-partition errors report."""
        return self.basis is not None and self.current != self.basis

    @property
    def to_do(self) -> bool:
        """Kept, and submitting it would change the partition (exists, not at its target)."""
        return (
            self.kept
            and self.current is not None
            and (bool(self.adding or self.removing) or self.current != self.target)
        )

    @property
    def detail(self) -> str:
        """One sentence for people."""
        k = self.kind
        if k is Since.GONE:
            return "the topic no longer exists" if not self.topic_exists else "the partition no longer exists"
        if k is Since.IN_FLIGHT:
            original = tuple(b for b in self.current or () if b not in self.adding)
            goal = tuple(b for b in self.current or () if b not in self.removing)
            where = "toward the plan's target" if goal == self.target else f"toward {_ids(goal)}"
            return f"reassigning now {where} (from {_ids(original)})"
        if k is Since.COMPLETED:
            return f"already at the target {_ids(self.target)}" + (
                f" (was {_ids(self.basis)})" if self.basis is not None else ""
            )
        if k is Since.MOVED:
            return f"moved by someone else: was {_ids(self.basis or ())}, now {_ids(self.current or ())}"
        if k is Since.UNCHANGED:
            return "as when drafted"
        return "not known whether it moved: the plan records no replicas at drafting time"


@dataclass(frozen=True)
class RebaseReport:
    """Per planned partition what changed since the draft, and the plan brought up to date."""

    rows: tuple[RebaseRow, ...]
    plan: Plan
    """The rebased plan (possibly empty)."""
    options: RebaseOptions
    counts: dict[Since, int] = field(default_factory=dict)
    """Rows of each kind (every kind present, zero when none)."""

    @property
    def changed(self) -> int:
        """Partitions whose replicas differ from the basis (or gone since it was recorded)."""
        return sum(1 for r in self.rows if r.changed)

    @property
    def dropped(self) -> tuple[TopicPartition, ...]:
        return tuple(r.key for r in self.rows if not r.kept)

    @property
    def left_to_do(self) -> int:
        """Partitions of the rebased plan that submitting it would change."""
        return sum(1 for r in self.rows if r.to_do)

    @property
    def has_basis(self) -> bool:
        return any(r.basis is not None for r in self.rows)

    def counts_text(self) -> str:
        """``3 moved, 1 in flight, 8 unchanged`` (kinds with none left out)."""
        return ", ".join(f"{n:,} {k.value}" for k, n in self.counts.items() if n) or "no partitions"


def _ids(ids: Iterable[int]) -> str:
    return ids_text(ids, "none")


def _kind(entry: PlanEntry, p: Partition | None, was: tuple[BrokerId, ...] | None) -> Since:
    if p is None:
        return Since.GONE
    if p.reassigning:
        return Since.IN_FLIGHT
    if was is not None and p.replicas == was:
        return Since.UNCHANGED
    if p.replicas == entry.replicas:
        return Since.COMPLETED
    return Since.MOVED if was is not None else Since.NO_BASIS


def rebase(state: ClusterState, plan: Plan, options: RebaseOptions | None = None) -> RebaseReport:
    """What happened to each of ``plan``'s partitions since it was drafted (``plan.basis``), and
    the plan brought up to date against ``state`` with ``options``."""
    opts = options or RebaseOptions()
    index = state.partition_index
    topics = set(state.topics)
    rows: list[RebaseRow] = []
    kept: list[PlanEntry] = []
    basis: dict[TopicPartition, tuple[BrokerId, ...]] = {}
    for e in plan.entries:
        key = e.key
        p = index.get(key)
        was = plan.basis.get(key)
        kind = _kind(e, p, was)
        keep = not opts.drops(kind)
        rows.append(
            RebaseRow(
                e.topic,
                e.partition,
                kind,
                e.replicas,
                was,
                p.replicas if p is not None else None,
                p.adding if p is not None else (),
                p.removing if p is not None else (),
                e.topic in topics,
                keep,
            )
        )
        if keep:
            kept.append(e)
            if p is not None:
                basis[key] = p.replicas
    counted = Counter(r.kind for r in rows)
    return RebaseReport(tuple(rows), Plan(tuple(kept), basis), opts, {k: counted.get(k, 0) for k in KINDS})


def report_rows(report: RebaseReport, only_changed: bool = False, limit: int | None = None) -> list[dict[str, object]]:
    """Plain rows for a table (no pandas): one per planned partition, in plan order;
    ``only_changed`` leaves out the unchanged ones; ``limit`` caps the rows built."""
    out: list[dict[str, object]] = []
    for r in report.rows:
        if only_changed and r.kind is Since.UNCHANGED:
            continue
        if limit is not None and len(out) >= limit:
            break
        out.append(
            {
                "partition": r.name,
                "since the draft": r.kind.value,
                "when drafted": _ids(r.basis) if r.basis is not None else "",
                "now": _ids(r.current) if r.current is not None else "gone",
                "target": _ids(r.target),
                "kept": r.kept,
                "detail": r.detail,
            }
        )
    return out


def count_rows(report: RebaseReport) -> list[dict[str, object]]:
    """One row per kind present: kind, partitions, and what the rebased plan does with them."""
    out: list[dict[str, object]] = []
    for kind, n in report.counts.items():
        if n:
            out.append(
                {
                    "since the draft": kind.value,
                    "partitions": n,
                    "in the new plan": "dropped" if report.options.drops(kind) else "kept",
                }
            )
    return out


def report_json(report: RebaseReport) -> dict[str, object]:
    """The report as JSON-ready data (the CLI's ``--report-json``)."""

    def ids(v: tuple[BrokerId, ...] | None) -> list[int] | None:
        return None if v is None else [int(b) for b in v]

    return {
        "counts": {k.value: n for k, n in report.counts.items()},
        "options": {"drop_completed": report.options.drop_completed, "drop_gone": report.options.drop_gone},
        "kept": len(report.plan),
        "dropped": [f"{t}-{p}" for t, p in report.dropped],
        "changed": report.changed,
        "left_to_do": report.left_to_do,
        "partitions": [
            {
                "topic": r.topic,
                "partition": r.partition,
                "since": r.kind.value,
                "basis": ids(r.basis),
                "current": ids(r.current),
                "adding": ids(r.adding),
                "removing": ids(r.removing),
                "target": ids(r.target),
                "kept": r.kept,
                "detail": r.detail,
            }
            for r in report.rows
        ],
    }


def report_text(report: RebaseReport) -> str:
    """The human report (the CLI prints it on stderr): counts, then each partition that is not unchanged."""
    lines = [f"{len(report.rows):,} planned partitions: {report.counts_text()}."]
    if not report.has_basis:
        lines.append(
            "No basis given: partitions that moved cannot be told from unchanged ones; only partitions "
            "in flight, at their target, or gone are detected."
        )
    for r in report.rows:
        if r.kind not in (Since.UNCHANGED, Since.NO_BASIS):
            lines.append(f"  {r.name}: {r.kind.value}: {r.detail}" + ("" if r.kept else " (dropped)"))
    dropped = len(report.dropped)
    lines.append(
        f"The new plan keeps {len(report.plan):,} partitions"
        + (f", drops {dropped:,}" if dropped else "")
        + f"; {report.left_to_do:,} would change."
    )
    gone_kept = sum(1 for r in report.rows if r.kind is Since.GONE and r.kept)
    if gone_kept:
        lines.append(f"{gone_kept:,} kept partitions are gone: validation will report them (drop them to go on).")
    return "\n".join(lines)
