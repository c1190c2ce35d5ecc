"""The replication-factor guard (KIP-860, Kafka 4.1+): which entries of an AlterPartitionReassignments
request keep their partition's replication factor, and the operator's words when the controller
refuses one (pure).

AlterPartitionReassignments v1 carries ``AllowReplicationFactorChange`` (default true). Sent false,
the controller refuses, per partition (``INVALID_REPLICATION_FACTOR``), every entry whose replica
count differs from the partition's replication factor. The console sends every entry that keeps
its partition's RF with the guard on, and the entries that change it in requests of their own with
it off: an RF change goes out only as one, and a move the plan meant to keep the RF cannot change
it because the cluster changed since it was read. Cancels (no target) have no RF to keep; they go
unguarded, as before KIP-860. Where the cluster has no v1 (Kafka 3.9 and older) every request goes
as before, unguarded (the adapter decides from the version it negotiates for the request; Overview says
what the brokers' ApiVersions say: ``console.core.cluster_info.capabilities``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from console.core.model import BrokerId, Partition, TopicPartition

GUARD_REFUSAL = "INVALID_REPLICATION_FACTOR"
"""Kafka's error code (38) for an entry the guard refused."""

Targets = Mapping[TopicPartition, tuple[BrokerId, ...] | None]


def held_rf(p: Partition) -> int:
    """The replication factor the controller holds ``p`` to, as the guard counts it: R − RR.

    Not in flight that is R. In flight, Kafka's controller (``validatePartitionReplicationFactor
    Unchanged``, read from the 4.4.0 jars) counts (R ∪ AR) − RR, the replicas the reassignment in
    flight ends with (AR is within R), not the original replicas R − AR: sending a partition that is
    changing its RF back to its original replicas (a rollback) changes the RF again."""
    return len(p.target)


def split_by_rf(
    targets: Targets, partitions: Mapping[TopicPartition, Partition]
) -> tuple[dict[TopicPartition, tuple[BrokerId, ...]], dict[TopicPartition, tuple[BrokerId, ...] | None]]:
    """``(guarded, unguarded)``, each in request order: the entries that keep their partition's
    replication factor (:func:`held_rf` in ``partitions``, a snapshot's ``partition_index``), to be
    sent with ``AllowReplicationFactorChange=false``; and the RF changes and cancels, to be sent
    with it true. A partition the snapshot does not have is guarded: the guard is never dropped for
    want of knowing (the controller answers for it)."""
    guarded: dict[TopicPartition, tuple[BrokerId, ...]] = {}
    unguarded: dict[TopicPartition, tuple[BrokerId, ...] | None] = {}
    for key, target in targets.items():
        p = partitions.get(key)
        if target is not None and (p is None or len(target) == held_rf(p)):
            guarded[key] = target
        else:
            unguarded[key] = target
    return guarded, unguarded


_CHANGED = re.compile(r"from (\d+) to (\d+)")


def refusal_text(kafka_message: str | None, read_rf: int | None, target: tuple[BrokerId, ...]) -> str:
    """What a guarded entry's refusal says to an operator: the change the controller saw, that the
    console never sends an RF change unguarded, what it had read, and what to do. The RF the
    controller saw comes from its message ("The replication factor is changed from 3 to 2"), for
    these words only (the refusal is known by its code); without it, from nothing."""
    seen = _CHANGED.search(kafka_message or "")
    change = f"from {seen.group(1)} to {seen.group(2)}" if seen else f"to {len(target)}"
    read = (
        f"it read this partition's replication factor as {read_rf}"
        if read_rf is not None
        else "it did not see this partition when it read the cluster"
    )
    return (
        f"would change the replication factor {change}; the console sends RF changes only as RF changes "
        f"(AllowReplicationFactorChange=true) and sent this entry as a move that keeps the RF: {read}, so "
        "the partition changed since (another reassignment?). Nothing was changed for it: read the cluster "
        f"again and check the plan. Kafka: {kafka_message or 'INVALID_REPLICATION_FACTOR'}"
    )
