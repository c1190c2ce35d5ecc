"""When the newest snapshot of a cluster was taken, read cheaply from the snapshot directory (the
History page says so, whoever collects): the newest day, its newest file, that file's time."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from console.core.model import ClusterState
from console.pipeline.collect import HEADERS, SnapshotWriter
from console.pipeline.datasets import newest_snapshot
from console.pipeline.snapshots import header_table
from tests.unit.timeline import T0, part, snap

DAY = 86_400.0


def state(taken_at: float, cluster_id: str | None = "c1", name: str = "demo") -> ClusterState:
    s = snap(taken_at, [part("a", 0, [1, 2], [1, 2], 1)], cluster_id=cluster_id or "c1", name=name)
    return s if cluster_id else replace(s, cluster_id=None)


def test_no_snapshot_directory_or_an_empty_one_has_no_newest(tmp_path: Path) -> None:
    assert newest_snapshot(tmp_path / "absent", "c1") is None
    SnapshotWriter(tmp_path / "snaps")
    assert newest_snapshot(tmp_path / "snaps", "c1") is None
    (tmp_path / "snaps" / HEADERS / "cluster=c1" / "date=2026-09-21").mkdir(parents=True)
    assert newest_snapshot(tmp_path / "snaps", "c1") is None


def test_the_newest_of_several_days_and_files_is_found_for_its_cluster_only(tmp_path: Path) -> None:
    w = SnapshotWriter(tmp_path)
    times = [T0 - 2 * DAY + 5, T0 - DAY + 0.25, T0 + 10.125, T0 + 0.5, T0 + 20.375, T0 + 3]
    for t in times:
        w.write(state(t))
    w.write(state(T0 + DAY, cluster_id="other"))  # another cluster, later: not this one's
    assert newest_snapshot(tmp_path, "c1") == T0 + 20.375
    assert newest_snapshot(str(tmp_path), "other") == T0 + DAY
    assert newest_snapshot(tmp_path, "nobody") is None


def test_a_cluster_known_by_name_only_is_found_under_its_escaped_name(tmp_path: Path) -> None:
    SnapshotWriter(tmp_path).write(state(T0 + 1, cluster_id=None, name="prod eu/1"))
    assert newest_snapshot(tmp_path, "prod eu/1") == T0 + 1


def test_hidden_files_an_empty_newest_day_and_an_unreadable_newest_file_are_passed_over(tmp_path: Path) -> None:
    w = SnapshotWriter(tmp_path)
    w.write(state(T0 + 1))
    w.write(state(T0 + 2))
    day = tmp_path / HEADERS / "cluster=c1" / "date=2026-09-21"
    (day / f".part-{int((T0 + 9) * 1000)}-abcdef.parquet.1234abcd.tmp").write_bytes(b"half")
    (day / f"part-{int((T0 + 8) * 1000)}-abcdef.parquet").write_bytes(b"cut short")
    (day.parent / "date=2026-09-22").mkdir()  # a later day with nothing in it yet
    assert newest_snapshot(tmp_path, "c1") == T0 + 2


def test_a_compacted_day_is_read_for_its_latest_time(tmp_path: Path) -> None:
    day = tmp_path / HEADERS / "cluster=c1" / "date=2026-09-21"
    day.mkdir(parents=True)
    rows = pa.concat_tables([header_table(state(T0 + t)) for t in (30, 10, 20)])
    # as Spark writes it: microseconds, another file name
    rows = rows.set_column(0, "taken_at", rows.column("taken_at").cast(pa.timestamp("us", tz="UTC")))
    pq.write_table(rows, day / "part-00000-0a1b2c3d-c000.zstd.parquet")
    pq.write_table(header_table(state(T0 + 5)), day / "part-00001-0a1b2c3d-c000.zstd.parquet")
    (day / "_compacted").write_text("part-00000-0a1b2c3d-c000.zstd.parquet\n")
    assert newest_snapshot(tmp_path, "c1") == T0 + 30
    SnapshotWriter(tmp_path).write(state(T0 + 40))  # added after compaction
    assert newest_snapshot(tmp_path, "c1") == T0 + 40
