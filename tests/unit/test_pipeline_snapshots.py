"""The pipeline's stored rows (pyarrow, no Spark): snapshot → rows → snapshot, the collector, and
the checks that keep a bad snapshot directory from reaching a job."""

from __future__ import annotations

import json
import random
from dataclasses import replace
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from console.core.errors import ConfigError
from console.core.model import BrokerId, ClusterState, ReadStatus, ReplicaLog, Source, SourceStatus, Throttles
from console.pipeline.collect import HEADERS, REPLICAS, SnapshotWriter, collect
from console.pipeline.datasets import check_snapshots, parquet_files
from console.pipeline.snapshots import (
    HEADER_SCHEMA,
    REPLICA_SCHEMA,
    ROWS_FORMAT,
    canonical,
    header_table,
    replica_rows,
    replica_table,
    state_from_tables,
)
from tests.unit.strategies import Shape, cluster, shapes
from tests.unit.timeline import T0, part, snap, throttled


def decorate(state: ClusterState, seed: int) -> ClusterState:
    """``state`` with what the generator's clusters lack: throttles, future logs, sources, a time."""
    rnd = random.Random(seed)
    parts = []
    for p in state.partitions:
        logs = p.logs
        if p.replicas and rnd.random() < 0.1:
            logs = (*logs, ReplicaLog(p.replicas[0], "/other", rnd.randint(0, 99), True))
        source = rnd.choice([Source.API, Source.ZOOKEEPER]) if p.reassigning else None
        parts.append(replace(p, logs=logs, source=source, isr=tuple(reversed(p.isr))))
    moving = [p for p in state.partitions if p.reassigning]
    thr = (
        throttled(
            1000 + seed,
            moving[0].topic,
            [f"{moving[0].partition}:{b}" for b in moving[0].replicas],
            ["*"],
            [b.id for b in state.brokers],
        )
        if moving
        else Throttles()
    )
    return replace(state, partitions=tuple(parts), throttles=thr, taken_at=T0 + seed / 7, name="prod-eu")


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(shapes, st.integers(0, 1000))
def test_a_snapshot_round_trips_through_its_rows(shape: Shape, seed: int) -> None:
    state = decorate(cluster(shape), seed)
    back = state_from_tables(header_table(state), replica_table(state))
    assert back == canonical(state)
    assert back.fingerprint() == state.fingerprint()


def test_rows_in_any_order_and_any_chunking_give_the_same_snapshot() -> None:
    """The rows as a reader may hand them over: shuffled, in several chunks, the topic dictionary
    encoded, flags missing (null reads as false); partitions of different RF, without logs, with a
    future log only, an empty ISR."""
    state = snap(
        T0,
        [
            part("a", 0, [3, 1, 2], [1, 2], 1, adding=[3], removing=[1], sizes={1: 10**12, 2: 10**12, 3: 4}),
            part("a", 1, [2], [2], 2, sizes={2: 7}),
            part("a", 10, [1, 2], [], None),
            replace(part("b", 0, [4, 1, 3, 2], [4, 1, 3, 2], 4, sizes={4: 1, 1: 1}), source=Source.API),
            replace(part("b", 2, [1, 2], [2, 1], 2), logs=(ReplicaLog(BrokerId(2), "/d", 5, True),)),
            part("c", 0, [1001, 1002], [1001, 1002], 1001),
            part("c", 1, [1002, 1001], [1002], 1002),
        ],
    )
    table = replica_table(state)
    shuffled = table.take(pa.array(random.Random(3).sample(range(table.num_rows), table.num_rows)))
    chunked = pa.concat_tables([shuffled.slice(0, 4), shuffled.slice(4, 3), shuffled.slice(7)])
    chunked = chunked.set_column(
        chunked.schema.get_field_index("topic"), "topic", chunked.column("topic").dictionary_encode()
    )
    nulls = pa.array([None if r["in_isr"] is False else True for r in chunked.select(["in_isr"]).to_pylist()])
    chunked = chunked.set_column(chunked.schema.get_field_index("in_isr"), "in_isr", nulls)
    back = state_from_tables(header_table(state), chunked)
    assert back == canonical(state)
    everyone = back.partitions[3]
    assert everyone.isr is everyone.replicas, "a full ISR is the replica tuple itself"
    a0 = back.partitions[0]
    assert a0.logs[1].size is a0.logs[2].size, "replicas of the same size share it"
    c0, c1 = back.partitions[-2:]
    assert c0.replicas[0] is c1.replicas[1] and c0.replicas[1] is c1.leader, "one int per broker id"
    assert state_from_tables(header_table(state), table.slice(0, 0)).partitions == ()


def test_rows_carry_the_replica_its_partition_and_the_throttles_in_force() -> None:
    state = snap(
        T0,
        [part("a", 0, [3, 1, 2], [1, 2], 1, adding=[3], removing=[1], sizes={1: 10, 2: 10, 3: 4})],
        throttles=throttled(500, "a", ["0:1", "0:2"], ["0:3"], [1, 2, 3]),
    )
    rows = list(replica_rows(state))
    assert [(r["broker"], r["position"], r["adding"], r["removing"], r["is_leader"], r["in_isr"]) for r in rows] == [
        (3, 0, True, False, False, False),
        (1, 1, False, True, True, True),
        (2, 2, False, False, False, True),
    ]
    assert [(r["leader_throttled"], r["follower_throttled"], r["follower_rate"]) for r in rows] == [
        (False, True, 500),
        (True, False, 500),
        (True, False, 500),
    ]
    assert {r["reassigning"] for r in rows} == {True} and {r["under_replicated"] for r in rows} == {False}
    assert rows[0]["bytes"] == 4 and rows[0]["rack"] == "r1" and rows[0]["leader"] == 1


def test_the_writer_appends_two_files_per_snapshot_by_cluster_and_date(tmp_path: Path) -> None:
    w = SnapshotWriter(tmp_path)
    for i in range(3):
        written = w.write(snap(T0 + i, [part("a", 0, [1, 2], [1, 2], 1, sizes={1: 5, 2: 5})]))
        assert written.rows == 2 and written.bytes > 0 and written.cluster == "c1"
    for name in (REPLICAS, HEADERS):
        files = list(parquet_files(tmp_path / name))
        assert len(files) == 3 and all(
            f.parent.name == "date=2026-09-21" and f.parent.parent.name == "cluster=c1" for f in files
        )
    assert not list(tmp_path.rglob(".*")), "no temporary file is left"
    check_snapshots(str(tmp_path))


def test_collect_keeps_only_snapshots_the_cluster_answered(tmp_path: Path) -> None:
    ok = snap(T0, [part("a", 0, [1], [1], 1)])
    down = replace(ok, status=ReadStatus(metadata=SourceStatus.UNAVAILABLE))
    answers = iter([ok, down, ok])
    seen: list[object] = []
    now = [0.0]

    class Reader:
        def snapshot(self, max_age_s: float = 0.0, info: bool = False) -> ClusterState:
            assert info, "each kept snapshot carries what the cluster is (its release names the rollback's dirs)"
            return next(answers)

    def sleep(s: float) -> None:
        now[0] += s

    kept = collect(
        Reader(),
        SnapshotWriter(tmp_path),
        every_s=10,
        for_s=30,
        on_snapshot=seen.append,
        clock=lambda: now[0],
        sleep=sleep,
    )
    assert kept == 2 and len(seen) == 3 and seen[1] is down
    with pytest.raises(ConfigError, match="positive"):
        collect(Reader(), SnapshotWriter(tmp_path), every_s=0)


def _written(tmp_path: Path) -> Path:
    SnapshotWriter(tmp_path).write(snap(T0, [part("a", 0, [1, 2], [1, 2], 1, sizes={1: 5, 2: 5})]))
    return tmp_path


@pytest.mark.parametrize(
    "case, message",
    [
        ("missing", "does not exist"),
        ("empty", "has no snapshots"),
        ("no headers", "headers/ is missing or empty"),
        ("other schema", "missing column.s. taken_at, partition, broker"),
        ("wrong type", "partition is string"),
        ("newer", "newer console"),
        ("corrupt", "not a readable Parquet file"),
    ],
)
def test_a_bad_snapshot_directory_is_named_with_what_to_do(tmp_path: Path, case: str, message: str) -> None:
    root = tmp_path / "snaps"
    if case == "empty":
        root.mkdir()
    elif case != "missing":
        _written(root)
        one = next(parquet_files(root / REPLICAS))
        if case == "no headers":
            for f in parquet_files(root / HEADERS):
                f.unlink()
        elif case == "other schema":
            pq.write_table(pa.table({"topic": ["a"]}), one.with_name("x.parquet"))
        elif case == "wrong type":
            t = pq.read_table(one).set_column(2, "partition", pa.array(["0", "0"]))
            pq.write_table(t, one.with_name("x.parquet"))
        elif case == "newer":
            h = next(parquet_files(root / HEADERS))
            t = pq.read_table(h)
            pq.write_table(
                t.set_column(t.schema.get_field_index("format"), "format", pa.array([ROWS_FORMAT + 1], pa.int16())), h
            )
        elif case == "corrupt":
            one.write_bytes(one.read_bytes()[: len(one.read_bytes()) // 2])
    with pytest.raises(ConfigError, match=message) as e:
        check_snapshots(str(root))
    assert e.value.hint


def test_stored_schemas_are_the_documented_columns() -> None:
    assert REPLICA_SCHEMA.names[:5] == ["taken_at", "topic", "partition", "broker", "position"]
    assert "header" in HEADER_SCHEMA.names
    state = snap(T0, [part("a", 0, [1], [1], 1)])
    header = json.loads(header_table(state).column("header")[0].as_py())
    assert "partitions" not in header and header["cluster_id"] == "c1" and header["format"] >= 1
    assert state_from_tables(header_table(state), replica_table(state)).partitions[0].leader == BrokerId(1)


def test_the_commands_exit_2_on_a_bad_snapshot_directory_before_starting_spark(tmp_path: Path, capsys) -> None:
    from console.cli import main

    assert main(["pipeline", "history", "--snapshots", str(tmp_path / "nowhere"), "--out", str(tmp_path / "t")]) == 2
    err = capsys.readouterr().err
    assert "Error: The snapshot directory" in err and "does not exist" in err and "Starting Spark" not in err
    root = _written(tmp_path / "snaps")
    bad = next(parquet_files(root / REPLICAS))
    bad.write_bytes(b"not parquet at all")
    assert main(["pipeline", "compact", "--snapshots", str(root)]) == 2
    assert f"{bad} is not a readable Parquet file" in capsys.readouterr().err


def test_collect_from_a_cluster_that_never_answers_keeps_nothing_and_says_so(tmp_path: Path, capsys) -> None:
    from console.cli import main

    code = main(
        [
            "collect",
            "--bootstrap-server",
            "127.0.0.1:1",
            "--timeout",
            "1",
            "--out",
            str(tmp_path),
            "--every",
            "1",
            "--for",
            "1",
        ]
    )
    err = capsys.readouterr().err
    assert code == 1 and "the cluster never answered; nothing was kept" in err
    assert not list(parquet_files(tmp_path))


def test_review_refuses_an_unreadable_plan_or_time_before_starting_spark(tmp_path: Path, capsys) -> None:
    from console.cli import main

    root = _written(tmp_path / "snaps")
    assert (
        main(
            [
                "pipeline",
                "review",
                "--snapshots",
                str(root),
                "--reassignment-json-file",
                str(tmp_path / "nope.json"),
                "--out",
                str(tmp_path / "o"),
            ]
        )
        == 2
    )
    assert "Cannot read" in capsys.readouterr().err
    (tmp_path / "bad.json").write_text('{"version":1,"partitions":[{"topic":"a","partition":0,"replicas":[]}]}')
    assert (
        main(
            [
                "pipeline",
                "review",
                "--snapshots",
                str(root),
                "--reassignment-json-file",
                str(tmp_path / "bad.json"),
                "--out",
                str(tmp_path / "o"),
            ]
        )
        == 2
    )
    assert "The plan cannot be used" in capsys.readouterr().err
    assert (
        main(
            [
                "pipeline",
                "review",
                "--snapshots",
                str(root),
                "--reassignment-json-file",
                str(tmp_path / "bad.json"),
                "--out",
                str(tmp_path / "o"),
                "--at",
                "yesterday",
            ]
        )
        == 2
    )
    assert "--at takes epoch seconds or an ISO 8601 time" in capsys.readouterr().err
    assert not (tmp_path / "o").exists(), "nothing written"


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    files=st.lists(st.text(alphabet='ab{}",\n\r', max_size=40), max_size=5),
    block=st.sampled_from([1, 2, 3, 7, 1 << 24]),
)
def test_join_lines_joins_the_lines_of_every_file_in_order(
    tmp_path: Path, files: list[str], block: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    import uuid

    from console.pipeline import datasets
    from console.pipeline.datasets import Output

    monkeypatch.setattr(datasets, "_BLOCK", block)
    root = tmp_path / uuid.uuid4().hex
    parts = root / "lines"
    parts.mkdir(parents=True)
    for i, text in enumerate(files):
        (parts / f"part-{i:05d}.txt").write_bytes(text.encode())
    (parts / ".part-00000.txt.crc").write_bytes(b"x")
    out = Output(str(root / "out"))
    out.join_lines(parts, "joined.json", "[", ",", "]")
    lines = [
        line.rstrip("\n") for text in files for line in text.replace("\r\n", "\n").replace("\r", "\n").splitlines(True)
    ]
    assert (out.tmp / "joined.json").read_text(encoding="utf-8") == "[" + ",".join(lines) + "]"
