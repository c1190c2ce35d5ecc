"""Library errors become the console's own errors at the adapter boundary, by type and Kafka's
error code; anything else (a bug of ours) is raised as itself and never sent again (pure: no cluster)."""

from __future__ import annotations

from typing import Any

import pytest
from confluent_kafka import KafkaError, KafkaException
from kafka import errors as kerr
from kazoo import exceptions as ke
from kazoo.handlers.threading import KazooTimeoutError

from console.access.settings import ConnectionSettings
from console.adapters import zookeeper
from console.adapters.kafka import KafkaGateway, base, writes
from console.adapters.kafka.translate import retriable, translate
from console.core.errors import (
    AnswerLost,
    AuthorizationFailed,
    ClusterUnavailable,
    ConfigError,
    ConsoleError,
    PartiallyApplied,
    ReassignmentBusy,
    RequestRefused,
    UnsupportedByCluster,
    ZooKeeperUnavailable,
)


def confluent(code: int) -> KafkaException:
    return KafkaException(KafkaError(code))


@pytest.mark.parametrize(
    "exc, kind",
    [
        (kerr.ClusterAuthorizationFailedError(), AuthorizationFailed),
        (kerr.TopicAuthorizationFailedError(), AuthorizationFailed),
        (kerr.UnsupportedVersionError(), UnsupportedByCluster),
        (kerr.IncompatibleBrokerVersion("ListPartitionReassignments"), UnsupportedByCluster),
        (kerr.KafkaTimeoutError(), ClusterUnavailable),
        (kerr.BrokerNotAvailableError(), ClusterUnavailable),
        (kerr.UnrecognizedBrokerVersion(), UnsupportedByCluster),
        (KafkaException(KafkaError(KafkaError.CLUSTER_AUTHORIZATION_FAILED)), AuthorizationFailed),
        (KafkaException(KafkaError(KafkaError.UNSUPPORTED_VERSION)), UnsupportedByCluster),
        (KafkaException(KafkaError(KafkaError._TRANSPORT)), ClusterUnavailable),
        (OSError("connection refused"), ClusterUnavailable),
    ],
)
def test_translate_names_the_cause_and_the_fix(exc, kind):
    err = translate(exc, "ListPartitionReassignments")
    assert type(err) is kind
    assert "ListPartitionReassignments" in err.message and err.hint


def test_console_errors_pass_through():
    own = ClusterUnavailable("x", "y")
    assert translate(own, "anything") is own
    assert isinstance(own, ConsoleError)


# -- every mapped type and code ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "exc, kind, again",
    [
        # confluent-kafka: a KafkaError's code, Kafka's or librdkafka's own
        (confluent(KafkaError._TIMED_OUT), ClusterUnavailable, True),
        (confluent(KafkaError._TRANSPORT), ClusterUnavailable, True),
        (confluent(KafkaError._ALL_BROKERS_DOWN), ClusterUnavailable, True),
        (confluent(KafkaError._DESTROY_BROKER), ClusterUnavailable, True),  # a dropped broker handle
        (confluent(KafkaError._RESOLVE), ClusterUnavailable, False),
        (confluent(KafkaError.NOT_CONTROLLER), ClusterUnavailable, True),
        (confluent(KafkaError.REQUEST_TIMED_OUT), ClusterUnavailable, True),
        (confluent(KafkaError.BROKER_NOT_AVAILABLE), ClusterUnavailable, False),
        (confluent(KafkaError.CLUSTER_AUTHORIZATION_FAILED), AuthorizationFailed, False),
        (confluent(KafkaError.TOPIC_AUTHORIZATION_FAILED), AuthorizationFailed, False),
        (confluent(KafkaError.SASL_AUTHENTICATION_FAILED), AuthorizationFailed, False),
        (confluent(KafkaError._AUTHENTICATION), AuthorizationFailed, False),
        (confluent(KafkaError.UNSUPPORTED_VERSION), UnsupportedByCluster, False),
        (confluent(KafkaError._UNSUPPORTED_FEATURE), UnsupportedByCluster, False),
        (confluent(KafkaError.REASSIGNMENT_IN_PROGRESS), ReassignmentBusy, False),
        (confluent(KafkaError.NO_REASSIGNMENT_IN_PROGRESS), RequestRefused, False),
        (confluent(KafkaError.UNKNOWN_TOPIC_OR_PART), RequestRefused, True),
        (confluent(KafkaError.INVALID_REPLICA_ASSIGNMENT), RequestRefused, False),
        (confluent(KafkaError.POLICY_VIOLATION), RequestRefused, False),
        (confluent(KafkaError.INVALID_CONFIG), RequestRefused, False),  # not named: Kafka's answer, not retriable
        (confluent(KafkaError.LEADER_NOT_AVAILABLE), ClusterUnavailable, True),  # not named: retriable
        (KafkaException(KafkaError(KafkaError.INVALID_CONFIG, retriable=True)), ClusterUnavailable, True),
        # kafka-python: its error classes (``errno``, ``retriable``)
        (kerr.NotControllerError(), ClusterUnavailable, True),
        (kerr.RequestTimedOutError(), ClusterUnavailable, True),
        (kerr.KafkaTimeoutError("Unable to bootstrap"), ClusterUnavailable, True),
        (kerr.KafkaConnectionError(), ClusterUnavailable, True),
        (kerr.NodeNotReadyError("controller"), ClusterUnavailable, True),
        (kerr.UnknownBrokerIdError(2), ClusterUnavailable, True),
        (kerr.BrokerNotAvailableError(), ClusterUnavailable, False),
        (kerr.ClusterAuthorizationFailedError(), AuthorizationFailed, False),
        (kerr.TopicAuthorizationFailedError(), AuthorizationFailed, False),
        (kerr.SaslAuthenticationFailedError(), AuthorizationFailed, False),
        (kerr.UnsupportedVersionError(), UnsupportedByCluster, False),
        (kerr.UnrecognizedBrokerVersion(), UnsupportedByCluster, False),
        (kerr.ReassignmentInProgressError(), ReassignmentBusy, False),
        (kerr.NoReassignmentInProgressError(), RequestRefused, False),
        (kerr.InvalidReplicationAssignmentError(), RequestRefused, False),
        (kerr.UnknownTopicOrPartitionError(), RequestRefused, True),
        (kerr.PolicyViolationError(), RequestRefused, False),
        (kerr.UnknownError(), RequestRefused, False),
        (kerr.KafkaConfigurationError("Unrecognized configs: {'x'}"), ConfigError, False),
        # the network under them
        (TimeoutError(), ClusterUnavailable, True),
        (ConnectionRefusedError(), ClusterUnavailable, True),
    ],
)
def test_each_library_error_becomes_its_console_error(exc: BaseException, kind: type, again: bool) -> None:
    err = translate(exc, "AlterPartitionReassignments")
    assert type(err) is kind
    assert "AlterPartitionReassignments" in err.message and err.hint
    assert retriable(exc) is again


def test_messages_say_what_kafka_answered() -> None:
    assert translate(confluent(KafkaError._TIMED_OUT), "the Metadata request").message.startswith(
        "Kafka did not answer the Metadata request: "
    )
    refused = translate(kerr.InvalidReplicationAssignmentError(), "AlterPartitionReassignments")
    assert refused.message.startswith("Kafka refused AlterPartitionReassignments: INVALID_REPLICATION_ASSIGNMENT: ")
    assert "broker" in refused.hint
    auth = translate(confluent(KafkaError.CLUSTER_AUTHORIZATION_FAILED), "DescribeConfigs")
    assert auth.message == "The cluster refused DescribeConfigs: not authorised (CLUSTER_AUTHORIZATION_FAILED)."
    assert "DESCRIBE" in auth.hint


@pytest.mark.parametrize(
    "exc",
    [
        TypeError("unsupported operand"),
        AttributeError("'NoneType' object has no attribute 'topic'"),
        KeyError("replicas"),
        ValueError("not a number"),
        RuntimeError("Failed to find active controller id!"),  # the words, raised by us: not kafka-python's
        confluent(KafkaError._INVALID_ARG),  # librdkafka says the console called it wrongly
        kerr.IllegalArgumentError("bad argument"),
    ],
)
def test_anything_else_is_raised_as_itself(exc: BaseException) -> None:
    with pytest.raises(type(exc)) as raised:
        translate(exc, "AlterPartitionReassignments")
    assert raised.value is exc
    assert not retriable(exc)


def test_kafka_pythons_not_controller_runtime_error_is_known_by_where_it_is_raised() -> None:
    """kafka-python answers NOT_CONTROLLER (after its one retry) with a RuntimeError from its
    controller routing: that one, and only that one, is the controller moving."""
    from kafka.admin.client import KafkaAdminClient

    admin: Any = object.__new__(KafkaAdminClient)
    admin._controller_id = 1

    class Manager:
        async def send(self, request: object, node_id: int | None = None) -> object:
            return "response"

    admin._manager = Manager()
    coro = admin._send_request_to_controller("request", get_errors_fn=lambda r: [kerr.NotControllerError])

    async def refresh(timeout_ms: int = 0) -> int:
        return 2

    admin._refresh_controller_id = refresh
    with pytest.raises(RuntimeError) as raised:
        coro.send(None)
    err = translate(raised.value, "AlterPartitionReassignments")
    assert type(err) is ClusterUnavailable and retriable(raised.value)


# -- the controller retry ------------------------------------------------------------------------------------
class Client:
    """kafka-python's admin client as the controller retry uses it (through the adapter's
    ``_alter_reassignments``): each call raises the next error given, then answers."""

    def __init__(self, calls: list[int], errors: list[BaseException]) -> None:
        self.calls, self.errors = calls, errors

    def alter(self, request: dict[Any, Any], allow_rf_change: bool) -> dict[Any, Any]:
        self.calls.append(1)
        if self.errors:
            raise self.errors.pop(0)
        return dict.fromkeys(request, (None, None))

    def close(self) -> None:
        pass


def gateway(monkeypatch: pytest.MonkeyPatch, errors: list[BaseException]) -> tuple[KafkaGateway, list[int]]:
    kafka = KafkaGateway(ConnectionSettings({"bootstrap.servers": "127.0.0.1:1"}, name="x", timeout_s=1.0))
    calls: list[int] = []
    monkeypatch.setattr(kafka.client, "kafka_python", lambda: Client(calls, errors))
    monkeypatch.setattr(
        writes,
        "_alter_reassignments",
        lambda client, reassignments, allow_rf_change=True: client.alter(reassignments, allow_rf_change),
    )
    monkeypatch.setattr(base.time, "sleep", lambda _s: None)
    return kafka, calls


@pytest.mark.parametrize(
    "bug", [TypeError("bad operand"), AttributeError("no attribute 'topic'"), KeyError("replicas")]
)
def test_a_bug_in_an_adapter_call_propagates_unchanged_and_is_not_sent_again(
    monkeypatch: pytest.MonkeyPatch, bug: BaseException
) -> None:
    kafka, calls = gateway(monkeypatch, [bug])
    with pytest.raises(type(bug)) as raised:
        kafka.alter_reassignments({("t", 0): (1, 2)})
    assert raised.value is bug and len(calls) == 1


def test_a_write_the_controller_did_not_take_is_sent_again_until_taken(monkeypatch: pytest.MonkeyPatch) -> None:
    kafka, calls = gateway(monkeypatch, [kerr.NotControllerError(), kerr.NodeNotReadyError()])
    out = kafka.alter_reassignments({("t", 0): (1, 2)})
    assert out[("t", 0)].accepted and len(calls) == 3


def test_a_write_whose_answer_timed_out_is_not_sent_again_blind(monkeypatch: pytest.MonkeyPatch) -> None:
    kafka, calls = gateway(monkeypatch, [kerr.NotControllerError(), kerr.KafkaTimeoutError()])
    with pytest.raises(AnswerLost):
        kafka.alter_reassignments({("t", 0): (1, 2)})
    assert len(calls) == 2  # sent again after NOT_CONTROLLER, not after the lost answer


def test_every_request_that_changes_the_cluster_is_counted_taken_or_not(monkeypatch: pytest.MonkeyPatch) -> None:
    """``writes`` tells the reader its shared snapshot is out of date: a request that failed may
    have been applied in part, so it counts as well; reads do not count."""
    errors: list[BaseException] = []
    kafka, _ = gateway(monkeypatch, errors)
    assert kafka.writes == 0
    kafka.alter_reassignments({("t", 0): (1, 2)})
    assert kafka.writes == 1
    errors += [kerr.NotControllerError() for _ in range(5)]  # every attempt refused
    with pytest.raises(ClusterUnavailable):
        kafka.alter_reassignments({("t", 0): (1, 2)})
    assert kafka.writes == 2
    kafka.alter_replica_log_dirs({})
    assert kafka.writes == 3
    written = {
        name
        for name in dir(KafkaGateway)
        if getattr(getattr(KafkaGateway, name), "__wrapped__", None) is not None and not name.startswith("_")
    }
    assert written == {
        "alter_reassignments",
        "elect_leaders",
        "alter_configs",
        "alter_cluster_default",
        "alter_replica_log_dirs",
        "unregister_broker",
    }


def test_retriable_errors_stop_after_the_attempts(monkeypatch: pytest.MonkeyPatch) -> None:
    kafka, calls = gateway(monkeypatch, [kerr.NotControllerError() for _ in range(9)])
    with pytest.raises(ClusterUnavailable, match="did not take AlterPartitionReassignments after 3 attempts"):
        kafka.moves.alter_reassignments({("t", 0): (1, 2)}, attempts=3)
    assert len(calls) == 3


@pytest.mark.parametrize(
    "exc, kind",
    [
        (kerr.ClusterAuthorizationFailedError(), AuthorizationFailed),
        (kerr.UnsupportedVersionError(), UnsupportedByCluster),
        (kerr.BrokerNotAvailableError(), ClusterUnavailable),
        (kerr.InvalidReplicationAssignmentError(), RequestRefused),
        (OSError("Name or service not known"), ClusterUnavailable),
    ],
)
def test_errors_kafka_does_not_call_retriable_are_not_sent_again(
    monkeypatch: pytest.MonkeyPatch, exc: BaseException, kind: type
) -> None:
    kafka, calls = gateway(monkeypatch, [exc])
    with pytest.raises(kind):
        kafka.alter_reassignments({("t", 0): (1, 2)})
    assert len(calls) == 1


def test_a_later_batch_that_fails_reports_what_was_applied(monkeypatch: pytest.MonkeyPatch) -> None:
    kafka, calls = gateway(monkeypatch, [])
    first = Client(calls, [])
    second = Client(calls, [kerr.ClusterAuthorizationFailedError()])
    clients = iter([first, second])
    monkeypatch.setattr(kafka.client, "kafka_python", lambda: next(clients))
    with pytest.raises(PartiallyApplied) as raised:
        kafka.moves.alter_reassignments({("t", 0): (1, 2), ("t", 1): (2, 3)}, batch=1)
    assert isinstance(raised.value.cause, AuthorizationFailed) and list(raised.value.outcomes) == [("t", 0)]


def test_a_bug_in_a_read_is_not_a_finding(monkeypatch: pytest.MonkeyPatch) -> None:
    """``read()`` turns the cluster's trouble into findings; our own bug surfaces as itself."""
    kafka = KafkaGateway(ConnectionSettings({"bootstrap.servers": "127.0.0.1:1"}, name="x", timeout_s=1.0))

    def broken() -> Any:
        raise AttributeError("'NoneType' object has no attribute 'nodes'")

    monkeypatch.setattr(kafka.reads, "read_metadata", broken)
    with pytest.raises(AttributeError):
        kafka.read()

    def down() -> Any:
        raise translate(confluent(KafkaError._TRANSPORT), "the Metadata request")

    monkeypatch.setattr(kafka.reads, "read_metadata", down)
    assert kafka.read().problems[0].code == "kafka-unavailable"


class _Future:
    def __init__(self, answer: Any) -> None:
        self.answer = answer

    def result(self, timeout: float | None = None) -> Any:
        if isinstance(self.answer, BaseException):
            raise self.answer
        return self.answer


class _Admin:
    """confluent-kafka's AdminClient as far as the Metadata read uses it."""

    def __init__(self, described: Any, metadata: Any = None) -> None:
        self.described, self.metadata = described, metadata

    def describe_cluster(self, request_timeout: float) -> _Future:
        return _Future(self.described)

    def list_topics(self, timeout: float) -> Any:
        if isinstance(self.metadata, BaseException):
            raise self.metadata
        return self.metadata


def test_describe_cluster_waiting_on_a_stopped_controller_is_asked_again_with_fresh_metadata(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from types import SimpleNamespace

    kafka = KafkaGateway(ConnectionSettings({"bootstrap.servers": "127.0.0.1:1"}, name="x", timeout_s=1.0))
    md = SimpleNamespace(topics={}, controller_id=1)
    node = SimpleNamespace(id=1, host="h", port=9092, rack="r1")
    described = SimpleNamespace(nodes=[node], controller=node, cluster_id="c")
    waited = confluent(KafkaError._TIMED_OUT)  # "Failed while waiting for controller: Local: Timed out"
    made = iter([_Admin(waited, md), _Admin(waited, md), _Admin(described, md)])
    monkeypatch.setattr(kafka.client, "confluent", lambda: next(made))
    assert kafka.reads.read_metadata()[:2] == ("c", 1)
    # three times waiting: the cluster did not answer, said so
    made = iter([_Admin(waited, md)] * 3)
    with pytest.raises(ClusterUnavailable):
        kafka.reads.read_metadata()
    # brokers that answer no Metadata at all: said at once, not asked again
    made = iter([_Admin(described, confluent(KafkaError._TRANSPORT))])
    with pytest.raises(ClusterUnavailable):
        kafka.reads.read_metadata()


# -- ZooKeeper (kazoo) ---------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "exc, kind",
    [
        (KazooTimeoutError(), ZooKeeperUnavailable),
        (ke.ConnectionLoss(), ZooKeeperUnavailable),
        (ke.SessionExpiredError(), ZooKeeperUnavailable),
        (ke.ConnectionClosedError(), ZooKeeperUnavailable),
        (ke.NoAuthError(), AuthorizationFailed),
        (ke.AuthFailedError(), AuthorizationFailed),
        (ke.NoNodeError(), ZooKeeperUnavailable),  # where a missing node is normal, the reader catches it first
        (ke.BadArgumentsError(), ZooKeeperUnavailable),
        (ConnectionRefusedError(), ZooKeeperUnavailable),
    ],
)
def test_kazoo_errors_become_console_errors(exc: BaseException, kind: type) -> None:
    err = zookeeper.translate(exc, "a read")
    assert type(err) is kind and "a read" in err.message and err.hint


@pytest.mark.parametrize("bug", [TypeError("x"), AttributeError("x"), KeyError("x")])
def test_a_bug_in_the_zookeeper_reader_propagates(monkeypatch: pytest.MonkeyPatch, bug: BaseException) -> None:
    with pytest.raises(type(bug)):
        zookeeper.translate(bug, "a read")
    reader = zookeeper.ZkReader("127.0.0.1:1")

    def broken() -> Any:
        raise bug

    monkeypatch.setattr(reader, "_read", broken)
    with pytest.raises(type(bug)):
        reader.read()

    def lost() -> Any:
        raise ke.ConnectionLoss()

    monkeypatch.setattr(reader, "_read", lost)
    assert reader.read().problems[0].code == "zookeeper-unavailable"
