"""Cordon and uncordon brokers and log dirs (KIP-1066): :func:`change`.

A cordon is the broker config ``cordoned.log.dirs``: ``*`` cordons the whole broker, a list of its
log dirs cordons those. A cordoned dir receives no new replica of a new topic or partition; a
broker whose every dir is cordoned receives none (the controller leaves it out when it places
partitions). An explicit reassignment onto it is still taken by the controller and completes,
which is why the console's validation flags one (``cordoned-destination``) and its generators
never pick a cordoned broker.

Each call needs the operator role (refused and audited otherwise, nothing sent), checks that the
cluster enforces cordons (``metadata.version`` 4.3-IV0 or later: else refused, audited, nothing
sent), that the broker is registered and has the log dir named, then writes the intent to the
audit log, sends IncrementalAlterConfigs, reads the config back and audits what the broker reports
(before and after).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from functools import partial

from console.access.auth import Identity
from console.core.cluster_info import cordons_supported, cordons_text
from console.core.errors import ClusterUnavailable, ConfigError, ConsoleError, UnsupportedByCluster
from console.core.limits import CORDON_ALL, CORDONED_LOG_DIRS
from console.core.model import Broker, BrokerId, ClusterInfo, ClusterState, cluster_key, cordon_value
from console.runs.gateway import ClusterGateway
from console.services.guard import REFUSED, audited_send, require
from console.storage.store import Store

CORDON, UNCORDON = "cordon", "uncordon"


@dataclass(frozen=True)
class CordonReport:
    """What a cordon or uncordon did, as the broker reports it afterwards."""

    action: str
    """``cordon`` or ``uncordon``."""
    broker: BrokerId
    log_dir: str | None
    """The dir asked for; None: the whole broker."""
    before: tuple[str, ...]
    """``cordoned.log.dirs`` before (``()``: none)."""
    wanted: tuple[str, ...]
    """What was set (``()``: the config deleted)."""
    reported: tuple[str, ...] | None
    """What the broker reports afterwards; None when it could not be read back."""

    @property
    def changed(self) -> bool:
        """Something was sent (it was not already so)."""
        return self.wanted != self.before

    @property
    def confirmed(self) -> bool:
        """The broker reports what was set."""
        return self.reported == self.wanted

    def summary(self) -> str:
        what = f"log dir {self.log_dir} of broker {self.broker}" if self.log_dir else f"broker {self.broker}"
        if not self.changed:
            done = "cordoned" if self.action == CORDON else "not cordoned"
            return f"Nothing to do: {what} is {done} already (cordoned.log.dirs {_shown(self.before)})."
        said = f"{self.action.capitalize()}ed {what}: cordoned.log.dirs {_shown(self.before)} → {_shown(self.wanted)}"
        if self.confirmed:
            return said + " (read back from the broker)."
        if self.reported is None:
            return said + "; sent, but not confirmed (the broker could not be read back)."
        return said + f"; sent, but the broker still reports {_shown(self.reported)}."


def _shown(entries: tuple[str, ...]) -> str:
    return f"'{cordon_value(entries)}'" if entries else "(none)"


def wanted_entries(action: str, broker: Broker, current: tuple[str, ...], log_dir: str | None) -> tuple[str, ...]:
    """``cordoned.log.dirs`` after ``action`` on ``broker`` (whose config is ``current`` now) for
    ``log_dir`` (None: the whole broker). ``()`` means the config is removed."""
    if action == CORDON:
        if log_dir is None or CORDON_ALL in current:
            return (CORDON_ALL,)
        return current if log_dir in current else (*current, log_dir)
    if log_dir is None:
        return ()
    if CORDON_ALL in current:  # every dir but this one stays cordoned
        return tuple(d.path for d in broker.log_dirs if d.path != log_dir)
    return tuple(d for d in current if d != log_dir)


def change(
    store: Store,
    cluster: ClusterGateway,
    who: Identity,
    action: str,
    broker: int,
    log_dir: str | None = None,
    confirm_s: float = 5.0,
) -> CordonReport:
    """``action`` (:data:`CORDON` or :data:`UNCORDON`) on ``broker`` as a whole, or only on its
    ``log_dir``. A cordon of the whole broker sets ``cordoned.log.dirs`` to ``*``, of a dir adds it
    to the list; an uncordon of the whole broker removes the config, of a dir takes it out of the
    list (out of ``*`` too: the broker's other dirs stay cordoned). Raises :class:`NotPermitted`,
    :class:`UnsupportedByCluster` or :class:`ConfigError` (nothing sent), or the cluster's error
    for the request (audited)."""
    bid = BrokerId(broker)
    state = cluster.snapshot()
    key = cluster_key(state, cluster.name)
    request: dict[str, object] = {"broker": int(broker), "log_dir": log_dir}
    require(store, who, action, key, request)  # before the cluster is asked what it supports
    target = check_change(store, who, action, key, state, cluster.cluster_info(), broker, log_dir)
    current = _current(cluster, state, bid)
    wanted = wanted_entries(action, target, current, log_dir)
    request.update({"before": list(current), "after": list(wanted)})
    if wanted == current:
        store.audit.record(who.name, key, action, request, "unchanged")
        return CordonReport(action, bid, log_dir, current, wanted, current)
    configs = {bid: {CORDONED_LOG_DIRS: cordon_value(wanted) if wanted else None}}
    _, intent = audited_send(store, who, key, action, request, partial(cluster.alter_configs, configs, {}))
    reported = _read_back(cluster, bid, wanted, confirm_s)
    outcome = "applied" if reported == wanted else "unconfirmed" if reported is None else "still reported otherwise"
    intent.answer(outcome, {"reported": None if reported is None else list(reported)})
    return CordonReport(action, bid, log_dir, current, wanted, reported)


def check_change(
    store: Store,
    who: Identity,
    action: str,
    key: str,
    state: ClusterState,
    info: ClusterInfo,
    broker: int,
    log_dir: str | None,
) -> Broker:
    """The refusals of a cordon or uncordon (``action``) before anything is sent, against ``state``
    and ``info``: the role (audited), a cluster that does not enforce cordons (audited), a broker
    not registered or without that log dir (:class:`ConfigError`). The broker to change, when none
    applies. A front end calls it before it asks for a confirmation; :func:`change` calls it again
    on the cluster as it is when it sends."""
    request: dict[str, object] = {"broker": int(broker), "log_dir": log_dir}
    require(store, who, action, key, request)
    supported = cordons_supported(info)
    if supported is not True:
        why = (
            "This cluster does not support cordoned log dirs (KIP-1066 needs metadata.version 4.3-IV0 or later: "
            f"{cordons_text(info)})."
            if supported is False
            else f"Whether this cluster supports cordoned log dirs is not known: {cordons_text(info)}."
        )
        store.audit.record(who.name, key, action, request, REFUSED, response={"why": why})
        raise UnsupportedByCluster(
            why + " Nothing was sent.",
            "Upgrade the cluster and finalize metadata.version 4.3-IV0 or later (kafka-features upgrade), or "
            "exclude the broker from plans instead (--exclude-brokers)."
            if supported is False
            else "Check that the cluster answers and says its metadata.version, then try again.",
        )
    return _target(state, BrokerId(broker), log_dir)


def _target(state: ClusterState, broker: BrokerId, log_dir: str | None) -> Broker:
    """The broker asked for, registered, with the log dir asked for; else :class:`ConfigError`."""
    found = state.broker(broker)
    if found is None or not found.registered:
        known = ", ".join(str(b.id) for b in state.brokers if b.registered) or "none"
        raise ConfigError(
            f"Broker {broker} is not registered in this cluster (registered: {known}); nothing was sent.",
            "Name a broker the cluster has (python -m console state).",
        )
    if log_dir is not None:
        if not found.log_dirs:
            raise ClusterUnavailable(
                f"The log dirs of broker {broker} could not be read, so {log_dir} cannot be checked; nothing was sent.",
                "Check that the broker answers DescribeLogDirs, then try again.",
            )
        paths = [d.path for d in found.log_dirs]
        if log_dir not in paths:
            raise ConfigError(
                f"Broker {broker} has no log dir {log_dir} (its log dirs: {', '.join(paths)}); nothing was sent.",
                "Name one of the broker's log dirs as DescribeLogDirs lists them.",
            )
    return found


def _current(cluster: ClusterGateway, state: ClusterState, broker: BrokerId) -> tuple[str, ...]:
    """The broker's ``cordoned.log.dirs`` now, asked afresh (else as the snapshot says)."""
    try:
        asked = cluster.describe_configs((broker,), ()).cordons.get(str(broker))
    except ConsoleError:
        asked = None
    if asked is not None:
        return asked
    known = state.broker(broker)
    if known is not None and known.cordoned_log_dirs is not None:
        return known.cordoned_log_dirs
    raise ClusterUnavailable(
        f"The cordoned.log.dirs of broker {broker} could not be read; nothing was sent.",
        "Check that the broker answers DescribeConfigs, then try again.",
    )


def _read_back(
    cluster: ClusterGateway, broker: BrokerId, wanted: tuple[str, ...], confirm_s: float
) -> tuple[str, ...] | None:
    """What the broker reports, asking again until it is ``wanted`` or ``confirm_s`` passed."""
    deadline = time.monotonic() + confirm_s
    while True:
        try:
            got = cluster.describe_configs((broker,), ()).cordons.get(str(broker))
        except ConsoleError:
            got = None
        if (got is not None and set(got) == set(wanted)) or time.monotonic() > deadline:
            return tuple(wanted) if got is not None and set(got) == set(wanted) else got
        time.sleep(0.2)
