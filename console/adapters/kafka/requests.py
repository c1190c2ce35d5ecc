"""What the gateway asks of the brokers, told as it is asked: every request family reports each
request it sends (its Kafka API, how many partitions or resources it names, the broker it goes to)
to whoever listens. Benchmarks count the load the console puts on a cluster this way, and tests
check what a snapshot asked for, without wrapping the gateway's methods by name."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum


class Api(str, Enum):
    """The Kafka APIs the console sends (their names as Kafka's protocol gives them)."""

    METADATA = "Metadata"
    DESCRIBE_CLUSTER = "DescribeCluster"
    LIST_PARTITION_REASSIGNMENTS = "ListPartitionReassignments"
    ALTER_PARTITION_REASSIGNMENTS = "AlterPartitionReassignments"
    DESCRIBE_LOG_DIRS = "DescribeLogDirs"
    ALTER_REPLICA_LOG_DIRS = "AlterReplicaLogDirs"
    DESCRIBE_CONFIGS = "DescribeConfigs"
    INCREMENTAL_ALTER_CONFIGS = "IncrementalAlterConfigs"
    DESCRIBE_TOPIC_PARTITIONS = "DescribeTopicPartitions"
    ELECT_LEADERS = "ElectLeaders"
    API_VERSIONS = "ApiVersions"
    DESCRIBE_FEATURES = "DescribeFeatures"
    DESCRIBE_QUORUM = "DescribeQuorum"
    UNREGISTER_BROKER = "UnregisterBroker"


@dataclass(frozen=True, slots=True)
class Sent:
    """One request the gateway sent (or is about to send: a request that fails is told too)."""

    api: Api
    items: int = 0
    """The partitions (DescribeLogDirs, AlterPartitionReassignments, ElectLeaders...), topics
    (Metadata, DescribeTopicPartitions) or config resources (DescribeConfigs) it names; 0 when it
    names none (the whole cluster: Metadata of every topic, ListPartitionReassignments of all)."""
    broker: int | None = None
    """The broker it is sent to, where the console picks it (DescribeLogDirs, a broker's configs);
    None where the client picks (any broker, the controller)."""


Listener = Callable[[Sent], object]


class Requests:
    """The listeners told of every request of one gateway (thread-safe; none by default, at no cost)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._listeners: tuple[Listener, ...] = ()

    def listen(self, listener: Listener) -> Callable[[], None]:
        """Tell ``listener`` of every request sent from now on; returns what stops it."""
        with self._lock:
            self._listeners = (*self._listeners, listener)

        def stop() -> None:
            with self._lock:
                self._listeners = tuple(x for x in self._listeners if x is not listener)

        return stop

    def sent(self, api: Api, items: int = 0, broker: int | None = None) -> None:
        """A request of ``api`` naming ``items`` partitions or resources, to ``broker`` (None: the
        client's choice), told to every listener."""
        listeners = self._listeners
        if listeners:
            said = Sent(api, items, broker)
            for listener in listeners:
                listener(said)
