"""The only place that builds clients and cached loaders (DESIGN.md §2)."""

from __future__ import annotations

import json
from typing import Any

import streamlit as st

from console.clusters import discover
from console.reader import ClusterReader
from console.settings import ConnectionSettings
from console.store import Store


def _configured() -> dict[str, Any]:
    try:
        return dict(st.secrets.get("clusters", {}))
    except Exception:  # noqa: BLE001 - no secrets.toml is the normal case
        return {}


def clusters() -> dict[str, ConnectionSettings]:
    return discover(_configured())


@st.cache_resource(show_spinner=False)
def _reader(key: str) -> ClusterReader:
    raw = json.loads(key)
    return ClusterReader(ConnectionSettings(raw["properties"], zookeeper=raw["zookeeper"], name=raw["name"],
                                            timeout_s=raw["timeout_s"]))


def reader(settings: ConnectionSettings) -> ClusterReader:
    """One long-lived, thread-safe reader per cluster, shared by every session."""
    key = json.dumps({"properties": dict(settings.properties), "zookeeper": settings.zookeeper,
                      "name": settings.name, "timeout_s": min(settings.timeout_s, 5.0)}, sort_keys=True)
    return _reader(key)


@st.cache_resource(show_spinner=False)
def store() -> "Store":
    """The console's SQLite store (thread-safe: one connection per thread)."""
    from console.store import Store

    return Store()
