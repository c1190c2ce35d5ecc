"""Which clusters the console knows: configured ones, the environment, and a running sandbox."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from console.access.settings import ConnectionSettings

SANDBOX = "sandbox"


def from_mapping(clusters: Mapping[str, Mapping[str, Any]]) -> dict[str, ConnectionSettings]:
    """``[clusters.<name>]`` tables: ``bootstrap_servers``, optional ``zookeeper``, and any
    librdkafka properties under ``properties``."""
    out: dict[str, ConnectionSettings] = {}
    for name, cfg in clusters.items():
        if cluster_problems({name: cfg}):
            continue  # named on the page by cluster_problems; never connected to half-configured
        bs = str(cfg.get("bootstrap_servers", "")).strip()
        props = {str(k): str(v) for k, v in dict(cfg.get("properties", {})).items()}
        props["bootstrap.servers"] = bs
        zk = cfg.get("zookeeper") or None
        out[name] = ConnectionSettings(props, zookeeper=str(zk) if zk else None, name=name)
    return out


def cluster_problems(clusters: Mapping[str, Any]) -> list[str]:
    """What is wrong with ``[clusters.<name>]`` tables, each naming the table and what to write."""
    from console.access.settings import to_kafka_python
    from console.core.errors import ConfigError

    out: list[str] = []
    for name, cfg in clusters.items():
        where = f"[clusters.{name}] in secrets.toml"
        if not isinstance(cfg, Mapping):
            out.append(f'{where} is not a table: write bootstrap_servers = "host:port" under it.')
            continue
        if not str(cfg.get("bootstrap_servers", "")).strip():
            out.append(
                f'{where} has no bootstrap_servers: add bootstrap_servers = "host:port,..."; '
                "the cluster is left out until then."
            )
        props = cfg.get("properties", {})
        if not isinstance(props, Mapping):
            out.append(f"{where}: properties must be a table ([clusters.{name}.properties]) of librdkafka settings.")
            continue
        try:
            to_kafka_python({str(k): str(v) for k, v in props.items()})
        except ConfigError as e:
            out.append(f"{where}: {e.message} {e.hint}")
    return out


def from_environment(env: Mapping[str, str] | None = None) -> dict[str, ConnectionSettings]:
    env = os.environ if env is None else env
    bs = env.get("CONSOLE_BOOTSTRAP_SERVERS", "").strip()
    if not bs:
        return {}
    name = env.get("CONSOLE_CLUSTER_NAME", "cluster")
    return {
        name: ConnectionSettings({"bootstrap.servers": bs}, zookeeper=env.get("CONSOLE_ZOOKEEPER") or None, name=name)
    }


def from_sandbox(data_dir: Path | None = None) -> dict[str, ConnectionSettings]:
    from console.sandbox.cluster import status

    sb = status(data_dir)
    if sb is None:
        return {}
    return {
        SANDBOX: ConnectionSettings({"bootstrap.servers": sb.bootstrap_servers}, zookeeper=sb.zookeeper, name=SANDBOX)
    }


def discover(configured: Mapping[str, Mapping[str, Any]] | None = None) -> dict[str, ConnectionSettings]:
    """Environment first, then configured clusters, then the local sandbox if one runs."""
    out = from_environment()
    out.update(from_mapping(configured or {}))
    for k, v in from_sandbox().items():
        out.setdefault(k, v)
    return out
