"""Collect: append snapshots to the history as Parquet, with pyarrow (no Spark in the collector).

Each snapshot becomes two small files (its replica rows, then its header), each written under a
hidden name and renamed into place, so a reader never sees half a file and a header always has
its rows. Spark and pyarrow skip names starting with ``.``. The ``compact`` job later merges a
day's small files into a few sorted files per cluster and day.
"""

from __future__ import annotations

import os
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import pyarrow as pa
import pyarrow.parquet as pq

from console.core.errors import ConfigError, ConsoleError, DiskError
from console.core.model import ClusterState, SourceStatus
from console.pipeline.snapshots import cluster_dir, day_of, header_table, key_of, replica_table

REPLICAS = "replicas"
HEADERS = "headers"


@dataclass(frozen=True)
class Written:
    """One snapshot appended to the history."""

    taken_at: float
    cluster: str
    rows: int
    bytes: int
    seconds: float
    """Time spent turning the snapshot into rows and writing them (beyond reading the cluster)."""


def write_parquet(table: pa.Table, path: Path) -> int:
    """``table`` written to ``path`` atomically (a hidden temporary name, then a rename); its size."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex[:8]}.tmp")
    try:
        pq.write_table(table, tmp, compression="zstd")
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return path.stat().st_size


class SnapshotWriter:
    """Appends snapshots under ``root`` (``root/replicas/...`` and ``root/headers/...``)."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)
        try:
            self.root.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise DiskError(
                f"Cannot create the snapshot directory {self.root}: {e.strerror or e}.",
                "Give --out a directory this user can write.",
            ) from None

    def write(self, state: ClusterState) -> Written:
        start = time.perf_counter()
        key = key_of(state)
        where = Path(f"cluster={cluster_dir(key)}") / f"date={day_of(state.taken_at)}"
        name = f"part-{int(state.taken_at * 1000)}-{uuid.uuid4().hex[:6]}.parquet"
        rows = replica_table(state)
        try:
            size = write_parquet(rows, self.root / REPLICAS / where / name)
            size += write_parquet(header_table(state), self.root / HEADERS / where / name)
        except OSError as e:
            raise DiskError(
                f"Cannot write the snapshot under {self.root}: {e.strerror or e}.",
                "Check the disk has room and the directory is writable.",
            ) from None
        return Written(state.taken_at, key, rows.num_rows, size, time.perf_counter() - start)


class Snapshots(Protocol):
    def snapshot(self, max_age_s: float = 0.0, info: bool = False) -> ClusterState: ...


def readable(state: ClusterState) -> bool:
    """Whether the snapshot holds the cluster's assignment (the cluster answered): only those are kept."""
    return state.status.metadata is SourceStatus.OK or state.status.zookeeper is SourceStatus.OK


def collect(
    reader: Snapshots,
    writer: SnapshotWriter,
    every_s: float,
    for_s: float | None = None,
    on_snapshot: Callable[[Written | ClusterState], None] = lambda _: None,
    stop: Callable[[], bool] = lambda: False,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], object] = time.sleep,
) -> int:
    """Snapshot every ``every_s`` seconds for ``for_s`` seconds (forever when None) or until ``stop()``;
    each kept snapshot is passed to ``on_snapshot`` as :class:`Written`, a snapshot the cluster
    did not answer as the :class:`ClusterState` (its findings say why). Returns how many were kept."""
    if every_s <= 0:
        raise ConfigError(f"--every must be a positive number of seconds, not {every_s:g}.")
    started = clock()
    kept = 0
    tick = started
    while not stop() and (for_s is None or clock() - started < for_s):
        state = reader.snapshot(info=True)  # what the cluster is (kept a minute): its release, for the rollback
        if readable(state):
            on_snapshot(writer.write(state))
            kept += 1
        else:
            on_snapshot(state)
        tick += every_s
        if for_s is not None and tick - started >= for_s:
            break
        wait = tick - clock()
        if wait < 0:  # fell behind (a slow read): start again from now rather than catch up in a burst
            tick = clock()
        else:
            sleep(wait)
    return kept


class BackgroundCollector:
    """Collects in a daemon thread while the console's server runs (``CONSOLE_COLLECT_EVERY``):
    the same snapshots the pages share, appended every ``every_s`` seconds."""

    def __init__(self, reader: Snapshots, root: str | Path, every_s: float) -> None:
        self.writer = SnapshotWriter(root)
        self.reader = reader
        self.every_s = every_s
        self.last: Written | None = None
        self.kept = 0
        self.problem: str | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True, name="history-collector")

    def start(self) -> BackgroundCollector:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)

    def _note(self, item: Written | ClusterState) -> None:
        if isinstance(item, Written):
            self.last, self.problem = item, None
            self.kept += 1
        else:
            self.problem = "; ".join(f.message for f in item.findings) or "the cluster did not answer"

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                collect(
                    _Shared(self.reader, self.every_s),
                    self.writer,
                    self.every_s,
                    on_snapshot=self._note,
                    stop=self._stop.is_set,
                    sleep=self._stop.wait,
                )
            except ConsoleError as e:  # a full disk, an unwritable directory: say so, try again later
                self.problem = e.message
                self._stop.wait(self.every_s)


class _Shared:
    """A reader's recent snapshot (one the pages already took, when fresh enough)."""

    def __init__(self, reader: Snapshots, every_s: float) -> None:
        self.reader, self.max_age = reader, every_s / 2

    def snapshot(self, max_age_s: float = 0.0, info: bool = False) -> ClusterState:
        return self.reader.snapshot(max_age_s=self.max_age, info=info)
