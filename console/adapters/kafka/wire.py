"""Requests the clients lack a call for, and answers as records: AlterPartitionReassignments with
KIP-860's guard, DescribeTopicPartitions, per-partition outcomes, statuses and findings."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from console.adapters.records import (
    BrokerInfo,
    Elr,
    PartitionMeta,
    Reassignment,
)
from console.core.errors import (
    AuthorizationFailed,
    ConsoleError,
    UnsupportedByCluster,
)
from console.core.model import (
    BrokerId,
    Finding,
    Outcome,
    Severity,
    SourceStatus,
    TopicPartition,
)

CONFIGS_PARTIAL = "configs-partial"
"""Finding code: DescribeConfigs answered for some brokers or topics but not for these."""


def from_each(client: Any, build: Callable[[], Any]) -> list[tuple[int, Any, BaseException | None]]:
    """The request ``build`` makes, sent to every broker kafka-python knows at once (each on its
    broker's connection, then every answer awaited): per broker its answer, or None and the error."""
    manager = client._manager
    nodes = sorted(b.node_id for b in manager.cluster.brokers())

    async def every() -> list[tuple[int, Any, BaseException | None]]:
        sent = [(node, manager.send(build(), node_id=node)) for node in nodes]
        out: list[tuple[int, Any, BaseException | None]] = []
        for node, future in sent:
            try:
                out.append((node, await manager.wait_for(future, client.config["request_timeout_ms"]), None))
            except Exception as e:  # that broker did not answer: said per broker
                out.append((node, None, e))
        return out

    return list(manager.run(every))


def _describe_topic_partitions(client: Any, topics: list[str], page: int, cursor: dict[str, Any] | None) -> Any:
    return client.describe_topic_partitions(topics, response_partition_limit=page, cursor=cursor)


def out_of_isr_topics(
    parts: Mapping[TopicPartition, PartitionMeta], reassignments: Mapping[TopicPartition, Reassignment] | None
) -> tuple[str, ...]:
    """Topics with a partition that has no leader or an original replica (R − AR) out of the ISR:
    the only partitions that can have eligible leader replicas (Kafka clears ELR once the ISR is
    full again), so the only ones DescribeTopicPartitions is asked about."""
    out: set[str] = set()
    for key, m in parts.items():
        if key[0] in out:
            continue
        r = reassignments.get(key) if reassignments else None
        adding = set(r.adding) if r is not None else set()
        isr = set(m.isr)
        if m.leader is None or any(b not in isr and b not in adding for b in m.replicas):
            out.add(key[0])
    return tuple(sorted(out))


def _alter_reassignments(
    client: Any, reassignments: Mapping[Any, list[int] | None], allow_rf_change: bool = True
) -> dict[Any, tuple[Any, str | None]]:
    """AlterPartitionReassignments through kafka-python's admin client: per partition (kafka-python's
    ``TopicPartition``) its error class (None: accepted) and the controller's message.

    kafka-python 3.0.12 (pinned) has no parameter for ``AllowReplicationFactorChange`` (KIP-860,
    the request's v1, Kafka 4.1) in ``alter_partition_reassignments``, and keeps only each
    partition's error class, not the controller's message ("The replication factor is changed
    from 3 to 2"). So the request is built here as that method builds it (its input helper, its
    timeout) and sent through the same controller routing, ``_send_request_to_controller`` (the
    controller Metadata names, once more after NOT_CONTROLLER), on the client's event loop.

    The version is the one kafka-python negotiates on the connection that carries the request: the
    highest both it and that broker's ApiVersions have. On v0 kafka-python's encoder drops a v1
    field without a word (Kafka's Java client refuses to), so a guarded request (``allow_rf_change``
    False) asks for v1 at least (``min_version=1``): where the broker has no v1 (Kafka 3.9 and
    older) the client fails it before anything is sent (IncompatibleBrokerVersion), and it is sent
    again as before KIP-860, unguarded."""
    from kafka import TopicPartition as KafkaTP
    from kafka import errors as ke
    from kafka.protocol.admin import AlterPartitionReassignmentsRequest

    topics = client._process_alter_partition_reassignments_input(reassignments)
    timeout_ms = client._validate_timeout(None)

    def request(guarded: bool) -> Any:
        if guarded:
            return AlterPartitionReassignmentsRequest(
                timeout_ms=timeout_ms, allow_replication_factor_change=False, topics=topics, min_version=1
            )
        return AlterPartitionReassignmentsRequest(timeout_ms=timeout_ms, topics=topics)

    def top_level_error(r: Any) -> Any:
        yield ke.for_code(r.error_code)

    async def send() -> Any:
        if not allow_rf_change:
            try:
                return await client._send_request_to_controller(request(True), top_level_error)
            except ke.IncompatibleBrokerVersion:
                pass  # no v1 on the broker that takes it: unguarded, as before KIP-860
        return await client._send_request_to_controller(request(False), top_level_error)

    response = client._manager.run(send)
    out: dict[Any, tuple[Any, str | None]] = {}
    for topic in response.responses:
        for part in topic.partitions:
            error = ke.for_code(part.error_code)
            out[KafkaTP(topic.name, part.partition_index)] = (
                None if error is ke.NoError else error,
                part.error_message,
            )
    return out


class _NoAnswer:
    """The controller's answer did not mention the partition."""


NO_ANSWER = _NoAnswer


def outcome_of(topic: str, partition: int, error: object, said: str | None = None) -> Outcome:
    """From kafka-python's per-partition answer: None (accepted), an error class, or
    :data:`NO_ANSWER`; ``said``: the controller's message for it (else the error's description)."""
    if error is None:
        return Outcome(topic, partition, True)
    if error is NO_ANSWER:
        return Outcome(topic, partition, False, "NO_ANSWER", "The controller's answer did not mention it.")
    code = str(getattr(error, "message", None) or getattr(error, "__name__", error))
    errno = getattr(error, "errno", None)
    text = str(said or getattr(error, "description", "") or "")
    return Outcome(topic, partition, False, code, f"{code} ({errno}): {text}" if errno is not None else text)


def _status_of(err: ConsoleError) -> SourceStatus:
    if isinstance(err, AuthorizationFailed):
        return SourceStatus.UNAUTHORIZED
    if isinstance(err, UnsupportedByCluster):
        return SourceStatus.UNSUPPORTED
    return SourceStatus.UNAVAILABLE


def _problem(code: str, err: ConsoleError, broker: BrokerId | None = None) -> Finding:
    return Finding(code, Severity.WARNING, err.message, err.hint, broker=broker)


@dataclass(frozen=True, slots=True)
class _Health:
    registered: tuple[BrokerInfo, ...] | None
    fenced_status: SourceStatus
    elr: dict[TopicPartition, Elr]
    elr_status: SourceStatus
