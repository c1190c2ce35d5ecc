"""Another mover on the cluster: reassignments this console did not start are named (with what is
left), a submit is refused while any are in flight unless allowed (audited), and balancers are
recognised from what the cluster shows."""

from __future__ import annotations

import json

import pytest

from console.access.auth import Identity
from console.core.errors import NotPermitted
from console.core.model import BrokerId
from console.moves.balancers import Certainty, recognise
from console.moves.others import (
    FirstSeen,
    OtherMove,
    bytes_left_total,
    detail_rows,
    headline,
    moves_text,
    other_moves,
    since_text,
)
from console.plans.plan import Plan, PlanEntry
from console.runs.executor import Executor
from console.services import runs as run_service
from console.services.guard import REFUSED
from console.storage.store import Store
from tests.fakes.cluster import FakeCluster

ANN = Identity.cli("ann")


def cluster() -> FakeCluster:
    return FakeCluster.of(4, {"t": [(0, 1), (1, 2), (2, 3), (3, 0)], "u": [(0, 1)]}, size=10_000, copy_rate=1_000)


def someone_else_moves(f: FakeCluster) -> None:
    """Another tool (not the console) sends a reassignment: t-0 onto 2 and 3."""
    f.alter_reassignments({("t", 0): (BrokerId(2), BrokerId(3))})
    f.advance(2)  # 2 s at 1000 B/s: 2000 of 10000 bytes copied to each adding replica


# -- the pure part ---------------------------------------------------------------------------------------------
def test_the_headline_is_one_line_by_topic_whatever_the_number() -> None:
    """Two thousand partitions of forty topics: one line, no partition named, the topics counted."""
    moves = [
        OtherMove(f"t{i % 40:02}", i, (BrokerId(0),), (BrokerId(1),), (BrokerId(0),), 1_000, 1_000.0 + i)
        for i in range(2_000)
    ]
    text = headline(moves)
    assert text.startswith("2,000 partitions (t00 50, t01 50, t02 50 and 37 more topics) this console did not start")
    assert "2.0 MB left to copy, first seen " in text and "t00-0" not in text
    assert len(detail_rows(moves)) == 2_000 and detail_rows(moves[:1]) == [
        {"partition": "t00-0", "replicas": "0", "adding": "1", "removing": "0", "left to copy": "1.0 KB"}
    ]


def test_moves_not_among_the_consoles_are_named_with_what_is_left() -> None:
    f = cluster()
    someone_else_moves(f)
    f.alter_reassignments({("u", 0): (BrokerId(2), BrokerId(3))})
    state = f.snapshot()
    others = other_moves(state, {("u", 0): 7})  # the console's run 7 moves u-0
    assert [m.name for m in others] == ["t-0"]
    (m,) = others
    assert m.adding == (2, 3) and m.removing == (0, 1)
    assert m.bytes_left == 2 * (10_000 - 2_000)
    assert m.seen_since is None
    text = moves_text(others)
    assert text.startswith(
        "1 partition in flight that this console did not start: t-0 (adding 2,3; removing 0,1; 16.0 KB left)"
    )
    assert text.endswith("; 16.0 KB left to copy.")
    assert since_text(others) == "Since when is not known: Kafka does not say when a reassignment started."


def test_first_seen_is_kept_across_snapshots_and_forgotten_when_the_move_ends() -> None:
    f = cluster()
    someone_else_moves(f)
    seen = FirstSeen()
    first = other_moves(f.snapshot(), {}, seen)
    f.advance(3)
    again = other_moves(f.snapshot(), {}, seen)
    assert first[0].seen_since is not None and again[0].seen_since == first[0].seen_since
    assert "First seen by this console at" in since_text(again) and "may be older" in since_text(again)
    f.advance(60)  # done
    assert other_moves(f.snapshot(), {}, seen) == []
    f.alter_reassignments({("t", 0): (BrokerId(0), BrokerId(1))})
    assert other_moves(f.snapshot(), {}, seen)[0].seen_since == f.clock  # a new move: a new time


def test_unknown_sizes_are_said_not_summed_as_zero() -> None:
    f = cluster()
    someone_else_moves(f)
    state = f.snapshot()
    unsized = [type(m)(m.topic, m.partition, m.replicas, m.adding, m.removing, None) for m in other_moves(state, {})]
    assert bytes_left_total(unsized) == (0, 1)
    assert "size not known" in moves_text(unsized) and "(1 partition without a size)" in moves_text(unsized)


def test_many_moves_are_counted_past_the_first_twenty() -> None:
    f = FakeCluster.of(4, {"t": [(0, 1)] * 25}, size=100)
    f.alter_reassignments({("t", i): (BrokerId(2), BrokerId(3)) for i in range(25)})
    text = moves_text(other_moves(f.snapshot(), {}))
    assert text.startswith("25 partitions in flight") and "and 5 more" in text and "t-19 (" in text


# -- the submit --------------------------------------------------------------------------------------------------
def test_a_submit_is_refused_while_another_mover_moves_and_allowed_audited_when_overridden(store: Store) -> None:
    f = cluster()
    someone_else_moves(f)
    plan = Plan.of([PlanEntry("t", 1, (BrokerId(3), BrokerId(2)))])
    with pytest.raises(NotPermitted, match=r"Another mover is reassigning on this cluster: 1 partition .*: t-0") as e:
        run_service.start_run(store, f, f.snapshot(), run_service.RunRequest(ANN, plan, "mine"), users=None)
    assert "--allow-other-moves" in e.value.hint
    refused = store.audit.entries()[-1]
    assert (refused.action, refused.outcome) == ("submit", REFUSED)
    assert json.loads(refused.request)["other_partitions"] == ["t-0"]
    assert store.runs.list() == []
    run_id = run_service.start_run(
        store,
        f,
        f.snapshot(),
        run_service.RunRequest(ANN, plan, "mine", run_service.RunSettings(allow_other_moves=True)),
        users=None,
    )
    entry = store.audit.entries()[-1]
    request = json.loads(entry.request)
    assert (entry.action, entry.outcome, request["run"]) == ("submit", "run recorded", run_id)
    assert request["allow_other_moves"] is True and request["other_moves"] == 1
    assert request["other_partitions"] == ["t-0"]


def test_the_consoles_own_runs_are_not_another_mover(store: Store) -> None:
    f = cluster()
    first = run_service.start_run(
        store,
        f,
        f.snapshot(),
        run_service.RunRequest(ANN, Plan.of([PlanEntry("t", 0, (BrokerId(2), BrokerId(3)))]), "one"),
        users=None,
    )
    Executor(store, f, "ann").tick(first)  # its wave is sent: t-0 in flight, the console's own
    while not store.runs.active_partitions(f.cluster_id):
        Executor(store, f, "ann").tick(first)
    assert [p.name for p in f.snapshot().in_flight] == ["t-0"]
    second = run_service.start_run(
        store,
        f,
        f.snapshot(),
        run_service.RunRequest(ANN, Plan.of([PlanEntry("t", 1, (BrokerId(3), BrokerId(2)))]), "two"),
        users=None,
    )
    assert "allow_other_moves" not in json.loads(store.audit.entries()[-1].request)
    assert second != first


def test_nothing_in_flight_records_no_override(store: Store) -> None:
    f = cluster()
    plan = Plan.of([PlanEntry("t", 1, (BrokerId(3), BrokerId(2)))])
    run_service.start_run(
        store,
        f,
        f.snapshot(),
        run_service.RunRequest(ANN, plan, "mine", run_service.RunSettings(allow_other_moves=True)),
        users=None,
    )
    assert "other_moves" not in json.loads(store.audit.entries()[-1].request)


# -- balancers ---------------------------------------------------------------------------------------------------
def test_cruise_control_is_a_guess_from_its_sample_topics() -> None:
    (sign,) = recognise(["orders", "__KafkaCruiseControlPartitionMetricSamples", "__CruiseControlMetrics"])
    assert sign.balancer == "Cruise Control" and sign.certainty is Certainty.GUESS
    assert sign.text == (
        "Cruise Control probably runs on this cluster (a guess from topic __CruiseControlMetrics, "
        "topic __KafkaCruiseControlPartitionMetricSamples: it may be left over)."
    )


def test_strimzis_cruise_control_topics_are_recognised() -> None:
    (sign,) = recognise(["strimzi.cruisecontrol.partitionmetricsamples", "strimzi.cruisecontrol.metrics"])
    assert sign.balancer == "Cruise Control (deployed by Strimzi)" and sign.certainty is Certainty.GUESS


def test_confluents_self_balancing_is_certain_from_its_config_and_off_when_disabled() -> None:
    (on,) = recognise(["_confluent_balancer_api_state"], {"confluent.balancer.enable": "true"})
    assert on.certainty is Certainty.CERTAIN
    assert on.text == (
        "Confluent's self-balancing is on (confluent.balancer.enable=true, topic _confluent_balancer_api_state)."
    )
    (off,) = recognise([], {"confluent.balancer.enable": "false"})
    assert off.certainty is Certainty.OFF and "configured but off" in off.text
    (guess,) = recognise(["_confluent_balancer_partition_samples"], None)
    assert (
        guess.certainty is Certainty.GUESS and "a guess from topic _confluent_balancer_partition_samples" in guess.text
    )


def test_a_plain_cluster_shows_no_balancer() -> None:
    assert recognise(["orders", "__consumer_offsets", "_schemas"], {}) == []
