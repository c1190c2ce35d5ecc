"""After a cancel: the replication throttles another tool left on the cancelled partitions' topics
and brokers (``kafka-reassign-partitions.sh --execute --throttle`` sets them, and only its own
``--cancel`` clears them), listed by :func:`left_by_others` and removed on request by
:func:`clear_left_by_others` through the sweep (:func:`console.services.runs.sweep`: the role
check, the audit before and after, the read back). Only settings nothing in flight needs and that
this console's runs did not set (their ledger; a run takes its own off) are listed or removed;
never the cluster default."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from console.access.auth import Identity
from console.core.errors import ClusterUnavailable
from console.core.model import BrokerId, ClusterState, Partition, SourceStatus, cluster_key
from console.moves.throttles import Leftover, LeftoverKind, involved, left_on, leftover_throttles
from console.runs.gateway import ClusterGateway
from console.services.guard import require
from console.services.runs import SweepReport, sweep
from console.storage.store import Store

LEFT_BY_OTHERS = "left by another tool (the official tool's --cancel would clear them)"
"""What the console says of the throttles :func:`left_by_others` finds."""


@dataclass(frozen=True)
class OtherThrottles:
    """The throttles another tool left after a cancel, and where the console looked."""

    settings: tuple[Leftover, ...]
    topics: tuple[str, ...]
    """The cancelled partitions' topics."""
    brokers: tuple[BrokerId, ...]
    """The brokers their reassignments involved."""
    read: bool = True
    """False: the throttle configs could not be read (nothing is said of them)."""


@dataclass(frozen=True)
class ClearReport:
    """What :func:`clear_left_by_others` did with the settings offered."""

    sweep: SweepReport
    """The removal sent, as the brokers report it afterwards."""
    needed_now: tuple[Leftover, ...] = ()
    """Still set, but something in flight needs them now (or a run of this console set them): not sent."""
    gone_already: tuple[Leftover, ...] = ()
    """No longer set when the request would have gone: nothing sent for them."""


def set_by_runs(store: Store, cluster_id: str) -> set[tuple[str, str, str]]:
    """Kind, name and key of every throttle this console's runs on ``cluster_id`` set and have not
    taken off yet (their open ledger entries)."""
    runs = {r.id for r in store.runs.list(cluster_id)}
    return {(e.kind, e.name, e.key) for e in store.runs.ledger() if e.run_id in runs}


def _offered_now(store: Store, state: ClusterState, cluster_id: str, parts: Iterable[Partition]) -> list[Leftover]:
    topics, brokers = involved(parts)
    return left_on(leftover_throttles(state), topics, brokers, set_by_runs(store, cluster_id))


def left_by_others(
    store: Store, cluster: ClusterGateway, cluster_id: str, cancelled: Iterable[Partition]
) -> OtherThrottles:
    """The throttle configs set now on the ``cancelled`` partitions' topics and on the brokers
    their reassignments involved, that nothing in flight needs and this console's runs did not
    set: left by another tool. Read from the cluster (a full read: the configs)."""
    parts = list(cancelled)
    topics, brokers = involved(parts)
    if not parts:
        return OtherThrottles((), topics, brokers)
    state = cluster.snapshot(full=True)
    if state.status.configs is not SourceStatus.OK:
        return OtherThrottles((), topics, brokers, read=False)
    return OtherThrottles(tuple(_offered_now(store, state, cluster_id, parts)), topics, brokers)


def _set_now(state: ClusterState) -> set[tuple[str, str, str]]:
    topics = {(str(LeftoverKind.TOPIC), t, k) for t, keys in state.throttles.topic_map().items() for k in keys}
    return topics | {(str(LeftoverKind.BROKER), b, k) for b, keys in state.throttles.broker_map().items() for k in keys}


def _key(lo: Leftover) -> tuple[str, str, str]:
    return str(lo.kind), lo.name, lo.key


def clear_left_by_others(
    store: Store,
    cluster: ClusterGateway,
    who: Identity,
    offered: Sequence[Leftover],
    note: Mapping[str, object] | None = None,
) -> ClearReport:
    """Remove exactly ``offered`` (what the operator was shown, :func:`left_by_others`), as the
    cluster is now: those something in flight needs meanwhile (or a run of this console set) and
    those gone already are not sent, the rest go through the sweep (``who`` needs the operator
    role; audited before and after, ``note`` in the request; read back). Audited when nothing is
    left to send, too."""
    state = cluster.snapshot(full=True)
    key = cluster_key(state, cluster.name)
    request = {"offered": [f"{lo.where}: {lo.key}" for lo in offered], "left_by": "another tool", **(note or {})}
    require(store, who, "sweep", key, request)
    if state.status.configs is not SourceStatus.OK:
        raise ClusterUnavailable(
            "The throttle configs could not be read: nothing was removed.", "Try again once the brokers answer."
        )
    topics = [lo.name for lo in offered if lo.kind is LeftoverKind.TOPIC]
    brokers = [BrokerId(int(lo.name)) for lo in offered if lo.kind is LeftoverKind.BROKER]
    free = {_key(lo) for lo in left_on(leftover_throttles(state), topics, brokers, set_by_runs(store, key))}
    set_now = _set_now(state)
    send = [lo for lo in offered if _key(lo) in free and lo.kind is not LeftoverKind.CLUSTER_DEFAULT]
    needed = tuple(lo for lo in offered if _key(lo) not in free and _key(lo) in set_now)
    gone = tuple(lo for lo in offered if _key(lo) not in set_now)
    kept = {"kept_needed_now": [f"{lo.where}: {lo.key}" for lo in needed]} if needed else {}
    if not send:
        store.audit.record(who.name, key, "throttle-sweep", {**request, **kept}, "nothing to remove")
        return ClearReport(SweepReport(), needed, gone)
    return ClearReport(sweep(store, cluster, who, send, note={**request, **kept}), needed, gone)
