"""The only place that keeps clients and cached loaders: one store per data dir, and per cluster
its parts (reader, gateway, worker, copy tracker, collector), built by ``components/parts.py``."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import streamlit as st

from components.parts import Collecting, Parts, PartsFactory, Reader, live_parts
from console.access.clusters import (
    ENV_MAX_THROTTLE,
    ENV_SIZES_EVERY,
    ENV_TIMEOUT,
    cluster_problems,
    discover,
)
from console.access.settings import ConnectionSettings
from console.core.model import ClusterState, cluster_key
from console.moves.others import FirstSeen
from console.moves.progress import CopyTracker
from console.present import live
from console.runs.gateway import ClusterGateway
from console.storage.store import Store

if TYPE_CHECKING:
    from console.core.calibration import Calibration
    from console.moves.impact import ImpactLimits, Pricing
    from console.pipeline.collect import BackgroundCollector
    from console.runs.worker import Worker
    from console.stream.shipper import Shipper


def _secrets() -> tuple[dict[str, Any], str | None]:
    """``secrets.toml`` as a dict, and what is wrong with it when it cannot be read."""
    try:
        return {k: st.secrets[k] for k in st.secrets}, None
    except Exception as e:
        text = str(e)
        if text.startswith("No secrets found"):
            return {}, None  # no secrets.toml is the normal case
        return {}, (
            f"{text} Fix the file (it is TOML; see .streamlit/secrets.toml.example); until then no "
            "configured cluster and no Streamlit sign-in are used."
        )


def _configured() -> dict[str, Any]:
    clusters = _secrets()[0].get("clusters", {})
    return dict(clusters) if isinstance(clusters, Mapping) else {}


def audit_stream_problems() -> list[str]:
    """What keeps ``[audit_stream]`` from shipping (nothing when it is off or fine)."""
    from console.stream.settings import from_mapping, sinks_of

    settings, problems = from_mapping(_secrets()[0].get("audit_stream"))
    return problems + (sinks_of(settings, clusters())[1] if settings.on else [])


@st.cache_resource(show_spinner=False)
def _audit_stream(store_location: str, raw: str) -> Shipper | None:
    from console.stream.settings import StreamSettings, sinks_of
    from console.stream.shipper import Shipper, start_thread

    sinks = sinks_of(StreamSettings(**json.loads(raw)), clusters())[0]
    if not sinks:
        return None
    shipper = Shipper(_store(store_location), sinks)
    start_thread(shipper)
    return shipper


def audit_stream() -> Shipper | None:
    """The server's audit stream (``[audit_stream]`` in secrets.toml): one shipper per store and
    settings, started on first use, sending every audit entry to its file and topic; None when off."""
    from dataclasses import asdict

    from console.stream.settings import from_mapping

    settings, _ = from_mapping(_secrets()[0].get("audit_stream"))
    if not settings.on:
        return None
    return _audit_stream(store().location, json.dumps(asdict(settings), sort_keys=True))


def configuration_problems() -> list[str]:
    """What is wrong with the console's configuration, for the sidebar: an unreadable secrets.toml,
    cluster tables the console cannot use, a Streamlit sign-in that is configured but not usable."""
    raw, unreadable = _secrets()
    problems = [unreadable] if unreadable else []
    clusters = raw.get("clusters", {})
    problems += cluster_problems(clusters if isinstance(clusters, Mapping) else {"(all)": clusters})
    every = os.environ.get("CONSOLE_COLLECT_EVERY", "").strip()
    if every and collect_every() is None:
        problems.append(
            f"CONSOLE_COLLECT_EVERY={every!r} is not a number of seconds: the server does not collect "
            "snapshots until it is (e.g. 30), or unset."
        )
    if timeout := ENV_TIMEOUT.problem():
        problems.append(timeout)
    if sizes_every := ENV_SIZES_EVERY.problem():
        problems.append(sizes_every)
    if ceiling := ENV_MAX_THROTTLE.problem():
        problems.append(ceiling)
    problems += audit_stream_problems()
    problems += _team_problems()
    auth = raw.get("auth")
    if isinstance(auth, Mapping):
        missing = [k for k in ("redirect_uri", "cookie_secret") if not auth.get(k)]
        if missing:
            problems.append(
                f"[auth] in secrets.toml lacks {', '.join(missing)}: Streamlit sign-in cannot work; "
                "people are viewers until it is fixed (or sign in against the users file)."
            )
    if "auth" in raw:
        try:
            bool(st.user.is_logged_in)
        except Exception as e:
            problems.append(
                f"Streamlit sign-in ([auth] in secrets.toml) is configured but not usable: {e}. "
                "People are viewers until it is fixed (or sign in against the users file)."
            )
    return problems


def _team_problems() -> list[str]:
    """What is wrong with notify.toml, and a metrics address that is not host:port."""
    from console.core.errors import ConfigError
    from console.metrics.server import parse_address
    from console.notify.settings import load

    problems = list(load().problems)
    address = os.environ.get("CONSOLE_METRICS_ADDRESS", "").strip()
    try:
        if address:
            parse_address(address)
    except ConfigError as e:
        problems.append(f"{e.message} {e.hint} The metrics are not served until it is.")
    return problems


def clusters() -> dict[str, ConnectionSettings]:
    return discover(_configured())


@st.cache_resource(show_spinner=False)
def _store(location: str) -> Store:
    return Store(location)


def store() -> Store:
    """The console's store (thread-safe: one connection per thread), one per location:
    ``CONSOLE_STORE_URL``, else the SQLite file in the data dir."""
    from console.core.paths import store_url

    return _store(store_url())


_factory: PartsFactory = live_parts


def use_parts(factory: PartsFactory | None) -> None:
    """Build clusters' parts with ``factory`` from now on (tests: over the in-memory fake cluster);
    None: the real clusters again. Parts built before are forgotten (not stopped)."""
    global _factory
    _factory = factory or live_parts
    _parts.clear()


@st.cache_resource(show_spinner=False)
def _parts(settings: ConnectionSettings, store_location: str, collecting: Collecting | None) -> Parts:
    return _factory(settings, _store(store_location), collecting)


def parts(settings: ConnectionSettings) -> Parts:
    """A cluster's reader, gateway, worker, copy tracker and collector: built on first use, one
    set per cluster, shared by every session (the worker starts with them)."""
    from console.core.paths import history_dir

    every = collect_every()
    collecting = Collecting(history_dir() / "snapshots", every) if every else None
    return _parts(replace(settings, timeout_s=min(settings.timeout_s, 5.0)), store().location, collecting)


def reader(settings: ConnectionSettings) -> Reader:
    """One long-lived, thread-safe reader per cluster, shared by every session."""
    return parts(settings).reader


def gateway(settings: ConnectionSettings) -> ClusterGateway:
    """What the services and the executor use to change the cluster (over the shared reader)."""
    return parts(settings).gateway


def worker(settings: ConnectionSettings) -> Worker:
    """The server's worker for a cluster: drives its unfinished runs (started on first use, one
    per cluster, shared by every session; a standalone executor may run as well)."""
    return parts(settings).worker


@st.cache_resource(show_spinner=False)
def _first_seen(cluster: str) -> FirstSeen:
    return FirstSeen()


def first_seen(settings: ConnectionSettings) -> FirstSeen:
    """When each reassignment another mover has in flight was first seen, one per cluster, shared
    by every session (Kafka does not say when a reassignment started)."""
    return _first_seen(settings.name)


@st.cache_resource(show_spinner=False, ttl=300)
def _balancer_configs(settings: ConnectionSettings, broker: int) -> dict[str, str] | None:
    from console.core.errors import ConsoleError
    from console.core.model import BrokerId
    from console.state.reader import ClusterReader

    r = reader(settings)
    if not isinstance(r, ClusterReader):
        return None  # a test's reader: no broker configs to ask
    try:
        return r.kafka.balancer_configs(BrokerId(broker))
    except ConsoleError:
        return None


def balancer_configs(settings: ConnectionSettings, state: ClusterState) -> dict[str, str] | None:
    """One live broker's configs that name a balancer (read at most every five minutes); None when
    not read."""
    live = state.live_brokers
    return _balancer_configs(settings, int(live[0])) if live else None


def copy_tracker(settings: ConnectionSettings) -> CopyTracker:
    """Copy rates observed across refreshes, one tracker per cluster shared by every session
    watching it (they share the reader's snapshots, so each snapshot is counted once)."""
    return parts(settings).copy_tracker


@st.cache_resource(show_spinner=False, max_entries=16)
def _calibration(tables: str, cluster: str, stamp: float) -> Calibration | None:
    from console.pipeline.calibration import load_calibration

    return load_calibration(tables, cluster)


def calibration(state: ClusterState, settings: ConnectionSettings) -> Calibration | None:
    """What the history job last learned about this cluster's copy rates (read again whenever the
    job writes new tables); None without history."""
    from console.core.paths import history_dir
    from console.pipeline.datasets import manifest_name

    tables = history_dir() / "tables"
    try:
        stamp = (tables / manifest_name("history")).stat().st_mtime
    except OSError:
        return None
    return _calibration(str(tables), cluster_key(state, settings.name), stamp)


@st.cache_resource(show_spinner=False, max_entries=16)
def _topic_rates(tables: str, cluster: str, stamp: float) -> dict[str, float]:
    from console.pipeline.calibration import load_topic_rates

    return load_topic_rates(tables, cluster)


def topic_rates(state: ClusterState, settings: ConnectionSettings) -> dict[str, float]:
    """Each topic's produce rate the history job last learned for this cluster (read again whenever
    the job writes new tables); empty without history."""
    from console.core.paths import history_dir
    from console.pipeline.datasets import manifest_name

    tables = history_dir() / "tables"
    try:
        stamp = (tables / manifest_name("history")).stat().st_mtime
    except OSError:
        return {}
    return _topic_rates(str(tables), cluster_key(state, settings.name), stamp)


def impact_settings(settings: ConnectionSettings) -> tuple[Pricing | None, ImpactLimits, list[str]]:
    """The cluster's prices and impact limits (``[pricing]``, ``[impact]`` in secrets.toml, the
    cluster's own tables over them), and what is wrong with them."""
    from console.access.pricing import impact_settings as read

    return read(_secrets()[0], settings.name)


def collect_every() -> float | None:
    """``CONSOLE_COLLECT_EVERY`` in seconds (at least 1); 0 when unset; None when not a positive number."""
    every = os.environ.get("CONSOLE_COLLECT_EVERY", "").strip()
    if not every:
        return 0.0
    try:
        seconds = float(every)
    except ValueError:
        return None
    return max(1.0, seconds) if seconds > 0 else None


def collector(settings: ConnectionSettings) -> BackgroundCollector | None:
    """The server's collector for a cluster when ``CONSOLE_COLLECT_EVERY`` (seconds) is set: appends
    snapshots to the history while the console runs (off by default). None when off."""
    return parts(settings).collector


# -- the Live page's view model, once per snapshot for every session showing it -------------------
def _snapshot_key(settings: ConnectionSettings, state: ClusterState) -> str:
    """A snapshot's identity: its cluster and when it was taken (the reader shares one snapshot
    object between the sessions; a session's last good one keeps its own time)."""
    return json.dumps([settings.name, state.cluster_id, state.taken_at])


@st.cache_resource(show_spinner=False, max_entries=16)
def _live_summary(
    snapshot: str, learned_from: str, _state: ClusterState, _tracker: CopyTracker, _calibration: Calibration | None
) -> live.LiveSummary:
    return live.summary(_state, _tracker.rates(), _calibration, _tracker.dir_rates())


def live_summary(settings: ConnectionSettings, state: ClusterState, tracker: CopyTracker) -> live.LiveSummary:
    """The Live page's counts, totals and ETAs for ``state`` (``tracker`` has observed it): computed
    by the first session that shows the snapshot, shared by the others."""
    cal = calibration(state, settings) if state.in_flight else None
    learned_from = json.dumps([cal.cluster, cal.made_at] if cal is not None else None)
    return _live_summary(_snapshot_key(settings, state), learned_from, state, tracker, cal)


@st.cache_resource(show_spinner=False, max_entries=64)
def _live_page(
    snapshot: str,
    filters: str,
    number: int,
    size: int,
    cluster: str,
    _state: ClusterState,
    _flt: live.LiveFilter,
    _rates: Mapping[live.ReplicaKey, float],
    _finish: Mapping[live.ReplicaKey, float] | None,
) -> live.LivePage:
    return live.live_page(_state, _flt, number, size, store().runs.active_partitions(cluster), _rates, _finish)


def live_page(
    settings: ConnectionSettings,
    state: ClusterState,
    flt: live.LiveFilter,
    number: int,
    size: int,
    rates: Mapping[live.ReplicaKey, float],
    finish: Mapping[live.ReplicaKey, float] | None = None,
) -> live.LivePage:
    """A page of the Live table and its picture for ``state`` and the filters ``flt`` (with the
    runs of the console that started each partition; ``finish``: each copy's ETA as the headline
    counts it, :attr:`console.moves.eta.InFlightEta.finish`): computed once per snapshot, filters
    and page, shared by the sessions looking at the same ones."""
    cluster = cluster_key(state, settings.name)
    return _live_page(_snapshot_key(settings, state), repr(flt), number, size, cluster, state, flt, rates, finish)
