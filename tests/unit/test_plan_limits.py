"""Hostile plans (issue 28, finding 5): each is refused with a short, clear message, in bounded time
and memory, before any work that grows with what it claims (console/core/limits.py)."""

from __future__ import annotations

import json
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from console import cli
from console.core.errors import PlanFormatError
from console.core.limits import MAX_REPLICAS, PROBLEMS_SHOWN, PlanLimits
from console.plans.columns import PAD, _member_sorted, member
from console.plans.diff import diff
from console.plans.plan import Plan, PlanEntry, parse_plan, parse_topics_to_move
from console.plans.validate import validate
from console.state.document import state_json
from tests.unit.builders import ids, snapshot

MiB = 2**20


def measured(fn: Callable[[], Any], seconds: float = 1.0, mib: float = 40) -> Any:
    """What ``fn`` returns or the PlanFormatError it raises, asserting it took under ``seconds`` of CPU and
    allocated under ``mib`` MiB at its peak (tracemalloc: numpy's arrays included)."""
    tracemalloc.start()
    started = time.process_time()  # the CPU it took: the machine may be busy with other work
    try:
        out: Any = fn()
    except PlanFormatError as e:
        out = e
    took = time.process_time() - started
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert took < seconds, f"took {took:.2f} s"
    assert peak < mib * MiB, f"peak {peak / MiB:.0f} MiB"
    return out


def refused(text: str | bytes, seconds: float = 1.0, mib: float = 40, **kw: Any) -> PlanFormatError:
    e = measured(lambda: parse_plan(text, **kw), seconds, mib)
    assert isinstance(e, PlanFormatError), "the plan was accepted"
    assert len(e.message) < 3_000 and e.message.count("\n") <= PROBLEMS_SHOWN + 1
    return e


def entries(n: int, replicas: list[int] | None = None) -> list[dict[str, Any]]:
    return [{"topic": "t", "partition": p, "replicas": replicas or [0, 1, 2]} for p in range(n)]


def plan_text(parts: list[dict[str, Any]], **extra: Any) -> str:
    return json.dumps({"version": 1, "partitions": parts, **extra})


# -- nesting ------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "text",
    [
        "[" * 1_000_000,
        '{"a":' * 300_000,
        plan_text(entries(3))[:-1]
        + ',"extra":'
        + "[" * 200_000
        + "]" * 200_000
        + "}",  # a field the fast path would skip
        '{"partitions":[{"topic":"t","partition":0,"replicas":' + "[" * 100_000 + "]" * 100_000 + "}]}",
    ],
    ids=["lists", "objects", "unknown-field", "in-an-entry"],
)
def test_deep_nesting_is_refused_without_recursing(text):
    e = refused(text)
    assert "nests lists and objects more than 8 deep" in e.message


def test_a_plan_with_an_unknown_top_level_field_is_still_read():
    plan = parse_plan(plan_text(entries(2), comment={"by": ["ann"]}))
    assert len(plan) == 2


# -- replicas per entry --------------------------------------------------------------------------
def test_an_entry_listing_a_thousand_brokers_is_refused_before_any_matrix():
    parts = entries(2_000)
    parts[0]["replicas"] = list(range(1_000))
    e = refused(plan_text(parts))
    assert f"entry 0 (t-0): 1,000 replicas, more than the {MAX_REPLICAS} an entry may list" in e.message
    e = refused(plan_text(parts), brokers=3)
    assert "1,000 replicas, more than the 3 brokers of the cluster" in e.message


def test_no_more_replicas_than_the_cluster_has_brokers():
    text = plan_text([{"topic": "t", "partition": 0, "replicas": [0, 1, 2, 3]}])
    assert len(parse_plan(text)) == 1  # no cluster known: up to the fixed cap
    assert "4 replicas, more than the 3 brokers of the cluster" in refused(text, brokers=3).message
    assert len(parse_plan(text, brokers=4)) == 1


def test_a_repeated_broker_is_found_in_linear_time():
    e = refused(plan_text([{"topic": "t", "partition": 0, "replicas": [1] * 30_000}]), seconds=1)
    assert "30,000 replicas" in e.message
    many = [{"topic": "t", "partition": p, "replicas": [1, 2] * 10 + [3]} for p in range(20_000)]
    e = refused(plan_text(many), seconds=2)
    assert "the same broker appears twice" in e.message and "[1, 2, 1, 2, 1, 2, 1, 2, … (21 items)]" in e.message


# -- names and values are cut in messages ----------------------------------------------------------
def test_a_huge_topic_name_is_cut_in_the_message():
    e = refused(plan_text([{"topic": "x" * 5_000_000, "partition": 0, "replicas": [1]}]))
    assert "longer than 249 characters" in e.message and "… (5,000,000 characters)" in e.message
    e = refused(plan_text([{"topic": "é" * 300, "partition": 0, "replicas": [1]}]))
    assert "(300 characters)" in e.message


@pytest.mark.parametrize(
    "entry, words",
    [
        ({"topic": "t", "partition": "p" * 3_000_000, "replicas": [1]}, "(3,000,000 characters)"),
        ({"topic": "t", "partition": 0, "replicas": [1], "log_dirs": ["/" + "d" * 3_000_000]}, "longer than 4,096"),
        ({"topic": "t", "partition": 0, "replicas": [1], "k" * 3_000_000: 1}, "unknown fields"),
        ({"topic": "t", "partition": 0, "replicas": [1], "log_dirs": ["d" * 3_000_000]}, "absolute path"),
    ],
    ids=["partition", "log-dir", "field-name", "relative-dir"],
)
def test_long_values_are_cut_in_messages(entry, words):
    e = refused(plan_text([entry]))
    assert words in e.message


def test_a_huge_number_is_refused_in_a_few_words():
    e = refused('{"partitions":[{"topic":"t","partition":' + "9" * 3_000_000 + ',"replicas":[1]}]}')
    assert "a number is out of range" in e.message


def test_whitespace_is_not_a_plan():
    assert "not JSON" in refused(" " * 3_000_000).message


# -- size and counts ---------------------------------------------------------------------------
def test_size_and_entries_are_checked_first():
    text = plan_text(entries(100))
    e = refused(text, limits=PlanLimits(bytes=1_000))
    assert "more than the 1.0 KB a plan may take" in e.message
    e = refused(text, limits=PlanLimits(entries=10))
    assert "100 entries, more than the 10 a plan may have" in e.message
    assert "more than the 10 a plan may have" in refused(text + " ", limits=PlanLimits(entries=10)).message
    assert len(parse_plan(text)) == 100


def test_many_bad_entries_give_one_line_each_for_the_first_twenty_and_a_count():
    bad = [{"topic": "t", "partition": p, "replicas": []} for p in range(30_000)]
    e = refused(plan_text(bad), seconds=2, mib=80)
    lines = e.message.splitlines()
    assert lines[0] == "The plan cannot be used:" and len(e.problems) == PROBLEMS_SHOWN
    assert lines[1] == "- entry 0 (t-0): Partition replica list cannot be empty"
    # the check stops looking once it has found PROBLEMS_COUNTED
    assert lines[-1] == "- and at least 9,980 more problems" and e.more == 9_980 and e.stopped


def test_one_bad_entry_after_many_good_ones_is_named_quickly():
    text = plan_text([*entries(60_000), {"topic": "t", "partition": 60_000, "replicas": [1, True]}])
    e = refused(text, seconds=2, mib=150)
    assert e.message.splitlines()[1:] == [
        "- entry 60000 (t-60000): broker ids must be integers from 0 to 2147483647, not [true]"
    ]
    assert not e.stopped


def test_many_duplicate_partitions_are_found_in_linear_time():
    e = refused(plan_text([{"topic": "t", "partition": 7, "replicas": [1]}] * 30_000), seconds=2, mib=80)
    assert "entry 1 (t-7): the same partition is already in entry 0" in e.message and e.more


def test_topics_to_move_are_bounded_and_checked_in_linear_time():
    many = json.dumps({"topics": [{"topic": f"t{i}"} for i in range(200_000)]})
    assert len(measured(lambda: parse_topics_to_move(many), seconds=2, mib=120)) == 200_000
    e = measured(lambda: parse_topics_to_move('{"topics":' + "[" * 100_000 + "]" * 100_000 + "}"))
    assert isinstance(e, PlanFormatError) and "nests" in e.message


# -- wide rows in the column-wise checks -----------------------------------------------------------
@given(
    st.integers(1, 12).flatmap(
        lambda n: st.tuples(
            st.lists(st.lists(st.integers(-1, 9), min_size=9, max_size=9), min_size=n, max_size=n),
            st.lists(st.lists(st.integers(-1, 9), min_size=9, max_size=9), min_size=n, max_size=n),
        )
    )
)
def test_membership_of_wide_rows_by_sorted_keys_is_the_same(rows):
    values, sets = (np.where(np.array(r) < 0, PAD, np.array(r)).astype(np.int64) for r in rows)
    expected = (values[:, :, None] == sets[:, None, :]).any(axis=2) & (values != PAD)
    assert (_member_sorted(values, sets) == expected).all() and (member(values, sets) == expected).all()


def test_a_wide_entry_built_in_code_does_not_blow_up_the_diff():
    # a plan made in code (a notebook) is not parsed: one entry of 300 brokers widens every row
    state = snapshot({("t", p): [p % 300, (p + 1) % 300] for p in range(300)}, nbrokers=300)
    plan = Plan.of(
        [PlanEntry("t", p, ids(p % 300, (p + 2) % 300)) for p in range(1, 300)] + [PlanEntry("t", 0, ids(*range(300)))]
    )
    d = measured(lambda: diff(state, plan), seconds=5, mib=60)
    assert len(d.changes) == 300 and validate(state, plan, d) is not None


# -- the CLI ---------------------------------------------------------------------------------
@pytest.fixture
def small_state_file(tmp_path: Path) -> Path:
    path = tmp_path / "state.json"
    path.write_text(json.dumps(state_json(snapshot({("t", 0): [0, 1], ("t", 1): [1, 2]}, nbrokers=3))))
    return path


@pytest.mark.parametrize(
    "text, words",
    [
        ("[" * 1_000_000, "nests lists and objects"),
        (plan_text([{"topic": "t", "partition": 0, "replicas": list(range(1_000))}]), "1,000 replicas"),
        (plan_text([{"topic": "t", "partition": 0, "replicas": [1] * 30_000}]), "30,000 replicas"),
        (plan_text([{"topic": "x" * 1_000_000, "partition": 0, "replicas": [1]}]), "(1,000,000 characters)"),
    ],
    ids=["nested", "thousand-brokers", "repeated-broker", "long-name"],
)
@pytest.mark.parametrize("command", ["validate", "diff", "rollback"])
def test_the_cli_refuses_hostile_plans_in_a_few_lines(command, text, words, small_state_file, tmp_path, capsys):
    path = tmp_path / "plan.json"
    path.write_text(text)
    started = time.process_time()
    code = cli.main([command, "--state-file", str(small_state_file), "--reassignment-json-file", str(path)])
    err = capsys.readouterr().err
    assert time.process_time() - started < 2
    assert code == 2 and words in err and "Traceback" not in err
    assert err.startswith("Error: The plan cannot be used:\n- ") and len(err) < 1_000


def test_the_cli_reads_no_more_of_a_file_than_a_plan_may_take(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr("console.cli.files.MAX_PLAN_BYTES", 1_000)
    path = tmp_path / "plan.json"
    path.write_text(plan_text(entries(100)))
    code = cli.main(["validate", "--state-file", str(path), "--reassignment-json-file", str(path)])
    err = capsys.readouterr().err
    assert code == 2 and "takes more than the 1.0 KB a plan may take" in err


def test_each_repeated_partition_names_its_first_entry():
    text = plan_text([{"topic": "t", "partition": p, "replicas": [1]} for p in (0, 1, 0, 1, 0, 2)])
    assert refused(text).problems == [
        "entry 2 (t-0): the same partition is already in entry 0",
        "entry 3 (t-1): the same partition is already in entry 1",
        "entry 4 (t-0): the same partition is already in entry 0",
    ]


def test_no_more_entries_than_the_cluster_has_partitions():
    text = plan_text(entries(5))
    assert len(parse_plan(text, partitions=5)) == 5
    e = refused(text, partitions=4)
    assert "5 entries, more than the 4 partitions of the cluster" in e.message


@pytest.mark.parametrize(
    "parts, words",
    [
        (entries(5), "5 entries, more than the 2 partitions of the cluster"),
        (
            [{"topic": "t", "partition": 0, "replicas": [0, 1, 2, 3]}],
            "4 replicas, more than the 3 brokers of the cluster",
        ),
    ],
)
def test_the_cli_holds_a_plan_to_the_cluster_once_it_is_read(parts, words, small_state_file, tmp_path, capsys):
    path = tmp_path / "plan.json"
    path.write_text(plan_text(parts))
    code = cli.main(["validate", "--state-file", str(small_state_file), "--reassignment-json-file", str(path)])
    err = capsys.readouterr().err
    assert code == 2 and words in err
