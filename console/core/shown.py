"""What each broker shows of some partitions' replica sets and of some topics' configs: its own
metadata, which trails the controller's (KRaft brokers apply the metadata log as it reaches them;
ZooKeeper brokers as the controller's UpdateMetadata requests do)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from console.core.model import BrokerId, TopicPartition


@dataclass(frozen=True, slots=True)
class BrokerView:
    """One broker's answer to Metadata for some partitions: the replicas it shows for each (a
    partition it does not know is left out), or ``error`` when it did not answer."""

    broker: BrokerId
    replicas: Mapping[TopicPartition, tuple[BrokerId, ...]] = field(default_factory=dict)
    error: str | None = None


@dataclass(frozen=True, slots=True)
class BrokerTopicConfigs:
    """One broker's answer to DescribeConfigs for some topics: the configs set on each topic (its
    own dynamic ones, names to values) as that broker has applied them, or ``error`` when it did
    not answer. A topic config change reaches each broker as its metadata does: a broker behind
    still shows what was removed (``kafka-configs --describe`` asks one broker)."""

    broker: BrokerId
    topics: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    error: str | None = None
