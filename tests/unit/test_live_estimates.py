"""The Live page's answer to "when will it finish" (copy rate over refreshes, bytes left, ETA, the
throttle in force), one progress figure per adding replica, and every shown number in units a
person reads (no None cells, human bytes and rates, words for headers and plurals)."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from console.core.format import human_rate, plural, table_text
from console.core.limits import FOLLOWER_LIST, FOLLOWER_RATE, LEADER_LIST, LEADER_RATE
from console.core.model import (
    Broker,
    BrokerId,
    ClusterState,
    Finding,
    Partition,
    ReadStatus,
    ReplicaLog,
    ReplicaProgress,
    ReplicaRole,
    Severity,
    SourceStatus,
    Throttles,
)
from console.core.states import RunState, WaveState
from console.moves.progress import CopyTracker
from console.present import findings as findings_view
from console.present import history, live, review
from console.storage.audit import AuditEntry
from console.storage.runs import Run, RunLimits, Wave

MB = 1000 * 1000  # as human_bytes counts (decimal)
OK = ReadStatus(
    metadata=SourceStatus.OK, reassignments=SourceStatus.OK, log_dirs=SourceStatus.OK, configs=SourceStatus.OK
)


def b(*ids: int) -> tuple[BrokerId, ...]:
    return tuple(BrokerId(i) for i in ids)


def moving(
    copied: dict[int, int],
    leader_bytes: int = 100 * MB,
    topic: str = "t",
    partition: int = 0,
    isr: tuple[int, ...] = (1, 2),
) -> Partition:
    """t-0 moving from 1,2 to 3,4 (leader 1); ``copied``: bytes on each adding broker present."""
    logs = (
        ReplicaLog(BrokerId(1), "/d", leader_bytes),
        ReplicaLog(BrokerId(2), "/d", leader_bytes),
        *tuple(ReplicaLog(BrokerId(k), "/d", v) for k, v in copied.items()),
    )
    return Partition(topic, partition, b(3, 4, 1, 2), b(*isr), BrokerId(1), adding=b(3, 4), removing=b(1, 2), logs=logs)


def state(at: float, *parts: Partition, throttles: Throttles = Throttles(), status: ReadStatus = OK) -> ClusterState:
    brokers = tuple(Broker(BrokerId(i), "h", 9092 + i, f"r{i}", registered=True) for i in range(1, 6))
    return ClusterState(at, brokers, parts, cluster_id="c", throttles=throttles, status=status)


# -- the tracker ------------------------------------------------------------------------------------
def test_the_first_refresh_measures_then_rates_come_from_the_growth_over_several_snapshots():
    t = CopyTracker()
    assert t.observe(state(100.0, moving({3: 0, 4: 0})))
    assert t.rates() == {}  # one sample: measuring
    t.observe(state(105.0, moving({3: 10 * MB, 4: 5 * MB})))
    t.observe(state(110.0, moving({3: 20 * MB, 4: 10 * MB})))
    rates = t.rates()
    assert rates[("t", 0, BrokerId(3))] == pytest.approx(2 * MB)  # 20 MB over 10 s
    assert rates[("t", 0, BrokerId(4))] == pytest.approx(1 * MB)
    assert t.observed_s() == 10.0


def test_the_same_or_an_older_snapshot_is_counted_once_and_one_without_sizes_not_at_all():
    t = CopyTracker()
    first = state(100.0, moving({3: 0, 4: 0}))
    assert t.observe(first) and not t.observe(first)  # every session feeds the same shared snapshot
    assert not t.observe(state(90.0, moving({3: 50 * MB, 4: 0})))  # a last good picture shown again
    unknown = replace(state(102.0, moving({3: 0, 4: 0})), status=ReadStatus(metadata=SourceStatus.OK))
    assert not t.observe(unknown)
    t.observe(state(110.0, moving({3: 10 * MB, 4: 0})))
    assert t.rates()[("t", 0, BrokerId(3))] == pytest.approx(MB)
    assert t.rates()[("t", 0, BrokerId(4))] == 0.0  # observed, and not growing


def test_old_samples_leave_the_window_a_restarted_copy_measures_again_and_finished_replicas_are_dropped():
    t = CopyTracker(window_s=30)
    t.observe(state(0.0, moving({3: 0, 4: 0})))
    t.observe(state(10.0, moving({3: 1 * MB, 4: 1 * MB})))  # slow at first
    for at in (40.0, 50.0, 60.0):
        t.observe(state(at, moving({3: int(at) * MB, 4: int(at) * MB})))
    # the window keeps 40..60 s (and always the last two): the rate is the recent 1 MB/s, not the start
    assert t.rates()[("t", 0, BrokerId(3))] == pytest.approx(MB)
    t.observe(state(70.0, moving({3: 1 * MB, 4: 70 * MB})))  # 3's log shrank: its copy started over
    assert ("t", 0, BrokerId(3)) not in t.rates() and ("t", 0, BrokerId(4)) in t.rates()
    t.observe(state(80.0, moving({3: 2 * MB, 4: 100 * MB}, isr=(1, 2, 4))))  # 4 joined the ISR
    assert set(t.rates()) == {("t", 0, BrokerId(3))}
    t.observe(state(90.0))  # nothing in flight any more
    assert t.rates() == {}


def test_a_slow_refresh_still_gives_a_rate_from_its_last_two_samples():
    t = CopyTracker(window_s=5)
    t.observe(state(0.0, moving({3: 0, 4: 0})))
    t.observe(state(60.0, moving({3: 60 * MB, 4: 0})))
    assert t.rates()[("t", 0, BrokerId(3))] == pytest.approx(MB)


# -- rows: rate, bytes left, ETA ----------------------------------------------------------------------
def test_eta_per_partition_is_the_slowest_adding_replica_and_in_total_bytes_left_over_the_summed_rate():
    p = moving({3: 40 * MB, 4: 80 * MB})  # 60 MB and 20 MB left
    s = state(10.0, p)
    rates = {("t", 0, BrokerId(3)): 2.0 * MB, ("t", 0, BrokerId(4)): 1.0 * MB}
    est = live.estimate(p, True, rates)
    assert (est.phase, est.left, est.rate, est.eta_s) == (live.CopyPhase.COPYING, 80 * MB, 3.0 * MB, 30.0)
    (row,) = live.partition_rows(s, [p], rates=rates)
    assert (row["copy rate"], row["left to copy"], row["ETA"]) == ("3.0 MB/s", "80.0 MB", "30 s")
    total = live.total_estimate(s, rates)
    assert total.left == live.counts(s).bytes_to_copy == 80 * MB
    assert total.eta_text == "27 s"  # 80 MB at 3 MB/s: everything in flight shares the observed rate
    assert total.rate_text == "3.0 MB/s"


def test_measuring_stalled_copied_unknown_and_nothing_to_copy_read_as_words():
    p = moving({3: 40 * MB, 4: 80 * MB})
    s = state(10.0, p)
    first = live.partition_rows(s, [p], rates={})[0]
    assert first["copy rate"] == first["ETA"] == "measuring…" and first["left to copy"] == "80.0 MB"
    assert live.total_estimate(s, {}).eta_text == "measuring…"
    half = {("t", 0, BrokerId(3)): 1.0 * MB}  # 4 seen once only
    assert live.estimate(p, True, half).eta_text == "measuring…"
    stalled = {("t", 0, BrokerId(3)): 1.0 * MB, ("t", 0, BrokerId(4)): 0.0}
    assert live.estimate(p, True, stalled).eta_text == "no progress"
    done = moving({3: 100 * MB, 4: 100 * MB}, isr=(1, 2, 3, 4))
    assert (live.estimate(done, True, {}).eta_text, live.estimate(done, True, {}).left_text) == ("copied", "0 B")
    unread = moving({})  # sizes not read: no log reported for the adding replicas
    assert live.estimate(unread, False, {}).eta_text == "unknown"
    only_removing = Partition("t", 1, b(1, 2), b(1, 2), BrokerId(1), removing=b(2))
    est = live.estimate(only_removing, True, {})
    assert (est.rate_text, est.left_text, est.eta_text) == ("—", "—", "—")
    assert live.total_estimate(state(1.0), {}).eta_text == "—"  # nothing in flight
    # without a tracker (the CLI's one snapshot) the rows carry no rate or ETA column
    assert "ETA" not in live.partition_rows(s, [p])[0] and "copy rate" not in live.partition_rows(s, [p])[0]


# -- rows: the throttle in force ------------------------------------------------------------------------
def test_throttle_in_force_only_where_the_topic_lists_name_the_replica_or_a_star():
    p = moving({3: 0, 4: 0})
    rates = {"1": {LEADER_RATE: str(10 * MB)}, "3": {FOLLOWER_RATE: str(5 * MB)}, "4": {FOLLOWER_RATE: "1000"}}
    named = Throttles.of(rates, {"t": {LEADER_LIST: "0:1,0:2", FOLLOWER_LIST: "0:3"}})
    (row,) = live.partition_rows(state(1.0, p, throttles=named), [p])
    assert row["leader throttle"] == "1: 10.0 MB/s"
    assert row["follower throttle"] == "3: 5.0 MB/s; 4: none"  # 4 has a rate, but 0:4 is not listed
    star = Throttles.of(rates, {"t": {LEADER_LIST: "*", FOLLOWER_LIST: "*"}})
    (row,) = live.partition_rows(state(1.0, p, throttles=star), [p])
    assert (row["leader throttle"], row["follower throttle"]) == ("1: 10.0 MB/s", "3: 5.0 MB/s; 4: 1.0 KB/s")
    other_partition = Throttles.of(rates, {"t": {LEADER_LIST: "1:1", FOLLOWER_LIST: "1:3"}})
    (row,) = live.partition_rows(state(1.0, p, throttles=other_partition), [p])
    assert (row["leader throttle"], row["follower throttle"]) == ("1: none", "3: none; 4: none")
    listed_no_rate = Throttles.of({}, {"t": {LEADER_LIST: "*"}})
    assert live.partition_rows(state(1.0, p, throttles=listed_no_rate), [p])[0]["leader throttle"] == "1: none"
    # the cluster-wide default rate counts when the broker has none of its own
    default = Throttles.of({"<default>": {LEADER_RATE: str(2 * MB)}}, {"t": {LEADER_LIST: "*"}})
    assert (
        live.partition_rows(state(1.0, p, throttles=default), [p])[0]["leader throttle"]
        == "1: 2.0 MB/s (cluster default)"
    )
    leaderless = replace(p, leader=None)
    assert live.partition_rows(state(1.0, leaderless, throttles=star), [leaderless])[0]["leader throttle"] == "—"


# -- one progress figure per adding replica ---------------------------------------------------------------
def test_the_bar_the_detail_and_the_picture_show_the_same_rounded_figure():
    # 1.46 % and 1.54 %: rounded once (down, to 0.1), the bar is the least advanced of the very figures
    # the detail prints (before, the bar said 1.5 -> "2%" and the detail "1%")
    p = moving({3: 146 * 1000, 4: 154 * 1000}, leader_bytes=10_000 * 1000)
    s = state(1.0, p)
    (row,) = live.partition_rows(s, [p])
    assert [r.percent for r in p.progress()] == [1.4, 1.5]
    assert row["progress"] == 1.4
    assert row["adding detail"].startswith("3: 1.4% (146.0 KB/10.0 MB); 4: 1.5% ")
    labels = {c["broker"]: c["label"] for c in live.replica_cells(s, [p])}
    assert (labels["3"], labels["4"]) == ("1.4%", "1.5%")
    assert ReplicaProgress(BrokerId(3), 999, 1000, False).percent == 99.9  # never 100 before it is copied
    assert ReplicaProgress(BrokerId(3), 1000, 1000, True).percent == 100.0
    assert ReplicaProgress(BrokerId(3), None, None, False).percent is None


def test_the_leader_being_removed_stays_the_leader_with_a_removing_mark():
    p = moving({3: 0, 4: 0})
    assert p.role(BrokerId(1)) is ReplicaRole.LEADER_REMOVING and p.role(BrokerId(2)) is ReplicaRole.REMOVING
    cells = {c["broker"]: c for c in live.replica_cells(state(1.0, p), [p])}
    assert (cells["1"]["role"], cells["1"]["label"]) == ("leader (removing)", "L−")
    assert (cells["2"]["role"], cells["2"]["label"]) == ("removing", "")
    assert cells["1"]["in sync"] == "yes" and cells["3"]["in sync"] == "no"
    from console.present.charts import ROLE_COLORS, replica_grid

    assert {c["role"] for c in cells.values()} <= set(ROLE_COLORS)  # the legend has a colour for each
    replica_grid(list(cells.values()), [p.name]).to_dict()  # builds


# -- every number in units a person reads -------------------------------------------------------------------
def no_none(rows: list[dict[str, object]], allowed: tuple[str, ...] = ()) -> None:
    for r in rows:
        bad = [k for k, v in r.items() if v is None and k not in allowed]
        assert not bad, f"None in {bad} of {r}"
        assert not [k for k in r if "_" in k], f"snake_case header in {list(r)}"


def test_live_and_overview_rows_have_no_none_and_human_values():
    p = moving({3: 0, 4: 0})
    still = Partition("a", 0, b(1, 2), b(1), None)  # offline, not moving
    thr = Throttles.of(
        {"1": {LEADER_RATE: "10000000"}, "<default>": {FOLLOWER_RATE: "1000000"}}, {"t": {LEADER_LIST: "*"}}
    )
    s = state(1.0, p, still, throttles=thr)
    rows = live.partition_rows(s, [p, still], runs={}, rates={})
    no_none(rows, allowed=("progress",))  # a number for the bar, or empty (the bar draws nothing)
    assert rows[1]["leader"] == "none" and rows[1]["left to copy"] == "—"
    no_none(live.broker_rows(s), allowed=("bytes",))  # the hidden number behind the chart
    no_none(live.replica_cells(s, [p, still]))
    assert live.throttle_rows(s) == [
        {"entity": "broker 1", "config": LEADER_RATE, "value": "10.0 MB/s"},
        {"entity": "cluster default (every broker)", "config": FOLLOWER_RATE, "value": "1.0 MB/s"},
        {"entity": "topic t", "config": LEADER_LIST, "value": "*"},
    ]


def test_findings_rows_say_where_in_words_and_every_hint_in_full():
    long_hint = "Wait for the broker to come back, or replace it in the plan: " + "x" * 300
    fs = [
        Finding("INFO_ONLY", Severity.INFO, "fyi"),
        Finding("BROKER_DOWN", Severity.ERROR, "down", long_hint, topic="t", partition=3, broker=BrokerId(2)),
        Finding("BROKER_DOWN", Severity.ERROR, "down", long_hint, topic="t", partition=4, broker=BrokerId(2)),
        Finding("TOPIC_X", Severity.WARNING, "w", "check $HOME", topic="t"),
    ]
    rows = findings_view.finding_rows(fs)
    no_none(rows)
    assert [r["severity"] for r in rows] == ["error", "error", "warning", "info"]
    assert [r["where"] for r in rows] == ["partition t-3 on broker 2", "partition t-4 on broker 2", "topic t", ""]
    assert findings_view.finding_codes(fs) == [
        {"severity": "error", "code": "BROKER_DOWN", "findings": 2, "what to do": long_hint},
        {"severity": "warning", "code": "TOPIC_X", "findings": 1, "what to do": "check $HOME"},
        {"severity": "info", "code": "INFO_ONLY", "findings": 1, "what to do": ""},
    ]


def test_findings_by_code_say_each_hint_once_and_at_most_three_per_code():
    fs = [Finding("STALE", Severity.WARNING, "m", f"hint {i % 5}.", topic="t", partition=i) for i in range(12)]
    fs += [Finding("STALE", Severity.WARNING, "m", "hint 0.", topic="t", partition=99)]  # the most frequent
    (row,) = findings_view.finding_codes(fs)
    assert row["findings"] == 13
    assert str(row["what to do"]).startswith("hint 0. ")
    assert str(row["what to do"]).endswith("(and 2 other hints)")
    assert str(row["what to do"]).count("hint ") == 3


def run(rate: int | None, state_: RunState = RunState.RUNNING) -> Run:
    return Run(7, "c", "drain 2", "ann", 1.0, 2.0, state_, "{}", "{}", "abc", rate, RunLimits(5, 500, None))


def test_runs_rows_and_text_show_the_throttle_human_and_no_none():
    waves = [
        Wave(
            7,
            1,
            WaveState.RUNNING,
            json.dumps({"version": 1, "partitions": [{"topic": "t", "partition": 0, "replicas": [3, 4]}]}),
            None,
            None,
        )
    ]
    rows = history.run_rows([run(10_000_000), run(None)], {7: waves})
    no_none(rows)
    assert [r["throttle"] for r in rows] == ["10.0 MB/s", "not throttled"]
    assert "throttle B/s" not in rows[0]
    no_none(history.wave_rows(None, waves, []), allowed=("progress",))
    no_none(history.wave_rows(state(1.0, moving({3: 0, 4: 0})), waves, []))
    text = history.runs_text([(run(2048), waves, None)])
    assert text.splitlines()[0].split() == ["run", "cluster", "name", "author", "state", "waves", "throttle", "stuck"]
    assert "2.0 KB/s" in text.splitlines()[1]
    assert history.runs_text([]) == "No runs."
    # --json keeps every field with its meaning: the rate in bytes/s
    assert history.run_json(run(2048), waves)["rate"] == 2048


def test_audit_rows_have_empty_cells_where_nothing_was_recorded_and_the_json_export_keeps_null():
    entries = [AuditEntry(1, None, 1.0, "ann", "c", "submit", None, '{"a": 1}', None, "sending")]
    rows = history.audit_rows(entries)
    no_none([{k.replace(" ", ""): v for k, v in r.items()} for r in rows])
    assert rows[0]["ref"] == "" and rows[0]["plan hash"] == "" and rows[0]["response"] == ""
    exported = json.loads(history.audit_json(entries))[0]
    assert exported["ref"] is None and exported["plan hash"] is None and exported["response"] is None
    assert history.audit_csv(entries).splitlines()[1].startswith("1,,")


def test_review_rows_in_words_and_human_bytes_while_diff_json_keeps_its_fields():
    from console.plans.diff import diff
    from console.plans.plan import Plan, PlanEntry

    s = state(
        1.0,
        Partition(
            "t",
            0,
            b(1, 2),
            b(1, 2),
            BrokerId(1),
            logs=(ReplicaLog(BrokerId(1), "/d", 3 * MB), ReplicaLog(BrokerId(2), "/d", 3 * MB)),
        ),
        Partition("t", 1, b(2), b(), None),
    )
    d = diff(s, Plan.of([PlanEntry("t", 0, b(3, 2)), PlanEntry("t", 1, b(3))]))
    racks = review.rack_map(s)
    changes = review.change_rows(d, racks)
    no_none(changes)
    assert {c["partition"]: c["leader"] for c in changes}["t-1"].startswith("none")
    brokers = review.broker_rows(d)
    no_none(brokers)
    by_id = {r["broker"]: r for r in brokers}
    assert (by_id[1]["copied out"], by_id[3]["copied in"]) == ("3.0 MB", "3.0 MB")
    no_none(review.rack_rows(d))
    assert review.flow_table(d)[0] == {"from broker": 1, "to broker": 3, "replicas": 1, "to copy": "3.0 MB"}
    j = review.diff_json(d, racks)
    assert {"rack", "replicas_before", "bytes_in"} <= set(j["racks"][0])  # --json: same fields, same names
    assert set(j["flows"][0]) == {"from", "to", "replicas", "bytes"} and j["flows"][0]["bytes"] == 3 * MB
    text = review.diff_text(d, racks)
    assert text.startswith("2 partitions in the plan (2 move); 2 replicas added, 2 removed, 2 leaders change; 3.0 MB")
    assert "none → 3" in text and "None" not in text
    assert "from broker  to broker  replicas  to copy" in text and "3.0 MB" in text


def test_plain_text_tables_and_plurals_read_as_words():
    assert table_text([{"a": True, "b": None}, {"a": False, "b": 1}], ["a", "b"]).splitlines() == [
        "a    b",
        "yes",
        "no   1",
    ]
    assert (plural(1, "error"), plural(2, "error"), plural(1_000, "wave")) == ("1 error", "2 errors", "1,000 waves")
    assert human_rate(10 * MB) == "10.0 MB/s" and human_rate(2000) == "2.0 KB/s"


def test_the_audit_log_and_the_runs_list_name_the_cluster_by_its_name_and_by_its_id_where_none_is_known(tmp_path):
    """Runs and the audit log keep a cluster's id (the key two names of one cluster share); the
    pages remember the name they read it under, and the audit table, its exports and `runs` show it."""
    from console.storage.store import Store

    store = Store(tmp_path / "s.db")
    store.clusters.remember("Xy3-id", "orders-prod")
    store.clusters.remember("plain-name", "plain-name")  # keyed by its name already: nothing to keep
    names = store.clusters.names()
    assert names == {"Xy3-id": "orders-prod"}
    entries = [
        AuditEntry(1, None, 1.0, "ann", "Xy3-id", "submit", None, "{}", None, "sending"),
        AuditEntry(2, None, 1.0, "ann", "other-id", "submit", None, "{}", None, "sending"),
    ]
    assert [r["cluster"] for r in history.audit_rows(entries, names)] == ["orders-prod", "other-id"]
    exported = json.loads(history.audit_json(entries, names))
    assert [(e["cluster"], e["cluster_id"]) for e in exported] == [("orders-prod", "Xy3-id"), ("other-id", "other-id")]
    assert "orders-prod" in history.audit_csv(entries, names)
    ran = replace(run(2048), cluster="Xy3-id")
    line = history.runs_text([(ran, [], None)], names=names).splitlines()[1]
    assert line.split()[1] == "orders-prod" and "Xy3-id" not in line
    assert history.run_json(ran, [], names=names)["cluster_name"] == "orders-prod"
    assert history.run_json(ran, [])["cluster"] == "Xy3-id"


def test_the_eta_says_when_on_the_clock_with_the_day_when_another():
    from datetime import datetime

    from console.moves.eta import InFlightEta

    counts = live.LiveCounts(0, 0, 0, 0, 0, 0, 0, 0, None)
    at = datetime(2026, 12, 2, 14, 0, 10).timestamp()
    copying = live.CopyEstimate(live.CopyPhase.COPYING, left=10, rate=1.0, eta_s=10.0)
    view = live.LiveSummary(counts, copying, {}, None, eta=InFlightEta(32 * 60.0))
    assert view.ends_text(at) == "ends ≈ 14:32"
    assert (
        live.LiveSummary(counts, copying, {}, None, eta=InFlightEta(11 * 3600.0)).ends_text(at) == "ends ≈ Dec 03 01:00"
    )
    assert live.LiveSummary(counts, copying, {}, None, eta=InFlightEta(None)).ends_text(at) is None
    nothing = live.CopyEstimate(live.CopyPhase.NOTHING)
    assert live.LiveSummary(counts, nothing, {}, None, eta=InFlightEta(5.0)).ends_text(at) is None
