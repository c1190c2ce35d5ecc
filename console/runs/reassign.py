"""AlterPartitionReassignments as the write path sends it: split by replication factor, the entries
that keep it guarded (KIP-860; :mod:`console.moves.rf_guard` says which, and why), the rest in
requests of their own, and the answers put back together in request order."""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial

from console.core.errors import ConsoleError, PartiallyApplied
from console.core.model import BrokerId, ClusterState, Outcome, Partition, TopicPartition
from console.moves.rf_guard import GUARD_REFUSAL, held_rf, refusal_text, split_by_rf
from console.runs.gateway import ClusterGateway
from console.runs.settle import send_settled


def send_reassignments(
    cluster: ClusterGateway,
    targets: Mapping[TopicPartition, tuple[BrokerId, ...] | None],
    state: ClusterState,
) -> dict[TopicPartition, Outcome]:
    """Send ``targets`` (a target per partition, or None to cancel) as ``state`` shows the cluster:
    the entries that keep their partition's replication factor with ``AllowReplicationFactorChange``
    false (the cluster refuses those whose RF changed since: their outcome says so in an operator's
    words), the RF changes and cancels with it true, each set in requests of its own. Per partition
    the controller's answer, in the order of ``targets``.

    A request whose answer was lost is settled by what the cluster shows
    (:func:`~console.runs.settle.send_settled`). Raises as the gateway does; when a later request
    fails after an earlier one was answered, :class:`PartiallyApplied` with the answers so far."""
    index = state.partition_index
    guarded, unguarded = split_by_rf(targets, index)
    out: dict[TopicPartition, Outcome] = {}
    for part, allow in ((guarded, False), (unguarded, True)):
        if not part:
            continue
        try:
            answer = send_settled(cluster, part, partial(cluster.alter_reassignments, allow_rf_change=allow))
        except PartiallyApplied as e:
            raise PartiallyApplied(e.cause, {**out, **_explained(e.outcomes, part, index, allow)}) from None
        except ConsoleError as e:
            if out:
                raise PartiallyApplied(e, out) from None
            raise
        out.update(_explained(answer, part, index, allow))
    return {k: out[k] for k in targets if k in out}


def _explained(
    answer: Mapping[TopicPartition, Outcome],
    sent: Mapping[TopicPartition, tuple[BrokerId, ...] | None],
    index: Mapping[TopicPartition, Partition],
    allowed: bool,
) -> dict[TopicPartition, Outcome]:
    """The answer, a guarded entry's refusal by the guard in an operator's words."""
    if allowed:
        return dict(answer)
    out: dict[TopicPartition, Outcome] = {}
    for k, o in answer.items():
        target = sent.get(k)
        if not o.accepted and o.code == GUARD_REFUSAL and target is not None:
            p = index.get(k)
            read = held_rf(p) if p is not None else None
            o = o._replace(message=refusal_text(o.message, read, target))
        out[k] = o
    return out
