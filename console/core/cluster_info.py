"""What the cluster is: the Kafka release its brokers report, KRaft or ZooKeeper, its finalized
features and, in KRaft, its controller quorum; and what the console switches on from them.

Read through the Admin API (ApiVersions, DescribeFeatures through ApiVersions, DescribeQuorum) by
``console.adapters.kafka``; pure records and functions here. A part the cluster did not answer keeps
its :class:`~console.core.model.SourceStatus` (``UNSUPPORTED``: the cluster has no such request,
said as "not available on this cluster", never an error).
"""

from __future__ import annotations

from dataclasses import dataclass

from console.core.model import ClusterInfo, ClusterMode, Feature, QuorumMember, SourceStatus

METADATA_VERSION = "metadata.version"
ELR_VERSION = "eligible.leader.replicas.version"
KRAFT_VERSION = "kraft.version"

METADATA_VERSIONS: dict[int, str] = {
    1: "3.0-IV1",
    2: "3.1-IV0",
    3: "3.2-IV0",
    4: "3.3-IV0",
    5: "3.3-IV1",
    6: "3.3-IV2",
    7: "3.3-IV3",
    8: "3.4-IV0",
    9: "3.5-IV0",
    10: "3.5-IV1",
    11: "3.5-IV2",
    12: "3.6-IV0",
    13: "3.6-IV1",
    14: "3.6-IV2",
    15: "3.7-IV0",
    16: "3.7-IV1",
    17: "3.7-IV2",
    18: "3.7-IV3",
    19: "3.7-IV4",
    20: "3.8-IV0",
    21: "3.9-IV0",
    22: "4.0-IV0",
    23: "4.0-IV1",
    24: "4.0-IV2",
    25: "4.0-IV3",
    26: "4.1-IV0",
    27: "4.1-IV1",
    28: "4.2-IV0",
    29: "4.2-IV1",
    30: "4.3-IV0",
    31: "4.4-IV0",
    32: "4.4-IV1",
    33: "4.4-IV2",
}
"""``metadata.version`` feature levels and their names (Kafka's ``MetadataVersion``, read from the
4.4.0 server jars; levels past 33 are newer than 4.4)."""

CORDON_LEVEL = 30
"""``metadata.version`` 4.3-IV0: cordoned log dirs (KIP-1066) are enforced from this level."""
DESCRIBE_TOPIC_PARTITIONS = 75
"""API key of DescribeTopicPartitions (ELR per partition, paged)."""
ALTER_PARTITION_REASSIGNMENTS = 45
"""API key of AlterPartitionReassignments."""
RF_GUARD_VERSION = 1
"""Its first version with ``AllowReplicationFactorChange`` (KIP-860, Kafka 4.1): the
replication-factor guard (``console.moves.rf_guard``)."""
CORDON_REFUSED_RELEASE = (4, 4)
"""The first release whose controller refuses an explicit reassignment onto a broker whose every log
dir is cordoned (INVALID_REPLICATION_ASSIGNMENT, per partition); 4.3's accepts and completes it."""
ROLLBACK_DIRS_RELEASE = (4, 2)
"""The first release whose ``kafka-reassign-partitions --execute`` prints each replica's current log
dir in its rollback ("Current partition replica assignment") instead of ``any`` (KAFKA-19582)."""


def metadata_version_name(level: int) -> str:
    """``33`` → ``4.4-IV2``; a level this console does not know is named by its number."""
    known = METADATA_VERSIONS.get(level)
    if known is not None:
        return known
    newest = max(METADATA_VERSIONS)
    return f"level {level} (newer than {METADATA_VERSIONS[newest]})" if level > newest else f"level {level}"


def release_of_level(level: int) -> str | None:
    """The release line whose newest ``metadata.version`` is ``level`` or around it (``33`` → ``4.4``)."""
    known = METADATA_VERSIONS.get(level)
    return known.split("-")[0] if known is not None else None


def level_text(feature: Feature, level: int | None = None) -> str:
    """A feature level as people name it: ``4.4-IV2`` for ``metadata.version``, the number otherwise."""
    lv = feature.level if level is None else level
    return metadata_version_name(lv) if feature.name == METADATA_VERSION and lv > 0 else str(lv)


def supported_text(feature: Feature) -> str:
    """The range the brokers support: ``3.3-IV3 – 4.4-IV2``, ``0 – 1``."""
    if feature.min_supported is None or feature.max_supported is None:
        return "unknown"
    return f"{level_text(feature, feature.min_supported)} – {level_text(feature, feature.max_supported)}"


def metadata_version(info: ClusterInfo) -> str | None:
    """The finalized ``metadata.version`` by name (``4.4-IV2``); None when not finalized (ZooKeeper)."""
    mv = info.feature(METADATA_VERSION)
    return metadata_version_name(mv.level) if mv is not None and mv.level > 0 else None


def release(info: ClusterInfo) -> str | None:
    """The release line the brokers run: from the newest ``metadata.version`` they support when
    the console knows that level (exact, and 4.4 too, which kafka-python's inference from the API
    ranges cannot tell from 4.3), else from the API ranges."""
    mv = info.feature(METADATA_VERSION)
    if mv is not None and mv.max_supported is not None:
        line = release_of_level(mv.max_supported)
        if line is not None:
            return line
        if mv.max_supported > max(METADATA_VERSIONS):
            return f"newer than {release_of_level(max(METADATA_VERSIONS))}"
    return info.api_version


def release_number(info: ClusterInfo) -> tuple[int, int] | None:
    """The release line the brokers run as ``(major, minor)`` (``(4, 4)``); a release newer than
    every ``metadata.version`` the console knows counts as one past the newest it knows; None when
    not known."""
    line = release(info)
    if line is None:
        return None
    if line.startswith("newer than "):
        major, minor = release_number_of(line.removeprefix("newer than ")) or (0, 0)
        return (major, minor + 1) if major else None
    return release_number_of(line)


def release_number_of(text: str) -> tuple[int, int] | None:
    """``"4.4"`` or ``"3.9.1"`` → ``(4, 4)`` / ``(3, 9)``; None for anything else."""
    parts = text.strip().split(".")
    if len(parts) < 2 or not parts[0].isdigit() or not parts[1].isdigit():
        return None
    return int(parts[0]), int(parts[1])


def rollback_names_dirs(info: ClusterInfo) -> bool | None:
    """Whether the official ``kafka-reassign-partitions --execute`` of this cluster's release writes
    each replica's current log dir in its rollback (Kafka 4.2 and later, KAFKA-19582) rather than
    ``any``: True or False from the release the brokers say they run (:func:`release`: their newest
    ``metadata.version``, else their API ranges), None when the cluster was not asked or did not
    say. The official tool of the cluster's own release is the one compared with."""
    number = release_number(info)
    return None if number is None else number >= ROLLBACK_DIRS_RELEASE


def refuses_cordoned(info: ClusterInfo) -> bool:
    """Whether the cluster's controller refuses a reassignment onto a wholly cordoned broker
    (:data:`CORDON_REFUSED_RELEASE`); False when the release is not known (the console's own check
    still refuses it, and an override is left to the operator)."""
    number = release_number(info)
    return number is not None and number >= CORDON_REFUSED_RELEASE


def rollback_dirs_text(info: ClusterInfo) -> str:
    """Why the console's rollback JSON names log dirs, or says ``any``, on this cluster, in words."""
    on = rollback_names_dirs(info)
    if on is None:
        return 'the Kafka release was not read: log dirs stay "any", as the tools before 4.2 print them'
    if on:
        return (
            f"Kafka {release(info)}: each replica's current log dir, as kafka-reassign-partitions of 4.2 and "
            'later prints it ("any" where the dir is not known)'
        )
    return f'Kafka {release(info)}: log dirs "any", as kafka-reassign-partitions before 4.2 prints them'


def decide_mode(quorum_status: SourceStatus, features: tuple[Feature, ...], zookeeper_configured: bool) -> ClusterMode:
    """KRaft when DescribeQuorum answers or ``metadata.version`` is finalized; ZooKeeper when the
    console reads a ZooKeeper for the cluster or the cluster has no DescribeQuorum; else unknown."""
    mv = next((f for f in features if f.name == METADATA_VERSION), None)
    if quorum_status is SourceStatus.OK or (mv is not None and mv.level > 0):
        return ClusterMode.KRAFT
    if zookeeper_configured or quorum_status is SourceStatus.UNSUPPORTED:
        return ClusterMode.ZOOKEEPER
    return ClusterMode.UNKNOWN


def status_text(status: SourceStatus) -> str:
    """Why a part of the cluster info is missing, in words."""
    return {
        SourceStatus.OK: "read",
        SourceStatus.UNSUPPORTED: "not available on this cluster",
        SourceStatus.UNAUTHORIZED: "not authorised (DESCRIBE on CLUSTER)",
        SourceStatus.UNAVAILABLE: "the cluster did not answer",
        SourceStatus.NOT_CONFIGURED: "not read",
    }[status]


def quorum_text(info: ClusterInfo) -> str:
    """``quorum leader 1 (epoch 3) of voters 0,1,2``, or why there is none."""
    q = info.quorum
    if q is None:
        return f"quorum {status_text(info.quorum_status)}"
    voters = ",".join(str(v.id) for v in q.voters) or "none"
    leader = str(q.leader) if q.leader is not None else "none"
    text = f"quorum leader {leader} (epoch {q.epoch}) of voters {voters}"
    return text + (f", {len(q.observers)} observers" if q.observers else "")


def active_controller(info: ClusterInfo, described: int | None) -> int | None:
    """The node that is the cluster's controller now: in KRaft the quorum's leader (DescribeCluster
    names a broker at random there, not the controller), None when the quorum was not read; in
    ZooKeeper mode the one DescribeCluster (or ZooKeeper) names, ``described``; None when the mode is
    not known (it may be KRaft: a random broker is not shown as the controller)."""
    if info.mode is ClusterMode.KRAFT:
        return info.quorum.leader if info.quorum is not None else None
    return described if info.mode is ClusterMode.ZOOKEEPER else None


QUORUM_SILENT_S = 30.0
"""A quorum member the leader has not heard from for this long is said not reachable (voters fetch
from the leader continuously; the default ``controller.quorum.fetch.timeout.ms`` is 2 s; the margin
allows for the clocks of the leader and the console)."""


def reach_text(m: QuorumMember, leader: int | None, now_s: float) -> str:
    """Whether the quorum leader hears from a member: ``leader``, ``yes``, or ``not reachable`` and why
    (a stopped voter answers log end offset -1 and no fetch; one stopped later, an old last fetch)."""
    if m.id == leader:
        return "leader"
    if m.log_end_offset < 0:
        return "not reachable: the leader has no fetch from it"
    if m.last_fetch_ms is None:
        return "not known: the leader gives no fetch time"
    silent = now_s - m.last_fetch_ms / 1000
    if silent > QUORUM_SILENT_S:
        return f"not reachable: no fetch for {ago_text(m.last_fetch_ms, now_s).removesuffix(' ago')}"
    return "yes"


def summary_line(info: ClusterInfo) -> str:
    """One line: ``Kafka 4.4 · KRaft · metadata.version 4.4-IV2 · quorum leader 1 (epoch 3) of voters 0,1,2``."""
    if not info.known:
        return "Kafka version, mode and features not read"
    parts = [f"Kafka {release(info)}" if release(info) else "Kafka version unknown"]
    parts.append({ClusterMode.KRAFT: "KRaft", ClusterMode.ZOOKEEPER: "ZooKeeper"}.get(info.mode, "mode unknown"))
    if metadata_version(info):
        parts.append(f"metadata.version {metadata_version(info)}")
    if info.mode is not ClusterMode.ZOOKEEPER or info.quorum is not None:
        parts.append(quorum_text(info))
    else:
        parts.append("no controller quorum (ZooKeeper mode)")
    return " · ".join(parts)


def ago_text(then_ms: int | None, now_s: float) -> str:
    """``3 s ago`` (``now_s`` epoch seconds, ``then_ms`` epoch milliseconds); ``never`` for None."""
    if then_ms is None:
        return "never"
    ago = max(0.0, now_s - then_ms / 1000)
    return f"{ago:.0f} s ago" if ago < 120 else f"{ago / 60:.0f} min ago"


@dataclass(frozen=True, slots=True)
class Capability:
    """A feature of the console that depends on the cluster: on or off, and why."""

    name: str
    on: bool
    why: str


def cordons_supported(info: ClusterInfo) -> bool | None:
    """Whether the cluster enforces cordoned log dirs (KIP-1066: ``metadata.version`` 4.3-IV0 or
    later); None when its features were not read (not known either way)."""
    if info.features_status is not SourceStatus.OK:
        return None
    mv = info.feature(METADATA_VERSION)
    return mv is not None and mv.level >= CORDON_LEVEL


def cordons_text(info: ClusterInfo) -> str:
    """Why cordons are, or are not, available on the cluster, in words (the capability's why)."""
    mv = info.feature(METADATA_VERSION)
    if info.features_status is not SourceStatus.OK:
        return _features_unread(info)
    if mv is None or mv.level == 0:
        return f"{METADATA_VERSION} is not finalized (ZooKeeper mode)"
    need = metadata_version_name(CORDON_LEVEL)
    on = mv.level >= CORDON_LEVEL
    return f"{METADATA_VERSION} is {level_text(mv)}" + (f", {need} or later" if on else f", below {need}")


def _features_unread(info: ClusterInfo) -> str:
    return f"the cluster's features were not read ({status_text(info.features_status)})"


def capabilities(info: ClusterInfo) -> list[Capability]:
    """What the console switches on from what the cluster says it supports (never from a guess)."""
    out: list[Capability] = []
    features_ok = info.features_status is SourceStatus.OK

    elr = info.feature(ELR_VERSION)
    if not features_ok:
        out.append(Capability("Eligible leader replicas", False, _features_unread(info)))
    elif elr is None:
        out.append(
            Capability(
                "Eligible leader replicas", False, f"the cluster reports no {ELR_VERSION} (it came with Kafka 4.0)"
            )
        )
    else:
        out.append(
            Capability("Eligible leader replicas", elr.level >= 1, f"{ELR_VERSION} is {elr.level} on this cluster")
        )

    out.append(Capability("Cordoned log dirs", cordons_supported(info) is True, cordons_text(info)))

    dtp = info.api(DESCRIBE_TOPIC_PARTITIONS)
    if info.versions_status is not SourceStatus.OK:
        why = f"the brokers' API versions were not read ({status_text(info.versions_status)})"
        out.append(Capability("DescribeTopicPartitions", False, why))
    elif dtp is None:
        out.append(Capability("DescribeTopicPartitions", False, "not every broker answers it (ApiVersions)"))
    else:
        out.append(
            Capability(
                "DescribeTopicPartitions",
                True,
                f"every broker answers it (v{dtp.min_version}–v{dtp.max_version})",
            )
        )

    apr = info.api(ALTER_PARTITION_REASSIGNMENTS)
    if info.versions_status is not SourceStatus.OK:
        why = f"the brokers' API versions were not read ({status_text(info.versions_status)})"
        out.append(Capability("Replication-factor guard", False, why))
    elif apr is None:
        why = "not every broker answers AlterPartitionReassignments (ApiVersions)"
        out.append(Capability("Replication-factor guard", False, why))
    elif apr.max_version >= RF_GUARD_VERSION:
        why = (
            f"every broker answers AlterPartitionReassignments v{RF_GUARD_VERSION} (KIP-860): moves that keep "
            "the replication factor are sent with AllowReplicationFactorChange=false, RF changes on their own"
        )
        out.append(Capability("Replication-factor guard", True, why))
    else:
        why = (
            f"AlterPartitionReassignments only up to v{apr.max_version} here (v{RF_GUARD_VERSION}, KIP-860, "
            "came with Kafka 4.1): requests go unguarded"
        )
        out.append(Capability("Replication-factor guard", False, why))

    out.append(Capability("Rollback with log dirs", rollback_names_dirs(info) is True, rollback_dirs_text(info)))

    out.append(
        Capability(
            "Controller quorum view",
            info.quorum is not None,
            "DescribeQuorum answers"
            if info.quorum is not None
            else f"DescribeQuorum: {status_text(info.quorum_status)}",
        )
    )
    if info.zookeeper_configured:
        out.append(Capability("ZooKeeper view", True, "ZooKeeper configured"))
    elif info.mode is ClusterMode.KRAFT:
        out.append(Capability("ZooKeeper view", False, "a KRaft cluster has no ZooKeeper"))
    else:
        out.append(Capability("ZooKeeper view", False, "no ZooKeeper connect string given"))
    return out
