"""The snapshot document: a :class:`~console.core.model.ClusterState` as JSON, written and read back
here only.

It is what ``python -m console state --json`` prints (:func:`state_json`), what ``--state-file``
reads back to plan offline, on a laptop, against the cluster exactly as it was (:func:`read_state`),
and, without its partitions, the header the pipeline stores beside a snapshot's replica rows
(:func:`state_header`, :func:`state_from_doc`). Reading gives back the same ``ClusterState``
(brokers with their log dirs and cordons, partitions with R, I, AR, RR and every replica's log,
throttles, min ISR, findings, what each source answered); derived fields in the document
(``live``, ``health``, ``progress``, a broker's and a log dir's ``cordoned``...) are written for
readers and ignored when read.

Cordons (KIP-1066): a broker's ``cordoned`` is true when it is cordoned as a whole (``*``, or every
log dir), false when not, null when not known (not read, or a cluster whose ``metadata.version``
is below 4.3-IV0); ``cordoned_log_dirs`` is its ``cordoned.log.dirs`` config as a list (null when
not known). Each log dir's ``cordoned`` says whether it is cordoned (DescribeLogDirs, else the
config); ``is_cordoned`` is what DescribeLogDirs v5 said (null before v5). A file that is not such a snapshot raises
:class:`~console.core.errors.ConfigError` naming what is wrong.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from console.core.cluster_info import metadata_version, release
from console.core.errors import ConfigError
from console.core.health import HealthGroup, kafka_health
from console.core.model import (
    ApiRange,
    Broker,
    BrokerId,
    ClusterInfo,
    ClusterMode,
    ClusterState,
    Feature,
    Finding,
    LogDir,
    Partition,
    Quorum,
    QuorumMember,
    ReadStatus,
    ReadTimes,
    ReplicaLog,
    Source,
    SourceStatus,
    Throttles,
)

SNAPSHOT_FORMAT = 1
"""Version of the snapshot document: fields may be added, none removed or renamed."""
_HINT = "Save a snapshot with: python -m console state --bootstrap-server HOST:PORT --json > FILE"


# -- writing -------------------------------------------------------------------------------------------------
def health_counts(state: ClusterState) -> dict[str, int]:
    """Kafka 4's health counts (KIP-966) beside KIP-352's: ``offline`` (no leader, as each
    partition's ``health`` says ``offline``), split into ``offline_nothing_electable`` and
    ``leaderless_electable`` (an election due); under min ISR but electable; with eligible leader
    replicas. The keys of the groups are :class:`~console.core.health.HealthGroup`'s."""
    h = kafka_health(state)
    return {
        HealthGroup.UNDER_MIN_ISR.value: len(h.under_min_isr),
        "offline": h.offline_count,
        HealthGroup.OFFLINE_NOTHING_ELECTABLE.value: len(h.nothing_electable),
        HealthGroup.OFFLINE_ELECTION_DUE.value: len(h.election_due),
        HealthGroup.WITH_ELR.value: len(h.with_elr),
    }


def health_lists(state: ClusterState) -> dict[str, list[str]]:
    """The partitions of each Kafka 4 health group (``topic-partition``, sorted by topic and
    partition), keyed as in ``counts``: under min ISR but electable, offline with nothing electable,
    offline with an election due, truly under-replicated, with eligible leader replicas."""
    h = kafka_health(state)
    return {g.value: [p.name for p in h.group(g)] for g in HealthGroup}


def state_json(state: ClusterState) -> dict[str, Any]:
    """The whole snapshot (what ``state --json`` prints and ``--state-file`` reads back)."""
    doc = state_header(state)
    doc["counts"] = {
        "partitions": len(state.partitions),
        "reassigning": len(state.in_flight),
        "under_replicated": len(state.under_replicated),
        **health_counts(state),
    }
    doc["health_lists"] = health_lists(state)
    doc["partitions"] = [partition_dict(p, state.logs_known) for p in state.partitions]
    return doc


def state_header(state: ClusterState) -> dict[str, Any]:
    """Everything of the snapshot but its partitions: what the pipeline keeps beside the replica rows."""
    return {
        "format": SNAPSHOT_FORMAT,
        "taken_at": state.taken_at,
        # when each part was read: sizes and topic configs may be carried over from an earlier read
        "read_at": {
            "replicas": state.read_at.replicas,
            "sizes": state.read_at.sizes,
            "configs": state.read_at.configs,
        },
        "name": state.name,
        "cluster_id": state.cluster_id,
        "controller": state.controller,
        "fingerprint": state.fingerprint(),
        "status": state.status.to_dict(),
        "brokers": [
            {
                "id": b.id,
                "host": b.host,
                "port": b.port,
                "rack": b.rack,
                "live": b.live,
                "registered": b.registered,
                "fenced": b.fenced,
                "eligible": b.eligible,
                "is_controller": b.is_controller,
                "in_api": b.in_api,
                "in_zookeeper": b.in_zookeeper,
                "cordoned": b.cordoned,
                "cordoned_log_dirs": None if b.cordoned_log_dirs is None else list(b.cordoned_log_dirs),
                "log_dirs": [
                    {
                        "path": d.path,
                        "error": d.error,
                        "total_bytes": d.total_bytes,
                        "usable_bytes": d.usable_bytes,
                        "cordoned": b.dir_cordoned(d.path),
                        "is_cordoned": d.cordoned,
                    }
                    for d in b.log_dirs
                ],
            }
            for b in state.brokers
        ],
        "throttles": {"brokers": state.throttles.broker_map(), "topics": state.throttles.topic_map()},
        "min_insync": dict(state.min_insync),
        "tiered_topics": list(state.tiered_topics),
        "findings": [f.to_dict() for f in state.findings],
        "cluster": info_dict(state.info),
    }


def _member_dict(m: QuorumMember) -> dict[str, Any]:
    return {
        "id": m.id,
        "log_end_offset": m.log_end_offset,
        "lag": m.lag,
        "last_fetch_ms": m.last_fetch_ms,
        "last_caught_up_ms": m.last_caught_up_ms,
    }


def info_dict(info: ClusterInfo) -> dict[str, Any]:
    """What the cluster is (``cluster`` in the document); ``version`` and ``metadata_version`` are
    derived, for readers."""
    q = info.quorum
    return {
        "read_at": info.read_at,
        "version": release(info),
        "api_version": info.api_version,
        "mode": info.mode.value,
        "metadata_version": metadata_version(info),
        "features": [
            {
                "name": f.name,
                "finalized": f.finalized,
                "min_supported": f.min_supported,
                "max_supported": f.max_supported,
            }
            for f in info.features
        ],
        "quorum": None
        if q is None
        else {
            "leader": q.leader,
            "epoch": q.epoch,
            "high_watermark": q.high_watermark,
            "voters": [_member_dict(m) for m in q.voters],
            "observers": [_member_dict(m) for m in q.observers],
        },
        "apis": {str(a.key): [a.min_version, a.max_version] for a in info.apis},
        "zookeeper_configured": info.zookeeper_configured,
        "status": {
            "versions": info.versions_status.value,
            "features": info.features_status.value,
            "quorum": info.quorum_status.value,
        },
    }


def partition_dict(p: Partition, logs_known: bool) -> dict[str, Any]:
    """One partition of the document: what is read back, and what is derived from it for readers."""
    return {
        "topic": p.topic,
        "partition": p.partition,
        "replicas": list(p.replicas),
        "isr": list(p.isr),
        "leader": p.leader,
        "adding_replicas": list(p.adding),
        "removing_replicas": list(p.removing),
        "original": list(p.original),
        "target": list(p.target),
        "reassigning": p.reassigning,
        "complete": p.complete,
        "under_replicated": p.under_replicated,
        "health": p.health.value,
        "elr": list(p.elr),
        "last_known_elr": list(p.last_known_elr),
        "source": p.source.value if p.source else None,
        "replica_bytes": {str(log.broker): log.size for log in p.logs if not log.is_future},
        "logs": [
            {"broker": log.broker, "log_dir": log.log_dir, "size": log.size, "is_future": log.is_future}
            for log in p.logs
        ],
        "progress": [
            {
                "broker": r.broker,
                "copied_bytes": r.copied_bytes,
                "leader_bytes": r.leader_bytes,
                "in_isr": r.in_isr,
                "fraction": r.fraction,
            }
            for r in p.progress(logs_known)
        ],
    }


# -- reading -------------------------------------------------------------------------------------------------
def read_state(path: str | Path) -> ClusterState:
    """The snapshot saved in ``path``."""
    try:
        text = Path(path).read_bytes()
    except OSError as e:
        raise ConfigError(f"Cannot read the snapshot {path}: {e.strerror or e}.", _HINT) from None
    return load_state(text, str(path))


def load_state(text: str | bytes, where: str = "the snapshot") -> ClusterState:
    try:
        doc = json.loads(text)
    except (ValueError, UnicodeDecodeError) as e:
        raise ConfigError(f"{where} is not JSON ({e}).", _HINT) from None
    if not isinstance(doc, dict) or "partitions" not in doc or "brokers" not in doc:
        raise ConfigError(f"{where} is not a snapshot saved by 'state --json' (no brokers and partitions).", _HINT)
    version = doc.get("format", 1)
    if not isinstance(version, int) or version > SNAPSHOT_FORMAT:
        raise ConfigError(
            f"{where} was saved by a newer console (snapshot format {version}; this one reads up to "
            f"{SNAPSHOT_FORMAT}).",
            "Upgrade the console, or save the snapshot again with this one.",
        )
    try:
        return state_from_doc(doc)
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        raise ConfigError(f"{where} is not a complete snapshot: {type(e).__name__} {e}.", _HINT) from None


def _opt_id(v: Any) -> BrokerId | None:
    return None if v is None else BrokerId(int(v))


def _ids(v: list[Any]) -> tuple[BrokerId, ...]:
    return tuple(BrokerId(int(b)) for b in v)


def _broker(b: dict[str, Any]) -> Broker:
    cordons = b.get("cordoned_log_dirs")
    return Broker(
        id=BrokerId(int(b["id"])),
        host=b.get("host"),
        port=b.get("port"),
        rack=b.get("rack"),
        registered=bool(b.get("registered", b.get("live", False))),
        in_api=bool(b.get("in_api", False)),
        in_zookeeper=bool(b.get("in_zookeeper", False)),
        is_controller=bool(b.get("is_controller", False)),
        fenced=b.get("fenced"),
        log_dirs=tuple(
            LogDir(
                d["path"], d.get("error"), d.get("total_bytes"), d.get("usable_bytes"), _opt_bool(d.get("is_cordoned"))
            )
            for d in b.get("log_dirs", ())
        ),
        cordoned_log_dirs=None if cordons is None else tuple(str(x) for x in cordons),
    )


def _opt_bool(v: Any) -> bool | None:
    return None if v is None else bool(v)


def _partition(p: dict[str, Any]) -> Partition:
    if "logs" in p:
        logs = tuple(
            ReplicaLog(BrokerId(int(x["broker"])), x["log_dir"], int(x["size"]), bool(x.get("is_future", False)))
            for x in p["logs"]
        )
    else:  # an older file: sizes only
        logs = tuple(ReplicaLog(BrokerId(int(b)), "", int(size)) for b, size in p.get("replica_bytes", {}).items())
    source = p.get("source")
    return Partition(
        topic=str(p["topic"]),
        partition=int(p["partition"]),
        replicas=_ids(p["replicas"]),
        isr=_ids(p["isr"]),
        leader=_opt_id(p.get("leader")),
        adding=_ids(p.get("adding_replicas", ())),
        removing=_ids(p.get("removing_replicas", ())),
        source=Source(source) if source else None,
        logs=logs,
        elr=_ids(p.get("elr", ())),
        last_known_elr=_ids(p.get("last_known_elr", ())),
    )


def _opt_int(v: Any) -> int | None:
    return None if v is None else int(v)


def _member(m: dict[str, Any]) -> QuorumMember:
    return QuorumMember(
        int(m["id"]),
        int(m["log_end_offset"]),
        _opt_int(m.get("lag")),
        _opt_int(m.get("last_fetch_ms")),
        _opt_int(m.get("last_caught_up_ms")),
    )


def info_from_doc(doc: dict[str, Any] | None) -> ClusterInfo:
    """``cluster`` of the document; an older document without it reads as unknown."""
    if not doc:
        return ClusterInfo()
    q = doc.get("quorum")
    status = doc.get("status", {})
    return ClusterInfo(
        read_at=float(doc.get("read_at", 0.0)),
        api_version=doc.get("api_version"),
        mode=ClusterMode(doc.get("mode", ClusterMode.UNKNOWN.value)),
        features=tuple(
            Feature(
                str(f["name"]),
                _opt_int(f.get("finalized")),
                _opt_int(f.get("min_supported")),
                _opt_int(f.get("max_supported")),
            )
            for f in doc.get("features", ())
        ),
        quorum=None
        if q is None
        else Quorum(
            _opt_int(q.get("leader")),
            int(q["epoch"]),
            int(q["high_watermark"]),
            tuple(_member(m) for m in q.get("voters", ())),
            tuple(_member(m) for m in q.get("observers", ())),
        ),
        apis=tuple(ApiRange(int(k), int(v[0]), int(v[1])) for k, v in doc.get("apis", {}).items()),
        zookeeper_configured=bool(doc.get("zookeeper_configured", False)),
        versions_status=SourceStatus(status.get("versions", SourceStatus.NOT_CONFIGURED.value)),
        features_status=SourceStatus(status.get("features", SourceStatus.NOT_CONFIGURED.value)),
        quorum_status=SourceStatus(status.get("quorum", SourceStatus.NOT_CONFIGURED.value)),
    )


def state_from_doc(doc: dict[str, Any], partitions: tuple[Partition, ...] | None = None) -> ClusterState:
    """The snapshot a ``state --json`` document describes; ``partitions``, when given, stand in for
    the document's own (the pipeline keeps them as replica rows beside a header). Raises KeyError,
    TypeError or ValueError on a document that is not complete."""
    status = doc.get("status", {})
    throttles = doc.get("throttles", {})
    return ClusterState(
        taken_at=float(doc.get("taken_at", 0.0)),
        brokers=tuple(_broker(b) for b in doc["brokers"]),
        partitions=partitions if partitions is not None else tuple(_partition(p) for p in doc["partitions"]),
        cluster_id=doc.get("cluster_id"),
        controller=_opt_id(doc.get("controller")),
        throttles=Throttles.of(throttles.get("brokers", {}), throttles.get("topics", {})),
        min_insync=tuple((str(t), int(v)) for t, v in doc.get("min_insync", {}).items()),
        tiered_topics=tuple(sorted(str(t) for t in doc.get("tiered_topics") or ())),
        findings=tuple(Finding.from_dict(f) for f in doc.get("findings", ())),
        status=ReadStatus(**{k: SourceStatus(v) for k, v in status.items() if k in ReadStatus.__slots__}),
        name=str(doc.get("name", "")),
        info=info_from_doc(doc.get("cluster")),
        read_times=_read_times(doc),
    )


def _read_times(doc: dict[str, Any]) -> ReadTimes | None:
    """When each part was read (``read_at``); None when every part was read at ``taken_at`` (or the
    document, written before it said, does not say)."""
    taken_at = float(doc.get("taken_at", 0.0))
    at = doc.get("read_at") or {}
    times = ReadTimes(*(float(at.get(k, taken_at)) for k in ("replicas", "sizes", "configs")))
    return None if times == ReadTimes.at(taken_at) else times
