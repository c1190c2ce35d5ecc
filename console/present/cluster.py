"""View models for what the cluster is (Overview): features, the controller quorum, capabilities."""

from __future__ import annotations

from typing import Any

from console.core.cluster_info import ago_text, capabilities, level_text, supported_text
from console.core.model import ClusterInfo, QuorumMember


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
    return {
        "node": m.id,
        "role": "leader" if m.id == leader else role,
        "log end offset": m.log_end_offset,
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
