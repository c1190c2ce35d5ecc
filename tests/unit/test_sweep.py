"""Sweeping throttles nothing needs, with a cluster-wide default rate among them: the default is
shown as the cluster's (never as each broker's), kept unless asked for, and a sweep reports what
the brokers say afterwards. On the in-memory fake cluster."""

from __future__ import annotations

import json

import pytest

from console.access.auth import Identity
from console.core.errors import ClusterUnavailable
from console.core.limits import FOLLOWER_LIST, FOLLOWER_RATE, LEADER_LIST, LEADER_RATE
from console.core.model import DEFAULT_BROKER, BrokerId
from console.moves.throttles import Leftover, LeftoverKind, cluster_default_kept, leftover_throttles
from console.present.live import throttle_on, throttle_rows
from console.present.throttles import setting_text, throttle_table
from console.services import runs as run_service
from console.storage.store import Store
from tests.fakes.cluster import FakeCluster

pytestmark = pytest.mark.usefixtures("no_sleep")

ANN = Identity.cli("ann")


def fake_with_default(in_flight: bool = False) -> FakeCluster:
    """Brokers 0..3; t-0 on (0, 1); a cluster default on both rates, broker 2's own follower rate."""
    fake = FakeCluster.of(4, {"t": [(0, 1)]}, size=10_000, copy_rate=1)
    fake.cluster_default = {LEADER_RATE: "7000000", FOLLOWER_RATE: "7000000"}
    fake.broker_configs[BrokerId(2)] = {FOLLOWER_RATE: "5000000"}
    if in_flight:
        fake.alter_reassignments({("t", 0): (BrokerId(0), BrokerId(3))})
    return fake


def where(left: list[Leftover]) -> set[tuple[str, str]]:
    return {(lo.where, lo.key) for lo in left}


def test_the_cluster_default_is_shown_once_as_the_cluster_default() -> None:
    rows = throttle_rows(fake_with_default().snapshot())
    assert {(r["entity"], r["config"]) for r in rows} == {
        ("broker 2", FOLLOWER_RATE),
        ("cluster default (every broker)", LEADER_RATE),
        ("cluster default (every broker)", FOLLOWER_RATE),
    }


def test_the_throttle_in_force_says_when_it_is_the_cluster_default() -> None:
    state = fake_with_default(in_flight=True).snapshot()
    (p,) = state.in_flight
    brokers = state.throttles.broker_map()
    topics = {"t": {FOLLOWER_LIST: "*"}}
    assert throttle_on(brokers, topics, p, BrokerId(3), follower=True) == "7.0 MB/s (cluster default)"
    brokers["3"] = {FOLLOWER_RATE: "5000000"}
    assert throttle_on(brokers, topics, p, BrokerId(3), follower=True) == "5.0 MB/s"


def test_a_sweep_keeps_the_cluster_default_unless_asked() -> None:
    state = fake_with_default().snapshot()
    left = leftover_throttles(state)
    assert where(left) == {("broker 2", FOLLOWER_RATE)}
    assert where(cluster_default_kept(state, left)) == {
        ("cluster default", LEADER_RATE),
        ("cluster default", FOLLOWER_RATE),
    }
    with_default = leftover_throttles(state, include_cluster_default=True)
    assert where(with_default) == {
        ("broker 2", FOLLOWER_RATE),
        ("cluster default", LEADER_RATE),
        ("cluster default", FOLLOWER_RATE),
    }
    assert cluster_default_kept(state, with_default) == []


def test_a_default_rate_a_broker_in_flight_copies_at_is_never_left_over() -> None:
    """t-0 moves (0, 1) → (0, 3): brokers 0, 1, 3 copy at the default (none has its own rate)."""
    state = fake_with_default(in_flight=True).snapshot()
    left = leftover_throttles(state, include_cluster_default=True)
    assert where(left) == {("broker 2", FOLLOWER_RATE)}
    assert where(cluster_default_kept(state, left)) == {
        ("cluster default", LEADER_RATE),
        ("cluster default", FOLLOWER_RATE),
    }


def test_sweeping_without_the_default_removes_what_it_says_and_leaves_the_default(store: Store) -> None:
    fake = fake_with_default()
    report = run_service.sweep(store, fake, ANN, leftover_throttles(fake.snapshot()))
    assert where(list(report.removed)) == {("broker 2", FOLLOWER_RATE)}
    assert report.still_set == () and report.unconfirmed == ()
    assert fake.broker_configs[BrokerId(2)] == {} and fake.cluster_default == {
        LEADER_RATE: "7000000",
        FOLLOWER_RATE: "7000000",
    }
    assert not [c for c in fake.calls if c.method == "alter_cluster_default"]
    # swept once, nothing is left over: a second sweep finds nothing and removes nothing
    assert leftover_throttles(fake.snapshot()) == []
    assert run_service.sweep(store, fake, ANN, []).removed == ()


def test_the_cluster_default_is_removed_only_when_included_and_audited(store: Store) -> None:
    fake = fake_with_default()
    report = run_service.sweep(store, fake, ANN, leftover_throttles(fake.snapshot(), include_cluster_default=True))
    assert len(report.removed) == 3 and fake.cluster_default == {}
    (sent,) = [c for c in fake.calls if c.method == "alter_cluster_default"]
    assert sent.args == ({LEADER_RATE: None, FOLLOWER_RATE: None},)
    entries = store.audit.entries(action="throttle-sweep")
    assert [e.outcome for e in entries] == ["sending", "removed"]
    assert json.loads(entries[0].request)["cluster_default"] == [FOLLOWER_RATE, LEADER_RATE]


def test_a_setting_still_reported_after_the_sweep_is_said_to_be_still_set(store: Store) -> None:
    """A broker that does not apply the removal (here: the fake ignores it): the sweep says so,
    exits as partly done, and the audit records what is still set."""
    fake = fake_with_default()
    left = leftover_throttles(fake.snapshot())
    fake.alter_configs = lambda brokers, topics: None  # type: ignore[method-assign]
    report = run_service.sweep(store, fake, ANN, left, confirm_s=0)
    assert report.removed == () and where(list(report.still_set)) == {("broker 2", FOLLOWER_RATE)}
    last = store.audit.entries(action="throttle-sweep")[-1]
    assert last.outcome == "partly removed"
    assert json.loads(last.response or "{}") == {"still set": [f"broker 2: {FOLLOWER_RATE}"]}


def test_a_sweep_the_cluster_refuses_is_audited_as_failed_and_claims_nothing(store: Store) -> None:
    fake = fake_with_default()
    left = leftover_throttles(fake.snapshot())
    fake.stop_broker(2)
    with pytest.raises(ClusterUnavailable, match="broker 2"):
        run_service.sweep(store, fake, ANN, left)
    assert [e.outcome for e in store.audit.entries(action="throttle-sweep")] == ["sending", "failed"]


def test_a_leftover_names_where_it_is_set() -> None:
    assert Leftover(LeftoverKind.BROKER, "2", LEADER_RATE, "1").where == "broker 2"
    assert Leftover(LeftoverKind.TOPIC, "t", LEADER_RATE, "1").where == "topic t"
    assert Leftover(LeftoverKind.CLUSTER_DEFAULT, DEFAULT_BROKER, LEADER_RATE, "1").where == "cluster default"


def test_overview_lists_a_replica_list_with_a_space_after_each_comma_and_rates_human() -> None:
    fake = fake_with_default()
    fake.topic_configs["t"] = {FOLLOWER_LIST: "0:0,0:1, 0:2", LEADER_LIST: "*"}
    state = fake.snapshot()
    left = leftover_throttles(state)
    rows = {
        (r["entity"], r["config"]): r["value"] for r in throttle_table(state, left, cluster_default_kept(state, left))
    }
    assert rows[("topic t", FOLLOWER_LIST)] == "0:0, 0:1, 0:2"  # wraps on the page; Kafka reads it the same
    assert rows[("topic t", LEADER_LIST)] == "*"
    assert rows[("broker 2", FOLLOWER_RATE)] == "5.0 MB/s"
    assert setting_text(FOLLOWER_LIST, "1:2") == "1:2"
    assert setting_text(LEADER_RATE, "7000000") == "7.0 MB/s"
