"""The cluster a command reads: its connection arguments, the reader, the snapshot (live or from
``--state-file``), and what the history learned of its copy rates."""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from typing import TYPE_CHECKING

from console.access.settings import ConnectionSettings
from console.core.errors import ConfigError
from console.core.model import ClusterState, SourceStatus

if TYPE_CHECKING:
    from console.core.calibration import Calibration
    from console.state.reader import ClusterReader


CLUSTER_HELP = (
    "host:port[,host:port...] of the cluster (default: the environment's cluster, CONSOLE_BOOTSTRAP_SERVERS, "
    "else the running sandbox, as the pages find them)"
)


def connection_args(p: argparse.ArgumentParser, offline: bool = False) -> None:
    """The cluster to read: ``--bootstrap-server``, else the one the pages would show first
    (:func:`cluster_settings`); with ``offline``, a snapshot file may stand in for it (``--state-file``)."""
    if offline:
        where = p.add_mutually_exclusive_group()
        where.add_argument("--bootstrap-server", help=CLUSTER_HELP)
        where.add_argument("--state-file", help="a snapshot saved with 'state --json', instead of the live cluster")
    else:
        p.add_argument("--bootstrap-server", help=CLUSTER_HELP)
    reach_args(p)


def reach_args(p: argparse.ArgumentParser, when: str = "") -> None:
    """How to reach the cluster named: ``--zookeeper``, ``--command-config`` and ``--timeout``, as
    :func:`cluster_settings` reads them (``when``: the option they go with, said first in each help)."""
    p.add_argument("--zookeeper", help=f"{when}ZooKeeper connect string with the cluster's chroot, e.g. zk:2181/kafka")
    p.add_argument("--command-config", help=f"{when}properties file with security settings, as for the Kafka tools")
    p.add_argument(
        "--timeout",
        type=float,
        help=f"{when}seconds to wait for each answer (default 10; CONSOLE_TIMEOUT_S for the environment's cluster)",
    )


def cluster_settings(args: argparse.Namespace) -> ConnectionSettings:
    """The cluster a command acts on: ``--bootstrap-server`` when given; else the cluster the pages
    show first, by the same rule (:func:`console.access.clusters.discover`: ``CONSOLE_BOOTSTRAP_SERVERS``
    with ``CONSOLE_ZOOKEEPER``, ``CONSOLE_CLUSTER_NAME`` and ``CONSOLE_TIMEOUT_S``, else the running
    sandbox), said on stderr; ``--zookeeper``, ``--command-config`` and ``--timeout`` apply to it too.
    :class:`ConfigError` when there is none."""
    from console.access.clusters import (
        DEFAULT_TIMEOUT_S,
        ENV_MAX_THROTTLE,
        discover,
        from_environment,
    )
    from console.access.settings import load_command_config, settings_from_args, to_kafka_python

    timeout = getattr(args, "timeout", None)
    if args.bootstrap_server is not None:
        if problem := ENV_MAX_THROTTLE.problem():  # the ceiling of CONSOLE_MAX_THROTTLE, as on the pages
            print(f"Warning: {problem}", file=sys.stderr)
        return settings_from_args(
            args.bootstrap_server,
            args.zookeeper,
            args.command_config,
            timeout_s=timeout or DEFAULT_TIMEOUT_S,
            max_throttle=ENV_MAX_THROTTLE.value(),
        )
    found = next(iter(discover().values()), None)
    if found is None:
        raise ConfigError(
            "No cluster named: no --bootstrap-server, CONSOLE_BOOTSTRAP_SERVERS is not set and no sandbox runs.",
            "Give --bootstrap-server HOST:PORT, or set CONSOLE_BOOTSTRAP_SERVERS (as for the pages).",
        )
    props = dict(found.properties)
    if args.command_config:
        props.update(load_command_config(args.command_config))
        to_kafka_python(props)  # fail early on properties the second client cannot take
    whence = "CONSOLE_BOOTSTRAP_SERVERS" if from_environment() else "the running sandbox"
    print(f"Cluster {found.name} ({found.bootstrap_servers}), from {whence}.", file=sys.stderr)
    return replace(
        found, properties=props, zookeeper=args.zookeeper or found.zookeeper, timeout_s=timeout or found.timeout_s
    )


def connect(args: argparse.Namespace) -> ClusterReader:
    from console.state.reader import ClusterReader

    return ClusterReader(cluster_settings(args))


def snapshot(args: argparse.Namespace, info: bool = False) -> ClusterState:
    """The snapshot from --state-file, or read from the cluster now (``info``: with what the cluster
    is, its release among it)."""
    if getattr(args, "state_file", None):
        from console.state.document import read_state

        return read_state(args.state_file)
    with connect(args) as reader:
        return reader.snapshot(info=info)


def unreadable(state: ClusterState) -> bool:
    """Neither the Admin API's Metadata nor ZooKeeper answered: there is no picture of the cluster."""
    return state.status.metadata is not SourceStatus.OK and state.status.zookeeper is not SourceStatus.OK


def calibration(state: ClusterState, name: str) -> Calibration | None:
    """What the history job last learned about this cluster's copy rates (the console's history dir)."""
    from console.core.model import cluster_key
    from console.core.paths import history_dir
    from console.pipeline.calibration import load_calibration

    return load_calibration(history_dir() / "tables", cluster_key(state, name))


def topic_rates(state: ClusterState, name: str) -> dict[str, float]:
    """Each topic's produce rate the history job last learned for this cluster (empty: none known)."""
    from console.core.model import cluster_key
    from console.core.paths import history_dir
    from console.pipeline.calibration import load_topic_rates

    return load_topic_rates(history_dir() / "tables", cluster_key(state, name))
