"""Plans: the official JSON format, malformed input, the diff's algebra, rollback and validation."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from console.core.errors import PlanFormatError
from console.core.model import BrokerId, ClusterInfo, ReplicaLog
from console.plans import validate as v
from console.plans.diff import ChangeKind, diff
from console.plans.plan import Plan, PlanEntry, apply, parse_plan, parse_topics_to_move, rollback
from console.plans.rules.codes import (
    ALREADY_REASSIGNING,
    BROKER_NOT_ELIGIBLE,
    DUPLICATE_BROKER,
    EMPTY_REPLICAS,
    EXCEEDS_FREE_SPACE,
    NEGATIVE_BROKER,
    NO_CHANGE,
    RACK_SPREAD_REDUCED,
    RACKS_UNDERUSED,
    REORDER_ONLY,
    RF_BELOW_MIN_ISR,
    RF_CHANGE,
    RF_STILL_BELOW_MIN_ISR,
    STALE,
    TIERED_LOCAL_ONLY,
    TOO_LARGE,
    UNKNOWN_BROKER,
    UNKNOWN_PARTITION,
    UNKNOWN_TOPIC,
)
from tests.unit.builders import cluster_info, ids, snapshot

# -- strategies --------------------------------------------------------------------------------
topic_names = st.from_regex(r"[a-zA-Z0-9._-]{1,20}", fullmatch=True).filter(lambda t: t not in (".", ".."))
replica_lists = st.lists(st.integers(0, 2**31 - 1), min_size=1, max_size=6, unique=True)


@st.composite
def entries(draw):
    replicas = tuple(BrokerId(b) for b in draw(replica_lists))
    dirs = draw(
        st.one_of(
            st.none(),
            st.lists(st.sampled_from(["any", "/data/a", "/data/b"]), min_size=len(replicas), max_size=len(replicas)),
        )
    )
    if dirs is not None and all(d == "any" for d in dirs):
        dirs = None
    return PlanEntry(draw(topic_names), draw(st.integers(0, 10_000)), replicas, tuple(dirs) if dirs else None)


plans = st.lists(entries(), min_size=1, max_size=30, unique_by=lambda e: (e.topic, e.partition)).map(Plan.of)


# -- the official format -------------------------------------------------------------------------
def test_writes_exactly_what_the_official_tool_prints():
    plan = Plan.of(
        [PlanEntry("foo", 1, ids(2, 3)), PlanEntry("bar", 0, ids(1)), PlanEntry("foo", 0, ids(1, 2), ("any", "/d"))]
    )
    assert plan.to_json() == (
        '{"version":1,"partitions":['
        '{"topic":"bar","partition":0,"replicas":[1],"log_dirs":["any"]},'
        '{"topic":"foo","partition":0,"replicas":[1,2],"log_dirs":["any","/d"]},'
        '{"topic":"foo","partition":1,"replicas":[2,3],"log_dirs":["any","any"]}]}'
    )


@given(plans)
def test_parse_of_what_the_console_writes_gives_the_plan_back(plan):
    again = parse_plan(plan.to_json())
    assert again == plan and again.to_json() == plan.to_json()


def test_reads_the_official_tool_minimal_form():
    plan = parse_plan('{"partitions":[{"topic":"t","partition":0,"replicas":[3,1]}]}')
    assert plan.entries == (PlanEntry("t", 0, ids(3, 1), None),)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("nope", "not JSON"),
        (b"\xff\xfe", "not"),
        ("[]", "top level"),
        ('{"version":2,"partitions":[]}', "Not supported version field value 2"),
        ('{"version":1}', 'no "partitions"'),
        ('{"partitions":{}}', "not a list"),
        ('{"partitions":[]}', "Partition reassignment list cannot be empty"),
        ('{"partitions":[{"topic":"t","partition":0,"replicas":[]}]}', "Partition replica list cannot be empty"),
        ('{"partitions":[{"topic":"t","partition":0,"replicas":[1,1]}]}', "the same broker appears twice"),
        ('{"partitions":[{"topic":"t","partition":0,"replicas":[-1]}]}', "must be integers from 0 to 2147483647"),
        ('{"partitions":[{"topic":"t","partition":0,"replicas":[1.5]}]}', "must be integers from 0 to 2147483647"),
        ('{"partitions":[{"topic":"t","partition":0,"replicas":[true]}]}', "must be integers from 0 to 2147483647"),
        ('{"partitions":[{"topic":"t","partition":0,"replicas":["1"]}]}', "must be integers from 0 to 2147483647"),
        (
            '{"partitions":[{"topic":"t","partition":0,"replicas":[2147483648]}]}',
            "from 0 to 2147483647, not [2147483648]",
        ),
        (
            '{"partitions":[{"topic":"t","partition":2147483648,"replicas":[1]}]}',
            '"partition" must be an integer from 0',
        ),
        ('{"partitions":[{"topic":"t","partition":"0","replicas":[1]}]}', '"partition" must be'),
        ('{"partitions":[{"topic":"t","partition":0,"replicas":[1],"log_dirs":[["any"]]}]}', "list of strings"),
        ('{"partitions":[{"topic":"t","partition":0,"replicas":[1],"log_dirs":"any"}]}', "list of strings"),
        ('{"partitions":[{"topic":"t","replicas":[1]}]}', '"partition" is missing'),
        ('{"partitions":[{"partition":0,"replicas":[1]}]}', '"topic" is missing'),
        ('{"partitions":[{"topic":"t","partition":0}]}', '"replicas" is missing'),
        ('{"partitions":[{"topic":"a b","partition":0,"replicas":[1]}]}', "characters other than"),
        ('{"partitions":[{"topic":"..","partition":0,"replicas":[1]}]}', "not allowed"),
        ('{"partitions":[{"topic":"' + "x" * 250 + '","partition":0,"replicas":[1]}]}', "longer than 249"),
        ('{"partitions":[{"topic":"t","partition":0,"replicas":[1,2],"log_dirs":["any"]}]}', "Size of replicas list"),
        ('{"partitions":[{"topic":"t","partition":0,"replicas":[1],"log_dirs":["rel"]}]}', "absolute path"),
        (
            '{"partitions":[{"topic":"t","partition":0,"replicas":[1]},{"topic":"t","partition":0,"replicas":[2]}]}',
            "entry 1 (t-0): the same partition is already in entry 0",
        ),
        ('{"partitions":[{"topic":"t","partition":0,"replicas":[1],"extra":1}]}', "unknown fields"),
        ('{"partitions":[3]}', "entry 0: not a JSON object"),
    ],
)
def test_malformed_files_name_the_entry_and_the_problem(text, expected):
    with pytest.raises(PlanFormatError) as e:
        parse_plan(text)
    assert expected in e.value.message and e.value.hint


def test_every_problem_is_reported_and_nothing_is_half_parsed():
    text = json.dumps(
        {
            "partitions": [
                {"topic": "ok", "partition": 0, "replicas": [1]},
                {"topic": "t", "partition": 1, "replicas": []},
                {"topic": "t", "partition": 2, "replicas": [2, 2]},
            ]
        }
    )
    with pytest.raises(PlanFormatError) as e:
        parse_plan(text)
    assert len(e.value.problems) == 2 and "entry 1" in e.value.problems[0] and "entry 2" in e.value.problems[1]


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-3, 3)
    | st.floats(allow_nan=False)
    | st.sampled_from(
        ["t", "any", "/d", "a b", "", "topic", "partition", "replicas", "log_dirs", "version", "partitions"]
    ),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(
            st.sampled_from(["topic", "partition", "replicas", "log_dirs", "version", "partitions", "x"]),
            inner,
            max_size=5,
        )
    ),
    max_leaves=25,
)


@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.one_of(
        json_values.map(json.dumps),
        st.builds(lambda ps: json.dumps({"version": 1, "partitions": ps}), st.lists(json_values, max_size=5)),
        st.binary(max_size=60),
        st.text(max_size=60),
    )
)
def test_generated_malformed_files_give_clear_errors_and_no_exception_escapes(text):
    try:
        plan = parse_plan(text)
    except PlanFormatError as e:
        assert e.message.startswith("The plan cannot be used:\n- ") and e.problems
    else:
        assert len(plan) >= 1 and parse_plan(plan.to_json()) == plan


def test_topics_to_move():
    assert parse_topics_to_move('{"version":1,"topics":[{"topic":"foo"},{"topic":"foo1"}]}') == ("foo", "foo1")
    for bad in ('{"topics":[]}', '{"topics":[{"topic":"a"},{"topic":"a"}]}', '{"topics":[{"name":"a"}]}', "x"):
        with pytest.raises(PlanFormatError):
            parse_topics_to_move(bad)


# -- diff: the controller's algebra ---------------------------------------------------------------
def reassign_to(origin, target):
    """ControllerContext.reassignTo (Kafka 3.9), transcribed."""
    full = list(dict.fromkeys(list(target) + list(origin)))
    return [b for b in full if b not in origin], [b for b in full if b not in target]


@given(
    st.lists(st.integers(0, 7), min_size=1, max_size=4, unique=True),
    st.lists(st.integers(0, 7), min_size=1, max_size=4, unique=True),
)
def test_diff_adding_and_removing_follow_the_controller(origin, target):
    state = snapshot({("t", 0): origin}, nbrokers=8)
    (c,) = diff(state, Plan.of([PlanEntry("t", 0, ids(*target))])).changes
    adding, removing = reassign_to(origin, target)
    assert (list(c.adding), list(c.removing)) == (adding, removing)
    assert c.leader_after == (origin[0] if origin[0] in target else target[0])


def test_in_flight_partition_keeps_its_original_replicas():
    # R = [4,5,6,1,2,3], AR = [4,5,6], RR = [1,2,3]; a new plan to [1,7,8] moves from the originals
    state = snapshot(
        {("t", 0): [4, 5, 6, 1, 2, 3]}, nbrokers=9, lpr={("t", 0): ([4, 5, 6, 1, 2, 3], [4, 5, 6], [1, 2, 3])}
    )
    (c,) = diff(state, Plan.of([PlanEntry("t", 0, ids(1, 7, 8))])).changes
    assert c.current == (1, 2, 3) and c.adding == (7, 8) and c.removing == (2, 3) and c.in_flight
    (back,) = diff(state, Plan.of([PlanEntry("t", 0, ids(1, 2, 3))])).changes
    assert back.kind is ChangeKind.REVERT


def test_per_broker_and_movement_bytes():
    state = snapshot({("t", 0): [0, 1], ("t", 1): [1, 2]}, sizes={("t", 0): 500, ("t", 1): 700})
    d = diff(state, Plan.of([PlanEntry("t", 0, ids(2, 1)), PlanEntry("t", 1, ids(1, 2))]))
    assert [c.kind for c in d.changes] == [ChangeKind.MOVE, ChangeKind.NONE]
    b = {x.broker: x for x in d.brokers}
    assert (b[0].replicas_before, b[0].replicas_after, b[0].leaving, b[0].bytes_after) == (1, 0, 1, 0)
    assert (b[2].replicas_after, b[2].arriving, b[2].bytes_in, b[2].bytes_after) == (2, 1, 500, 1200)
    # leader 0 leaves: the controller elects the first target replica (2), once it is in sync
    assert (b[0].leaders_before, b[0].leaders_after, b[2].leaders_after) == (1, 0, 1)
    assert [(f.source, f.destination, f.bytes) for f in d.flows] == [(0, 2, 500)]
    assert d.bytes_to_copy == 500 and d.summary()["moving"] == 1


# -- rollback ----------------------------------------------------------------------------------
@st.composite
def cluster_and_plan(draw):
    n = draw(st.integers(3, 6))
    parts = {
        ("t", p): draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=3, unique=True))
        for p in range(draw(st.integers(1, 6)))
    }
    chosen = draw(st.lists(st.sampled_from(sorted(parts)), min_size=1, unique=True))
    plan = Plan.of(
        PlanEntry(t, p, ids(*draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=3, unique=True))))
        for t, p in chosen
    )
    return snapshot(parts, nbrokers=n), plan


def assignment(state):
    return {p.key: p.replicas for p in state.partitions}


@given(cluster_and_plan())
def test_applying_a_plan_then_its_rollback_gives_the_snapshot_back(cp):
    state, plan = cp
    back = rollback(state, plan)
    assert set(back.keys) == set(plan.keys)
    moved = apply(state, plan)
    assert all(moved.partition(*e.key).replicas == e.replicas for e in plan.entries)
    assert assignment(apply(moved, back)) == assignment(state)


def test_rollback_of_in_flight_partition_is_its_original():
    state = snapshot({("t", 0): [4, 1, 2]}, nbrokers=5, lpr={("t", 0): ([4, 1, 2], [4], [2])})
    assert rollback(state, Plan.of([PlanEntry("t", 0, ids(3, 1))])).to_json() == (
        '{"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[1,2],"log_dirs":["any","any"]}]}'
    )


def with_logs(state, logs):
    """``state`` with each listed partition's logs replaced: key -> [(broker, dir, is_future)]."""
    parts = tuple(
        replace(p, logs=tuple(ReplicaLog(BrokerId(b), d, 100, f) for b, d, f in logs[p.key])) if p.key in logs else p
        for p in state.partitions
    )
    return replace(state, partitions=parts)


def dirs_of(back):
    return {e.key: e.log_dirs for e in back.entries}


def test_the_rollback_names_each_replicas_current_dir_from_kafka_4_2_as_the_official_tool_does():
    state = snapshot({("t", 0): [0, 1], ("t", 1): [1, 2, 0], ("t", 2): [2, 0], ("u", 0): [0, 1]}, nbrokers=3)
    state = with_logs(
        state,
        {
            ("t", 0): [(0, "/b0/d1", False), (1, "/b1/d2", False)],
            # an intra-broker move in progress: the current dir, never the future one
            ("t", 1): [(1, "/b1/d1", False), (1, "/b1/d2", True), (2, "/b2/d2", False)],  # 0 reported none
            ("t", 2): [(2, "/b2/d1", True)],  # only a future log: no current dir
            ("u", 0): [],  # no broker reported a log
        },
    )
    plan = Plan.of([PlanEntry(t, p, ids(2, 1)) for t, p in [("t", 0), ("t", 1), ("t", 2), ("u", 0)]])
    for level in (29, 33, 40):  # 4.2-IV1, 4.4-IV2, newer than the console knows
        back = rollback(replace(state, info=cluster_info(level)), plan)
        assert back.to_json() == (
            '{"version":1,"partitions":['
            '{"topic":"t","partition":0,"replicas":[0,1],"log_dirs":["/b0/d1","/b1/d2"]},'
            '{"topic":"t","partition":1,"replicas":[1,2,0],"log_dirs":["/b1/d1","/b2/d2","any"]},'
            '{"topic":"t","partition":2,"replicas":[2,0],"log_dirs":["any","any"]},'
            '{"topic":"u","partition":0,"replicas":[0,1],"log_dirs":["any","any"]}]}'
        ), level
        assert parse_plan(back.to_json()) == back  # the official tool's output reads back as the same plan


@pytest.mark.parametrize(
    "info",
    [cluster_info(27), cluster_info(None, "3.9"), ClusterInfo(), cluster_info(None, None)],
    ids=["4.1", "3.9 (ZooKeeper)", "not read", "release not said"],
)
def test_the_rollback_says_any_before_kafka_4_2_and_where_the_release_is_not_known(info):
    state = with_logs(snapshot({("t", 0): [0, 1]}, nbrokers=3), {("t", 0): [(0, "/b0/d1", False), (1, "/d", False)]})
    back = rollback(replace(state, info=info), Plan.of([PlanEntry("t", 0, ids(2, 1))]))
    assert dirs_of(back) == {("t", 0): None}
    assert back.to_json().endswith('"log_dirs":["any","any"]}]}')


def test_the_rollback_of_a_partition_in_flight_names_its_original_replicas_dirs():
    state = snapshot({("t", 0): [4, 1, 2]}, nbrokers=5, lpr={("t", 0): ([4, 1, 2], [4], [2])})
    state = with_logs(state, {("t", 0): [(1, "/b1/d1", False), (2, "/b2/d2", False), (4, "/b4/d1", False)]})
    back = rollback(replace(state, info=cluster_info(33)), Plan.of([PlanEntry("t", 0, ids(3, 1))]))
    assert dirs_of(back) == {("t", 0): ("/b1/d1", "/b2/d2")}


# -- validation ----------------------------------------------------------------------------------
def codes(state, *entries, basis=None):
    plan = Plan.of(entries, basis)
    return {f.code: f for f in v.validate(state, plan)}


def test_unknown_topic_partition_broker_and_ineligible_broker_are_errors():
    state = snapshot({("t", 0): [0, 1]}, nbrokers=3)
    found = codes(state, PlanEntry("nope", 0, ids(0)), PlanEntry("t", 5, ids(0)))
    assert found[UNKNOWN_TOPIC].severity.value == "error" and "does not exist" in found[UNKNOWN_TOPIC].message
    assert "t has 1 partitions" in found[UNKNOWN_PARTITION].message
    assert UNKNOWN_BROKER in codes(state, PlanEntry("t", 0, ids(0, 9)))
    # broker 3 holds a replica of another partition but is not registered (down)
    down = snapshot({("t", 0): [0, 1], ("u", 0): [3]}, nbrokers=3)
    assert BROKER_NOT_ELIGIBLE in codes(down, PlanEntry("t", 0, ids(0, 3)))


def test_what_the_controller_rejects_is_caught_for_plans_built_in_code():
    state = snapshot({("t", 0): [0, 1]}, nbrokers=3)
    found = codes(
        state,
        PlanEntry("t", 0, ()),
    )
    assert EMPTY_REPLICAS in found
    assert DUPLICATE_BROKER in codes(state, PlanEntry("t", 0, ids(1, 1)))
    assert NEGATIVE_BROKER in codes(state, PlanEntry("t", 0, ids(-1, 1)))


def test_replication_factor_min_isr_and_racks():
    state = snapshot({("t", 0): [0, 1, 2]}, nbrokers=4, min_isr={"t": 2})
    found = codes(state, PlanEntry("t", 0, ids(0)))
    assert found[RF_CHANGE].severity.value == "warning" and "from 3 to 1" in found[RF_CHANGE].message
    assert found[RF_BELOW_MIN_ISR].severity.value == "error"
    assert RACK_SPREAD_REDUCED not in found  # one replica spans one rack: the RF change says it already
    assert RF_STILL_BELOW_MIN_ISR not in found
    two = snapshot({("t", 0): [0, 1]}, nbrokers=4)
    assert RACKS_UNDERUSED not in codes(two, PlanEntry("t", 0, ids(2, 3)))


def test_a_partition_already_below_min_isr_that_the_plan_does_not_lower_is_a_warning_not_an_error():
    """A generated "Drain a log dir" plan was refused by Review for a partition of RF 1 under
    min.insync.replicas=2: the rule protects acks=all writes from a plan that lowers the replication
    factor below min ISR; one already below, moved between log dirs, between brokers or raised (still
    below) is not made worse."""
    state = snapshot({("t", 0): [0], ("t", 1): [0, 1]}, nbrokers=4, min_isr={"t": 3})
    for entry in (
        PlanEntry("t", 0, ids(2)),  # to another broker (between log dirs: test_drain_log_dir.py)
        PlanEntry("t", 0, ids(0, 1)),  # 1 → 2 replicas: better, still below 3
    ):
        found = codes(state, entry)
        assert RF_BELOW_MIN_ISR not in found, entry
        still = found[RF_STILL_BELOW_MIN_ISR]
        assert still.severity.value == "warning" and "min.insync.replicas=3" in still.message
    lowered = codes(state, PlanEntry("t", 1, ids(1)))  # 2 → 1: the plan makes it worse
    assert lowered[RF_BELOW_MIN_ISR].severity.value == "error" and RF_STILL_BELOW_MIN_ISR not in lowered


def test_no_change_reorder_in_flight_stale_space_and_size():
    state = snapshot({("t", 0): [0, 1], ("t", 1): [1, 2]}, nbrokers=4, usable={3: 100}, sizes={("t", 1): 5000})
    found = codes(state, PlanEntry("t", 0, ids(0, 1)), PlanEntry("t", 1, ids(2, 1)))
    assert found[NO_CHANGE].severity.value == "info" and found[REORDER_ONLY].severity.value == "info"
    assert "preferred leader election" in found[REORDER_ONLY].hint
    assert EXCEEDS_FREE_SPACE in codes(state, PlanEntry("t", 1, ids(3, 2)))
    stale = codes(state, PlanEntry("t", 0, ids(2, 1)), basis={("t", 0): ids(0, 3)})
    assert stale[STALE].severity.value == "error"
    flight = snapshot({("t", 0): [3, 0, 1]}, nbrokers=4, lpr={("t", 0): ([3, 0, 1], [3], [1])})
    assert "keeps its original replicas 0,1" in codes(flight, PlanEntry("t", 0, ids(2, 0)))[ALREADY_REASSIGNING].message
    big = snapshot({("t", p): [0] for p in range(2100)}, nbrokers=2)
    found = {f.code for f in v.validate(big, Plan.of(PlanEntry("t", p, ids(1)) for p in range(2100)))}
    assert TOO_LARGE in found


def test_errors_come_first():
    state = snapshot({("t", 0): [0, 1]}, nbrokers=3)
    found = v.validate(state, Plan.of([PlanEntry("a", 0, ids(0)), PlanEntry("t", 0, ids(0, 1))]))
    assert [f.severity.value for f in found] == sorted(
        (f.severity.value for f in found), key=["error", "warning", "info"].index
    )


def test_a_move_of_a_tiered_topic_says_it_copies_the_local_log_only():
    state = snapshot({("t", 0): [0, 1], ("t", 1): [1, 2], ("u", 0): [0, 1], ("w", 0): [0, 1]}, nbrokers=4)
    state = replace(state, tiered_topics=("t", "w"))
    plan = Plan.of(
        [
            PlanEntry("t", 0, ids(2, 1)),  # adds a replica on 2
            PlanEntry("t", 1, ids(1, 3)),
            PlanEntry("u", 0, ids(3, 1)),  # not tiered
            PlanEntry("w", 0, ids(1, 0)),  # tiered, a reorder: nothing copied, nothing said
        ]
    )
    found = [f for f in v.validate(state, plan) if f.code == TIERED_LOCAL_ONLY]
    assert [(f.topic, f.partition, f.severity.value) for f in found] == [("t", None, "info")]
    assert "moving 2 partitions copies the local log only (2.0 KB" in found[0].message
    assert "remote storage" in found[0].message and "estimate" in found[0].hint
    assert not [f for f in v.validate(replace(state, tiered_topics=()), plan) if f.code == TIERED_LOCAL_ONLY]


@pytest.mark.parametrize("chunk", [1, 2, 3, 50_000])
def test_the_json_written_a_slice_at_a_time_is_the_json_of_the_whole(monkeypatch, chunk):
    import console.plans.plan as plans

    monkeypatch.setattr(plans, "_JSON_CHUNK", chunk)
    for n in range(6):
        entries = [PlanEntry(f"t{i}", i, ids(1, i + 2), None if i % 2 else ("any", "/d")) for i in range(n)]
        written = [
            {
                "topic": e.topic,
                "partition": e.partition,
                "replicas": list(e.replicas),
                "log_dirs": list(e.log_dirs or ("any", "any")),
            }
            for e in entries
        ]
        assert Plan(tuple(entries)).to_json() == json.dumps(
            {"version": 1, "partitions": written}, separators=(",", ":")
        )


def test_a_parsed_plan_shares_one_int_per_broker_id_and_keeps_mixed_lengths():
    plan = parse_plan(
        '{"partitions":[{"topic":"a","partition":1,"replicas":[1000,1001]},{"topic":"a","partition":0,"replicas":[1001,1000]}]}'
    )
    assert [e.replicas for e in plan.entries] == [(1001, 1000), (1000, 1001)]
    assert plan.entries[0].replicas[0] is plan.entries[1].replicas[1]
    mixed = parse_plan(
        '{"partitions":[{"topic":"a","partition":0,"replicas":[1000]},{"topic":"a","partition":1,"replicas":[3,1000]}]}'
    )
    assert [e.replicas for e in mixed.entries] == [(1000,), (3, 1000)]
    with pytest.raises(PlanFormatError):  # the same partition twice, apart
        parse_plan(
            '{"partitions":[{"topic":"b","partition":0,"replicas":[1]},{"topic":"a","partition":0,"replicas":[1]},{"topic":"b","partition":0,"replicas":[2]}]}'
        )


def test_a_replica_on_a_broker_the_cluster_does_not_know_is_not_said_to_lower_the_rack_spread():
    """Review said "replicas spread over 0 racks instead of 1" for a partition moved onto a broker
    the cluster does not have: that broker has no rack to count; the unknown broker is the error."""
    state = snapshot({("t", 0): [0, 1], ("t", 1): [0]}, nbrokers=4)
    state = replace(state, brokers=tuple(replace(b, rack=f"rack-{int(b.id) % 2}") for b in state.brokers))
    for entry in (PlanEntry("t", 0, ids(0, 9)), PlanEntry("t", 1, ids(9))):
        found = codes(state, entry)
        assert UNKNOWN_BROKER in found
        assert RACK_SPREAD_REDUCED not in found, found[RACK_SPREAD_REDUCED].message
        assert RACKS_UNDERUSED not in found, found[RACKS_UNDERUSED].message
    assert RACK_SPREAD_REDUCED in codes(state, PlanEntry("t", 0, ids(0, 2)))  # brokers 0 and 2 share a rack
