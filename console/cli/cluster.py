"""The cluster a command reads: its connection arguments, the reader, the snapshot (live or from
``--state-file``), and what the history learned of its copy rates."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from console.core.model import ClusterState, SourceStatus

if TYPE_CHECKING:
    from console.core.calibration import Calibration
    from console.state.reader import ClusterReader


def connection_args(p: argparse.ArgumentParser, offline: bool = False, required: bool = True) -> None:
    """The cluster to read; with ``offline``, a snapshot file may stand in for it (``--state-file``);
    not ``required`` for commands that also work without a cluster."""
    if offline:
        where = p.add_mutually_exclusive_group(required=True)
        where.add_argument("--bootstrap-server", help="host:port[,host:port...] of the cluster")
        where.add_argument("--state-file", help="a snapshot saved with 'state --json', instead of the live cluster")
    else:
        p.add_argument("--bootstrap-server", required=required, help="host:port[,host:port...] of the cluster")
    p.add_argument("--zookeeper", help="ZooKeeper connect string with the cluster's chroot, e.g. zk:2181/kafka")
    p.add_argument("--command-config", help="properties file with security settings, as for the Kafka tools")
    p.add_argument("--timeout", type=float, default=10.0, help="seconds to wait for each answer (default 10)")


def connect(args: argparse.Namespace) -> ClusterReader:
    from console.access.settings import settings_from_args
    from console.state.reader import ClusterReader

    return ClusterReader(
        settings_from_args(args.bootstrap_server, args.zookeeper, args.command_config, timeout_s=args.timeout)
    )


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
