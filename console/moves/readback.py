"""Read back what the brokers show after the controller took a change (a cancel, a wave that
completed): each broker's own metadata may trail the controller's, and ``kafka-topics
--describe`` (or a client) shows what the broker it asks shows. A partition counts as shown once
every broker asked answers and shows the replica set expected; until then the words say the
controller took it and the brokers still show the old replica set (pure)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum

from console.core.format import ids_text, plural
from console.core.model import BrokerId, TopicPartition, partition_name
from console.core.shown import BrokerView

AGREE_S = 60.0
"""How long the brokers are given, after a change left the in-flight list, to show it."""
LOOK_EVERY_S = 1.0
"""How often the brokers are asked while some still show the old replica set."""


class Shown(StrEnum):
    """What the brokers show of one partition the controller changed."""

    SHOWN = "every broker shows it"
    BEHIND = "the controller took it; the brokers still show the old replica set"
    UNREAD = "not read back from the brokers yet"


@dataclass(frozen=True)
class ReadBack:
    """The brokers' view of partitions the controller changed, look after look."""

    expected: Mapping[TopicPartition, tuple[BrokerId, ...]]
    """What each partition is now, as the controller has it (a cancel: its original replicas)."""
    agreed_s: Mapping[TopicPartition, float] = field(default_factory=dict)
    """Those every broker asked showed, with the seconds from the controller's answer to the look that saw it."""
    behind: Mapping[TopicPartition, tuple[tuple[BrokerId, tuple[BrokerId, ...]], ...]] = field(default_factory=dict)
    """At the last look, those some broker showed otherwise: each such broker and what it showed."""
    silent: tuple[BrokerId, ...] = ()
    """Brokers that did not answer the last look."""
    looked_s: float | None = None
    """Seconds from the controller's answer to the last look (None: not looked yet)."""

    def expect(self, more: Mapping[TopicPartition, tuple[BrokerId, ...]]) -> ReadBack:
        """These partitions expected too (those that just left the in-flight list)."""
        if all(k in self.expected for k in more):
            return self
        return replace(self, expected={**self.expected, **more})

    def look(self, views: Iterable[BrokerView], at_s: float) -> ReadBack:
        """This look's answers (``at_s`` seconds after the controller answered) folded in: a
        partition every broker asked shows as expected is shown from now on; while a broker does
        not answer, none is (what it would show is not known)."""
        views = tuple(views)
        answered = [v for v in views if v.error is None]
        everyone = len(answered) == len(views)
        agreed = dict(self.agreed_s)
        behind: dict[TopicPartition, tuple[tuple[BrokerId, tuple[BrokerId, ...]], ...]] = {}
        for key, want in self.expected.items():
            if key in agreed:
                continue
            seen = [(v.broker, v.replicas[key]) for v in answered if key in v.replicas]
            off = tuple((b, r) for b, r in seen if set(r) != set(want))
            if seen and not off and everyone and len(seen) == len(views):
                agreed[key] = at_s
            elif off:
                behind[key] = off
        silent = tuple(sorted(v.broker for v in views if v.error is not None))
        return replace(self, agreed_s=agreed, behind=behind, silent=silent, looked_s=at_s)

    def state(self, key: TopicPartition) -> Shown:
        if key in self.agreed_s:
            return Shown.SHOWN
        return Shown.BEHIND if key in self.behind else Shown.UNREAD

    @property
    def settled(self) -> bool:
        """Every partition shown by every broker."""
        return len(self.agreed_s) == len(self.expected)

    def detail(self, key: TopicPartition) -> str:
        """Per partition, in words: when every broker showed it, or which still show what."""
        if key in self.agreed_s:
            return (
                f"every broker shows {ids_text(self.expected[key])} ({self.agreed_s[key]:.1f} s after the controller)"
            )
        if key in self.behind:
            shows = "; ".join(f"broker {b} shows {ids_text(r)}" for b, r in self.behind[key])
            return f"{shows} ({self._when()}), the controller has {ids_text(self.expected[key])}"
        if self.silent:  # what a broker that does not answer shows is not known: never said gone
            return f"not read back ({silent_text(self.silent)})"
        return "no broker answered for it yet" if self.looked_s is not None else "not read back yet"

    def _when(self) -> str:
        return f"{self.looked_s:.1f} s after the controller" if self.looked_s is not None else "not looked yet"

    def summary(self) -> str:
        """One sentence for all of them: how many every broker shows and how long that took, how
        many some broker still shows otherwise (counted per broker, never listed)."""
        n, shown = len(self.expected), len(self.agreed_s)
        said = []
        if shown:
            slowest = max(self.agreed_s.values())
            said.append(
                f"every broker shows {'all ' if shown == n and n > 1 else ''}{plural(shown, 'partition')}"
                + ("" if shown == n else f" of {n}")
                + f" as the controller has it (within {slowest:.1f} s)"
            )
        if self.behind:
            per_broker: dict[BrokerId, int] = {}
            for off in self.behind.values():
                for b, _ in off:
                    per_broker[b] = per_broker.get(b, 0) + 1
            counts = ", ".join(f"broker {b}: {c}" for b, c in sorted(per_broker.items()))
            said.append(
                f"the brokers still show the old replica set of {plural(len(self.behind), 'partition')} "
                f"{self._when()} ({counts})"
            )
        unread = n - shown - len(self.behind)
        if unread:
            said.append(f"{plural(unread, 'partition')} not read back from the brokers")
        if self.silent:
            said.append(f"no answer from {plural(len(self.silent), 'broker')} {ids_text(self.silent)}")
        return "; ".join(said)

    def to_dict(self, named: int = 50) -> dict[str, object]:
        """For the audit log: counts, the slowest agreement, and the first ``named`` still behind."""
        return {
            "expected": len(self.expected),
            "shown": len(self.agreed_s),
            "slowest_s": round(max(self.agreed_s.values()), 2) if self.agreed_s else None,
            "behind": [
                {"partition": partition_name(*k), "brokers": {str(b): list(r) for b, r in off}}
                for k, off in sorted(self.behind.items())[:named]
            ],
            "behind_count": len(self.behind),
            "silent": [int(b) for b in self.silent],
            "looked_s": None if self.looked_s is None else round(self.looked_s, 2),
        }


def silent_text(brokers: Iterable[BrokerId]) -> str:
    """``broker 1 did not answer``, ``brokers 1,2 did not answer``."""
    ids = sorted(brokers)
    return f"{'broker' if len(ids) == 1 else 'brokers'} {ids_text(ids)} did not answer"


def topics_of(keys: Iterable[TopicPartition]) -> tuple[str, ...]:
    return tuple(sorted({t for t, _ in keys}))
