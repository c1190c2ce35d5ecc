"""The only place that builds clients and cached loaders (docs/ARCHITECTURE.md: the app keeps one reader, store and worker per cluster)."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import streamlit as st

from console.access.clusters import cluster_problems, discover
from console.access.settings import ConnectionSettings
from console.adapters.gateway import LiveGateway
from console.core.model import ClusterState, cluster_key
from console.moves.progress import CopyTracker
from console.state.reader import ClusterReader
from console.storage.store import Store

if TYPE_CHECKING:
    from console.core.calibration import Calibration
    from console.pipeline.collect import BackgroundCollector
    from console.runs.worker import Worker


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


def clusters() -> dict[str, ConnectionSettings]:
    return discover(_configured())


@st.cache_resource(show_spinner=False)
def _reader(key: str) -> ClusterReader:
    raw = json.loads(key)
    return ClusterReader(
        ConnectionSettings(raw["properties"], zookeeper=raw["zookeeper"], name=raw["name"], timeout_s=raw["timeout_s"])
    )


def gateway(settings: ConnectionSettings) -> LiveGateway:
    """What the services and the executor use to change the cluster (over the shared reader)."""
    return reader(settings).gateway()


def reader(settings: ConnectionSettings) -> ClusterReader:
    """One long-lived, thread-safe reader per cluster, shared by every session."""
    key = json.dumps(
        {
            "properties": dict(settings.properties),
            "zookeeper": settings.zookeeper,
            "name": settings.name,
            "timeout_s": min(settings.timeout_s, 5.0),
        },
        sort_keys=True,
    )
    return _reader(key)


@st.cache_resource(show_spinner=False)
def _store(path: str) -> Store:
    return Store(path)


def store() -> Store:
    """The console's SQLite store (thread-safe: one connection per thread), one per data dir."""
    from console.core.paths import store_file

    return _store(str(store_file()))


@st.cache_resource(show_spinner=False)
def _worker(key: str) -> Worker:
    import getpass

    from console.runs.worker import Worker

    raw = json.loads(key)
    settings = ConnectionSettings(
        raw["properties"], zookeeper=raw["zookeeper"], name=raw["name"], timeout_s=raw["timeout_s"]
    )
    return Worker(_store(raw["store"]), gateway(settings), f"console-server ({getpass.getuser()})").start()


def worker(settings: ConnectionSettings) -> Worker:
    """The server's worker for a cluster: drives its unfinished runs (started on first use, one
    per cluster, shared by every session; a standalone executor may run as well)."""
    key = json.dumps(
        {
            "properties": dict(settings.properties),
            "zookeeper": settings.zookeeper,
            "name": settings.name,
            "timeout_s": min(settings.timeout_s, 5.0),
            "store": str(store().path),
        },
        sort_keys=True,
    )
    return _worker(key)


@st.cache_resource(show_spinner=False)
def _copy_tracker(key: str) -> CopyTracker:
    return CopyTracker()


def copy_tracker(settings: ConnectionSettings) -> CopyTracker:
    """Copy rates observed across refreshes, one tracker per cluster shared by every session
    watching it (they share the reader's snapshots, so each snapshot is counted once)."""
    return _copy_tracker(
        json.dumps(
            {"properties": dict(settings.properties), "zookeeper": settings.zookeeper, "name": settings.name},
            sort_keys=True,
        )
    )


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


@st.cache_resource(show_spinner=False)
def _collector(key: str, root: str, every_s: float) -> BackgroundCollector:
    from console.pipeline.collect import BackgroundCollector

    raw = json.loads(key)
    settings = ConnectionSettings(raw["properties"], zookeeper=raw["zookeeper"], name=raw["name"])
    return BackgroundCollector(reader(settings), root, every_s).start()


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
    from console.core.paths import history_dir

    seconds = collect_every()
    if not seconds:
        return None
    key = json.dumps(
        {"properties": dict(settings.properties), "zookeeper": settings.zookeeper, "name": settings.name},
        sort_keys=True,
    )
    return _collector(key, str(history_dir() / "snapshots"), seconds)
