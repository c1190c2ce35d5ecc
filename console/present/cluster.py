"""View models for what the cluster is (Overview): features, the controller quorum, capabilities,
the brokers' cordons (KIP-1066) per broker and per log dir, and the partitions of Kafka 4's health
groups (KIP-966)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from console.core.cluster_info import (
    ago_text,
    capabilities,
    cordons_supported,
    level_text,
    reach_text,
    supported_text,
)
from console.core.format import human_bytes, ids_text
from console.core.limits import CORDON_ALL
from console.core.model import Broker, BrokerId, ClusterInfo, ClusterState, Partition, QuorumMember, SourceStatus

NOT_AVAILABLE = "not available on this cluster"
"""What Overview says of cordons where ``metadata.version`` is below 4.3-IV0."""
NOT_CORDONED = "—"


def cordon_text(broker: Broker, supported: bool | None) -> str:
    """A broker's cordon in a word or three: ``cordoned`` (``*``), ``2 of 2 dirs cordoned``, ``1 of
    2 dirs cordoned``, ``—`` (none), ``unknown``, or :data:`NOT_AVAILABLE` (``supported`` False:
    the cluster does not enforce cordons)."""
    if supported is False:
        return NOT_AVAILABLE
    cfg = broker.cordoned_log_dirs
    if cfg is not None and CORDON_ALL in cfg:
        return "cordoned"
    dirs = broker.cordoned_dirs
    if broker.cordoned is None or dirs is None:
        return "unknown"
    if not dirs:
        return NOT_CORDONED
    return f"{len(dirs)} of {len(broker.log_dirs)} dirs cordoned"


def cordon_words(broker: Broker, supported: bool | None) -> str:
    """A broker's cordon where it stands alone (a caption, a line of the command line): ``not
    cordoned``, not the tables' ``—``; else as :func:`cordon_text` says it."""
    said = cordon_text(broker, supported)
    return "not cordoned" if said == NOT_CORDONED else said


def cordoned_now(state: ClusterState, supported: bool | None) -> str:
    """Every broker with a cordon, in one line (``Cordoned now: broker 3 (cordoned), broker 2 (1 of
    2 dirs cordoned).``), so nobody has to pick brokers one by one to find them; says what is not known."""
    said = [(b.id, cordon_words(b, supported)) for b in state.brokers if b.registered]
    cordoned = [f"broker {b} ({w})" for b, w in said if w not in ("not cordoned", "unknown")]
    unknown = [b for b, w in said if w == "unknown"]
    text = "Cordoned now: " + (", ".join(cordoned) if cordoned else "no broker or log dir") + "."
    return text + (f" Not known for broker {ids_text(unknown)}." if unknown else "")


NOT_READ = "not read"
"""The log dir cell of a broker whose DescribeLogDirs did not answer (down, or the read failed)."""


def log_dir_rows(state: ClusterState) -> list[dict[str, Any]]:
    """Each broker's log dirs: the replicas and bytes in it, usable and total space, whether the dir
    is offline, whether it is cordoned. A dir emptied shows 0 replicas and 0 B; what is in a dir is
    unknown (never 0) when the log dirs were not read, or the dir is offline (DescribeLogDirs lists
    none of its replicas); a broker whose DescribeLogDirs did not answer has one row saying so."""
    supported = cordons_supported(state.info)
    held = dir_totals(state)
    rows = []
    for b in state.brokers:
        if not b.log_dirs and state.status.log_dirs is not SourceStatus.NOT_CONFIGURED:
            rows.append(
                {
                    "broker": b.id,
                    "log dir": NOT_READ,
                    "replicas": None,
                    "on disk": "unknown",
                    "usable": "unknown",
                    "total": "unknown",
                    "state": "DescribeLogDirs did not answer" if b.live else "broker down",
                    "cordoned": NOT_AVAILABLE if supported is False else "unknown",
                }
            )
        for d in b.log_dirs:
            flag = b.dir_cordoned(d.path)
            replicas, size = held.get((b.id, d.path), (0, 0))
            known = state.logs_known and d.error is None
            rows.append(
                {
                    "broker": b.id,
                    "log dir": d.path,
                    "replicas": replicas if known else None,
                    "on disk": human_bytes(size) if known else "unknown",
                    "usable": human_bytes(d.usable_bytes) if d.usable_bytes is not None else "unknown",
                    "total": human_bytes(d.total_bytes) if d.total_bytes is not None else "unknown",
                    "state": d.error or "online",
                    "cordoned": NOT_AVAILABLE
                    if supported is False
                    else "unknown"
                    if flag is None
                    else "cordoned"
                    if flag
                    else NOT_CORDONED,
                }
            )
    return rows


def _dir_totals(state: ClusterState) -> dict[tuple[BrokerId, str], tuple[int, int]]:
    """(broker, dir) → (replicas, bytes) of the logs in it (future replicas not counted)."""
    out: dict[tuple[BrokerId, str], tuple[int, int]] = {}
    for p in state.partitions:
        for log in p.logs:
            if not log.is_future:
                n, size = out.get((log.broker, log.log_dir), (0, 0))
                out[(log.broker, log.log_dir)] = (n + 1, size + log.size)
    return out


def dir_totals(state: ClusterState) -> dict[tuple[BrokerId, str], tuple[int, int]]:
    """(broker, dir) → (replicas, bytes) of the logs in it, computed once per snapshot."""
    return state.memo("cluster.dir_totals", _dir_totals)


def log_dir_label(broker: Broker, path: str, held: dict[tuple[BrokerId, str], tuple[int, int]]) -> str:
    """A log dir as a picker shows it: path, what it holds (``held``: :func:`dir_totals`), free
    space, and whether it is offline or cordoned."""
    d = next((x for x in broker.log_dirs if x.path == path), None)
    if d is None:
        return path
    n, size = held.get((broker.id, path), (0, 0))
    parts = [path]
    if d.offline:
        parts.append(f"offline ({d.error})")
    else:
        parts.append(f"{n:,} replica{'' if n == 1 else 's'} · {human_bytes(size)}")
        parts.append(f"{human_bytes(d.usable_bytes)} free" if d.usable_bytes is not None else "free space unknown")
    if broker.dir_cordoned(path):
        parts.append("cordoned")
    return " · ".join(parts)


def feature_rows(info: ClusterInfo) -> list[dict[str, Any]]:
    return [
        {
            "feature": f.name,
            "finalized": level_text(f) if f.finalized is not None else "0 (not finalized)",
            "supported": supported_text(f),
        }
        for f in info.features
    ]


def _member_row(m: QuorumMember, role: str, leader: int | None, now_s: float) -> dict[str, Any]:
    """A stopped member's log end offset (-1) and lag are not numbers to show: None (the page shows
    ``—``), and the reachable column says why."""
    return {
        "node": m.id,
        "role": "leader" if m.id == leader else role,
        "reachable": reach_text(m, leader, now_s),
        "log end offset": m.log_end_offset if m.log_end_offset >= 0 else None,
        "lag": m.lag,
        "last fetch": ago_text(m.last_fetch_ms, now_s),
        "last caught up": ago_text(m.last_caught_up_ms, now_s),
    }


def quorum_rows(info: ClusterInfo) -> list[dict[str, Any]]:
    """Voters then observers, each one's lag behind the leader and when the leader last heard from it
    (as seen when the quorum was read)."""
    q = info.quorum
    if q is None:
        return []
    return [_member_row(m, "voter", q.leader, info.read_at) for m in q.voters] + [
        _member_row(m, "observer", q.leader, info.read_at) for m in q.observers
    ]


def capability_rows(info: ClusterInfo) -> list[dict[str, Any]]:
    return [{"capability": c.name, "on": "on" if c.on else "off", "why": c.why} for c in capabilities(info)]


ROWS_SHOWN = 1_000
"""At most this many partitions in one of Overview's health tables (an outage may put 100k partitions
in a group: the page says how many there are and shows the first)."""


def health_rows(state: ClusterState, parts: Sequence[Partition], limit: int = ROWS_SHOWN) -> list[dict[str, Any]]:
    """The first ``limit`` of ``parts`` (a group of :func:`console.core.health.kafka_health`, already
    computed) as Overview's table: partition, R, ISR, ELR, last known ELR (``—`` for none), the
    topic's min ISR (``unknown`` when not read) and the leader (``none``)."""
    mins = state.min_insync_index
    return [
        {
            "partition": p.name,
            "R": ids_text(p.replicas, "—"),
            "ISR": ids_text(p.isr, "—"),
            "ELR": ids_text(p.elr, "—"),
            "last known ELR": ids_text(p.last_known_elr, "—"),
            "min ISR": str(mins[p.topic]) if p.topic in mins else "unknown",
            "leader": str(p.leader) if p.leader is not None else "none",
        }
        for p in parts[:limit]
    ]


def read_ages_text(state: ClusterState, now_s: float) -> str:
    """How old each part of ``state`` is, for Live and Overview: ``Sizes and topic configs read 42 s
    ago; in flight and replicas read 1 s ago.`` (every partition's sizes and every topic's configs
    are read in full less often than the rest; those of the partitions in flight at every read)."""
    at = state.read_at

    def ago(then_s: float) -> str:
        return ago_text(round(then_s * 1000), now_s)

    if not state.logs_known:
        sizes = "Sizes not read"
    elif at.configs != at.sizes:
        sizes = f"Sizes read {ago(at.sizes)}, topic configs {ago(at.configs)}"
    else:
        sizes = f"Sizes and topic configs read {ago(at.sizes)}"
    return f"{sizes}; in flight and replicas read {ago(at.replicas)}."
