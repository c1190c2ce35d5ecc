"""What the console sends to change a cluster, and what came back (pure).

Cancel (KIP-455): a partition in flight goes back to its original replicas (R − AR), the adding
replicas are dropped, and partitions whose reassignment already completed stay where they are
(their way back is the rollback JSON). The controller only takes a cancel it can carry out; a
partition whose original replicas are all out of sync may be left without a leader by it
(KIP-236; KAFKA-14424), and on Kafka 4 one whose electable originals (in sync, or eligible leader
replicas on live brokers, KIP-966) are fewer than ``min.insync.replicas`` refuses writes after it:
Kafka checks neither, so such a cancel needs an explicit override
(:func:`console.core.health.project_cancel`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import StrEnum

from console.core.format import ids_text, plural
from console.core.health import CancelRisk, project_cancel
from console.core.model import BrokerId, ClusterState, Partition, SourceStatus, TopicPartition, partition_name


# -- cancel --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class CancelPlan:
    """What a cancel would do, for the confirmation and the audit log."""

    cancel: tuple[Partition, ...]
    """In flight and in scope: each goes back to its original replicas."""
    not_ours: tuple[Partition, ...]
    """In flight, in scope, but not started by this console: cancelled only when included."""
    at_risk: tuple[Partition, ...]
    """Among ``cancel``: no original replica could lead after the revert (it may be left without a
    leader), or fewer than ``min.insync.replicas`` could (it refuses writes): needs an override."""
    not_in_flight: tuple[TopicPartition, ...]
    """Asked for, but not reassigning (completed, never started, or unknown): nothing to cancel."""
    risks: dict[TopicPartition, str] = field(default_factory=dict)
    """Why each partition in ``at_risk`` is at risk, in words."""
    kinds: dict[TopicPartition, CancelRisk] = field(default_factory=dict)
    """Which risk each partition in ``at_risk`` runs."""
    unread: str = ""
    """Why the read it was planned on cannot say what is in flight (Metadata or
    ListPartitionReassignments did not answer); empty when it could. Those asked for that it did
    not show in flight are then in ``not_read``, never said not in flight."""
    not_read: tuple[TopicPartition, ...] = ()
    """Asked for, and not shown in flight by a read that could not say (``unread``)."""

    def risk_summary(self, named: int = 10) -> str:
        """The partitions at risk named under their risk (the first ``named`` of each):
        ``t-0 may be left without a leader; t-1, t-2 would refuse writes with acks=all (...)``."""
        said = []
        for risk in CancelRisk:
            names = [p.name for p in self.at_risk if self.kinds.get(p.key) is risk]
            if names:
                shown = ", ".join(names[:named]) + (f" and {len(names) - named} more" if len(names) > named else "")
                said.append(f"{shown} {risk.value}")
        return "; ".join(said)

    @property
    def targets(self) -> dict[TopicPartition, tuple[BrokerId, ...] | None]:
        """The request: None (cancel) for every partition to cancel."""
        return {p.key: None for p in self.cancel}

    def explain(self) -> list[str]:
        """What the cancel would do, partition by partition, then :meth:`notes`; with nothing to
        cancel only the notes (what cancel means would not apply: "Cancel 0 reassignments")."""
        if not self.cancel:
            return self.notes()
        lines = [
            f"Cancel {plural(len(self.cancel), 'reassignment')}: each partition goes back to its original "
            "replicas (the adding replicas are dropped), in the order the reassignment lists them: the first, "
            "the preferred leader, may differ from before the move (a run's rollback JSON restores the order). "
            "Partitions whose reassignment already completed stay where they are; a run's way back is its "
            "rollback JSON."
        ]
        for p in self.cancel:
            lines.append(
                f"  {p.name}: {ids_text(p.replicas, 'none')} → back to {ids_text(p.original, 'none')} (dropping {ids_text(p.adding, 'none')})"
            )
        return (lines if self.cancel or not self.unread else []) + self.notes()

    def notes(self) -> list[str]:
        """What :meth:`explain` says after the partitions to cancel: those left alone, at risk, not
        in flight (all that is left to say when there is nothing to cancel)."""
        lines = []
        if self.not_ours:
            lines.append(
                f"Left alone: {plural(len(self.not_ours), 'reassignment')} this console did not start "
                f"({', '.join(p.name for p in self.not_ours[:10])}{' …' if len(self.not_ours) > 10 else ''}); "
                "include them explicitly to cancel them too."
            )
        if self.at_risk:
            lines.append(
                f"At risk ({plural(len(self.at_risk), 'partition')}; Kafka does not check this, the console does; "
                "needs an override):"
            )
            lines += [f"  {p.name}: {self.risks.get(p.key, '')}" for p in self.at_risk[:20]]
            if len(self.at_risk) > 20:
                lines.append(f"  … and {len(self.at_risk) - 20} more.")
        if self.unread:
            what = (
                ", ".join(partition_name(t, p) for t, p in self.not_read[:10])
                + (" …" if len(self.not_read) > 10 else "")
                if self.not_read
                else "whatever else is in flight"
            )
            lines.append(
                f"The cluster's read failed ({self.unread}): whether {what} is in flight is not known, "
                "and nothing of it can be cancelled until the cluster answers. Try again."
            )
        if self.not_in_flight:
            lines.append(
                f"Not in flight (nothing to cancel): "
                f"{', '.join(partition_name(t, p) for t, p in self.not_in_flight[:10])}"
                f"{' …' if len(self.not_in_flight) > 10 else ''}."
            )
        return lines


def plan_cancel(
    state: ClusterState,
    keys: Iterable[TopicPartition] | None,
    ours: Iterable[TopicPartition] = (),
    include_others: bool = False,
) -> CancelPlan:
    """What cancelling ``keys`` (None: everything in flight) means against ``state``. Partitions
    the console did not start (not in ``ours``) are cancelled only with ``include_others``;
    cancelling everything (``keys`` None) is itself the explicit choice of all of them."""
    mine = set(ours)
    if keys is None:
        wanted: list[TopicPartition] = [p.key for p in state.in_flight]
        include_others = True
    else:
        wanted = list(dict.fromkeys(keys))
    index = state.partition_index
    unread = not_read(state, True) or not_read(state, False)
    cancel, others, missing, unknown = [], [], [], []
    for k in wanted:
        p = index.get(k)
        if (p is None or not p.reassigning) and unread:
            unknown.append(k)
        elif p is None or not p.reassigning:
            missing.append(k)
        elif k in mine or include_others:
            cancel.append(p)
        else:
            others.append(p)
    projected = [project_cancel(state, p) for p in cancel]
    risks = {c.partition.key: c.why() for c in projected if c.at_risk}
    kinds = {c.partition.key: c.risk for c in projected if c.risk is not None}
    at_risk = tuple(p for p in cancel if p.key in risks)
    return CancelPlan(tuple(cancel), tuple(others), at_risk, tuple(missing), risks, kinds, unread, tuple(unknown))


def cancelled_text(keys: Iterable[TopicPartition], named: int = 10) -> str:
    """``1 partition cancelled: t-5``: a run's partitions an operator cancelled (back to their
    original replicas), the first ``named`` named; empty for none."""
    names = [partition_name(*k) for k in sorted(set(keys))]
    if not names:
        return ""
    shown = ", ".join(names[:named]) + (f" and {len(names) - named} more" if len(names) > named else "")
    return f"{plural(len(names), 'partition')} cancelled: {shown}"


def keys_of(state: ClusterState, topic: str, partitions: Iterable[int] = ()) -> list[TopicPartition]:
    """The partitions of ``topic`` (all, or those numbered) in the snapshot."""
    numbers = set(partitions)
    return [p.key for p in state.partitions if p.topic == topic and (not numbers or p.partition in numbers)]


# -- what became of each partition asked for ---------------------------------------------------------
class CancelVerdict(StrEnum):
    """What became of one partition an operator asked to cancel."""

    CANCELLED = "cancelled: back to its original replicas"
    ACCEPTED = "cancel accepted, still leaving the in-flight list"
    UNCONFIRMED = "left the in-flight list; not yet read back from the brokers"
    BEHIND = "the controller took it; the brokers still show the old replica set"
    REJECTED = "rejected by the controller"
    COMPLETED = "already completed: stays moved (its rollback JSON undoes it)"
    GONE = "no longer in flight (cancelled elsewhere, or its topic is gone)"
    NOT_READ = "not sent: the cluster's read now did not cover it (whether it is still in flight is not known)"
    AT_RISK = "not sent: the cancel would leave it without a leader or below min ISR now (needs the override)"

    @property
    def short(self) -> str:
        """The verdict in a summary line ("3 partitions <short>")."""
        return _SHORT[self]


_SHORT = {
    CancelVerdict.CANCELLED: "cancelled",
    CancelVerdict.ACCEPTED: "accepted (still leaving the list)",
    CancelVerdict.UNCONFIRMED: "out of the in-flight list (not yet read back from the brokers)",
    CancelVerdict.BEHIND: "taken by the controller (the brokers still show the old replica set)",
    CancelVerdict.REJECTED: "rejected",
    CancelVerdict.COMPLETED: "already completed (they stay moved)",
    CancelVerdict.GONE: "no longer in flight",
    CancelVerdict.NOT_READ: "not sent (not read now)",
    CancelVerdict.AT_RISK: "not sent (at risk)",
}


@dataclass(frozen=True)
class SeenNow:
    """The set an operator saw to cancel, against the cluster as it is now."""

    send: tuple[Partition, ...]
    """Still in flight (as they are now): to cancel."""
    verdicts: dict[TopicPartition, tuple[CancelVerdict, str]]
    """The others, each with its verdict and a detail: not sent."""


def recheck(seen: CancelPlan, now: ClusterState, force_at_risk: bool = False) -> SeenNow:
    """What is left of ``seen`` (planned when the dialog opened or the command read the cluster) to
    cancel against ``now``: partitions that completed meanwhile stay moved, those no longer in flight
    are left alone, those the cancel would now leave without a leader or below min ISR are not sent
    without ``force_at_risk``; the rest are sent. A partition ``now`` does not cover (Metadata did
    not answer, or ListPartitionReassignments did not, so whether it is in flight is not known) is
    not sent and said not read, never gone."""
    index = now.partition_index
    send: list[Partition] = []
    verdicts: dict[TopicPartition, tuple[CancelVerdict, str]] = {}
    for p in seen.cancel:
        q = index.get(p.key)
        if q is not None and q.reassigning:
            why = "" if force_at_risk else project_cancel(now, q).why()
            if why:
                verdicts[p.key] = (CancelVerdict.AT_RISK, why)
            else:
                send.append(q)
        elif q is not None and q.replicas == p.target:
            verdicts[p.key] = (CancelVerdict.COMPLETED, f"now on {ids_text(q.replicas)}")
        elif unread := not_read(now, q is None):
            verdicts[p.key] = (CancelVerdict.NOT_READ, unread)
        else:
            verdicts[p.key] = (
                CancelVerdict.GONE,
                f"now on {ids_text(q.replicas)}" if q is not None else "partition gone",
            )
    return SeenNow(tuple(send), verdicts)


def not_read(now: ClusterState, missing: bool) -> str:
    """Why ``now`` says nothing of a partition it lists as not in flight (or, ``missing``, does not
    list): the read that would have said it did not answer; empty when the read covered it."""
    if missing:
        ok = now.status.metadata is SourceStatus.OK
        return "" if ok else f"Metadata did not answer ({now.status.metadata.value})"
    if now.status.reassignments is not SourceStatus.OK:
        return f"ListPartitionReassignments did not answer ({now.status.reassignments.value})"
    return ""
