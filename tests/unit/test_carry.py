"""The reads between two full ones: what they ask for, and what they carry over from the last read."""

from __future__ import annotations

import json
from dataclasses import replace

from console.adapters.records import (
    ApiView,
    Asked,
    BrokerInfo,
    BrokerLogDirs,
    PartitionMeta,
    Reassignment,
)
from console.core.model import BrokerId, Finding, LogDir, ReadTimes, Severity, SourceStatus
from console.present.cluster import read_ages_text
from console.state.carry import Carried, answered_in_full, carry, narrowing
from console.state.document import load_state, state_json
from console.state.merge import merge

B0, B1, B2 = BrokerId(0), BrokerId(1), BrokerId(2)
BROKERS = (BrokerInfo(B0), BrokerInfo(B1), BrokerInfo(B2))


def parts(n: int, topics: tuple[str, ...] = ("a", "b", "c")) -> dict[tuple[str, int], PartitionMeta]:
    return {
        (t, p): PartitionMeta((BrokerId(p % 3),), (BrokerId(p % 3),), BrokerId(p % 3)) for t in topics for p in range(n)
    }


def dirs(broker: BrokerId, replicas: list[tuple[str, int, int, bool]], usable: int = 900) -> BrokerLogDirs:
    return BrokerLogDirs(
        broker,
        (LogDir("/data", None, 1_000, usable),),
        tuple((t, p, "/data", size, fut) for t, p, size, fut in replicas),
    )


def full_view() -> ApiView:
    """Three topics of three partitions, each on broker p % 3, every replica 100 bytes; a-0 moving to broker 1."""
    return ApiView(
        brokers=BROKERS,
        partitions=parts(3),
        reassignments={("a", 0): Reassignment((B1, B0), (B1,), (B0,))},
        log_dirs=tuple(
            dirs(
                b,
                [(t, p, 100, False) for t in "abc" for p in range(3) if p % 3 == int(b)]
                + ([("a", 0, 10, False)] if b == B1 else []),
            )
            for b in (B0, B1, B2)
        ),
        broker_throttles={"0": {"leader.replication.throttled.rate": "1000"}},
        topic_throttles={
            "a": {"leader.replication.throttled.replicas": "0:0"},
            "b": {"follower.replication.throttled.replicas": "*"},
        },
        min_insync={"a": 1, "b": 2, "c": 1},
        tiered_topics=frozenset({"c"}),
    )


def carried(view: ApiView | None = None, at: float = 1_000.0) -> Carried:
    return Carried.after(view or full_view(), at, at, at)


def test_a_narrow_read_asks_for_what_is_in_flight_was_moving_a_run_moves_and_what_is_new() -> None:
    before = carried()
    assert before.moved == {("a", 0): 1_000.0} and len(before.replicas) == 9
    now = parts(3) | parts(1, ("d",))  # topic d created since
    listed = {("b", 1): Reassignment((B2, B1), (B2,), (B1,))}  # b-1 started moving; a-0 finished
    asked = narrowing(before, followed=[("c", 2), ("gone", 0)])(now, listed)
    assert asked == Asked(
        frozenset({("b", 1), ("a", 0), ("c", 2), ("d", 0)}),  # in flight, moving last time, a run's, new
        frozenset({"a", "b", "c", "d"}),
    )
    # ListPartitionReassignments did not answer: what was moving is asked for all the same
    assert narrowing(before)(parts(3), None) == Asked(frozenset({("a", 0)}), frozenset({"a"}))
    # a replica being copied to another log dir of its broker is moving too (it is not in the list)
    view = replace(full_view(), reassignments={}, log_dirs=(*full_view().log_dirs, dirs(B0, [("c", 0, 5, True)])))
    assert carried(view).moved.keys() == {("c", 0)}


def test_a_partition_another_tool_moved_between_two_reads_is_asked_for() -> None:
    """A move that began and ended between two reads is never seen in flight: its replicas in
    Metadata differ from the last read's, so its sizes are read again (they were carried from the
    broker it left: the new replica had no log dir shown; CI met it on the cordoned-dir test)."""
    before = carried(replace(full_view(), reassignments={}))
    now = parts(3)
    now[("b", 2)] = PartitionMeta((B0,), (B0,), B0)  # was on broker 2
    assert narrowing(before)(now, {}) == Asked(frozenset({("b", 2)}), frozenset({"b"}))
    assert narrowing(before)(parts(3), {}) == Asked(frozenset(), frozenset())  # nothing changed: nothing asked


def test_a_partition_seen_moving_is_asked_for_until_a_period_after_its_move_ended() -> None:
    """Its final sizes, and the throttles taken off its topic after the move, show at once."""
    idle = replace(full_view(), reassignments={})
    before = carried()  # a-0 moving at 1,000
    at_1030 = Carried.after(idle, 1_030.0, 1_000.0, 1_000.0, before, window_s=60.0)
    assert at_1030.moved == {("a", 0): 1_000.0}  # done now, seen moving 30 s ago: still asked for
    assert narrowing(at_1030)(parts(3), {}).partitions == {("a", 0)}
    at_1060 = Carried.after(idle, 1_060.0, 1_060.0, 1_060.0, at_1030, window_s=60.0)  # a full read
    assert at_1060.moved == {}  # a period after it was last seen moving
    assert narrowing(at_1060)(parts(3), {}) == Asked()


def test_the_sizes_asked_for_are_fresh_the_others_carried_and_free_space_is_fresh() -> None:
    before = carried()
    answer = ApiView(
        brokers=BROKERS,
        partitions=parts(3),
        reassignments={},
        # a-0 done: on broker 1 only, grown; every broker answers with its dirs (free space now)
        log_dirs=(dirs(B0, [], 500), dirs(B1, [("a", 0, 150, False)], 400), dirs(B2, [], 300)),
        broker_throttles={},
        topic_throttles={},
        min_insync={"a": 2},
        tiered_topics=frozenset(),
        asked=Asked(frozenset({("a", 0)}), frozenset({"a"})),
    )
    view, complete = carry(answer, before)
    assert complete
    sizes = {(bl.broker, t, p): size for bl in view.log_dirs for t, p, _, size, _ in bl.replicas}
    assert sizes[(B1, "a", 0)] == 150 and (B0, "a", 0) not in sizes  # the removed replica is gone
    assert sizes[(B0, "b", 0)] == 100 and sizes[(B2, "c", 2)] == 100  # not asked: carried
    assert len(sizes) == 9
    assert [bl.dirs[0].usable_bytes for bl in view.log_dirs] == [500, 400, 300]
    # topic a's configs are fresh (its throttle gone, its min ISR 2); b and c carried; brokers fresh
    assert view.topic_throttles == {"b": {"follower.replication.throttled.replicas": "*"}}
    assert view.min_insync == {"a": 2, "b": 2, "c": 1} and view.tiered_topics == {"c"}
    assert view.broker_throttles == {}
    state = merge(view, None, taken_at=1_030.0, read_times=ReadTimes(1_030.0, 1_000.0, 1_000.0))
    a0 = state.partition("a", 0)
    assert a0 is not None and a0.size == 150 and state.read_at.sizes == 1_000.0
    assert read_ages_text(state, 1_031.0) == (
        "Sizes and topic configs read 31 s ago; in flight and replicas read 1 s ago."
    )


def test_a_deleted_topics_configs_are_not_carried() -> None:
    answer = ApiView(
        brokers=BROKERS,
        partitions=parts(3, ("a", "c")),
        reassignments={},
        log_dirs=(dirs(B0, []), dirs(B1, []), dirs(B2, [])),
        asked=Asked(),
    )
    view, complete = carry(answer, carried())
    assert complete and "b" not in view.topic_throttles and "b" not in view.min_insync


def test_what_cannot_be_carried_over_says_so() -> None:
    before = carried()
    asked = Asked(frozenset({("a", 0)}), frozenset({"a"}))
    ok = ApiView(
        brokers=BROKERS,
        partitions=parts(3),
        reassignments={},
        log_dirs=tuple(dirs(b, []) for b in (B0, B1, B2)),
        asked=asked,
    )
    assert carry(ok, before)[1]
    # a broker's log dirs did not answer: none of its replicas shown (as in a full read), read in full next
    one_down = replace(
        ok,
        log_dirs=ok.log_dirs[:2],
        problems=(Finding("log-dirs-unreadable", Severity.WARNING, "broker 2 did not answer", "", broker=B2),),
    )
    view, complete = carry(one_down, before)
    assert not complete and {bl.broker for bl in view.log_dirs} == {B0, B1}
    # the configs did not answer: none carried (their status says so), read in full next
    no_configs = replace(ok, configs_status=SourceStatus.UNAVAILABLE)
    view, complete = carry(no_configs, before)
    assert not complete and view.topic_throttles == {} and view.min_insync == {}
    # a broker that was not there at the last full read: its other replicas are not known
    b3 = BrokerId(3)
    new_broker = replace(ok, brokers=(*BROKERS, BrokerInfo(b3)), log_dirs=(*ok.log_dirs, dirs(b3, [])))
    assert not carry(new_broker, before)[1]
    # Metadata did not answer: nothing to carry over to
    assert carry(replace(ok, metadata_status=SourceStatus.UNAVAILABLE), before) == (
        replace(ok, metadata_status=SourceStatus.UNAVAILABLE),
        False,
    )


def test_only_a_full_read_that_answered_in_full_is_carried_over() -> None:
    assert answered_in_full(full_view())
    assert not answered_in_full(replace(full_view(), log_dirs=full_view().log_dirs[:2]))
    assert not answered_in_full(replace(full_view(), configs_status=SourceStatus.UNAUTHORIZED))
    partial = Finding("configs-partial", Severity.WARNING, "topic b's configs could not be read", "", topic="b")
    assert not answered_in_full(replace(full_view(), problems=(partial,)))
    assert not answered_in_full(replace(full_view(), asked=Asked()))  # a narrow read is no full one


def test_the_caption_says_the_age_of_each_part() -> None:
    state = merge(full_view(), None, taken_at=2_000.0, read_times=ReadTimes(2_000.0, 1_958.0, 1_958.0))
    assert (
        read_ages_text(state, 2_001.0) == "Sizes and topic configs read 43 s ago; in flight and replicas read 1 s ago."
    )
    # read together (a full read): the same age; a snapshot that says nothing: read at taken_at
    assert read_ages_text(merge(full_view(), None, taken_at=2_000.0), 2_005.0) == (
        "Sizes and topic configs read 5 s ago; in flight and replicas read 5 s ago."
    )
    # minutes past two, as the other ages on the pages
    old = merge(full_view(), None, taken_at=2_000.0, read_times=ReadTimes(2_000.0, 1_700.0, 1_500.0))
    assert read_ages_text(old, 2_000.0) == (
        "Sizes read 5 min ago, topic configs 8 min ago; in flight and replicas read 0 s ago."
    )
    unread = merge(replace(full_view(), log_dirs=(), log_dirs_status=SourceStatus.UNAVAILABLE), None, taken_at=2_000.0)
    assert read_ages_text(unread, 2_002.0) == "Sizes not read; in flight and replicas read 2 s ago."


def test_the_snapshot_document_says_when_each_part_was_read() -> None:
    carried_over = merge(full_view(), None, taken_at=2_000.0, read_times=ReadTimes(2_000.0, 1_958.0, 1_958.0))
    doc = state_json(carried_over)
    assert doc["read_at"] == {"replicas": 2_000.0, "sizes": 1_958.0, "configs": 1_958.0}
    assert load_state(json.dumps(doc)).read_at == ReadTimes(2_000.0, 1_958.0, 1_958.0)
    at_once = merge(full_view(), None, taken_at=2_000.0)
    assert load_state(json.dumps(state_json(at_once))) == at_once  # every part at taken_at: read back as such
    older = {k: v for k, v in state_json(at_once).items() if k != "read_at"}  # written before it said
    assert load_state(json.dumps(older)).read_at == ReadTimes.at(2_000.0)
