"""Which balancers a cluster shows signs of, from what the cluster itself shows: topic names and
broker configs. Pure.

Each sign is either *certain* (the balancer is on: Confluent's ``confluent.balancer.enable=true``)
or a *guess* (a topic a balancer writes exists; it may be left over from one that no longer runs),
and the text says which.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import Enum


class Certainty(Enum):
    CERTAIN = "certain"
    GUESS = "guess"
    OFF = "off"
    """Present but switched off by its own config."""


@dataclass(frozen=True)
class BalancerSign:
    """One balancer and what points at it."""

    balancer: str
    certainty: Certainty
    evidence: tuple[str, ...]
    """What the cluster shows: topic names, ``config=value`` pairs."""

    @property
    def text(self) -> str:
        what = ", ".join(self.evidence)
        if self.certainty is Certainty.CERTAIN:
            return f"{self.balancer} is on ({what})."
        if self.certainty is Certainty.OFF:
            return f"{self.balancer} is configured but off ({what})."
        return f"{self.balancer} probably runs on this cluster (a guess from {what}: it may be left over)."


CRUISE_CONTROL_TOPICS = frozenset(
    {
        "__KafkaCruiseControlPartitionMetricSamples",
        "__KafkaCruiseControlModelTrainingSamples",
        "__CruiseControlMetrics",
    }
)
"""Cruise Control's sample store topics and its metrics reporter's topic (their default names)."""
STRIMZI_CRUISE_CONTROL_TOPICS = frozenset(
    {
        "strimzi.cruisecontrol.metrics",
        "strimzi.cruisecontrol.partitionmetricsamples",
        "strimzi.cruisecontrol.modeltrainingsamples",
    }
)
"""The same topics as Strimzi's operator names them when it deploys Cruise Control."""
CONFLUENT_BALANCER_PREFIX = "_confluent_balancer_"
"""Confluent's self-balancing keeps its state and samples in topics named so."""
CONFLUENT_BALANCER_ENABLE = "confluent.balancer.enable"
CONFLUENT_BALANCER_CONFIG_PREFIX = "confluent.balancer."


def recognise(topics: Iterable[str], broker_configs: Mapping[str, str] | None = None) -> list[BalancerSign]:
    """The balancers ``topics`` and ``broker_configs`` (one broker's configs by name, None when not
    read) point at."""
    names = set(topics)
    out: list[BalancerSign] = []
    cc = sorted(names & CRUISE_CONTROL_TOPICS)
    if cc:
        out.append(BalancerSign("Cruise Control", Certainty.GUESS, tuple(f"topic {t}" for t in cc)))
    strimzi = sorted(names & STRIMZI_CRUISE_CONTROL_TOPICS)
    if strimzi:
        out.append(
            BalancerSign("Cruise Control (deployed by Strimzi)", Certainty.GUESS, tuple(f"topic {t}" for t in strimzi))
        )
    out.extend(_confluent(names, broker_configs or {}))
    return out


def _confluent(topics: set[str], configs: Mapping[str, str]) -> list[BalancerSign]:
    enable = configs.get(CONFLUENT_BALANCER_ENABLE)
    state_topics = sorted(t for t in topics if t.startswith(CONFLUENT_BALANCER_PREFIX))
    evidence = tuple(f"topic {t}" for t in state_topics)
    name = "Confluent's self-balancing"
    if enable is not None and enable.strip().lower() == "true":
        return [BalancerSign(name, Certainty.CERTAIN, (f"{CONFLUENT_BALANCER_ENABLE}=true", *evidence))]
    if enable is not None:  # configured but off: its topics, if any, are what it left behind
        return [BalancerSign(name, Certainty.OFF, (f"{CONFLUENT_BALANCER_ENABLE}={enable}", *evidence))]
    others = sorted(k for k in configs if k.startswith(CONFLUENT_BALANCER_CONFIG_PREFIX))
    if state_topics or others:
        return [BalancerSign(name, Certainty.GUESS, (*(f"config {k}" for k in others), *evidence))]
    return []
