"""Partition health in Kafka 4's terms (KIP-966, eligible leader replicas), next to KIP-352's counts.

A partition's **electable** replicas are those the controller may make leader: its ISR, and its
eligible leader replicas (ELR) on brokers that are not fenced. A partition whose ISR is below
``min.insync.replicas`` but which still has an electable replica takes no writes (``acks=all``) but
has lost nothing.

**Offline** means one thing everywhere in the console, as in Kafka's ``OfflinePartitionsCount``: no
leader now (:attr:`~console.core.model.PartitionHealth.OFFLINE`). Kafka 4 splits offline partitions
in two: **offline, nothing electable** (no replica the controller may elect: it cannot bring the
partition back by itself) and **offline, election due** (an electable replica, no leader yet). Each
group has one name (:class:`HealthGroup`): its key in ``state --json`` and the words the pages and
the CLI say it with. Pure: computed from a snapshot.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from console.core.model import BrokerId, ClusterState, Partition


def unfenced(state: ClusterState, broker: BrokerId) -> bool:
    """Registered and not fenced (a broker the snapshot does not know counts as fenced: it is gone)."""
    b = state.broker(broker)
    return b is not None and b.live


def electable(state: ClusterState, p: Partition, among: tuple[BrokerId, ...] | None = None) -> tuple[BrokerId, ...]:
    """ISR ∪ (ELR on unfenced brokers), in R's order; only ``among`` when given (e.g. the
    original replicas a cancel goes back to)."""
    isr = set(p.isr)
    elr = {b for b in p.elr if unfenced(state, b)}
    pool = p.replicas if among is None else among
    return tuple(b for b in pool if b in isr or b in elr)


def min_isr(state: ClusterState, topic: str) -> int | None:
    """The topic's effective ``min.insync.replicas`` when the snapshot read it."""
    return state.min_insync_index.get(topic)


class HealthGroup(str, Enum):
    """A group of :class:`KafkaHealth`: the value is its key in ``state --json`` (``counts`` and
    ``health_lists``), :attr:`label` the words every page and the CLI name it with."""

    UNDER_MIN_ISR = "under_min_isr"
    OFFLINE_NOTHING_ELECTABLE = "offline_nothing_electable"
    OFFLINE_ELECTION_DUE = "leaderless_electable"
    UNDER_REPLICATED = "under_replicated"
    WITH_ELR = "with_elr"

    @property
    def label(self) -> str:
        return _LABELS[self][0]

    @property
    def meaning(self) -> str:
        """What the group means for the partitions in it, in a sentence."""
        return _LABELS[self][1]


_LABELS = {
    HealthGroup.UNDER_MIN_ISR: (
        "Under min ISR",
        "ISR below min.insync.replicas, but a replica can still lead (in sync, or an eligible leader replica on "
        "a live broker, KIP-966): writes with acks=all are refused, nothing is lost.",
    ),
    HealthGroup.OFFLINE_NOTHING_ELECTABLE: (
        "Offline, nothing electable",
        "No leader, and no replica the controller may elect (none in sync, no eligible leader replica on a live "
        "broker): the cluster cannot bring it back by itself.",
    ),
    HealthGroup.OFFLINE_ELECTION_DUE: (
        "Offline, election due",
        "No leader yet, but a replica the controller may elect: an election is due or under way.",
    ),
    HealthGroup.UNDER_REPLICATED: (
        "Truly under-replicated",
        "A replica of the partition (an original one while reassigning) is out of the ISR (KIP-352).",
    ),
    HealthGroup.WITH_ELR: (
        "With eligible leader replicas",
        "Eligible leader replicas or last known ones (KIP-966): replicas out of the ISR that may still lead "
        "when their broker is not fenced.",
    ),
}


@dataclass(frozen=True, slots=True)
class KafkaHealth:
    """The snapshot's partitions by Kafka 4's health, each list sorted by topic and partition.
    Offline partitions (no leader) are those of :attr:`nothing_electable` and :attr:`election_due`."""

    under_min_isr: tuple[Partition, ...]
    """ISR below ``min.insync.replicas`` but something electable: writes with ``acks=all`` blocked,
    no data lost."""
    nothing_electable: tuple[Partition, ...]
    """Offline (no leader), and nothing electable: the controller cannot bring it back by itself."""
    election_due: tuple[Partition, ...]
    """Offline (no leader) now, but an electable replica (an election is due or under way)."""
    under_replicated: tuple[Partition, ...]
    """Truly under-replicated (KIP-352; replicas still being added never count)."""
    with_elr: tuple[Partition, ...]
    """Partitions that have eligible leader replicas or last-known ones."""

    @property
    def offline_count(self) -> int:
        """How many partitions have no leader (both offline groups)."""
        return len(self.nothing_electable) + len(self.election_due)

    def group(self, g: HealthGroup) -> tuple[Partition, ...]:
        """The partitions of group ``g``."""
        return {
            HealthGroup.UNDER_MIN_ISR: self.under_min_isr,
            HealthGroup.OFFLINE_NOTHING_ELECTABLE: self.nothing_electable,
            HealthGroup.OFFLINE_ELECTION_DUE: self.election_due,
            HealthGroup.UNDER_REPLICATED: self.under_replicated,
            HealthGroup.WITH_ELR: self.with_elr,
        }[g]


def kafka_health(state: ClusterState) -> KafkaHealth:
    """The health lists of ``state`` (built once per snapshot and kept with it)."""
    return state.memo("kafka_health", _kafka_health)


def _kafka_health(state: ClusterState) -> KafkaHealth:
    under_min: list[Partition] = []
    nothing: list[Partition] = []
    due: list[Partition] = []
    with_elr: list[Partition] = []
    mins = state.min_insync_index
    for p in state.partitions:
        if p.elr or p.last_known_elr:
            with_elr.append(p)
        if p.leader is None:
            (due if electable(state, p) else nothing).append(p)
            continue
        need = mins.get(p.topic)
        if need is not None and len(p.isr) < need:
            under_min.append(p)
    return KafkaHealth(tuple(under_min), tuple(nothing), tuple(due), state.under_replicated, tuple(with_elr))


class CancelRisk(str, Enum):
    """Why a cancel puts a partition at risk (:meth:`CancelProjection.risk`), in the words that name
    the partitions it applies to."""

    LEADERLESS = "may be left without a leader"
    """Nothing electable among the originals (KIP-236)."""
    BELOW_MIN_ISR = "would refuse writes with acks=all (fewer than min.insync.replicas could lead)"
    """Electable originals, but fewer than ``min.insync.replicas`` (KIP-966)."""


@dataclass(frozen=True, slots=True)
class CancelProjection:
    """One partition after a cancel reverts it to its original replicas."""

    partition: Partition
    electable: tuple[BrokerId, ...]
    """(ISR ∩ originals) ∪ (unfenced ELR ∩ originals): who could lead after the revert."""
    min_isr: int | None

    @property
    def leaderless(self) -> bool:
        """Nothing electable among the originals: the partition may be left without a leader (KIP-236)."""
        return not self.electable

    @property
    def below_min_isr(self) -> bool:
        """Electable, but fewer than ``min.insync.replicas``: writes with ``acks=all`` are refused after the revert."""
        return self.min_isr is not None and 0 < len(self.electable) < self.min_isr

    @property
    def at_risk(self) -> bool:
        return self.leaderless or self.below_min_isr

    @property
    def risk(self) -> CancelRisk | None:
        """Which risk, if any."""
        if self.leaderless:
            return CancelRisk.LEADERLESS
        return CancelRisk.BELOW_MIN_ISR if self.below_min_isr else None

    def why(self) -> str:
        """Why the partition is at risk, in words (empty when it is not)."""
        orig = ",".join(str(b) for b in self.partition.original) or "none"
        if self.leaderless:
            return (
                f"none of its original replicas ({orig}) is in sync or an eligible leader replica on a live "
                "broker: the cancel may leave it without a leader (KIP-236)"
            )
        if self.below_min_isr:
            got = ",".join(str(b) for b in self.electable)
            return (
                f"only {got} of its original replicas ({orig}) could lead, fewer than min.insync.replicas="
                f"{self.min_isr}: after the cancel it refuses writes with acks=all until they catch up"
            )
        return ""


def project_cancel(state: ClusterState, p: Partition) -> CancelProjection:
    """What a cancel of ``p`` (in flight) leaves: Kafka does not check this itself (KIP-966's
    proposed guard was not merged), so the console does."""
    return CancelProjection(p, electable(state, p, among=p.original), min_isr(state, p.topic))
