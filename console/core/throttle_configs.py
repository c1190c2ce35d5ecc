"""Replication throttles as the cluster stores them, and which is in force for a broker or replica."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from console.core.limits import ALL_REPLICAS

if TYPE_CHECKING:
    pass


@dataclass(frozen=True, slots=True)
class Throttles:
    """Replication throttles currently set (all values as the cluster stores them: strings).

    ``brokers`` maps a broker id (or ``"<default>"``) to its throttle rate configs;
    ``topics`` maps a topic to its throttled-replicas lists.
    """

    brokers: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = ()
    topics: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = ()

    @staticmethod
    def of(brokers: Mapping[str, Mapping[str, str]], topics: Mapping[str, Mapping[str, str]]) -> Throttles:
        def freeze(m: Mapping[str, Mapping[str, str]]) -> tuple[tuple[str, tuple[tuple[str, str], ...]], ...]:
            return tuple(
                (k, tuple(sorted(v.items()))) for k, v in sorted(m.items(), key=lambda kv: (len(kv[0]), kv[0])) if v
            )

        return Throttles(freeze(brokers), freeze(topics))

    def broker_map(self) -> dict[str, dict[str, str]]:
        return {k: dict(v) for k, v in self.brokers}

    def topic_map(self) -> dict[str, dict[str, str]]:
        return {k: dict(v) for k, v in self.topics}

    def __bool__(self) -> bool:
        return bool(self.brokers or self.topics)


DEFAULT_BROKER = "<default>"
"""How the cluster-wide default broker configs are keyed in :attr:`Throttles.brokers`."""


def broker_rate(brokers: Mapping[str, Mapping[str, str]], broker: int, key: str) -> str | None:
    """A broker's throttle rate config ``key`` as in force: its own value, else the cluster default."""
    for entity in (str(broker), DEFAULT_BROKER):
        value = brokers.get(entity, {}).get(key)
        if value:
            return value
    return None


def broker_rate_bps(brokers: Mapping[str, Mapping[str, str]], broker: int, key: str) -> int | None:
    """:func:`broker_rate` in bytes per second; None when unset or not a number."""
    value = broker_rate(brokers, broker, key)
    return int(value) if value is not None and value.isdigit() else None


def replica_listed(topic_configs: Mapping[str, str], key: str, partition: int, broker: int) -> bool:
    """Whether a topic's throttled-replicas list ``key`` names ``partition:broker`` (or ``*``)."""
    entries = {x.strip() for x in topic_configs.get(key, "").split(",")}
    return ALL_REPLICAS in entries or f"{partition}:{broker}" in entries
