"""The Admin API's reads of partitions and brokers."""

from __future__ import annotations

from collections.abc import Iterable
from functools import partial
from typing import Any

from console.adapters.kafka.base import ClientPart
from console.adapters.kafka.requests import Api
from console.adapters.kafka.translate import retriable, translate
from console.adapters.kafka.wire import _describe_topic_partitions, from_each
from console.adapters.records import (
    BrokerInfo,
    Elr,
    PartitionMeta,
    Reassignment,
)
from console.core.errors import UnsupportedByCluster
from console.core.model import (
    BrokerId,
    TopicPartition,
)
from console.core.shown import BrokerView


class Reads(ClientPart):
    """The Admin API reads: Metadata, ListPartitionReassignments, the registrations, ELR."""

    # -- reads ---------------------------------------------------------------------------------
    def read_metadata(
        self,
    ) -> tuple[str | None, BrokerId | None, tuple[BrokerInfo, ...], dict[TopicPartition, PartitionMeta]]:
        t = self.client.settings.timeout_s
        for attempt in range(3):
            admin = self.client.confluent()
            self.client.requests.sent(Api.DESCRIBE_CLUSTER)
            self.client.requests.sent(Api.METADATA)
            try:
                cluster_f = admin.describe_cluster(request_timeout=t)
                md = admin.list_topics(timeout=t)
            except Exception as e:
                raise translate(e, "the Metadata request") from None
            try:
                cluster = cluster_f.result(timeout=t + 1)
                break
            except Exception as e:
                # the brokers answered Metadata, but DescribeCluster waited for the broker Metadata
                # names as controller: in KRaft a broker at random, possibly one just stopped hard
                # until its session times out; a fresh client asks fresh Metadata
                if not retriable(e) or attempt == 2:
                    raise translate(e, "the Metadata request") from None
                self.client.drop_confluent()
        brokers = tuple(
            sorted(
                (BrokerInfo(BrokerId(n.id), n.host, n.port, n.rack) for n in cluster.nodes),
                key=lambda b: b.id,
            )
        )
        controller = cluster.controller.id if cluster.controller is not None else md.controller_id
        parts: dict[TopicPartition, PartitionMeta] = {}
        for name, tm in md.topics.items():
            if tm.error is not None and not tm.partitions:
                continue
            for pid, pm in tm.partitions.items():
                parts[(name, pid)] = PartitionMeta(
                    tuple(BrokerId(b) for b in pm.replicas),
                    tuple(BrokerId(b) for b in pm.isrs),
                    BrokerId(pm.leader) if pm.leader >= 0 else None,
                )
        controller_id = BrokerId(controller) if controller is not None and controller >= 0 else None
        return cluster.cluster_id, controller_id, brokers, parts

    def lean_metadata(
        self,
    ) -> tuple[str | None, BrokerId | None, tuple[BrokerInfo, ...], dict[TopicPartition, PartitionMeta]]:
        """What :meth:`read_metadata` reads (the brokers, the controller Metadata names and every
        partition's replicas, ISR and leader), from the first broker that answers Metadata
        (:meth:`Client._any_broker`): a cancel's read, which a hung broker must not hold up.
        librdkafka picks the broker itself, and prefers the one it sent to last, a hung one as often
        as not; the full read keeps it (it decodes a large cluster's Metadata several times faster)."""
        from kafka.protocol.metadata import MetadataRequest

        self.client.requests.sent(Api.METADATA)
        md = self.client._any_broker(
            "the Metadata request", lambda: MetadataRequest(topics=None, allow_auto_topic_creation=False), _answer
        )
        brokers = tuple(
            sorted((BrokerInfo(BrokerId(b.node_id), b.host, b.port, b.rack) for b in md.brokers), key=lambda b: b.id)
        )
        parts: dict[TopicPartition, PartitionMeta] = {}
        for t in md.topics:
            if t.error_code and not t.partitions:
                continue
            for p in t.partitions:
                parts[(t.name, p.partition_index)] = PartitionMeta(
                    tuple(BrokerId(b) for b in p.replica_nodes),
                    tuple(BrokerId(b) for b in p.isr_nodes),
                    BrokerId(p.leader_id) if p.leader_id >= 0 else None,
                )
        controller = BrokerId(md.controller_id) if md.controller_id is not None and md.controller_id >= 0 else None
        return md.cluster_id, controller, brokers, parts

    def list_reassignments(self) -> dict[TopicPartition, Reassignment]:
        """ListPartitionReassignments from the first broker that answers it (in KRaft any broker
        hands it to the controller; in a ZooKeeper cluster only the controller answers, the others
        say NOT_CONTROLLER): :meth:`Client._any_broker`, so that a hung broker (or one stopped
        hard, named by Metadata until the controller fences it) does not hold it up."""
        from kafka.protocol.admin import ListPartitionReassignmentsRequest

        timeout_ms = int(self.client.settings.timeout_s * 1000)
        self.client.requests.sent(Api.LIST_PARTITION_REASSIGNMENTS)
        raw = self.client._any_broker(
            "ListPartitionReassignments",
            lambda: ListPartitionReassignmentsRequest(timeout_ms=timeout_ms, topics=None),
            _answer,
        )
        out: dict[TopicPartition, Reassignment] = {}
        for t in raw.topics:
            for p in t.partitions:
                out[(t.name, p.partition_index)] = Reassignment(
                    tuple(BrokerId(b) for b in p.replicas),
                    tuple(BrokerId(b) for b in p.adding_replicas),
                    tuple(BrokerId(b) for b in p.removing_replicas),
                )
        return out

    def replicas_by_broker(self, keys: Iterable[TopicPartition]) -> tuple[BrokerView, ...]:
        """Each broker's own view of ``keys``' replica sets: Metadata for their topics sent to every
        broker the client knows (one request each, at once), as ``kafka-topics --describe`` would
        see it from that broker. A broker that does not answer has its error said, not raised."""
        wanted = set(keys)
        topics = sorted({t for t, _ in wanted})
        if not topics:
            return ()
        raw = self.client._with_kp("Metadata from each broker", partial(_metadata_from_each, topics=topics))
        views = []
        for node, answer, error in raw:
            self.client.requests.sent(Api.METADATA, len(topics), node)  # sent to each broker at once
            if answer is None:
                views.append(BrokerView(BrokerId(node), {}, str(error)))
                continue
            shown: dict[TopicPartition, tuple[BrokerId, ...]] = {}
            for t in answer.topics:
                for p in t.partitions:
                    if (t.name, p.partition_index) in wanted:
                        shown[(t.name, p.partition_index)] = tuple(BrokerId(b) for b in p.replica_nodes)
            views.append(BrokerView(BrokerId(node), shown))
        return tuple(sorted(views, key=lambda v: v.broker))

    def describe_registered(self) -> tuple[BrokerInfo, ...] | None:
        """Every registered broker, fenced ones included, each with ``fenced`` said (DescribeCluster
        v2, KIP-1073, Kafka ≥ 4.0: Metadata leaves fenced brokers out). None where the cluster does
        not say (older DescribeCluster versions carry no ``IsFenced``)."""
        from kafka.protocol.admin import DescribeClusterRequest

        try:
            self.client.requests.sent(Api.DESCRIBE_CLUSTER)
            raw = self.client._any_broker(
                "DescribeCluster",
                lambda: DescribeClusterRequest(
                    include_cluster_authorized_operations=False, include_fenced_brokers=True
                ),
                lambda r: _answer(r).to_dict(),
            )
        except UnsupportedByCluster:
            return None  # before Kafka 2.8: no DescribeCluster, and no fenced brokers said
        brokers = raw.get("brokers") or ()
        if not brokers or any("is_fenced" not in b for b in brokers):
            return None
        return tuple(
            sorted(
                (
                    BrokerInfo(
                        BrokerId(int(b["broker_id"])), b.get("host"), b.get("port"), b.get("rack"), bool(b["is_fenced"])
                    )
                    for b in brokers
                ),
                key=lambda b: b.id,
            )
        )

    def describe_elr(self, topics: Iterable[str], page: int = 2_000) -> dict[TopicPartition, Elr]:
        """Eligible leader replicas and last-known ones of ``topics``' partitions (DescribeTopicPartitions,
        KIP-966; paged by the broker's partition limit through a cursor). Only partitions that have
        some are in the answer. A topic deleted meanwhile is left out."""
        names = sorted(set(topics))
        out: dict[TopicPartition, Elr] = {}
        cursor: dict[str, Any] | None = None
        seen: set[tuple[str, int]] = set()
        while names:
            self.client.requests.sent(Api.DESCRIBE_TOPIC_PARTITIONS, len(names))
            raw = self.client._with_kp(
                "DescribeTopicPartitions",
                partial(_describe_topic_partitions, topics=names, page=page, cursor=cursor),
            )
            for t in raw.get("topics", ()):
                if t.get("error_code"):
                    continue
                for p in t.get("partitions", ()):
                    elr = tuple(BrokerId(int(b)) for b in p.get("eligible_leader_replicas") or ())
                    last = tuple(BrokerId(int(b)) for b in p.get("last_known_elr") or ())
                    if elr or last:
                        out[(t["name"], int(p["partition_index"]))] = Elr(elr, last)
            cursor = raw.get("next_cursor")
            if cursor is None:
                break
            mark = (str(cursor["topic_name"]), int(cursor["partition_index"]))
            if mark in seen:  # a broker that hands out the same cursor again: stop rather than loop
                break
            seen.add(mark)
        return out


def _answer(response: Any) -> Any:
    """``response`` itself, or the error its top-level error code names (raised)."""
    from kafka import errors as ke

    code = getattr(response, "error_code", 0)
    if code:
        raise ke.for_code(code)(getattr(response, "error_message", None) or "")
    return response


def _metadata_from_each(client: Any, topics: list[str]) -> list[tuple[int, Any, BaseException | None]]:
    """Metadata for ``topics`` from every broker kafka-python knows (:func:`from_each`)."""
    from kafka.protocol.metadata import MetadataRequest

    return from_each(
        client,
        lambda: MetadataRequest(
            topics=[MetadataRequest.MetadataRequestTopic(name=t) for t in topics], allow_auto_topic_creation=False
        ),
    )
