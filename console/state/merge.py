"""Merge what the Admin API and ZooKeeper said into one ``ClusterState`` (pure).

Precedence, part by part:

* brokers: registered = in Metadata when Metadata answered, else in ``/brokers/ids``;
* R / I / leader: Metadata, else the topic and partition-state znodes;
* AR / RR: ListPartitionReassignments (its R too: the controller's own view), else the topic
  znode's ``adding_replicas`` / ``removing_replicas``;
* source: ``legacy`` when the partition is also in ``/admin/reassign_partitions``;
* throttles: the Admin API's answer over ZooKeeper's ``/config`` entries;
* tiered topics (``remote.storage.enable=true``): DescribeConfigs when it answered, else the
  ``/config/topics`` overrides;
* cordons (KIP-1066): each broker's ``cordoned.log.dirs`` from DescribeConfigs and each log dir's
  flag from DescribeLogDirs (v5); :func:`with_info` clears them where ``metadata.version`` says
  the cluster does not enforce cordons.

Where both sources answered and disagree, the snapshot carries a finding that says so.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace

from console.adapters.records import ApiView, BrokerInfo, PartitionMeta, Reassignment, ZkView
from console.core.cluster_info import cordons_supported
from console.core.format import plural
from console.core.model import (
    Broker,
    BrokerId,
    ClusterInfo,
    ClusterState,
    Finding,
    Partition,
    ReadStatus,
    ReadTimes,
    ReplicaLog,
    Severity,
    Source,
    SourceStatus,
    Throttles,
    TopicPartition,
    replicas_in_dir,
)
from console.core.perf import without_gc

# Finding codes for disagreements between the Admin API and ZooKeeper.
BROKER_ONLY_IN_API = "broker-only-in-api"
BROKER_ONLY_IN_ZK = "broker-only-in-zookeeper"
CONTROLLER_MISMATCH = "controller-mismatch"
LEGACY_NOT_LISTED = "legacy-not-listed"
REASSIGNMENT_MISMATCH = "reassignment-mismatch"
REPLICAS_MISMATCH = "replicas-mismatch"
TOPIC_ONLY_IN_API = "topic-only-in-api"
TOPIC_ONLY_IN_ZK = "topic-only-in-zookeeper"
# Findings about the cluster itself (codes of their own: a plan's findings about the same brokers are
# the review's, in console/plans/rules/codes.py).
ADDING_ON_INELIGIBLE = "reassignment-adding-on-ineligible-broker"
"""A reassignment in flight adds a replica on a broker that is not live or not eligible: it stalls."""
REPLICA_ON_UNKNOWN_BROKER = "replica-on-unregistered-broker"
REPLICA_ON_FENCED_BROKER = "broker-fenced"
"""A registered broker is fenced (KIP-1073): a warning when it holds replicas, else information."""
LOG_DIR_OFFLINE = "log-dir-offline"

_FOLLOW_UP = "Refresh; if it persists, the controller may be behind or stuck: check its log."


@dataclass(frozen=True)
class _Views:
    """The two views a snapshot merges, and whether each read what the merge leans on: the Admin
    API its metadata, ZooKeeper its znodes."""

    api: ApiView | None
    zk: ZkView | None
    api_meta_ok: bool
    zk_ok: bool

    @staticmethod
    def of(api: ApiView | None, zk: ZkView | None) -> _Views:
        return _Views(
            api,
            zk,
            api is not None and api.metadata_status is SourceStatus.OK,
            zk is not None and zk.status is SourceStatus.OK,
        )


@without_gc
def merge(
    api: ApiView | None,
    zk: ZkView | None,
    taken_at: float | None = None,
    name: str = "",
    read_times: ReadTimes | None = None,
) -> ClusterState:
    """Build the snapshot. Either view may be None (not configured) or partial. ``read_times``:
    when each part was read, where some were carried over from earlier reads (None: all at
    ``taken_at``)."""
    taken_at = time.time() if taken_at is None else taken_at
    findings: list[Finding] = []
    views = _Views.of(api, zk)
    lpr = api.reassignments if api is not None and api.reassignments is not None else None
    if api is not None:
        findings.extend(api.problems)
    if zk is not None:
        findings.extend(zk.problems)

    controller = api.controller if api is not None else None
    if views.zk_ok and zk is not None:
        if controller is not None and zk.controller is not None and controller != zk.controller:
            findings.append(
                Finding(
                    CONTROLLER_MISMATCH,
                    Severity.WARNING,
                    f"The Admin API names broker {controller} as controller, ZooKeeper names broker {zk.controller}.",
                    "A controller election may be under way. " + _FOLLOW_UP,
                )
            )
        controller = controller if controller is not None else zk.controller

    partitions = _merge_partitions(views, lpr, findings)
    brokers = _merge_brokers(views, controller, partitions, findings)
    findings.extend(_cluster_findings(partitions, {b.id: b for b in brokers}))

    throttles = Throttles.of(
        {**(zk.broker_throttles if zk else {}), **(api.broker_throttles if api else {})},
        {**(zk.topic_throttles if zk else {}), **(api.topic_throttles if api else {})},
    )
    min_insync = {**(zk.min_insync if zk else {}), **(api.min_insync if api else {})}
    # tiered storage: the Admin API's effective value where it read the topic configs, else ZooKeeper's overrides
    api_configs = api is not None and api.configs_status is SourceStatus.OK
    tiered = api.tiered_topics if api is not None and api_configs else (zk.tiered_topics if zk else frozenset())
    status = ReadStatus(
        metadata=api.metadata_status if api else SourceStatus.NOT_CONFIGURED,
        reassignments=api.reassignments_status if api else SourceStatus.NOT_CONFIGURED,
        log_dirs=api.log_dirs_status if api else SourceStatus.NOT_CONFIGURED,
        configs=api.configs_status if api else SourceStatus.NOT_CONFIGURED,
        zookeeper=zk.status if zk else SourceStatus.NOT_CONFIGURED,
        elr=api.elr_status if api else SourceStatus.NOT_CONFIGURED,
        fenced=api.fenced_status if api else SourceStatus.NOT_CONFIGURED,
    )
    return ClusterState(
        taken_at=taken_at,
        brokers=tuple(brokers),
        partitions=partitions,
        cluster_id=api.cluster_id if api else None,
        controller=controller,
        throttles=throttles,
        min_insync=tuple(sorted(min_insync.items())),
        tiered_topics=tuple(sorted(tiered)),
        findings=tuple(findings),
        status=status,
        name=name,
        read_times=read_times,
    )


def with_info(state: ClusterState, info: ClusterInfo) -> ClusterState:
    """``state`` carrying what the cluster is. Where ``info`` says the cluster does not enforce
    cordons (``metadata.version`` below 4.3-IV0), what its brokers report about cordoned log dirs
    means nothing: the snapshot says it is not known (None) rather than "not cordoned"."""
    if state.info == info:
        return state
    if cordons_supported(info) is False and any(
        b.cordoned_log_dirs is not None or any(d.cordoned is not None for d in b.log_dirs) for b in state.brokers
    ):
        brokers = tuple(
            replace(b, cordoned_log_dirs=None, log_dirs=tuple(replace(d, cordoned=None) for d in b.log_dirs))
            for b in state.brokers
        )
        state = replace(state, brokers=brokers)
    return replace(state, info=info)


def _merge_partitions(
    views: _Views, lpr: dict[TopicPartition, Reassignment] | None, findings: list[Finding]
) -> tuple[Partition, ...]:
    api, zk, api_meta_ok, zk_ok = views.api, views.zk, views.api_meta_ok, views.zk_ok
    meta: dict[TopicPartition, PartitionMeta] = api.partitions if api is not None and api_meta_ok else {}
    zk_states: dict[TopicPartition, PartitionMeta] = zk.states if zk is not None and zk_ok else {}
    zk_topics = zk.topics if zk is not None and zk_ok else {}
    legacy = zk.legacy if zk is not None and zk_ok else {}

    # ZooKeeper's view of R / AR / RR per partition, from the topic znodes.
    zk_assign: dict[TopicPartition, Reassignment] = {}
    for topic, tz in zk_topics.items():
        for p, replicas in tz.partitions.items():
            zk_assign[(topic, p)] = Reassignment(replicas, tz.adding.get(p, ()), tz.removing.get(p, ()))

    both = api_meta_ok and zk_ok
    if both:
        _topic_findings(meta, zk_topics, findings)

    logs = _replica_logs(api)
    elr = api.elr if api is not None else {}

    keys: Iterable[TopicPartition] = meta.keys() | zk_assign.keys() if zk_assign else meta.keys()
    out: list[Partition] = []
    empty: tuple[BrokerId, ...] = ()
    for key in sorted(keys):
        m = meta.get(key)
        za = zk_assign.get(key)
        if m is None:
            zs = zk_states.get(key)
            replicas = za.replicas if za is not None else empty
            m = PartitionMeta(replicas, zs.isr if zs else empty, zs.leader if zs else None)
        replicas, adding, removing = m.replicas, empty, empty
        source: Source | None = None
        if lpr is not None:
            r = lpr.get(key)
            if r is not None:
                replicas, adding, removing, source = r.replicas, r.adding, r.removing, Source.API
        elif za is not None and (za.adding or za.removing):
            replicas, adding, removing, source = za.replicas, za.adding, za.removing, Source.ZOOKEEPER
        if key in legacy:
            if source is not None:
                source = Source.LEGACY
            elif lpr is not None:
                findings.append(_legacy_not_listed(key))
        if both and za is not None:
            _compare(key, m, za, lpr.get(key) if lpr is not None else None, lpr is not None, findings)
        e = elr.get(key) if elr else None
        out.append(
            Partition(
                topic=key[0],
                partition=key[1],
                replicas=replicas,
                isr=m.isr,
                leader=m.leader,
                adding=adding,
                removing=removing,
                source=source,
                logs=tuple(logs[key]) if key in logs else (),
                elr=e.elr if e is not None else empty,
                last_known_elr=e.last_known if e is not None else empty,
            )
        )
    return tuple(out)


def _replica_logs(api: ApiView | None) -> dict[TopicPartition, list[ReplicaLog]]:
    """Every replica's log (broker, dir, size, future or not) from DescribeLogDirs, by partition."""
    logs: dict[TopicPartition, list[ReplicaLog]] = defaultdict(list)
    if api is not None:
        for bl in api.log_dirs:
            for topic, p, d, size, fut in bl.replicas:
                logs[(topic, p)].append(ReplicaLog(bl.broker, d, size, fut))
    return logs


def _legacy_not_listed(key: TopicPartition) -> Finding:
    return Finding(
        LEGACY_NOT_LISTED,
        Severity.WARNING,
        f"{key[0]}-{key[1]} is in /admin/reassign_partitions but the controller does not list it as reassigning.",
        "The controller only reads that znode when it is created; an entry written into an existing znode, "
        "or invalid JSON, is never picked up. " + _FOLLOW_UP,
        topic=key[0],
        partition=key[1],
    )


def _topic_findings(
    meta: dict[TopicPartition, PartitionMeta], zk_topics: Mapping[str, object], findings: list[Finding]
) -> None:
    api_topics = {t for t, _ in meta}
    for t in sorted(api_topics - zk_topics.keys()):
        findings.append(
            Finding(
                TOPIC_ONLY_IN_API,
                Severity.WARNING,
                f"Topic {t} is in Metadata but has no /brokers/topics znode.",
                _FOLLOW_UP,
                topic=t,
            )
        )
    for t in sorted(zk_topics.keys() - api_topics):
        findings.append(
            Finding(
                TOPIC_ONLY_IN_ZK,
                Severity.WARNING,
                f"Topic {t} has a /brokers/topics znode but is not in Metadata.",
                "It may be being created or deleted. " + _FOLLOW_UP,
                topic=t,
            )
        )


def _compare(
    key: TopicPartition,
    m: PartitionMeta,
    za: Reassignment,
    listed: Reassignment | None,
    lpr_known: bool,
    findings: list[Finding],
) -> None:
    topic, p = key
    if listed is None and not za.adding and not za.removing and m.replicas == za.replicas:
        return  # the common case: nothing moving, both views equal
    if (
        listed is not None
        and listed.adding == za.adding
        and listed.removing == za.removing
        and listed.replicas == za.replicas
    ):
        return
    if lpr_known:
        api_ar = set(listed.adding) if listed else set()
        api_rr = set(listed.removing) if listed else set()
        if api_ar != set(za.adding) or api_rr != set(za.removing):
            findings.append(
                Finding(
                    REASSIGNMENT_MISMATCH,
                    Severity.WARNING,
                    f"{topic}-{p}: ListPartitionReassignments says adding {sorted(api_ar)} removing "
                    f"{sorted(api_rr)}; the topic znode says adding {sorted(za.adding)} removing "
                    f"{sorted(za.removing)}.",
                    _FOLLOW_UP,
                    topic=topic,
                    partition=p,
                )
            )
        api_r = listed.replicas if listed else m.replicas
    else:
        api_r = m.replicas
    if set(api_r) != set(za.replicas):
        findings.append(
            Finding(
                REPLICAS_MISMATCH,
                Severity.WARNING,
                f"{topic}-{p}: the Admin API says replicas {list(api_r)}, the topic znode says {list(za.replicas)}.",
                _FOLLOW_UP,
                topic=topic,
                partition=p,
            )
        )


def _merge_brokers(
    views: _Views, controller: BrokerId | None, partitions: tuple[Partition, ...], findings: list[Finding]
) -> list[Broker]:
    api, zk, api_meta_ok, zk_ok = views.api, views.zk, views.api_meta_ok, views.zk_ok
    api_b: dict[BrokerId, BrokerInfo] = {b.id: b for b in api.brokers} if api is not None and api_meta_ok else {}
    # DescribeCluster with fenced brokers (Kafka ≥ 4.0): fenced brokers are registered too, and
    # Metadata leaves them out
    fenced: dict[BrokerId, bool] = {}
    if api is not None and api_meta_ok and api.registered is not None:
        fenced = {b.id: bool(b.fenced) for b in api.registered}
        api_b.update({b.id: b for b in api.registered if b.fenced and b.id not in api_b})
    zk_b: dict[BrokerId, BrokerInfo] = {b.id: b for b in zk.brokers} if zk is not None and zk_ok else {}
    dirs = {bl.broker: bl.dirs for bl in api.log_dirs} if api is not None else {}
    cordons = api.cordons if api is not None else {}
    referenced: set[BrokerId] = set()
    for p in partitions:
        referenced.update(p.replicas)
    ids = sorted(api_b.keys() | zk_b.keys() | referenced)
    out: list[Broker] = []
    for bid in ids:
        info = api_b.get(bid) or zk_b.get(bid) or BrokerInfo(bid)
        in_api, in_zk = bid in api_b, bid in zk_b
        registered = in_api if api_meta_ok else in_zk
        if api_meta_ok and zk_ok and in_api != in_zk:
            code, where, other = (
                (BROKER_ONLY_IN_API, "Metadata", "/brokers/ids")
                if in_api
                else (BROKER_ONLY_IN_ZK, "/brokers/ids", "Metadata")
            )
            findings.append(
                Finding(
                    code,
                    Severity.WARNING,
                    f"Broker {bid} is in {where} but not in {other}.",
                    "It may be starting or stopping. " + _FOLLOW_UP,
                    broker=bid,
                )
            )
        rack = info.rack
        if rack is None and bid in zk_b:
            rack = zk_b[bid].rack
        out.append(
            Broker(
                id=bid,
                host=info.host,
                port=info.port,
                rack=rack,
                registered=registered,
                in_api=in_api,
                in_zookeeper=in_zk,
                is_controller=bid == controller,
                fenced=fenced.get(bid, False if in_api else None) if fenced else None,
                log_dirs=dirs.get(bid, ()),
                cordoned_log_dirs=cordons.get(bid),
            )
        )
    return out


def _cluster_findings(partitions: tuple[Partition, ...], brokers: dict[BrokerId, Broker]) -> list[Finding]:
    out: list[Finding] = []
    if not brokers or not any(b.registered for b in brokers.values()):
        return out  # nothing known about liveness
    down = {bid for bid, b in brokers.items() if not b.registered}
    for p in partitions:
        if not p.reassigning:
            continue
        for b in p.adding:
            if not brokers[b].eligible and b not in p.isr:
                out.append(
                    Finding(
                        ADDING_ON_INELIGIBLE,
                        Severity.WARNING,
                        f"{p.name} is adding a replica on broker {b}, which is not live or not "
                        "eligible: the reassignment stalls until it is back (KIP-841).",
                        "Bring the broker back, or cancel the reassignment of this partition.",
                        topic=p.topic,
                        partition=p.partition,
                        broker=b,
                    )
                )
    for bid in sorted(b.id for b in brokers.values() if b.registered and b.fenced):
        n = sum(1 for p in partitions if bid in p.replicas)
        out.append(
            Finding(
                REPLICA_ON_FENCED_BROKER,
                Severity.WARNING if n else Severity.INFO,
                f"Broker {bid} is registered but fenced (shut down, or not heartbeating to the controller)"
                + (f": it holds {plural(n, 'replica')}." if n else " and holds no replica."),
                "Start it again, or move its replicas away (its data cannot be copied from it)."
                if n
                else "Once it is shut down for good, unregister it (kafka-cluster unregister).",
                broker=bid,
            )
        )
    out.extend(offline_dir_findings(partitions, brokers))
    for bid in sorted(down):
        n = sum(1 for p in partitions if bid in p.replicas)
        out.append(
            Finding(
                REPLICA_ON_UNKNOWN_BROKER,
                Severity.WARNING,
                f"Broker {bid} holds {plural(n, 'replica')} but is not registered: it is down or was removed.",
                "Start the broker again, or reassign its replicas elsewhere.",
                broker=bid,
            )
        )
    return out


_NAMED = 10
"""Partitions a finding names before it says how many more."""


def offline_dir_findings(partitions: tuple[Partition, ...], brokers: dict[BrokerId, Broker]) -> list[Finding]:
    """A warning per log dir that DescribeLogDirs answered with an error (KAFKA_STORAGE_ERROR: the
    dir is offline), naming the broker, the dir and the replicas in it (the in-memory test cluster
    gives its snapshots these too)."""
    out = []
    for bid in sorted(brokers):
        b = brokers[bid]
        offline = [d for d in b.log_dirs if d.offline]
        for d in offline:
            held = replicas_in_dir(partitions, b, d.path)
            names = ", ".join(p.name for p in held[:_NAMED]) + (
                f" and {len(held) - _NAMED:,} more" if len(held) > _NAMED else ""
            )
            others = [x.path for x in offline if x is not d]
            what = (
                f"it holds {plural(len(held), 'replica')}: {names}"
                + (
                    f" (the broker lists them in no online dir: they are in this dir or in {', '.join(others)}, "
                    "offline too)"
                    if others
                    else ""
                )
                + "; they are offline on this broker (out of the ISR) until the dir is back"
                if held
                else "the broker lists no replica missing from its online dirs"
            )
            out.append(
                Finding(
                    LOG_DIR_OFFLINE,
                    Severity.WARNING,
                    f"Log dir {d.path} of broker {bid} is offline (DescribeLogDirs: {d.error}): {what}.",
                    "A transient I/O error during a move between log dirs can mark a whole dir offline "
                    "(KAFKA-19571): check the disk and the broker's log; the dir comes back only when the broker "
                    "restarts. Until then nothing can be moved into it; move its replicas to other brokers "
                    f"(generate --drain-log-dir {bid}:{d.path}).",
                    broker=bid,
                )
            )
    return out
