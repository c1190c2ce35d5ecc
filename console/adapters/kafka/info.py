"""What the cluster is, from ApiVersions, DescribeFeatures and DescribeQuorum answers, as records."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from console.adapters.kafka.steer import Unanswering, timed_out
from console.adapters.kafka.translate import problem_of
from console.core.model import (
    ApiRange,
    Feature,
    Quorum,
    QuorumMember,
)


# -- what the cluster is (ApiVersions, DescribeFeatures, DescribeQuorum) ---------------------------------------
def features_of(raw: Mapping[str, Mapping[str, Any]]) -> tuple[Feature, ...]:
    """kafka-python's ``describe_features()`` (``{name: {"supported": (min, max), "finalized":
    (min, max)}}``) as records, by name. A feature at level 0 is not listed as finalized."""
    out = []
    for name, f in sorted(raw.items()):
        sup, fin = f.get("supported"), f.get("finalized")
        out.append(
            Feature(
                str(name),
                int(fin[1]) if fin else None,
                int(sup[0]) if sup else None,
                int(sup[1]) if sup else None,
            )
        )
    return tuple(out)


def _ms(v: Any) -> int | None:
    return int(v) if v is not None and int(v) >= 0 else None


def quorum_of(raw: Mapping[str, Any]) -> Quorum:
    """kafka-python's ``describe_metadata_quorum()`` (the ``__cluster_metadata`` partition) as a
    record; each member's lag is the leader's log end offset minus its own (as
    ``kafka-metadata-quorum`` reports it). Raises ValueError when the answer has no partition."""
    part = next((p for t in raw.get("topics", ()) for p in t.get("partitions", ())), None)
    if part is None:
        raise ValueError("DescribeQuorum answered without the metadata partition")
    leader = int(part["leader_id"]) if int(part.get("leader_id", -1)) >= 0 else None
    voters, observers = part.get("current_voters") or (), part.get("observers") or ()
    leader_leo = next((int(v["log_end_offset"]) for v in voters if int(v["replica_id"]) == leader), None)

    def member(m: Mapping[str, Any]) -> QuorumMember:
        leo = int(m["log_end_offset"])
        return QuorumMember(
            int(m["replica_id"]),
            leo,
            max(0, leader_leo - leo) if leader_leo is not None and leo >= 0 else None,
            _ms(m.get("last_fetch_timestamp")),
            _ms(m.get("last_caught_up_timestamp")),
        )

    return Quorum(
        leader,
        int(part.get("leader_epoch", -1)),
        int(part.get("high_watermark", -1)),
        tuple(sorted((member(v) for v in voters), key=lambda m: m.id)),
        tuple(sorted((member(o) for o in observers), key=lambda m: m.id)),
    )


def api_ranges(per_broker: Iterable[Mapping[int, tuple[int, int]]]) -> tuple[ApiRange, ...]:
    """The requests every broker answers, with the versions all of them support (ApiVersions of each)."""
    common: dict[int, tuple[int, int]] | None = None
    for versions in per_broker:
        if common is None:
            common = {int(k): (int(v[0]), int(v[1])) for k, v in versions.items()}
            continue
        common = {
            k: (max(lo, int(versions[k][0])), min(hi, int(versions[k][1])))
            for k, (lo, hi) in common.items()
            if k in versions
        }
    return tuple(ApiRange(k, lo, hi) for k, (lo, hi) in sorted((common or {}).items()) if lo <= hi)


def _versions(client: Any, unanswering: Unanswering) -> tuple[str | None, tuple[ApiRange, ...]]:
    """Each unfenced broker's ApiVersions (kafka-python keeps them per connection): the oldest
    release they match, and the requests all of them answer. A broker that cannot be reached is
    left out (one that timed out lately is not asked: it would hold the read up for the whole
    timeout); none reachable raises."""
    cluster = client.describe_cluster()
    answers: list[Any] = []
    last: Exception | None = None
    listed = [b for b in cluster.get("brokers", ()) if not b.get("is_fenced")]
    avoided = unanswering.avoided()
    if all(int(b["broker_id"]) in avoided for b in listed):
        avoided = frozenset()  # passing over is a preference: with no other broker, ask them all
    for b in listed:
        node = int(b["broker_id"])
        if node in avoided:
            continue
        try:
            answers.append(client.get_broker_version_data(node))
        except Exception as e:  # that broker only; the others still say what they run
            if problem_of(e) is None:
                raise
            if timed_out(e):
                unanswering.mark(node)
            last = e
    if not answers:
        raise last if last is not None else ValueError("DescribeCluster listed no broker")
    oldest = min(answers, key=lambda a: tuple(a.broker_version))
    version = ".".join(str(x) for x in oldest.broker_version)
    return version, api_ranges(a.api_versions for a in answers)
