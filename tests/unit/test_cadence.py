"""When a reader reads every partition's sizes and every topic's configs in full (the cadence, on a
fake clock), and the setting that says how often (``sizes_every_s``, ``CONSOLE_SIZES_EVERY_S``)."""

from __future__ import annotations

import pytest

from console.access.clusters import (
    ENV_SIZES_EVERY,
    cluster_problems,
    from_environment,
    from_mapping,
)
from console.access.settings import ConnectionSettings
from console.state.cadence import Cadence, FullRead
from console.state.reader import ClusterReader


class Clock:
    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now


def test_the_first_read_is_full_those_within_the_period_narrow_and_the_next_after_it_full() -> None:
    clock = Clock()
    cadence = Cadence(60.0, clock)
    assert cadence.due(generation=(0, 0)) is FullRead.FIRST
    cadence.read_in_full(clock.now, (0, 0), complete=True)
    for _ in range(11):  # a Live refresh every 5 s
        clock.now += 5.0
        assert cadence.due((0, 0)) is None
    clock.now += 5.0  # 60 s after the full read began
    assert cadence.due((0, 0)) is FullRead.DUE
    cadence.read_in_full(clock.now, (0, 0), complete=True)
    clock.now += 1.0
    assert cadence.due((0, 0)) is None
    assert cadence.full_at == clock.now - 1.0


def test_a_write_through_the_reader_or_a_zookeeper_watch_forces_a_full_read_next() -> None:
    clock = Clock()
    cadence = Cadence(60.0, clock)
    cadence.read_in_full(clock.now, (0, 0), complete=True)
    clock.now += 1.0
    assert cadence.due((0, 1)) is FullRead.CHANGED  # a write sent through the reader's gateway
    assert cadence.due((1, 0)) is FullRead.CHANGED  # a ZooKeeper watch fired
    cadence.read_in_full(clock.now, (0, 1), complete=True)
    clock.now += 1.0
    assert cadence.due((0, 1)) is None  # the write is in the full read: narrow again


def test_a_write_during_a_full_read_still_forces_the_next_one() -> None:
    clock = Clock()
    cadence = Cadence(60.0, clock)
    began = clock.now
    generation_when_it_began = (0, 0)
    clock.now += 2.0  # a write is sent while the full read is under way
    cadence.read_in_full(began, generation_when_it_began, complete=True)
    assert cadence.due((0, 1)) is FullRead.CHANGED


def test_a_read_that_did_not_answer_in_full_is_read_in_full_again() -> None:
    clock = Clock()
    cadence = Cadence(60.0, clock)
    cadence.read_in_full(clock.now, (0, 0), complete=False)  # a broker's log dirs did not answer
    clock.now += 5.0
    assert cadence.due((0, 0)) is FullRead.INCOMPLETE
    cadence.read_in_full(clock.now, (0, 0), complete=True)
    clock.now += 5.0
    assert cadence.due((0, 0)) is None
    cadence.lost()  # a narrow read could not carry everything over
    assert cadence.due((0, 0)) is FullRead.INCOMPLETE


def test_asked_for_or_with_a_period_of_0_every_read_is_full() -> None:
    clock = Clock()
    cadence = Cadence(60.0, clock)
    cadence.read_in_full(clock.now, (0, 0), complete=True)
    assert cadence.due((0, 0), asked=True) is FullRead.ASKED  # a submit's checks
    every_time = Cadence(0.0, clock)
    every_time.read_in_full(clock.now, (0, 0), complete=True)
    assert every_time.due((0, 0)) is FullRead.EVERY_TIME


def test_a_full_read_that_began_before_the_last_one_recorded_does_not_set_it_back() -> None:
    clock = Clock()
    cadence = Cadence(60.0, clock)
    cadence.read_in_full(1_010.0, (0, 1), complete=True)
    cadence.read_in_full(1_000.0, (0, 0), complete=True)  # slower, began earlier
    assert cadence.full_at == 1_010.0 and cadence.due((0, 1)) is None


def test_how_often_comes_from_the_clusters_table_or_the_environment_and_a_bad_value_is_named() -> None:
    tables = {"big": {"bootstrap_servers": "a:1", "sizes_every_s": 300}, "plain": {"bootstrap_servers": "b:1"}}
    got = from_mapping(tables)
    assert got["big"].sizes_every_s == 300.0 and got["plain"].sizes_every_s == 60.0
    assert from_mapping({"x": {"bootstrap_servers": "a:1", "sizes_every_s": 0}})["x"].sizes_every_s == 0.0
    assert cluster_problems(tables) == []
    for bad in ("often", -1, 3601, True, float("nan")):
        (problem,) = cluster_problems({"x": {"bootstrap_servers": "a:1", "sizes_every_s": bad}})
        assert problem.startswith(
            "sizes_every_s in [clusters.x] in secrets.toml must be a number of seconds from 0 to 3600"
        )
        assert problem.endswith("The cluster is left out until then.")
        assert from_mapping({"x": {"bootstrap_servers": "a:1", "sizes_every_s": bad}}) == {}  # left out, not guessed
    env = {"CONSOLE_BOOTSTRAP_SERVERS": "c:1", "CONSOLE_SIZES_EVERY_S": "120"}
    assert from_environment(env)["cluster"].sizes_every_s == 120.0 and ENV_SIZES_EVERY.problem(env) is None
    env["CONSOLE_SIZES_EVERY_S"] = "a minute"
    assert from_environment(env)["cluster"].sizes_every_s == 60.0
    said = ENV_SIZES_EVERY.problem(env) or ""
    assert said.startswith("CONSOLE_SIZES_EVERY_S must be a number of seconds from 0 to 3600, not 'a minute'.")
    assert said.endswith("every 60 s until it is fixed.")


@pytest.mark.parametrize("every", [0.0, 45.0])
def test_the_reader_reads_at_the_clusters_cadence(every: float) -> None:
    settings = ConnectionSettings({"bootstrap.servers": "127.0.0.1:1"}, name="x", sizes_every_s=every)
    with ClusterReader(settings) as reader:
        assert reader.cadence.every_s == every
