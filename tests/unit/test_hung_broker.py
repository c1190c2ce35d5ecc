"""A cancel's reads and its request while one broker hangs (paused: its sockets open, nothing
answering; issue 42): each read goes to the next broker once its broker is silent for a moment and
takes the first answer; the silent broker is passed over until it answers; a new client does not
wait out the whole timeout on it as a bootstrap server; the cancel itself goes to a broker that
answers. kafka-python's connection manager is faked on an event loop of the test's own."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Callable, Coroutine
from types import SimpleNamespace
from typing import Any

import pytest
from kafka import errors as ke
from kafka.future import Future
from kafka.protocol.admin import (
    DescribeClusterResponse,
    DescribeConfigsResponse,
    ListPartitionReassignmentsResponse,
)
from kafka.protocol.metadata import MetadataResponse

from console.access.settings import ConnectionSettings
from console.adapters.kafka import KafkaGateway
from console.adapters.kafka.steer import Unanswering, bootstrapped, first_answer
from console.core.errors import ClusterUnavailable
from console.core.model import SourceStatus

pytestmark = pytest.mark.unit
HUNG = None
"""A broker's delay that never ends: its request times out."""
NOT_CONTROLLER = ke.NotControllerError.errno


class Manager:
    """kafka-python's connection manager over brokers each answering after its delay in seconds
    (``HUNG``: never; its request fails once its request timeout passed), on a loop that goes on
    between calls (a late answer still arrives)."""

    def __init__(self, delays: dict[int, float | None], answer: Callable[[Any, int], Any] | None = None) -> None:
        self.delays = delays
        self.answer = answer or (lambda request, node: SimpleNamespace(error_code=0, node=node))
        self.sent: list[int] = []
        self.loop = asyncio.new_event_loop()
        self.cluster = SimpleNamespace(
            brokers=lambda: [SimpleNamespace(node_id=b, host="h", port=9092 + b) for b in sorted(self.delays)]
        )

    def send(self, request: Any, node_id: int | None = None, request_timeout_ms: int | None = None) -> Future:
        assert node_id is not None, "the race names each broker"
        self.sent.append(node_id)
        future = Future()
        delay = self.delays[node_id]
        if delay is HUNG:
            self.loop.call_later((request_timeout_ms or 0) / 1000, future.failure, ke.KafkaTimeoutError("hung"))
        else:
            self.loop.call_later(delay, future.success, self.answer(request, node_id))
        return future

    async def wait_for(self, future: Future, timeout_ms: float) -> Any:
        deadline = self.loop.time() + timeout_ms / 1000
        while not future.is_done:
            if self.loop.time() >= deadline:
                raise ke.KafkaTimeoutError("waited")
            await asyncio.sleep(0.002)  # fixed wait: the fake loop's turn, as kafka-python's selector polls
        if future.exception is not None:
            raise future.exception
        return future.value

    def run(self, coro: Callable[[], Coroutine[Any, Any, Any]]) -> Any:
        return self.loop.run_until_complete(coro())

    def later(self, seconds: float) -> None:
        """The loop goes on for ``seconds`` (the answers due meanwhile arrive)."""
        # fixed wait: time passing on the fake loop is what is under test (a late answer arriving)
        self.loop.run_until_complete(asyncio.sleep(seconds))


def race(manager: Manager, unanswering: Unanswering, timeout_s: float = 5.0) -> tuple[tuple[int, Any], float]:
    t0 = time.monotonic()
    got = first_answer(SimpleNamespace(_manager=manager), object, unanswering, timeout_s, hedge_s=0.2)
    return got, time.monotonic() - t0


def test_a_hung_broker_holds_a_read_up_for_a_moment_and_is_passed_over_next_time() -> None:
    manager = Manager({0: 0.01, 1: HUNG, 2: 0.01})
    unanswering = Unanswering()
    unanswering.mark(0)  # asked last: broker 1 is asked first
    unanswering.mark(2)
    (node, _), took = race(manager, unanswering)
    assert node in (0, 2) and manager.sent[0] == 1 and took < 0.5
    # the one still silent is passed over, the one that answered no longer, the one not asked as it was
    assert unanswering.avoided() == {1, 2 - node}
    manager.sent.clear()
    (node, _), took = race(manager, unanswering)
    assert manager.sent == [node] and 1 not in manager.sent and took < 0.2


def test_a_broker_whose_address_did_not_answer_as_a_bootstrap_server_is_asked_last() -> None:
    manager = Manager({0: 0.01, 1: HUNG, 2: 0.01})
    unanswering = Unanswering()
    unanswering.mark("h:9093")  # broker 1's address (:func:`bootstrapped` marks by address)
    for _ in range(5):
        (node, _), took = race(manager, unanswering)
        assert node != 1 and took < 0.2
    assert 1 not in manager.sent


def test_a_slow_broker_passed_over_is_asked_again_once_its_late_answer_came() -> None:
    manager = Manager({0: 0.01, 1: 0.5})
    unanswering = Unanswering()
    unanswering.mark(0)
    (node, _), _ = race(manager, unanswering)
    assert node == 0 and unanswering.avoided() == {1}
    manager.later(0.6)
    assert unanswering.avoided() == frozenset()


def test_no_broker_answering_is_a_timeout_that_marks_them_all() -> None:
    manager = Manager({0: HUNG, 1: HUNG})
    unanswering = Unanswering()
    with pytest.raises(ke.KafkaTimeoutError):
        race(manager, unanswering, timeout_s=0.5)
    assert unanswering.avoided() == {0, 1} and sorted(manager.sent) == [0, 1]


def test_not_controller_is_no_answer_and_the_next_broker_is_asked_at_once() -> None:
    # a ZooKeeper cluster: only the controller (2) answers ListPartitionReassignments
    manager = Manager(
        {0: 0.01, 1: 0.01, 2: 0.01}, lambda r, node: SimpleNamespace(error_code=0 if node == 2 else NOT_CONTROLLER)
    )
    unanswering = Unanswering()
    unanswering.mark(2)
    (node, _), took = race(manager, unanswering)
    assert node == 2 and manager.sent[-1] == 2 and took < 0.2, "no hedge waited after a NOT_CONTROLLER"


def test_a_new_client_is_made_from_another_bootstrap_server_while_one_hangs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("console.adapters.kafka.steer.BOOTSTRAP_S", 0.1)
    tried: list[str] = []
    closed: list[str] = []

    class Made:
        def __init__(self, server: str) -> None:
            self.server = server

        def close(self) -> None:
            closed.append(self.server)

    def make(kwargs: dict[str, Any]) -> Made:
        (server,) = kwargs["bootstrap_servers"]
        tried.append(server)
        if server == "b:1":  # paused: kafka-python waits out its whole bootstrap timeout
            time.sleep(kwargs["bootstrap_timeout_ms"] / 1000)  # fixed wait: the library's own timeout, faked
            raise ke.KafkaTimeoutError("Unable to bootstrap")
        return Made(server)

    unanswering = Unanswering()
    unanswering.mark("a:1")  # asked after b:1
    unanswering.mark("c:1")
    t0 = time.monotonic()
    got = bootstrapped(make, {"bootstrap_servers": ["a:1", "b:1", "c:1"], "bootstrap_timeout_ms": 500}, unanswering)
    assert tried[0] == "b:1" and got.server in ("a:1", "c:1") and time.monotonic() - t0 < 0.4
    assert "b:1" in unanswering.avoided() and got.server not in unanswering.avoided()
    with pytest.raises(ke.KafkaTimeoutError):  # every server hung: the library's error, once the time is out
        bootstrapped(make, {"bootstrap_servers": ["b:1"], "bootstrap_timeout_ms": 100}, Unanswering())
    assert closed == []


# -- the gateway's lean read, as a cancel takes it -------------------------------------------------------
def _metadata(controller: int) -> Any:
    T = MetadataResponse.MetadataResponseTopic
    P = T.MetadataResponsePartition
    return MetadataResponse(
        throttle_time_ms=0,
        brokers=[
            MetadataResponse.MetadataResponseBroker(node_id=b, host="h", port=9092 + b, rack=None) for b in (0, 1, 2)
        ],
        cluster_id="c",
        controller_id=controller,
        topics=[
            T(
                error_code=0,
                name="t",
                topic_id=uuid.uuid4(),
                is_internal=False,
                partitions=[
                    P(
                        error_code=0,
                        partition_index=0,
                        leader_id=0,
                        leader_epoch=1,
                        replica_nodes=[0, 2],
                        isr_nodes=[0],
                        offline_replicas=[],
                    )
                ],
            )
        ],
        version=12,
    )


def _answers(request: Any, node: int) -> Any:
    """Each request the lean read sends, answered as a Kafka 4 cluster whose t-0 moves from 0 to 2."""
    name = type(request).__name__
    if name.startswith("MetadataRequest"):
        return _metadata(controller=1)
    if name.startswith("ListPartitionReassignmentsRequest"):
        L = ListPartitionReassignmentsResponse
        moving = L.OngoingTopicReassignment.OngoingPartitionReassignment(
            partition_index=0, replicas=[0, 2], adding_replicas=[2], removing_replicas=[]
        )
        return L(throttle_time_ms=0, error_code=0, topics=[L.OngoingTopicReassignment(name="t", partitions=[moving])])
    if name.startswith("DescribeConfigsRequest"):
        C = DescribeConfigsResponse.DescribeConfigsResult
        entry = C.DescribeConfigsResourceResult(
            name="min.insync.replicas",
            value="2",
            read_only=False,
            config_source=5,
            is_default=False,
            is_sensitive=False,
        )
        return DescribeConfigsResponse(
            throttle_time_ms=0,
            results=[C(error_code=0, error_message=None, resource_type=2, resource_name="t", configs=[entry])],
        )
    assert name.startswith("DescribeClusterRequest"), name
    D = DescribeClusterResponse
    return D(
        throttle_time_ms=0,
        error_code=0,
        error_message=None,
        endpoint_type=1,
        cluster_id="c",
        controller_id=1,
        brokers=[
            D.DescribeClusterBroker(broker_id=b, host="h", port=9092 + b, rack=None, is_fenced=False) for b in (0, 1, 2)
        ],
        authorized_operations=None,
    )


def gateway(manager: Manager, timeout_s: float = 5.0) -> KafkaGateway:
    kafka = KafkaGateway(ConnectionSettings({"bootstrap.servers": "127.0.0.1:1"}, name="x", timeout_s=timeout_s))
    kafka.client._kp = SimpleNamespace(_manager=manager, close=lambda: None, _controller_id=None)
    return kafka


def test_the_lean_read_answers_in_moments_while_a_broker_hangs(monkeypatch: pytest.MonkeyPatch) -> None:
    manager = Manager({0: 0.01, 1: HUNG, 2: 0.01}, _answers)
    kafka = gateway(manager)
    monkeypatch.setattr("console.adapters.kafka.steer.HEDGE_S", 0.2)
    t0 = time.monotonic()
    view = kafka.read(lean=True)
    assert time.monotonic() - t0 < 2.0
    assert (view.metadata_status, view.reassignments_status) == (SourceStatus.OK, SourceStatus.OK)
    assert view.cluster_id == "c" and view.controller == 1 and [b.id for b in view.brokers] == [0, 1, 2]
    assert view.partitions[("t", 0)].replicas == (0, 2) and view.partitions[("t", 0)].isr == (0,)
    assert view.reassignments is not None and view.reassignments[("t", 0)].adding == (2,)
    assert view.registered is not None and not any(b.fenced for b in view.registered)
    assert view.min_insync == {"t": 2}, "the moving topic's min ISR: what the cancel's projection compares with"


def test_the_cancel_goes_to_a_broker_that_answers_not_to_the_hung_one_metadata_names() -> None:
    manager = Manager({0: 0.01, 1: HUNG, 2: 0.01}, _answers)
    kafka = gateway(manager)
    client = kafka.client.kafka_python()
    client._controller_id = 1  # Metadata named the hung broker (in KRaft: any broker, at random)
    kafka.client.unanswering.mark(1)
    kafka.client.answered = 2
    kafka.client._route_to_controller(client)
    assert client._controller_id == 2
    kafka.client.answered = None
    kafka.client._route_to_controller(client)
    assert client._controller_id in (0, 2)
    client._controller_id = 0
    kafka.client._route_to_controller(client)
    assert client._controller_id == 0, "one not passed over stays"


def test_a_read_no_broker_answers_is_the_cluster_unavailable() -> None:
    kafka = gateway(Manager({0: HUNG, 1: HUNG}, _answers), timeout_s=0.3)
    with pytest.raises(ClusterUnavailable):
        kafka.list_reassignments()
