"""The pipeline's inputs and outputs on disk: the snapshot directory checked before any job reads
it, and job outputs written to a temporary location and moved into place.

A local snapshot directory is checked file by file with pyarrow (footers only): missing,
empty, another schema, a newer console's rows, or a corrupt file each get a message naming the
path and what to do. A URI (``s3a://``, ``hdfs://``...) is left to Spark, whose errors are
translated the same way. Outputs go to ``OUT/.tmp-<id>/<table>`` and are renamed to
``OUT/<table>`` once every table is written; ``OUT/_<job>.json`` (the manifest) says what ran, when, on
what input and how many rows each table has. :func:`newest_snapshot` says when a cluster's newest
snapshot was taken, from the newest day's newest file.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from console.core.errors import ConfigError, DiskError
from console.pipeline.collect import HEADERS, REPLICAS
from console.pipeline.snapshots import HEADER_SCHEMA, REPLICA_SCHEMA, ROWS_FORMAT, cluster_dir, newer_format

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

_COLLECT_HINT = "Collect snapshots with: python -m console collect --bootstrap-server HOST:PORT --out DIR"


def is_local(path: str) -> bool:
    return "://" not in path or path.startswith("file://")


def local_path(path: str) -> Path:
    return Path(path[len("file://") :] if path.startswith("file://") else path)


def parquet_files(root: Path) -> Iterator[Path]:
    """Every visible Parquet file under ``root`` (names starting with ``.`` or ``_`` are skipped, as Spark does)."""
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith((".", "_")))
        for f in sorted(filenames):
            if not f.startswith((".", "_")) and f.endswith(".parquet"):
                yield Path(dirpath) / f


def _same_type(have: pa.DataType, want: pa.DataType) -> bool:
    """Equal types; a timestamp in any unit counts (Spark writes microseconds where the collector writes milliseconds)."""
    return bool(
        have.equals(want) or (pa.types.is_timestamp(have) and pa.types.is_timestamp(want) and have.tz == want.tz)
    )


def _check_schema(path: Path, have: pa.Schema, want: pa.Schema) -> None:
    absent = [f.name for f in want if f.name not in have.names]
    missing = [", ".join(absent[:5]) + (f" and {len(absent) - 5} more" if len(absent) > 5 else "")] if absent else []
    wrong = [
        f"{f.name} is {have.field(f.name).type}, not {f.type}"
        for f in want
        if f.name in have.names and not _same_type(have.field(f.name).type, f.type)
    ]
    if missing or wrong:
        raise ConfigError(
            f"{path} is not a snapshot file of this console: "
            + "; ".join([f"missing column(s) {m}" for m in missing] + wrong)
            + ".",
            "Keep only files written by 'python -m console collect' in the snapshot directory.",
        )


def check_snapshots(snapshots: str) -> None:
    """Raise :class:`ConfigError` unless ``snapshots`` (a local directory) holds readable snapshot files."""
    if not is_local(snapshots):
        return
    root = local_path(snapshots)
    if not root.is_dir():
        raise ConfigError(
            f"The snapshot directory {root} does not exist." if not root.exists() else f"{root} is not a directory.",
            _COLLECT_HINT,
        )
    for name, schema in ((REPLICAS, REPLICA_SCHEMA), (HEADERS, HEADER_SCHEMA)):
        files = list(parquet_files(root / name))
        if not files:
            raise ConfigError(
                f"The snapshot directory {root} has no snapshots ({name}/ is missing or empty).", _COLLECT_HINT
            )
        for f in files:
            try:
                meta = pq.read_metadata(f)
                have = meta.schema.to_arrow_schema()
            except (OSError, pa.ArrowException) as e:
                raise ConfigError(
                    f"{f} is not a readable Parquet file ({e}).",
                    "Move it out of the snapshot directory (it may be a copy cut short) and run the job again.",
                ) from None
            _check_schema(f, have, schema)
            if name == HEADERS and meta.num_rows:
                formats = pq.read_table(f, columns=["format"]).column("format").to_pylist()
                newest = max((int(x) for x in formats if x is not None), default=0)
                if newest > ROWS_FORMAT:
                    raise newer_format(newest)


_BLOCK = 1 << 24
"""Characters :meth:`Output.join_lines` reads at a time."""
_WRITTEN = re.compile(r"part-(\d{10,})-[0-9a-f]{6}\.parquet")
"""The name the collector gives a snapshot's files (:class:`~console.pipeline.collect.SnapshotWriter`):
its time in epoch milliseconds, then a random suffix."""


def newest_snapshot(snapshots: str | Path, cluster: str) -> float | None:
    """When the newest snapshot of ``cluster`` (its key: id, or name when no id) under the local
    snapshot directory ``snapshots`` was taken (epoch seconds); None when it holds none.

    Cheap however long the history: only the newest day directory with files is looked at (dates
    are UTC, so their names sort in time). Of the collector's files (``part-<ms>-<id>.parquet``)
    only the newest by name is opened; a file of another name (a compacted day's) is opened for
    its ``taken_at`` column (one row per snapshot). A file that cannot be read is passed over."""
    base = local_path(str(snapshots)) / HEADERS / f"cluster={cluster_dir(cluster)}"
    try:
        days = sorted((d for d in base.iterdir() if d.name.startswith("date=") and d.is_dir()), reverse=True)
    except OSError:
        return None
    for day in days:
        written: list[tuple[int, Path]] = []
        others: list[Path] = []
        try:
            names = sorted(os.listdir(day))
        except OSError:
            continue
        for name in names:
            if name.startswith((".", "_")) or not name.endswith(".parquet"):
                continue
            m = _WRITTEN.fullmatch(name)
            if m:
                written.append((int(m.group(1)), day / name))
            else:
                others.append(day / name)
        # the collector's newest file first (a file that cannot be read: the one before it)
        candidates = [p for _, p in sorted(written, reverse=True)]
        newest: float | None = None
        for path in candidates:
            taken = _newest_in(path)
            if taken is not None:
                newest = taken
                break
        for path in others:
            taken = _newest_in(path)
            if taken is not None and (newest is None or taken > newest):
                newest = taken
        if newest is not None:
            return newest
    return None


def _newest_in(path: Path) -> float | None:
    """The latest ``taken_at`` in a headers file (epoch seconds); None when it has none or cannot be read."""
    try:
        column = pq.read_table(path, columns=["taken_at"]).column("taken_at")
        if not pa.types.is_timestamp(column.type):
            return None
        latest = pc.max(column.cast(pa.int64())).as_py()  # in the column's unit, naive or not: UTC
    except (OSError, pa.ArrowException, KeyError):
        return None
    return None if latest is None else latest / _PER_SECOND[column.type.unit]


_PER_SECOND = {"s": 1, "ms": 1_000, "us": 1_000_000, "ns": 1_000_000_000}


@dataclass(frozen=True)
class Snapshots:
    """The two stored datasets, as Spark DataFrames (``cluster`` and ``date`` from the path)."""

    replicas: DataFrame
    headers: DataFrame


def read_snapshots(spark: SparkSession, snapshots: str) -> Snapshots:
    """The datasets of ``snapshots`` (check them first with :func:`check_snapshots`)."""
    from console.pipeline.spark import run_job

    base = snapshots.rstrip("/")

    def read(name: str) -> DataFrame:
        return spark.read.option("basePath", f"{base}/{name}").parquet(f"{base}/{name}")

    return run_job(f"Reading the snapshots in {snapshots}", lambda: Snapshots(read(REPLICAS), read(HEADERS)))


SORT_ORDER = {REPLICAS: ("topic", "partition", "broker", "taken_at"), HEADERS: ("taken_at",)}
"""How a compacted day is sorted: each replica's rows together, in time (long runs for Parquet's encodings)."""


def swap_dir(new: Path, dest: Path) -> None:
    """Put ``new`` where ``dest`` is (a file or directory), replacing it by renames in the same directory."""
    old = dest.with_name(f".old-{uuid.uuid4().hex[:8]}")
    if dest.exists():
        os.replace(dest, old)
    os.replace(new, dest)
    if old.exists():
        shutil.rmtree(old) if old.is_dir() else old.unlink()


def rows_in(directory: Path) -> int:
    """Rows in the Parquet files of ``directory`` (from their footers)."""
    return sum(pq.read_metadata(f).num_rows for f in parquet_files(directory))


def partition_dirs(dataset: Path) -> list[Path]:
    """The ``cluster=.../date=...`` directories of a dataset."""
    return sorted(d for c in dataset.glob("cluster=*") if c.is_dir() for d in c.glob("date=*") if d.is_dir())


COMPACTED = "_compacted"
"""In a compacted day's directory: the names of the files compaction wrote (hidden from readers)."""


def mark_compacted(day: Path) -> None:
    (day / COMPACTED).write_text("\n".join(f.name for f in parquet_files(day)) + "\n")


def compactable(root: Path, before: str | None = None) -> dict[str, list[Path]]:
    """Per dataset, the days before ``before`` (default: today, UTC) with files compaction has not
    written (a day already compacted is left alone unless files were added to it since)."""
    limit = before or time.strftime("%Y-%m-%d", time.gmtime())
    out: dict[str, list[Path]] = {}
    for dataset in (REPLICAS, HEADERS):
        days = []
        for d in partition_dirs(root / dataset):
            if d.name.split("=", 1)[1] >= limit:
                continue
            try:
                done = set((d / COMPACTED).read_text().split())
            except OSError:
                done = set()
            files = [f.name for f in parquet_files(d)]
            if (len(files) > 1 or not done) and set(files) - done:
                days.append(d)
        if days:
            out[dataset] = days
    return out


class Output:
    """Tables written under ``OUT/.tmp-<id>/`` and moved to ``OUT/<table>`` by :meth:`commit`."""

    def __init__(self, out: str) -> None:
        if not is_local(out):
            raise ConfigError(
                f"--out must be a local directory, not {out}.",
                "Write the tables locally; inputs may be any URI Spark reads.",
            )
        self.root = local_path(out)
        self.tmp = self.root / f".tmp-{uuid.uuid4().hex[:8]}"
        try:
            self.tmp.mkdir(parents=True)
        except OSError as e:
            raise DiskError(
                f"Cannot write under {self.root}: {e.strerror or e}.", "Give --out a directory this user can write."
            ) from None
        self.tables: dict[str, int] = {}
        self.files: set[str] = set()
        """Outputs that are files (or directories of files), not tables: ``tables`` counts their files."""

    def path(self, table: str) -> str:
        return str(self.tmp / table)

    def write(self, table: str, df: DataFrame) -> int:
        """Write ``df`` as ``table``; its row count."""
        from console.pipeline.spark import run_job

        run_job(f"Writing {table}", lambda: df.write.mode("overwrite").parquet(self.path(table)))
        rows = rows_in(Path(self.path(table)))
        self.tables[table] = rows
        return rows

    def put(self, table: str, data: pa.Table) -> int:
        """Write ``data`` (a small table made in the driver) as ``table``; its row count."""
        (self.tmp / table).mkdir()
        pq.write_table(data, self.tmp / table / "part-00000.parquet")
        rows: int = data.num_rows
        self.tables[table] = rows
        return rows

    def put_text(self, directory: str, name: str, text: str) -> None:
        """A text file ``directory/name`` among the outputs (``tables[directory]`` counts the files)."""
        d = self.tmp / directory
        d.mkdir(exist_ok=True)
        (d / name).write_text(text, encoding="utf-8")
        self.tables[directory] = self.tables.get(directory, 0) + 1
        self.files.add(directory)

    def stage(self, name: str, table: pa.Table) -> Path:
        """``table`` as a Parquet file among the job's temporary files (gone when the job ends)."""
        path = self.tmp / name
        pq.write_table(table, path)
        return path

    def join_lines(self, parts: Path, name: str, head: str, separator: str, tail: str) -> None:
        """The lines of the text files in ``parts`` (in file-name order, as Spark numbers a sorted
        output) joined into one file ``name``: ``head``, the lines separated by ``separator``, ``tail``."""
        target = self.tmp / name
        with target.open("w", encoding="utf-8") as out:
            out.write(head)
            owed = False  # a line ended: the next one, if any, is preceded by the separator
            files = sorted(p for p in parts.glob("part-*") if not p.name.endswith(".crc")) if parts.is_dir() else []
            for f in files:
                with f.open(encoding="utf-8") as lines:  # read a block at a time, not a line at a time
                    wrote = False
                    while block := lines.read(_BLOCK):
                        if owed:
                            out.write(separator)
                        owed = block.endswith("\n")
                        out.write((block[:-1] if owed else block).replace("\n", separator))
                        wrote = True
                    owed = owed or wrote  # a last line without its newline still ends
            out.write(tail)
        self.tables.setdefault(name, 1)
        self.files.add(name)

    def commit(self, job: str, inputs: dict[str, Any]) -> Path:
        """Move every table into place, then write the manifest; returns the manifest's path."""
        for table in self.tables:
            swap_dir(self.tmp / table, self.root / table)
        shutil.rmtree(self.tmp, ignore_errors=True)
        manifest = {"job": job, "finished_at": time.time(), "inputs": inputs, "tables": self.tables}
        path = self.root / manifest_name(job)
        tmp = self.root / f".{path.name}.tmp"
        tmp.write_text(json.dumps(manifest, indent=1))
        os.replace(tmp, path)
        return path

    def abort(self) -> None:
        shutil.rmtree(self.tmp, ignore_errors=True)


def manifest_name(job: str) -> str:
    return f"_{job}.json"


def read_manifest(out: str | Path, job: str) -> dict[str, Any] | None:
    """What the last ``job`` into ``out`` wrote (None when none has)."""
    try:
        doc = json.loads((Path(out) / manifest_name(job)).read_text())
    except (OSError, ValueError):
        return None
    return doc if isinstance(doc, dict) else None
