"""A snapshot saved with ``python -m console state --json``, read back (``--state-file``): plan
offline, on a laptop, against the cluster exactly as it was.

The file is what :func:`console.present.text.state_json` writes; reading it gives back the same
:class:`~console.core.model.ClusterState` (brokers, partitions with R, I, AR, RR and every replica's
log, throttles, min ISR, findings, what each source answered). Derived fields in the file
(``live``, ``health``, ``progress``...) are ignored. A file that is not such a snapshot raises
:class:`~console.core.errors.ConfigError` naming what is wrong.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from console.core.errors import ConfigError
from console.core.model import (
    SNAPSHOT_FORMAT,
    Broker,
    BrokerId,
    ClusterState,
    Finding,
    LogDir,
    Partition,
    ReadStatus,
    ReplicaLog,
    Severity,
    Source,
    SourceStatus,
    Throttles,
)

_HINT = "Save a snapshot with: python -m console state --bootstrap-server HOST:PORT --json > FILE"


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
            LogDir(d["path"], d.get("error"), d.get("total_bytes"), d.get("usable_bytes"))
            for d in b.get("log_dirs", ())
        ),
    )


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
    )


def _finding(f: dict[str, Any]) -> Finding:
    return Finding(
        f["code"],
        Severity(f["severity"]),
        f["message"],
        f.get("hint", ""),
        f.get("topic"),
        f.get("partition"),
        _opt_id(f.get("broker")),
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
        findings=tuple(_finding(f) for f in doc.get("findings", ())),
        status=ReadStatus(**{k: SourceStatus(v) for k, v in status.items() if k in ReadStatus.__slots__}),
        name=str(doc.get("name", "")),
    )
