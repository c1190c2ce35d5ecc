"""The Admin API's reads of partitions and brokers."""

from __future__ import annotations

from collections.abc import Iterable
from functools import partial
from typing import Any

from console.adapters.kafka.base import Client
from console.adapters.kafka.translate import retriable, translate
from console.adapters.kafka.wire import _describe_topic_partitions
from console.adapters.records import (
    BrokerInfo,
    Elr,
    PartitionMeta,
    Reassignment,
)
from console.core.model import (
    BrokerId,
    TopicPartition,
)


class Reads(Client):
    """The Admin API reads: Metadata, ListPartitionReassignments, the registrations, ELR."""

    # -- reads ---------------------------------------------------------------------------------
    def read_metadata(
        self,
    ) -> tuple[str | None, BrokerId | None, tuple[BrokerInfo, ...], dict[TopicPartition, PartitionMeta]]:
        t = self.settings.timeout_s
        for attempt in range(3):
            admin = self.confluent()
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
                self._confluent = None
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

    def list_reassignments(self, attempts: int = 8) -> dict[TopicPartition, Reassignment]:
        """ListPartitionReassignments, sent where Metadata names the controller: in KRaft a broker at
        random, until the controller fences a broker that stopped hard (its session timeout, 9 s by
        default) possibly the broker that is gone; asked again (fresh metadata) while the error is
        retriable: eight attempts span about ten seconds, so a dead broker named every time is
        not what ends the answer."""
        raw = self._to_controller(
            "ListPartitionReassignments", lambda c: c.list_partition_reassignments(), attempts, {}
        )
        out: dict[TopicPartition, Reassignment] = {}
        for tp, r in raw.items():
            out[(tp.topic, tp.partition)] = Reassignment(
                tuple(BrokerId(b) for b in r["replicas"]),
                tuple(BrokerId(b) for b in r["adding_replicas"]),
                tuple(BrokerId(b) for b in r["removing_replicas"]),
            )
        return out

    def describe_registered(self) -> tuple[BrokerInfo, ...] | None:
        """Every registered broker, fenced ones included, each with ``fenced`` said (DescribeCluster
        v2, KIP-1073, Kafka ≥ 4.0: Metadata leaves fenced brokers out). None where the cluster does
        not say (older DescribeCluster versions carry no ``IsFenced``)."""
        raw = self._with_kp("DescribeCluster", lambda c: c.describe_cluster())
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
            raw = self._with_kp(
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
