"""The replication-factor guard (KIP-860): which entries keep their RF (one function), the requests
the write path sends (split by RF, guarded where the entry keeps it), the adapter's request on
kafka-python's own version negotiation (the flag on the wire only where the broker has v1), a
refusal reported per partition in an operator's words, and the capability Overview shows."""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace
from typing import Any

import pytest

from console.access.auth import Identity
from console.adapters import kafka as adapter
from console.core.cluster_info import capabilities
from console.core.errors import ClusterUnavailable, PartiallyApplied
from console.core.model import ApiRange, ClusterInfo, SourceStatus
from console.moves.rf_guard import held_rf, refusal_text, split_by_rf
from console.plans.plan import Plan, PlanEntry
from console.runs.executor import Executor
from console.runs.reassign import send_reassignments
from console.services import runs as run_service
from console.storage.store import Store
from tests.fakes.cluster import FakeCluster
from tests.unit.builders import ids, snapshot

pytestmark = pytest.mark.usefixtures("no_sleep")


# -- which entries keep their RF -----------------------------------------------------------------------
def test_an_entry_keeps_the_rf_when_its_replica_count_is_the_partitions() -> None:
    state = snapshot({("t", 0): [0, 1, 2], ("t", 1): [0, 1, 2], ("t", 2): [0, 1]})
    targets = {("t", 0): ids(1, 2, 3), ("t", 1): ids(0, 1), ("t", 2): None, ("gone", 0): ids(1, 2)}
    guarded, unguarded = split_by_rf(targets, state.partition_index)
    assert guarded == {("t", 0): ids(1, 2, 3), ("gone", 0): ids(1, 2)}  # not in the snapshot: guarded
    assert unguarded == {("t", 1): ids(0, 1), ("t", 2): None}  # an RF change, a cancel


def test_in_flight_the_rf_is_the_one_the_reassignment_ends_with_as_the_controller_counts_it() -> None:
    """(0,1,2) going to (0,1): R = (0,1,2), RR = (2). Kafka's controller counts R − RR = 2, not
    the original 3: a rollback to (0,1,2) is an RF change, another 2-replica target is not."""
    state = snapshot({("t", 0): [0, 1, 2]}, lpr={("t", 0): ([0, 1, 2], [], [2])})
    assert held_rf(state.partition("t", 0)) == 2
    guarded, unguarded = split_by_rf({("t", 0): ids(0, 3)}, state.partition_index)
    assert guarded == {("t", 0): ids(0, 3)} and not unguarded
    guarded, unguarded = split_by_rf({("t", 0): ids(0, 1, 2)}, state.partition_index)
    assert unguarded == {("t", 0): ids(0, 1, 2)} and not guarded


def test_a_refusal_says_the_change_what_the_console_read_and_what_to_do() -> None:
    text = refusal_text("INVALID_REPLICATION_FACTOR (38): The replication factor is changed from 3 to 2", 2, ids(1, 2))
    assert text.startswith("would change the replication factor from 3 to 2; the console sends RF changes only as RF")
    assert "read this partition's replication factor as 2" in text and "check the plan" in text
    assert text.endswith("Kafka: INVALID_REPLICATION_FACTOR (38): The replication factor is changed from 3 to 2")
    assert refusal_text(None, None, ids(1, 2)).startswith("would change the replication factor to 2;")


# -- the requests the write path sends --------------------------------------------------------------------
def world() -> FakeCluster:
    return FakeCluster.of(4, {"t": [(0, 1, 2), (0, 1, 2), (1, 2, 3)]})


def requests(fake: FakeCluster) -> list[tuple[dict[Any, Any], object]]:
    return [(c.args[0], c.options["allow_rf_change"]) for c in fake.calls_to("alter_reassignments")]


def test_moves_that_keep_the_rf_go_guarded_rf_changes_in_their_own_request() -> None:
    fake = world()
    targets = {("t", 0): ids(1, 2, 3), ("t", 1): ids(0, 1), ("t", 2): ids(0, 2, 3)}
    out = send_reassignments(fake, targets, fake.snapshot())
    assert requests(fake) == [
        ({("t", 0): ids(1, 2, 3), ("t", 2): ids(0, 2, 3)}, False),
        ({("t", 1): ids(0, 1)}, True),
    ]
    assert list(out) == list(targets) and all(o.accepted for o in out.values())


def test_a_cancel_goes_as_before_unguarded() -> None:
    fake = world()
    fake.alter_reassignments({("t", 0): ids(1, 2, 3)})
    out = send_reassignments(fake, {("t", 0): None}, fake.snapshot())
    assert requests(fake)[-1] == ({("t", 0): None}, True) and out[("t", 0)].accepted


def test_a_partition_whose_rf_changed_since_the_read_is_refused_per_partition_in_words() -> None:
    fake = world()
    stale = fake.snapshot()
    fake.alter_reassignments({("t", 0): ids(0, 1)})  # another tool: 3 → 2 (removal only: done at once)
    out = send_reassignments(fake, {("t", 0): ids(1, 2, 3), ("t", 1): ids(1, 2, 3)}, stale)
    refused = out[("t", 0)]
    assert (refused.accepted, refused.code) == (False, "INVALID_REPLICATION_FACTOR")
    assert refused.message is not None and refused.message.startswith(
        "would change the replication factor from 2 to 3; the console sends RF changes only as RF changes"
    )
    assert "read this partition's replication factor as 3" in refused.message
    assert out[("t", 1)].accepted and fake.snapshot().partition("t", 0).replicas == ids(0, 1)


def test_on_a_cluster_without_the_guard_the_same_requests_go_and_nothing_is_refused_for_rf() -> None:
    fake = world()
    fake.rf_guard = False  # a Kafka 3.9: no AlterPartitionReassignments v1
    stale = fake.snapshot()
    fake.alter_reassignments({("t", 0): ids(0, 1)})
    out = send_reassignments(fake, {("t", 0): ids(1, 2, 3)}, stale)
    assert out[("t", 0)].accepted  # as before KIP-860: the RF changed back, unguarded


def test_a_later_request_that_fails_reports_what_the_first_applied() -> None:
    fake = world()
    state = fake.snapshot()
    fake.fail_call(len(fake.calls) + 1, ClusterUnavailable("The controller moved.", "Retry."))  # the second
    with pytest.raises(PartiallyApplied) as raised:
        send_reassignments(fake, {("t", 0): ids(1, 2, 3), ("t", 1): ids(0, 1)}, state)
    assert list(raised.value.outcomes) == [("t", 0)] and isinstance(raised.value.cause, ClusterUnavailable)


def test_a_run_records_a_guard_refusal_as_any_refusal_and_audits_the_rf_changes(store: Store) -> None:
    fake = world()
    plan = Plan.of([PlanEntry("t", 0, ids(1, 2, 3)), PlanEntry("t", 1, ids(0, 1))])
    run_id = run_service.start_run(
        store, fake, fake.snapshot(), run_service.RunRequest(Identity.cli("ann"), plan, "r"), users=None
    )
    alter = fake.alter_reassignments

    def racing(targets: Any, *, allow_rf_change: bool = True) -> Any:
        if ("t", 0) in targets and fake.parts[("t", 0)].replicas == list(ids(0, 1, 2)):
            alter({("t", 0): ids(0, 1)})  # another tool changes t-0's RF between the read and the send
        return alter(targets, allow_rf_change=allow_rf_change)

    fake.alter_reassignments = racing
    Executor(store, fake, "ann").tick(run_id)
    outcomes = {o.key: o for o in store.runs.outcomes(run_id, 1)}
    assert outcomes[("t", 1)].accepted
    assert outcomes[("t", 0)].code == "INVALID_REPLICATION_FACTOR"
    assert str(outcomes[("t", 0)].message).startswith("would change the replication factor from 2 to 3")
    intent, answer = store.audit.entries(action="submit-wave")
    assert json.loads(intent.request)["rf_changes"] == [["t", 1]]
    assert answer.outcome == "partly accepted"
    assert any(
        o["code"] == "INVALID_REPLICATION_FACTOR" and o["message"].startswith("would change")
        for o in json.loads(answer.response or "[]")
    )


# -- the adapter's request on kafka-python's version negotiation --------------------------------------------
class Broker:
    """kafka-python's manager as the admin client uses it, over one broker: a request gets the
    version kafka-python's connection negotiates (``BrokerVersionData.api_version``: the highest
    both have, IncompatibleBrokerVersion below a request's ``min_version``), is encoded and decoded
    as on the wire, and a controller answers it (refusing an RF change only when the request says so)."""

    def __init__(self, release: tuple[int, int], rf: int = 3) -> None:
        from kafka.protocol.broker_version_data import BrokerVersionData

        self.versions = BrokerVersionData(release)
        self.rf = rf
        self.wire: list[tuple[int, Any]] = []

    def run(self, coro: Any, *args: Any) -> Any:
        return asyncio.run(coro(*args))

    async def send(self, request: Any, node_id: int | None = None) -> Any:
        from kafka.protocol.admin import AlterPartitionReassignmentsRequest, AlterPartitionReassignmentsResponse

        if request.API_VERSION is None:
            request.API_VERSION = self.versions.api_version(request)
        version = request.API_VERSION
        seen = AlterPartitionReassignmentsRequest.decode(bytes(request.encode()), version=version)
        self.wire.append((version, seen))
        allow = version < 1 or seen.allow_replication_factor_change
        Topic = AlterPartitionReassignmentsResponse.ReassignableTopicResponse
        Part = Topic.ReassignablePartitionResponse
        return AlterPartitionReassignmentsResponse(
            version=version,
            throttle_time_ms=0,
            allow_replication_factor_change=allow,
            error_code=0,
            error_message=None,
            responses=[
                Topic(
                    name=t.name,
                    partitions=[
                        Part(partition_index=p.partition_index, error_code=0, error_message=None)
                        if allow or p.replicas is None or len(p.replicas) == self.rf
                        else Part(
                            partition_index=p.partition_index,
                            error_code=38,
                            error_message=f"The replication factor is changed from {self.rf} to {len(p.replicas)}",
                        )
                        for p in t.partitions
                    ],
                )
                for t in seen.topics
            ],
        )


def admin_on(broker: Broker) -> Any:
    from kafka.admin import KafkaAdminClient

    client: Any = object.__new__(KafkaAdminClient)
    client.config = {"request_timeout_ms": 5_000}
    client._controller_id = 1
    client._manager = broker
    return client


def gateway_on(monkeypatch: pytest.MonkeyPatch, broker: Broker) -> adapter.KafkaGateway:
    from console.access.settings import ConnectionSettings

    kafka = adapter.KafkaGateway(ConnectionSettings({"bootstrap.servers": "127.0.0.1:1"}, name="x"))
    monkeypatch.setattr(kafka.client, "kafka_python", lambda: admin_on(broker))
    return kafka


def test_a_guarded_request_carries_the_flag_where_the_broker_has_v1(monkeypatch: pytest.MonkeyPatch) -> None:
    broker = Broker((4, 1))
    kafka = gateway_on(monkeypatch, broker)
    out = kafka.alter_reassignments({("t", 0): ids(1, 2, 3), ("t", 1): ids(1, 2)}, allow_rf_change=False)
    [(version, seen)] = broker.wire
    assert version == 1 and seen.allow_replication_factor_change is False
    assert out[("t", 0)].accepted
    assert (out[("t", 1)].accepted, out[("t", 1)].code, out[("t", 1)].message) == (
        False,
        "INVALID_REPLICATION_FACTOR",
        "INVALID_REPLICATION_FACTOR (38): The replication factor is changed from 3 to 2",  # the controller's words
    )
    kafka.alter_reassignments({("t", 1): ids(1, 2)})  # an RF change: allowed, the default
    assert broker.wire[-1][0] == 1 and broker.wire[-1][1].allow_replication_factor_change is True


def test_without_v1_a_guarded_request_goes_as_before_and_the_flag_never_silently_drops(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """kafka-python would encode the flag away on v0 without a word: the console asks for v1, the
    client refuses it before sending, and the request goes as v0, unguarded, as before KIP-860."""
    broker = Broker((3, 9))
    kafka = gateway_on(monkeypatch, broker)
    out = kafka.alter_reassignments({("t", 1): ids(1, 2)}, allow_rf_change=False)
    assert [v for v, _ in broker.wire] == [0] and out[("t", 1)].accepted


# -- what Overview says ------------------------------------------------------------------------------------
def test_the_capability_follows_the_brokers_api_versions() -> None:
    info = ClusterInfo(read_at=1.0, apis=(ApiRange(45, 0, 1),), versions_status=SourceStatus.OK)
    guard = {c.name: c for c in capabilities(info)}["Replication-factor guard"]
    assert guard.on and "v1 (KIP-860)" in guard.why
    old = {c.name: c for c in capabilities(replace(info, apis=(ApiRange(45, 0, 0),)))}["Replication-factor guard"]
    assert not old.on and "only up to v0" in old.why and "Kafka 4.1" in old.why
    none = {c.name: c for c in capabilities(replace(info, apis=()))}["Replication-factor guard"]
    assert not none.on and "not every broker" in none.why
    unread = {c.name: c for c in capabilities(ClusterInfo())}["Replication-factor guard"]
    assert not unread.on and "not read" in unread.why
