"""What a check found: findings with their severity and where, and the roles a replica plays."""

from __future__ import annotations

from collections.abc import Mapping
from enum import Enum
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    import pandas as pd

from console.core.ids import BrokerId


class Severity(str, Enum):
    """How much a finding matters to the person on call."""

    INFO = "info"
    """Worth knowing; nothing to do."""
    WARNING = "warning"
    """Look before acting: the picture may be incomplete or two sources disagree."""
    ERROR = "error"
    """Something is wrong and blocks what depends on it."""

    @property
    def rank(self) -> int:
        """0 for errors, 1 for warnings, 2 for info: the order findings are shown in."""
        return _SEVERITY_RANK[self]


_SEVERITY_RANK = {Severity.ERROR: 0, Severity.WARNING: 1, Severity.INFO: 2}


class Source(str, Enum):
    """Where the console learned that a partition is being reassigned."""

    API = "api"
    """Listed by ListPartitionReassignments: the controller's own view."""
    ZOOKEEPER = "zookeeper"
    """Only the topic znode's adding/removing maps say so (the Admin API did not answer)."""
    LEGACY = "legacy"
    """Submitted through the deprecated ``/admin/reassign_partitions`` znode: cannot be cancelled
    through the API until the controller has picked it up."""


class ReplicaRole(str, Enum):
    """What one replica is doing, as a cell of the broker × partition picture."""

    LEADER = "leader"
    """Serves reads and writes for the partition."""
    IN_SYNC = "in sync"
    """A follower in the ISR."""
    OUT_OF_SYNC = "out of sync"
    """A follower that has fallen out of the ISR (or whose broker is down)."""
    ELIGIBLE = "eligible (ELR)"
    """Out of the ISR but an eligible leader replica (KIP-966): electable when its broker is unfenced."""
    LAST_KNOWN_ELR = "last known ELR"
    """Out of the ISR, an eligible leader replica that shut down uncleanly (KIP-966)."""
    ADDING = "adding"
    """Being copied to this broker by a reassignment."""
    REMOVING = "removing"
    """Will be deleted from this broker when the reassignment completes."""
    LEADER_REMOVING = "leader (removing)"
    """The leader, on a broker the reassignment removes: it leads until the controller moves
    leadership to the target when the reassignment completes."""


class PartitionHealth(str, Enum):
    """One word for a partition's condition, worst first."""

    OFFLINE = "offline"
    """No leader now (what Kafka's ``OfflinePartitionsCount`` counts): producers and consumers of this
    partition are stuck. On Kafka 4 either nothing is electable or an election is due
    (:class:`console.core.health.HealthGroup`)."""
    UNDER_REPLICATED = "under-replicated"
    """Truly under-replicated (KIP-352): an original replica is out of the ISR."""
    REASSIGNING = "reassigning"
    """Moving, with every original replica in sync."""
    HEALTHY = "healthy"
    """Every replica in sync, nothing moving."""


class Finding(NamedTuple):
    """An observation worth showing, as data rather than an exception. (A named tuple: a plan
    review of 100k partitions may carry tens of thousands.)"""

    code: str
    severity: Severity
    message: str
    hint: str = ""
    topic: str | None = None
    partition: int | None = None
    broker: BrokerId | None = None

    def to_dict(self) -> dict[str, object]:
        return {
            "code": self.code,
            "severity": self.severity.value,
            "topic": self.topic,
            "partition": self.partition,
            "broker": self.broker,
            "message": self.message,
            "hint": self.hint,
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Finding:
        """A finding read back from :meth:`to_dict`'s form (a snapshot document, a stored report)."""
        broker = d.get("broker")
        return cls(
            d["code"],
            Severity(d["severity"]),
            d["message"],
            d.get("hint", ""),
            d.get("topic"),
            d.get("partition"),
            None if broker is None else BrokerId(int(broker)),
        )


class Findings(list[Finding]):
    """Findings in order (what :func:`console.plans.validate.validate` returns): a list, with a
    short text form and :meth:`to_pandas`."""

    def counts(self) -> dict[str, int]:
        """Findings per severity, errors first."""
        return {s.value: sum(1 for f in self if f.severity is s) for s in sorted(Severity, key=lambda s: s.rank)}

    def __repr__(self) -> str:
        said = ", ".join(f"{n} {k}" for k, n in self.counts().items() if n)
        return f"<Findings: {said or 'none'}>"

    def to_pandas(self) -> pd.DataFrame:
        import pandas as pd

        return pd.DataFrame([f.to_dict() for f in self], columns=list(Finding._fields))
