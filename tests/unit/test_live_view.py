"""One refresh of the Live page as two records the app shares between its viewers: the summary of a
snapshot, and a page of the table with the chart of the same partitions (nothing else drawn)."""

from __future__ import annotations

from console.core.model import PartitionHealth
from console.present import live
from tests.unit.builders import snapshot


def _state():
    """120 partitions of two topics; 110 moving their last replica from broker 2 to broker 3."""
    parts = {(f"t{n // 60}", n % 60): [0, 1, 2] for n in range(120)}
    lpr = {k: ([0, 1, 3, 2], [3], [2]) for k in list(parts)[:110]}
    return snapshot({k: lpr[k][0] if k in lpr else r for k, r in parts.items()}, nbrokers=4, lpr=lpr)


def _charted(spec: dict) -> list[str]:
    (rows,) = spec["datasets"].values()
    return sorted({r["partition"] for r in rows})


def test_a_page_holds_its_rows_and_the_chart_of_the_same_partitions_only():
    state = _state()
    every = live.select(state, live.LiveFilter())
    last = live.live_page(state, live.LiveFilter(), 3, 50)
    assert (last.matching, last.pages, last.number) == (110, 3, 3)
    shown = [r["partition"] for r in last.rows]
    assert shown == [p.name for p in every[100:]]
    assert _charted(last.chart) == sorted(shown)
    assert last.chart["layer"][0]["encoding"]["y"]["sort"] == shown
    assert "config" not in last.chart  # drawn with the app's theme, not Altair's default size
    assert live.live_page(state, live.LiveFilter(), 9, 50).number == 3  # clamped to the last page
    first = live.live_page(state, live.LiveFilter(), 1, 50)
    assert [r["partition"] for r in first.rows] == [p.name for p in every[:50]]
    assert first.rows == tuple(live.partition_rows(state, every[:50]))


def test_filters_select_before_paging():
    state = _state()
    one = live.live_page(state, live.LiveFilter(topics=("t1",)), 1, 50)
    assert (one.matching, one.pages) == (50, 1)
    assert {r["topic"] for r in one.rows} == {"t1"}
    steady = live.live_page(state, live.LiveFilter(in_flight_only=False, health=(PartitionHealth.HEALTHY,)), 1, 50)
    assert steady.matching == len([p for p in state.partitions if p.health is PartitionHealth.HEALTHY])
    none = live.live_page(state, live.LiveFilter(brokers=(7,)), 1, 50)
    assert (none.matching, none.rows, none.pages, none.chart) == (0, (), 1, {})


def test_the_summary_is_the_counts_and_totals_of_the_snapshot():
    state = _state()
    s = live.summary(state, {}, None)
    assert s.counts == live.counts(state) and s.counts.reassigning == 110
    assert s.total == live.total_estimate(state, {})
    assert s.learned is None  # no history
    assert live.counts(state) is live.counts(state)  # kept with the snapshot: computed once


def test_the_on_call_line_says_unknown_when_what_is_in_flight_was_not_read():
    from dataclasses import replace

    from console.core.sources import ReadStatus, SourceStatus

    state = _state()
    line = live.in_flight_line(state)
    assert line.startswith("**In flight now** (110): ")
    assert line == "**In flight now** (110): 2 topics (t0 60, t1 50); adding on brokers 3 (110)", line
    few = snapshot({("t", 0): [0, 1, 3, 2]}, nbrokers=4, lpr={("t", 0): ([0, 1, 3, 2], [3], [2])})
    assert live.in_flight_line(few) == "**In flight now** (1): t-0"
    calm = snapshot({("t", 0): [0, 1, 2]}, nbrokers=3)
    assert live.in_flight_line(calm) == "**In flight now** (0): nothing"
    down = replace(calm, status=ReadStatus(metadata=SourceStatus.UNAVAILABLE, reassignments=SourceStatus.UNAVAILABLE))
    said = live.in_flight_line(down)
    assert "unknown (ListPartitionReassignments: unavailable)" in said and "nothing" not in said
    zk_read = replace(down, status=ReadStatus(reassignments=SourceStatus.UNAVAILABLE, zookeeper=SourceStatus.OK))
    assert live.in_flight_line(zk_read) == "**In flight now** (0): nothing"  # ZooKeeper (3.x) said it
    zk_down = replace(
        down, status=ReadStatus(reassignments=SourceStatus.UNAVAILABLE, zookeeper=SourceStatus.UNAVAILABLE)
    )
    assert "ZooKeeper: unavailable" in live.in_flight_line(zk_down)
    from console.present.text import state_text

    assert "No partition reassignments found." in state_text(calm)
    assert "No partition reassignments found." not in state_text(zk_down)
    assert "Partition reassignments: unknown" in state_text(zk_down)


def test_the_broker_table_explains_eligible_beside_cordoned():
    rows = live.broker_rows(_state())
    assert set(live.BROKER_HELP) <= set(rows[0])
    assert "cordoned broker stays eligible" in live.BROKER_HELP["eligible"]
