"""Overview's log dir rows: each dir's replicas and bytes, 0 for a dir emptied, unknown (never
0 B) for a dir or a broker whose contents were not read."""

from __future__ import annotations

from dataclasses import replace

import pytest

from console.core.model import BrokerId, ClusterState, SourceStatus
from console.present.cluster import NOT_READ, log_dir_rows
from tests.fakes.cluster import FakeCluster

pytestmark = pytest.mark.unit
MB = 1000 * 1000  # as human_bytes counts (decimal)
D1, D2 = "/k/d1", "/k/d2"


def rows_by_dir(state: ClusterState) -> dict[tuple[int, str], tuple[object, str]]:
    return {(int(r["broker"]), r["log dir"]): (r["replicas"], r["on disk"]) for r in log_dir_rows(state)}


def test_log_dir_rows_give_replicas_and_bytes_per_dir_and_a_drained_dir_shows_none() -> None:
    fake = FakeCluster.of(3, {"t": [[0, 1], [0, 2]]}, size=10 * MB, copy_rate=MB, log_dirs=(D1, D2))
    rows = rows_by_dir(fake.snapshot())
    assert rows[(0, D1)] == (2, "20.0 MB") and rows[(0, D2)] == (0, "0 B")
    assert rows[(1, D1)] == (1, "10.0 MB") and rows[(2, D1)] == (1, "10.0 MB")
    fake.alter_replica_log_dirs({("t", 0, BrokerId(0)): D2, ("t", 1, BrokerId(0)): D2})
    fake.advance(30)  # both copied, swapped in
    drained = rows_by_dir(fake.snapshot())
    assert drained[(0, D1)] == (0, "0 B") and drained[(0, D2)] == (2, "20.0 MB")
    # a future replica does not count in its dir until it is swapped in
    fake.alter_replica_log_dirs({("t", 0, BrokerId(0)): D1})
    fake.advance(3)
    assert rows_by_dir(fake.snapshot())[(0, D1)] == (0, "0 B")


def test_what_was_not_read_is_unknown_never_0_bytes() -> None:
    state = FakeCluster.of(3, {"t": [[0, 1], [0, 2]]}, size=10 * MB, log_dirs=(D1, D2)).snapshot()
    # broker 2's DescribeLogDirs did not answer (its dirs unknown); broker 1's D1 is offline
    brokers = tuple(
        replace(b, log_dirs=())
        if b.id == 2
        else replace(
            b, log_dirs=tuple(replace(d, error="KAFKA_STORAGE_ERROR") if d.path == D1 else d for d in b.log_dirs)
        )
        if b.id == 1
        else b
        for b in state.brokers
    )
    partial = replace(state, brokers=brokers)
    rows = {(int(r["broker"]), r["log dir"]): r for r in log_dir_rows(partial)}
    assert (rows[(2, NOT_READ)]["replicas"], rows[(2, NOT_READ)]["on disk"]) == (None, "unknown")
    assert rows[(2, NOT_READ)]["state"] == "DescribeLogDirs did not answer"
    assert (rows[(1, D1)]["replicas"], rows[(1, D1)]["on disk"]) == (None, "unknown")
    assert rows[(1, D1)]["state"] == "KAFKA_STORAGE_ERROR"
    assert (rows[(1, D2)]["replicas"], rows[(1, D2)]["on disk"]) == (0, "0 B")  # read, and empty
    assert (rows[(0, D1)]["replicas"], rows[(0, D1)]["on disk"]) == (2, "20.0 MB")
    # the log dirs not read at all: every dir's contents unknown
    unread = replace(state, status=replace(state.status, log_dirs=SourceStatus.UNAVAILABLE))
    assert set(rows_by_dir(unread).values()) == {(None, "unknown")}
