"""Many people on the Live page cost the server one cluster read per refresh interval, and one view
model per snapshot and filters: several AppTest sessions at once against a cluster whose reads are
counted (an in-memory Admin API answer; no Kafka, no network)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from console.access.settings import ConnectionSettings
from console.adapters.kafka import Narrowing
from console.adapters.records import ApiView, BrokerInfo, BrokerLogDirs, PartitionMeta, Reassignment
from console.core.model import BrokerId, ClusterInfo, LogDir
from console.present import live
from console.state import reader

APP = str(Path(__file__).resolve().parents[2] / "app.py")
SESSIONS = 5
INTERVAL_S = 5  # the Live page's default refresh


def _answer() -> ApiView:
    """Three brokers; `orders` (4 partitions, two moving from broker 0 to 2) and `payments`
    (2 partitions, one moving from broker 1 to 2), half copied."""
    b0, b1, b2 = BrokerId(0), BrokerId(1), BrokerId(2)
    parts, moving = {}, {}
    for topic, n in (("orders", 4), ("payments", 2)):
        for p in range(n):
            parts[(topic, p)] = PartitionMeta((b0, b1), (b0, b1), b0)
    for key, (add, drop) in {("orders", 0): (b2, b0), ("orders", 1): (b2, b0), ("payments", 0): (b2, b1)}.items():
        replicas = (*(b for b in parts[key].replicas if b != drop), add, drop)  # target first
        parts[key] = PartitionMeta(replicas, parts[key].isr, parts[key].leader)
        moving[key] = Reassignment(replicas, (add,), (drop,))
    logs: dict[int, list[tuple[str, int, str, int, bool]]] = {0: [], 1: [], 2: []}
    for (topic, p), meta in parts.items():
        for b in meta.replicas:
            logs[b].append((topic, p, "/data", 500 if b == b2 else 1000, False))
    return ApiView(
        cluster_id="counted-cluster",
        controller=b0,
        brokers=tuple(BrokerInfo(b, "127.0.0.1", 9092 + b, f"rack-{b}") for b in (b0, b1, b2)),
        partitions=parts,
        reassignments=moving,
        log_dirs=tuple(
            BrokerLogDirs(BrokerId(b), (LogDir("/data", None, 10**12, 10**11),), tuple(v)) for b, v in logs.items()
        ),
    )


class CountedKafka:
    """Stands in for the Admin API adapter of the console's reader: counts its reads (``reads``),
    among them those that asked for the sizes of only some partitions (``narrow_reads``: between
    two full reads), and its lean ones (``lean_reads``: metadata and what is in flight, from which
    the page draws its Cancel button when it opens); ``writes`` stands for the requests that changed
    the cluster sent through it."""

    reads = 0
    narrow_reads = 0
    lean_reads = 0
    writes = 0

    def __init__(self, settings: ConnectionSettings) -> None:
        self.settings = settings

    def read(self, lean: bool = False, narrow: Narrowing | None = None) -> ApiView:
        answer = _answer()
        if lean:
            CountedKafka.lean_reads += 1
        else:
            CountedKafka.reads += 1
        if narrow is not None:
            CountedKafka.narrow_reads += 1
            return replace(answer, asked=narrow(answer.partitions, answer.reassignments))
        return answer

    def read_cluster_info(self, zookeeper_configured: bool = False) -> ClusterInfo:
        """What the cluster is: not known here (Overview asks)."""
        return ClusterInfo()

    def close(self) -> None:
        pass


class Clock:
    """The reader's clock (when a snapshot is taken, how old the shared one is), moved by hand."""

    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def time(self) -> float:
        return self.now


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Clock]:
    monkeypatch.setenv("CONSOLE_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("CONSOLE_BOOTSTRAP_SERVERS", "counted.invalid:9092")
    monkeypatch.setenv("CONSOLE_CLUSTER_NAME", "counted")
    monkeypatch.delenv("CONSOLE_ZOOKEEPER", raising=False)
    monkeypatch.setattr(reader, "KafkaGateway", CountedKafka)
    clock = Clock()
    monkeypatch.setattr(reader, "time", clock)
    CountedKafka.reads = CountedKafka.narrow_reads = CountedKafka.lean_reads = CountedKafka.writes = 0
    st.cache_resource.clear()  # a reader of this cluster built here, over the counted adapter
    yield clock
    st.cache_resource.clear()


def _sessions(n: int) -> list[AppTest]:
    return [AppTest.from_file(APP, default_timeout=60) for _ in range(n)]


def _refresh(sessions: list[AppTest]) -> list[str]:
    """Each session's refresh of the Live page; the "last refreshed" caption each one shows."""
    shown = []
    for at in sessions:
        at.run()
        assert not at.exception, at.exception
        assert at.header[0].value == "Live reassignments"
        shown.append(next(c.value for c in at.caption if "last refreshed" in c.value))
    return shown


def test_one_cluster_read_per_interval_whatever_the_number_of_viewers(counted):
    sessions = _sessions(SESSIONS)
    first = _refresh(sessions)
    assert CountedKafka.reads == 1, "five sessions opening the page share one read"
    assert CountedKafka.lean_reads == 1, "and one lean read, the Cancel button's (drawn before the full read)"
    assert len(set(first)) == 1
    assert all(at.metric[0].value == "3" for at in sessions)  # partitions reassigning, from the counted answer

    counted.now += INTERVAL_S - 1.5  # the same interval: every session refreshes again
    assert _refresh(sessions) == first
    assert CountedKafka.reads == 1

    counted.now += 1.5  # the next interval
    second = _refresh(sessions)
    assert CountedKafka.reads == 2, "the next interval: one read again, whatever the number of sessions"
    assert len(set(second)) == 1 and second != first  # each session shows the new snapshot

    more = _sessions(SESSIONS)  # twice as many people watching
    counted.now += INTERVAL_S
    _refresh(sessions + more)
    assert CountedKafka.reads == 3
    assert CountedKafka.lean_reads == 1, "the refreshes read nothing lean; those opening the page share the full read"


def test_a_change_the_console_sends_makes_the_next_refresh_fresh_for_everyone(counted):
    """After a submit, a cancel or a cordon sent through the shared reader's connections, nobody is
    shown the cluster as it was before it, even within the refresh interval."""
    sessions = _sessions(SESSIONS)
    first = _refresh(sessions)
    assert CountedKafka.reads == 1
    counted.now += 1
    CountedKafka.writes += 1  # e.g. the worker sent a wave, or someone cancelled
    second = _refresh(sessions)
    assert CountedKafka.reads == 2, "one fresh read for all, not one each"
    assert len(set(second)) == 1 and second != first
    counted.now += 1
    assert _refresh(sessions) == second and CountedKafka.reads == 2  # shared again until the next change


def _partitions(at: AppTest) -> Any:
    """The Live page's partitions table (the other movers' detail, above it, has no "leader")."""
    return next(d.value for d in at.dataframe if "leader" in d.value.columns)


def test_the_view_model_is_computed_once_per_snapshot_and_filters(counted, monkeypatch):
    calls: dict[str, int] = {"summary": 0, "live_page": 0}

    def counting(name: str) -> Any:
        real = getattr(live, name)

        def wrapper(*args: Any, **kwargs: Any) -> Any:
            calls[name] += 1
            return real(*args, **kwargs)

        return wrapper

    for name in calls:
        monkeypatch.setattr(live, name, counting(name))
    sessions = _sessions(SESSIONS)
    _refresh(sessions)
    assert calls == {"summary": 1, "live_page": 1}, "five sessions, one snapshot, the same filters"
    assert len({id(at.session_state["live.last_good"]) for at in sessions}) == 1  # one snapshot in memory
    tables = [_partitions(at) for at in sessions]
    assert all(t.equals(tables[0]) for t in tables)
    assert set(tables[0]["partition"]) == {"orders-0", "orders-1", "payments-0"}

    sessions[0].multiselect(key="live.topics").set_value(["payments"]).run()  # one viewer filters
    assert not sessions[0].exception
    assert list(_partitions(sessions[0])["partition"]) == ["payments-0"]
    assert calls == {"summary": 1, "live_page": 2}, "other filters: a page of their own; the same summary"
    sessions[1].multiselect(key="live.topics").set_value(["payments"]).run()  # another one, the same filters
    assert calls == {"summary": 1, "live_page": 2}

    counted.now += INTERVAL_S  # a new snapshot: computed again, once
    _refresh(sessions)
    assert calls == {"summary": 2, "live_page": 4}  # all topics, and `payments` only
    assert CountedKafka.reads == 2


def test_between_two_full_reads_a_refresh_reads_what_is_in_flight_and_says_how_old_the_rest_is(counted):
    """Every partition's sizes and every topic's configs are read once a minute; the refreshes in
    between ask only for those in flight, and the page says how old each part is."""
    sessions = _sessions(2)
    _refresh(sessions)
    assert (CountedKafka.reads, CountedKafka.narrow_reads) == (1, 0)  # the first read is a full one
    for n in range(1, 12):  # a refresh every 5 s for the rest of the minute
        counted.now += INTERVAL_S
        _refresh(sessions)
        assert (CountedKafka.reads, CountedKafka.narrow_reads) == (1 + n, n)
    state = sessions[0].session_state["live.last_good"]
    assert state.read_at.sizes == state.read_at.configs == state.read_at.replicas - 55  # carried for 55 s
    assert all(at.metric[0].value == "3" for at in sessions)  # what is in flight: read every time
    caption = next(c.value for c in sessions[0].caption if "last refreshed" in c.value)
    assert "Sizes and topic configs read" in caption and "; in flight and replicas read" in caption
    counted.now += INTERVAL_S  # a minute after the full read: the next one is full
    _refresh(sessions)
    assert (CountedKafka.reads, CountedKafka.narrow_reads) == (13, 11)
    counted.now += 1
    CountedKafka.writes += 1  # a change sent through the reader: read in full at once
    _refresh(sessions)
    assert (CountedKafka.reads, CountedKafka.narrow_reads) == (14, 11)


def test_overview_says_how_old_each_part_is_and_its_refresh_reads_everything_now(counted):
    at = AppTest.from_file(APP, default_timeout=60).run()
    at.switch_page("views/overview.py").run()
    assert not at.exception and at.header[0].value == "Cluster overview"
    reads, narrow = CountedKafka.reads, CountedKafka.narrow_reads
    counted.now += INTERVAL_S
    at.run()  # a rerun within the minute: sizes and topic configs carried over, what is in flight read
    assert (CountedKafka.reads, CountedKafka.narrow_reads) == (reads + 1, narrow + 1)
    caption = next(c.value for c in at.caption if "fingerprint" in c.value)
    assert "Sizes and topic configs read" in caption and "; in flight and replicas read" in caption
    counted.now += 1
    at.button[0].click().run()  # Refresh
    assert not at.exception
    assert (CountedKafka.reads, CountedKafka.narrow_reads) == (reads + 2, narrow + 1)  # a full read
    state = at.session_state["overview.last_good"]
    assert state.read_at.sizes == state.read_at.replicas == state.taken_at
