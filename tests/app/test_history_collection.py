"""AppTest: the History page says what is true of the collection, not what this one server does:
when the newest snapshot of the cluster was taken and who collects it (another process, such as
`make demo`'s collector), the hint to collect only when nothing does; and its cluster picker names
the cluster as the other pages do, its id beside it."""

from __future__ import annotations

import time
from dataclasses import replace
from datetime import datetime
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from streamlit.testing.v1 import AppTest

from components import keys
from console.pipeline.collect import SnapshotWriter
from tests.app.pages import APP
from tests.fakes.app import AppCluster


@pytest.fixture
def history(fake_cluster: AppCluster, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """The console on the fake cluster (named "test"), its history in ``tmp_path/history``, and no
    collector in this server."""
    monkeypatch.setenv("CONSOLE_HISTORY_DIR", str(tmp_path / "history"))
    monkeypatch.delenv("CONSOLE_COLLECT_EVERY", raising=False)
    return tmp_path / "history"


def collect_elsewhere(snapshots: Path, cluster: AppCluster, ages: list[float]) -> float:
    """Snapshots of ``cluster`` written as another process's collector does, taken ``ages`` seconds
    ago; the time of the newest, as stored (to the millisecond)."""
    state = replace(cluster.snapshot(), name="test")
    writer = SnapshotWriter(snapshots)
    now = time.time()
    for age in ages:
        writer.write(replace(state, taken_at=now - age))
    return round((now - min(ages)) * 1000) / 1000


def history_page() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60).run()
    at.switch_page("views/history.py").run()
    assert not at.exception
    return at


def collection_caption(at: AppTest) -> str:
    return next(c.value for c in at.caption if "snapshot" in c.value and "history job" not in c.value)


def test_snapshots_another_process_collects_are_named_with_their_time_and_collector(history, fake_cluster) -> None:
    newest = collect_elsewhere(history / "snapshots", fake_cluster, [25, 15, 5])
    caption = collection_caption(history_page())
    assert f"The newest snapshot of this cluster was taken at {datetime.fromtimestamp(newest):%Y-%m-%d %H:%M:%S}" in (
        caption
    )
    assert " ago)" in caption
    assert "Collected by another process" in caption and "make demo" in caption
    assert "CONSOLE_COLLECT_EVERY" not in caption and "does not collect snapshots" not in caption


def test_with_no_snapshot_the_page_says_how_to_collect(history) -> None:
    caption = collection_caption(history_page())
    assert "No snapshot of this cluster" in caption
    assert "does not collect snapshots" in caption and "CONSOLE_COLLECT_EVERY=30" in caption
    assert "python -m console collect" in caption and "another process" not in caption


def test_with_only_old_snapshots_the_page_gives_their_time_and_how_to_collect(history, fake_cluster) -> None:
    newest = collect_elsewhere(history / "snapshots", fake_cluster, [7200, 3600])
    caption = collection_caption(history_page())
    assert f"taken at {datetime.fromtimestamp(newest):%Y-%m-%d %H:%M:%S}" in caption
    assert "CONSOLE_COLLECT_EVERY=30" in caption and "another process" not in caption


def test_the_cluster_picker_names_this_cluster_with_its_id_and_keeps_the_id_as_its_value(history, fake_cluster) -> None:
    cluster_id = fake_cluster.snapshot().cluster_id
    assert cluster_id
    # the clusters of the history tables, as the history job writes them (no manifest: the page
    # stops after the picker)
    counts = history / "tables" / "partition_counts"
    counts.mkdir(parents=True)
    pq.write_table(pa.table({"cluster": ["another-cluster-id", cluster_id]}), counts / "part-00000.parquet")
    at = history_page()
    picker = at.selectbox(key=keys.HISTORY_CLUSTER)
    assert set(picker.options) == {f"test ({cluster_id})", "another-cluster-id"}
    assert picker.value == cluster_id, "this cluster chosen, by its id"
    picker.set_value("another-cluster-id").run()
    assert not at.exception
    assert at.selectbox(key=keys.HISTORY_CLUSTER).value == "another-cluster-id"
