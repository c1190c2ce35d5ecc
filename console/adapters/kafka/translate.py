"""Library errors as the console's own: confluent-kafka's and kafka-python's errors translated by type
and Kafka's error code (never by the words of a message) into :mod:`console.core.errors`."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from console.core.errors import (
    AuthorizationFailed,
    ClusterUnavailable,
    ConfigError,
    ConsoleError,
    ReassignmentBusy,
    RequestRefused,
    UnsupportedByCluster,
)

_UNAVAILABLE_HINT = "Check that the bootstrap servers are right and reachable, and that the brokers run."

_AUTH_HINT = (
    "Grant the console's principal DESCRIBE on CLUSTER and on the topics "
    "(ALTER on CLUSTER to change assignments), or pass credentials with --command-config."
)

_UNSUPPORTED_HINT = (
    "The cluster's brokers do not offer this request (ApiVersions: the console turns its "
    "features on from them). ListPartitionReassignments needs Kafka 2.4 or newer, DescribeLogDirs sizes "
    "1.1; with ZooKeeper given, the console falls back to the znodes; requests of KRaft clusters "
    "(UnregisterBroker, DescribeTopicPartitions) are not available in ZooKeeper mode."
)

_SETTINGS_HINT = "Fix the property named (librdkafka names) in the cluster's settings or command-config file."

_REFUSED_HINTS = {
    3: "A topic or partition named is not in the cluster (deleted meanwhile?): read the cluster again.",
    39: "A target names a broker the cluster does not have, or one broker twice: check the plan against the brokers.",
    85: "Nothing was in flight for it any more: the reassignment may have completed meanwhile.",
}

_REFUSED_HINT = "Nothing of this request was applied; Kafka's reason is above."


@dataclass(frozen=True)
class KafkaProblem:
    """A library error as Kafka names it, and what the console makes of it."""

    kind: type[ConsoleError]
    name: str
    """Kafka's name for it (``NOT_CONTROLLER``, librdkafka's ``_TIMED_OUT``), or the library's class name."""
    text: str
    retriable: bool
    """Kafka says asking again may succeed (the controller moved, a timeout, a connection lost)."""
    code: int | None = None
    """Kafka's error code (librdkafka's own are negative); None for an error of the client itself."""


@cache
def _kinds() -> dict[int, type[ConsoleError]]:
    """Error codes the console names (confluent-kafka's constants: Kafka's codes, and librdkafka's own,
    which are negative), and the console's error for each. Kafka's codes not here become
    :class:`ClusterUnavailable` when Kafka calls them retriable, else :class:`RequestRefused`."""
    from confluent_kafka import KafkaError as E

    named: dict[type[ConsoleError], tuple[int, ...]] = {
        AuthorizationFailed: (
            E.CLUSTER_AUTHORIZATION_FAILED,
            E.TOPIC_AUTHORIZATION_FAILED,
            E.GROUP_AUTHORIZATION_FAILED,
            E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
            E.DELEGATION_TOKEN_AUTHORIZATION_FAILED,
            E.SASL_AUTHENTICATION_FAILED,
            E._AUTHENTICATION,
        ),
        UnsupportedByCluster: (E.UNSUPPORTED_VERSION, E._UNSUPPORTED_FEATURE),
        ClusterUnavailable: (
            E.NOT_CONTROLLER,
            E.BROKER_NOT_AVAILABLE,
            E.REQUEST_TIMED_OUT,
            E.NETWORK_EXCEPTION,
            E._TIMED_OUT,
            E._TIMED_OUT_QUEUE,
            E._MSG_TIMED_OUT,
            E._TRANSPORT,
            E._ALL_BROKERS_DOWN,
            E._RESOLVE,
            E._SSL,
            E._DESTROY,
            E._DESTROY_BROKER,
            E._WAIT_COORD,
            E._NODE_UPDATE,
            E._UNKNOWN_BROKER,
            E._BAD_MSG,
            E._FAIL,
        ),
        RequestRefused: (
            E.UNKNOWN_TOPIC_OR_PART,
            E.INVALID_REPLICA_ASSIGNMENT,
            E.NO_REASSIGNMENT_IN_PROGRESS,
            E.POLICY_VIOLATION,
            E._UNKNOWN_TOPIC,
            E._UNKNOWN_PARTITION,
        ),
        ReassignmentBusy: (E.REASSIGNMENT_IN_PROGRESS,),
    }
    return {code: kind for kind, codes in named.items() for code in codes}


@cache
def _local_retriable() -> frozenset[int]:
    """librdkafka's own codes (negative) for a request that may succeed when sent again.
    ``_DESTROY_BROKER``: the request waited on a broker handle librdkafka dropped (a bootstrap
    address, or a broker the metadata no longer lists); sent again, it goes to one it knows."""
    from confluent_kafka import KafkaError as E

    return frozenset(
        (
            E._TIMED_OUT,
            E._TIMED_OUT_QUEUE,
            E._MSG_TIMED_OUT,
            E._TRANSPORT,
            E._ALL_BROKERS_DOWN,
            E._WAIT_COORD,
            E._DESTROY_BROKER,
        )
    )


def _kafka_retriable(code: int) -> bool:
    """Whether Kafka calls its error ``code`` retriable (kafka-python's table follows Kafka's own)."""
    from kafka import errors as ke

    return code in ke.kafka_errors and bool(ke.kafka_errors[code].retriable)


def _local(code: int) -> bool:
    """librdkafka's own error codes are -200 to -100; Kafka's are -1 (UNKNOWN_SERVER_ERROR) and up."""
    return code <= -100


def _by_code(code: int, retriable: bool) -> type[ConsoleError] | None:
    kind = _kinds().get(code)
    if kind is None and not _local(code):  # Kafka's answer, not named: asking again may help, or it will not
        kind = ClusterUnavailable if retriable else RequestRefused
    return kind  # None: librdkafka's own code not named (_INVALID_ARG, _STATE, ...): the console misused it


def _from_confluent(exc: BaseException) -> KafkaProblem | None:
    from confluent_kafka import KafkaError, KafkaException

    if not isinstance(exc, KafkaException) or not exc.args:
        return None
    err = exc.args[0]
    if isinstance(err, int):
        err = KafkaError(err)
    if not isinstance(err, KafkaError):
        return None
    code = err.code()
    retriable = bool(err.retriable()) or (code in _local_retriable() if _local(code) else _kafka_retriable(code))
    kind = _by_code(code, retriable)
    return None if kind is None else KafkaProblem(kind, str(err.name()), str(err.str()), retriable, code)


def _from_kafka_python(exc: BaseException) -> KafkaProblem | None:
    from kafka import errors as ke

    if isinstance(exc, RuntimeError) and _raised_in(exc, "kafka.admin.", "_send_request_to_controller"):
        # kafka-python answers NOT_CONTROLLER, after its one retry, with this RuntimeError
        return KafkaProblem(ClusterUnavailable, "NOT_CONTROLLER", str(exc), True, ke.NotControllerError.errno)
    if not isinstance(exc, ke.KafkaError):
        return None
    retriable = bool(exc.retriable)
    kind: type[ConsoleError] | None
    if isinstance(exc, ke.BrokerResponseError):  # Kafka's answer, with its code
        kind = _by_code(int(exc.errno), retriable)
        if kind is RequestRefused:  # Kafka's name and description say why
            return KafkaProblem(kind, str(exc.message), str(exc.description), retriable, exc.errno)
    elif isinstance(exc, ke.UnrecognizedBrokerVersion):
        kind = UnsupportedByCluster
    elif isinstance(exc, ke.KafkaConfigurationError):
        kind = ConfigError
    elif isinstance(exc, ke.UnknownBrokerIdError):
        # a node id its metadata no longer has: the controller the client held has gone (stale metadata)
        kind, retriable = ClusterUnavailable, True
    elif retriable:  # the client's own: a connection lost, a timeout, no node ready
        kind = ClusterUnavailable
    else:  # the client refused how it was called (IllegalArgumentError, ...): the console's bug
        return None
    if kind is None:
        return None
    return KafkaProblem(kind, type(exc).__name__, str(exc), retriable, getattr(exc, "errno", None))


def _raised_in(exc: BaseException, module: str, function: str) -> bool:
    """Whether ``exc`` was raised by ``function`` of a module under ``module`` (its innermost frame)."""
    tb = exc.__traceback__
    if tb is None:
        return False
    while tb.tb_next is not None:
        tb = tb.tb_next
    frame = tb.tb_frame
    return str(frame.f_globals.get("__name__", "")).startswith(module) and frame.f_code.co_name == function


def problem_of(exc: BaseException) -> KafkaProblem | None:
    """What a confluent-kafka or kafka-python error (or a network error under them) means; None
    for anything else, which is not the cluster's doing."""
    found = _from_confluent(exc) or _from_kafka_python(exc)
    if found is not None:
        return found
    if isinstance(exc, (TimeoutError, ConnectionError)):  # futures' result(timeout=...), a socket
        return KafkaProblem(ClusterUnavailable, type(exc).__name__, str(exc), True)
    if isinstance(exc, OSError):  # a host name that does not resolve, a network that is down
        return KafkaProblem(ClusterUnavailable, type(exc).__name__, str(exc), False)
    return None


def not_taken(exc: BaseException) -> bool:
    """Whether a request that failed with ``exc`` is known not to have been applied: the broker
    answered NOT_CONTROLLER (or kafka-python's RuntimeError for it), or no broker was ready to
    send it to. A timeout or a connection lost while waiting for the answer is not known either way."""
    from kafka import errors as ke

    if isinstance(exc, (ke.NodeNotReadyError, ke.IncompatibleBrokerVersion)):
        return True
    found = problem_of(exc)
    return found is not None and found.code in (ke.NotControllerError.errno, ke.BrokerNotAvailableError.errno)


def retriable(exc: BaseException) -> bool:
    """Whether Kafka calls ``exc`` retriable: the same request may succeed when sent again."""
    found = problem_of(exc)
    return found is not None and found.retriable


def translate(exc: BaseException, what: str) -> ConsoleError:
    """A confluent-kafka or kafka-python error as the console's own error, by its type and Kafka's
    error code (never by the words of its message).

    Anything else is not the cluster's doing: it is raised again as itself (a bug surfaces as one,
    and is never reported as a cluster that does not answer)."""
    if isinstance(exc, ConsoleError):
        return exc
    found = problem_of(exc)
    if found is None:
        raise exc
    if found.kind is AuthorizationFailed:
        return AuthorizationFailed(f"The cluster refused {what}: not authorised ({found.name}).", _AUTH_HINT)
    if found.kind is UnsupportedByCluster:
        return UnsupportedByCluster(f"The cluster does not support {what}.", _UNSUPPORTED_HINT)
    if found.kind is ConfigError:
        return ConfigError(f"The connection settings are not usable for {what}: {found.text}.", _SETTINGS_HINT)
    if found.kind is ReassignmentBusy:
        return ReassignmentBusy(
            f"Kafka refused {what}: a reassignment is in progress ({found.name}).",
            "Wait until the reassignments in flight complete (or cancel them), then send again.",
        )
    if found.kind is RequestRefused:
        return RequestRefused(
            f"Kafka refused {what}: {found.name}: {found.text.rstrip('.')}.",
            _REFUSED_HINTS.get(found.code or 0, _REFUSED_HINT),
        )
    return ClusterUnavailable(f"Kafka did not answer {what}: {found.text or found.name}.", _UNAVAILABLE_HINT)
