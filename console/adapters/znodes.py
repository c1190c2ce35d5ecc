"""Parsing of the ZooKeeper data Kafka writes (pure; no kazoo here).

Kafka writes these with Jackson from Scala maps, so key order is not stable: always parse.
Every parser raises ``ZnodeFormatError`` (a ``ValueError``) with the path and the reason.
"""

from __future__ import annotations

import json
from typing import Any

from console.adapters.records import BrokerInfo, PartitionMeta, TopicZnode
from console.core.errors import ZnodeFormatError
from console.core.model import BrokerId, TopicPartition


def _load(path: str, data: bytes | str | None) -> dict[str, Any]:
    if data is None or data == b"" or data == "":
        raise ZnodeFormatError(path, "empty znode")
    try:
        obj = json.loads(data)
    except (ValueError, UnicodeDecodeError) as e:
        raise ZnodeFormatError(path, f"not JSON ({e})") from None
    if not isinstance(obj, dict):
        raise ZnodeFormatError(path, "not a JSON object")
    return obj


def _ids(path: str, value: Any, what: str) -> tuple[BrokerId, ...]:
    if not isinstance(value, list) or not all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        raise ZnodeFormatError(path, f"{what} is not a list of broker ids")
    return tuple(BrokerId(v) for v in value)


def _partition_map(path: str, value: Any, what: str) -> dict[int, tuple[BrokerId, ...]]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ZnodeFormatError(path, f"{what} is not an object")
    out: dict[int, tuple[BrokerId, ...]] = {}
    for k, v in value.items():
        try:
            p = int(k)
        except ValueError:
            raise ZnodeFormatError(path, f"{what} has a non-numeric partition {k!r}") from None
        out[p] = _ids(path, v, f"{what}[{k}]")
    return out


def parse_topic(path: str, data: bytes | str | None) -> TopicZnode:
    """``/brokers/topics/<t>``: version 1 (partitions only), 2 (+ adding/removing), 3 (+ topic_id)."""
    obj = _load(path, data)
    version = obj.get("version", 1)
    if not isinstance(version, int):
        raise ZnodeFormatError(path, "version is not an integer")
    partitions = _partition_map(path, obj.get("partitions"), "partitions")
    topic_id = obj.get("topic_id")
    return TopicZnode(
        version=version,
        topic_id=topic_id if isinstance(topic_id, str) else None,
        partitions=partitions,
        adding=_partition_map(path, obj.get("adding_replicas"), "adding_replicas"),
        removing=_partition_map(path, obj.get("removing_replicas"), "removing_replicas"),
    )


def parse_partition_state(path: str, data: bytes | str | None, replicas: tuple[BrokerId, ...]) -> PartitionMeta:
    """``/brokers/topics/<t>/partitions/<p>/state``: leader (-1 = none) and ISR."""
    obj = _load(path, data)
    leader = obj.get("leader", -1)
    if not isinstance(leader, int):
        raise ZnodeFormatError(path, "leader is not an integer")
    isr = _ids(path, obj.get("isr", []), "isr")
    return PartitionMeta(replicas=replicas, isr=isr, leader=BrokerId(leader) if leader >= 0 else None)


def parse_broker(path: str, broker_id: int, data: bytes | str | None) -> BrokerInfo:
    """``/brokers/ids/<id>`` (versions 1–5): host, port and rack (rack only from version 3)."""
    obj = _load(path, data)
    host = obj.get("host")
    port = obj.get("port")
    if (not isinstance(host, str) or port in (None, -1)) and isinstance(obj.get("endpoints"), list):
        for ep in obj["endpoints"]:
            if isinstance(ep, str) and "://" in ep:
                hostport = ep.split("://", 1)[1]
                h, _, p = hostport.rpartition(":")
                if h and p.isdigit():
                    host, port = h.strip("[]"), int(p)
                    break
    rack = obj.get("rack")
    return BrokerInfo(
        id=BrokerId(broker_id),
        host=host if isinstance(host, str) else None,
        port=port if isinstance(port, int) and port >= 0 else None,
        rack=rack if isinstance(rack, str) else None,
    )


def parse_controller(path: str, data: bytes | str | None) -> BrokerId | None:
    """``/controller``: only ``brokerid`` matters."""
    obj = _load(path, data)
    bid = obj.get("brokerid")
    if not isinstance(bid, int):
        raise ZnodeFormatError(path, "brokerid is not an integer")
    return BrokerId(bid) if bid >= 0 else None


def parse_legacy_reassignment(path: str, data: bytes | str | None) -> dict[TopicPartition, tuple[BrokerId, ...]]:
    """``/admin/reassign_partitions``: ``{"version":1,"partitions":[{"topic","partition","replicas"}]}``."""
    obj = _load(path, data)
    parts = obj.get("partitions")
    if not isinstance(parts, list):
        raise ZnodeFormatError(path, "partitions is not a list")
    out: dict[TopicPartition, tuple[BrokerId, ...]] = {}
    for i, e in enumerate(parts):
        if not isinstance(e, dict):
            raise ZnodeFormatError(path, f"partitions[{i}] is not an object")
        t, p = e.get("topic"), e.get("partition")
        if not isinstance(t, str) or not isinstance(p, int):
            raise ZnodeFormatError(path, f"partitions[{i}] lacks topic or partition")
        out[(t, p)] = _ids(path, e.get("replicas"), f"partitions[{i}].replicas")
    return out


def encode_legacy_reassignment(targets: dict[TopicPartition, tuple[BrokerId, ...]]) -> bytes:
    """The inverse of ``parse_legacy_reassignment``: no ``log_dirs`` (the controller's plain
    Jackson mapper refuses unknown keys and would ignore the whole node)."""
    return json.dumps(
        {
            "version": 1,
            "partitions": [{"topic": t, "partition": p, "replicas": list(r)} for (t, p), r in sorted(targets.items())],
        },
        separators=(",", ":"),
    ).encode()


def parse_config(path: str, data: bytes | str | None) -> dict[str, str]:
    """``/config/<type>/<name>``: ``{"version":1,"config":{k: v}}`` (all values strings)."""
    obj = _load(path, data)
    cfg = obj.get("config", {})
    if not isinstance(cfg, dict):
        raise ZnodeFormatError(path, "config is not an object")
    return {str(k): str(v) for k, v in cfg.items()}


def encode_topic(znode: TopicZnode) -> bytes:
    """The inverse of ``parse_topic`` (tests and the sandbox use it; the controller owns this znode)."""
    obj: dict[str, Any] = {
        "version": znode.version,
        "partitions": {str(p): list(r) for p, r in znode.partitions.items()},
    }
    if znode.version >= 2:
        obj["adding_replicas"] = {str(p): list(r) for p, r in znode.adding.items()}
        obj["removing_replicas"] = {str(p): list(r) for p, r in znode.removing.items()}
    if znode.version >= 3 and znode.topic_id:
        obj["topic_id"] = znode.topic_id
    return json.dumps(obj).encode()
