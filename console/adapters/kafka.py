"""The Admin API gateway: confluent-kafka for Metadata and configs, kafka-python only for what
librdkafka lacks (ListPartitionReassignments, AlterPartitionReassignments, DescribeLogDirs).

``KafkaGateway.read()`` never raises for a cluster that misbehaves: each part of the answer has a
status, and what went wrong becomes a ``Finding`` with a hint. Only bad settings raise
(``ConfigError``).
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import cache, partial, wraps
from typing import Any, Concatenate, ParamSpec, TypeVar

from console.access.settings import ConnectionSettings
from console.adapters.records import (
    ApiView,
    BrokerInfo,
    BrokerLogDirs,
    Configs,
    Elr,
    PartitionMeta,
    Reassignment,
)
from console.core.cluster_info import decide_mode
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
)
from console.core.limits import BROKER_THROTTLE_KEYS, CORDONED_LOG_DIRS, REMOTE_STORAGE_ENABLE, TOPIC_THROTTLE_KEYS
from console.core.model import (
    DEFAULT_BROKER,
    ApiRange,
    BrokerId,
    ClusterInfo,
    DirOutcome,
    Feature,
    Finding,
    LogDir,
    Outcome,
    Quorum,
    QuorumMember,
    Severity,
    SourceStatus,
    TopicPartition,
    cordon_list,
)

for _name in ("kafka", "kafka.conn", "kafka.client", "kafka.admin"):
    logging.getLogger(_name).setLevel(logging.CRITICAL)

T = TypeVar("T")
P = ParamSpec("P")


_UNAVAILABLE_HINT = "Check that the bootstrap servers are right and reachable, and that the brokers run."
_AUTH_HINT = (
    "Grant the console's principal DESCRIBE on CLUSTER and on the topics "
    "(ALTER on CLUSTER to change assignments), or pass credentials with --command-config."
)
_UNSUPPORTED_HINT = (
    "The cluster's brokers do not offer this request (ApiVersions; Overview lists what the console "
    "turns on from them). ListPartitionReassignments needs Kafka 2.4 or newer, DescribeLogDirs sizes "
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

    kinds: dict[int, type[ConsoleError]] = {}
    for code in (
        E.CLUSTER_AUTHORIZATION_FAILED,
        E.TOPIC_AUTHORIZATION_FAILED,
        E.GROUP_AUTHORIZATION_FAILED,
        E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
        E.DELEGATION_TOKEN_AUTHORIZATION_FAILED,
        E.SASL_AUTHENTICATION_FAILED,
        E._AUTHENTICATION,
    ):
        kinds[code] = AuthorizationFailed
    for code in (E.UNSUPPORTED_VERSION, E._UNSUPPORTED_FEATURE):
        kinds[code] = UnsupportedByCluster
    for code in (
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
    ):
        kinds[code] = ClusterUnavailable
    for code in (
        E.UNKNOWN_TOPIC_OR_PART,
        E.INVALID_REPLICA_ASSIGNMENT,
        E.NO_REASSIGNMENT_IN_PROGRESS,
        E.POLICY_VIOLATION,
        E._UNKNOWN_TOPIC,
        E._UNKNOWN_PARTITION,
    ):
        kinds[code] = RequestRefused
    kinds[E.REASSIGNMENT_IN_PROGRESS] = ReassignmentBusy
    return kinds


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


CONFIGS_PARTIAL = "configs-partial"
"""Finding code: DescribeConfigs answered for some brokers or topics but not for these."""


def _describe_topic_partitions(client: Any, topics: list[str], page: int, cursor: dict[str, Any] | None) -> Any:
    return client.describe_topic_partitions(topics, response_partition_limit=page, cursor=cursor)


def out_of_isr_topics(
    parts: Mapping[TopicPartition, PartitionMeta], reassignments: Mapping[TopicPartition, Reassignment] | None
) -> tuple[str, ...]:
    """Topics with a partition that has no leader or an original replica (R − AR) out of the ISR:
    the only partitions that can have eligible leader replicas (Kafka clears ELR once the ISR is
    full again), so the only ones DescribeTopicPartitions is asked about."""
    out: set[str] = set()
    for key, m in parts.items():
        if key[0] in out:
            continue
        r = reassignments.get(key) if reassignments else None
        adding = set(r.adding) if r is not None else set()
        isr = set(m.isr)
        if m.leader is None or any(b not in isr and b not in adding for b in m.replicas):
            out.add(key[0])
    return tuple(sorted(out))


def _alter_reassignments(
    client: Any, reassignments: Mapping[Any, list[int] | None], allow_rf_change: bool = True
) -> dict[Any, tuple[Any, str | None]]:
    """AlterPartitionReassignments through kafka-python's admin client: per partition (kafka-python's
    ``TopicPartition``) its error class (None: accepted) and the controller's message.

    kafka-python 3.0.12 (pinned) has no parameter for ``AllowReplicationFactorChange`` (KIP-860,
    the request's v1, Kafka 4.1) in ``alter_partition_reassignments``, and keeps only each
    partition's error class, not the controller's message ("The replication factor is changed
    from 3 to 2"). So the request is built here as that method builds it (its input helper, its
    timeout) and sent through the same controller routing, ``_send_request_to_controller`` (the
    controller Metadata names, once more after NOT_CONTROLLER), on the client's event loop.

    The version is the one kafka-python negotiates on the connection that carries the request: the
    highest both it and that broker's ApiVersions have. On v0 kafka-python's encoder drops a v1
    field without a word (Kafka's Java client refuses to), so a guarded request (``allow_rf_change``
    False) asks for v1 at least (``min_version=1``): where the broker has no v1 (Kafka 3.9 and
    older) the client fails it before anything is sent (IncompatibleBrokerVersion), and it is sent
    again as before KIP-860, unguarded."""
    from kafka import TopicPartition as KafkaTP
    from kafka import errors as ke
    from kafka.protocol.admin import AlterPartitionReassignmentsRequest

    topics = client._process_alter_partition_reassignments_input(reassignments)
    timeout_ms = client._validate_timeout(None)

    def request(guarded: bool) -> Any:
        if guarded:
            return AlterPartitionReassignmentsRequest(
                timeout_ms=timeout_ms, allow_replication_factor_change=False, topics=topics, min_version=1
            )
        return AlterPartitionReassignmentsRequest(timeout_ms=timeout_ms, topics=topics)

    def top_level_error(r: Any) -> Any:
        yield ke.for_code(r.error_code)

    async def send() -> Any:
        if not allow_rf_change:
            try:
                return await client._send_request_to_controller(request(True), top_level_error)
            except ke.IncompatibleBrokerVersion:
                pass  # no v1 on the broker that takes it: unguarded, as before KIP-860
        return await client._send_request_to_controller(request(False), top_level_error)

    response = client._manager.run(send)
    out: dict[Any, tuple[Any, str | None]] = {}
    for topic in response.responses:
        for part in topic.partitions:
            error = ke.for_code(part.error_code)
            out[KafkaTP(topic.name, part.partition_index)] = (
                None if error is ke.NoError else error,
                part.error_message,
            )
    return out


class _NoAnswer:
    """The controller's answer did not mention the partition."""


NO_ANSWER = _NoAnswer


def outcome_of(topic: str, partition: int, error: object, said: str | None = None) -> Outcome:
    """From kafka-python's per-partition answer: None (accepted), an error class, or
    :data:`NO_ANSWER`; ``said``: the controller's message for it (else the error's description)."""
    if error is None:
        return Outcome(topic, partition, True)
    if error is NO_ANSWER:
        return Outcome(topic, partition, False, "NO_ANSWER", "The controller's answer did not mention it.")
    code = str(getattr(error, "message", None) or getattr(error, "__name__", error))
    errno = getattr(error, "errno", None)
    text = str(said or getattr(error, "description", "") or "")
    return Outcome(topic, partition, False, code, f"{code} ({errno}): {text}" if errno is not None else text)


def _status_of(err: ConsoleError) -> SourceStatus:
    if isinstance(err, AuthorizationFailed):
        return SourceStatus.UNAUTHORIZED
    if isinstance(err, UnsupportedByCluster):
        return SourceStatus.UNSUPPORTED
    return SourceStatus.UNAVAILABLE


def _problem(code: str, err: ConsoleError, broker: BrokerId | None = None) -> Finding:
    return Finding(code, Severity.WARNING, err.message, err.hint, broker=broker)


# -- what the cluster is (ApiVersions, DescribeFeatures, DescribeQuorum) ---------------------------------------
def features_of(raw: Mapping[str, Mapping[str, Any]]) -> tuple[Feature, ...]:
    """kafka-python's ``describe_features()`` (``{name: {"supported": (min, max), "finalized":
    (min, max)}}``) as records, by name. A feature at level 0 is not listed as finalized."""
    out = []
    for name, f in sorted(raw.items()):
        sup, fin = f.get("supported"), f.get("finalized")
        out.append(
            Feature(
                str(name),
                int(fin[1]) if fin else None,
                int(sup[0]) if sup else None,
                int(sup[1]) if sup else None,
            )
        )
    return tuple(out)


def _ms(v: Any) -> int | None:
    return int(v) if v is not None and int(v) >= 0 else None


def quorum_of(raw: Mapping[str, Any]) -> Quorum:
    """kafka-python's ``describe_metadata_quorum()`` (the ``__cluster_metadata`` partition) as a
    record; each member's lag is the leader's log end offset minus its own (as
    ``kafka-metadata-quorum`` reports it). Raises ValueError when the answer has no partition."""
    part = next((p for t in raw.get("topics", ()) for p in t.get("partitions", ())), None)
    if part is None:
        raise ValueError("DescribeQuorum answered without the metadata partition")
    leader = int(part["leader_id"]) if int(part.get("leader_id", -1)) >= 0 else None
    voters, observers = part.get("current_voters") or (), part.get("observers") or ()
    leader_leo = next((int(v["log_end_offset"]) for v in voters if int(v["replica_id"]) == leader), None)

    def member(m: Mapping[str, Any]) -> QuorumMember:
        leo = int(m["log_end_offset"])
        return QuorumMember(
            int(m["replica_id"]),
            leo,
            max(0, leader_leo - leo) if leader_leo is not None and leo >= 0 else None,
            _ms(m.get("last_fetch_timestamp")),
            _ms(m.get("last_caught_up_timestamp")),
        )

    return Quorum(
        leader,
        int(part.get("leader_epoch", -1)),
        int(part.get("high_watermark", -1)),
        tuple(sorted((member(v) for v in voters), key=lambda m: m.id)),
        tuple(sorted((member(o) for o in observers), key=lambda m: m.id)),
    )


def api_ranges(per_broker: Iterable[Mapping[int, tuple[int, int]]]) -> tuple[ApiRange, ...]:
    """The requests every broker answers, with the versions all of them support (ApiVersions of each)."""
    common: dict[int, tuple[int, int]] | None = None
    for versions in per_broker:
        if common is None:
            common = {int(k): (int(v[0]), int(v[1])) for k, v in versions.items()}
            continue
        common = {
            k: (max(lo, int(versions[k][0])), min(hi, int(versions[k][1])))
            for k, (lo, hi) in common.items()
            if k in versions
        }
    return tuple(ApiRange(k, lo, hi) for k, (lo, hi) in sorted((common or {}).items()) if lo <= hi)


def _versions(client: Any) -> tuple[str | None, tuple[ApiRange, ...]]:
    """Each unfenced broker's ApiVersions (kafka-python keeps them per connection): the oldest
    release they match, and the requests all of them answer. A broker that cannot be reached is
    left out; none reachable raises."""
    cluster = client.describe_cluster()
    answers: list[Any] = []
    last: Exception | None = None
    for b in cluster.get("brokers", ()):
        if b.get("is_fenced"):
            continue
        try:
            answers.append(client.get_broker_version_data(int(b["broker_id"])))
        except Exception as e:  # that broker only; the others still say what they run
            if problem_of(e) is None:
                raise
            last = e
    if not answers:
        raise last if last is not None else ValueError("DescribeCluster listed no broker")
    oldest = min(answers, key=lambda a: tuple(a.broker_version))
    version = ".".join(str(x) for x in oldest.broker_version)
    return version, api_ranges(a.api_versions for a in answers)


@dataclass(frozen=True, slots=True)
class _Health:
    registered: tuple[BrokerInfo, ...] | None
    fenced_status: SourceStatus
    elr: dict[TopicPartition, Elr]
    elr_status: SourceStatus


def _changes_cluster(method: Callable[Concatenate[KafkaGateway, P], T]) -> Callable[Concatenate[KafkaGateway, P], T]:
    """Marks a request that changes the cluster: ``writes`` is bumped once it returned or failed
    (a request that failed may still have been applied in part), so a snapshot read before it is
    no longer shared (:meth:`console.state.reader.ClusterReader.snapshot`)."""

    @wraps(method)
    def sent(self: KafkaGateway, /, *args: P.args, **kwargs: P.kwargs) -> T:
        try:
            return method(self, *args, **kwargs)
        finally:
            self.writes += 1

    return sent


class KafkaGateway:
    """Long-lived, thread-safe reader of one cluster through the Admin API."""

    def __init__(self, settings: ConnectionSettings) -> None:
        self.settings = settings
        self._lock = threading.Lock()
        self._confluent: Any = None
        self._kp: Any = None
        self.writes = 0
        """Requests that change the cluster sent through this gateway (see :func:`_changes_cluster`)."""

    # -- clients -------------------------------------------------------------------------------
    def confluent(self) -> Any:
        if self._confluent is None:
            from confluent_kafka.admin import AdminClient

            conf: dict[str, str | int | float | bool] = {
                "log_level": "0",
                "socket.connection.setup.timeout.ms": str(int(self.settings.timeout_s * 1000)),
            }
            conf.update(self.settings.to_confluent())
            from confluent_kafka import KafkaException

            try:
                self._confluent = AdminClient(conf)
            except (KafkaException, TypeError, ValueError) as e:  # a property or value librdkafka refuses
                raise ConfigError(
                    f"The connection settings of {self.settings.name or 'the cluster'} are not usable: {e}.",
                    _SETTINGS_HINT,
                ) from None
        return self._confluent

    def kafka_python(self) -> Any:
        """The kafka-python admin client (created on first use; recreated after failures)."""
        if self._kp is None:
            from kafka.admin import KafkaAdminClient

            kwargs = {
                "request_timeout_ms": int(self.settings.timeout_s * 1000),
                "bootstrap_timeout_ms": int(self.settings.timeout_s * 1000),
                "client_id": "reassignment-console",
                **self.settings.to_kafka_python(),
            }
            self._kp = KafkaAdminClient(**kwargs)
        return self._kp

    def _with_kp(self, what: str, fn: Callable[[Any], T]) -> T:
        with self._lock:
            try:
                return fn(self.kafka_python())
            except Exception as e:
                err = translate(e, what)
                if isinstance(err, ClusterUnavailable):
                    self._drop_kp()
                raise err from None

    def _drop_kp(self) -> None:
        """Close the kafka-python client (the next call makes a fresh one). Hold ``_lock``."""
        if self._kp is not None:
            with contextlib.suppress(Exception):  # a client that fails to close is dropped anyway
                self._kp.close()
            self._kp = None

    def close(self) -> None:
        with self._lock:
            self._drop_kp()
        self._confluent = None

    # -- reads ---------------------------------------------------------------------------------
    def read_metadata(
        self,
    ) -> tuple[str | None, BrokerId | None, tuple[BrokerInfo, ...], dict[TopicPartition, PartitionMeta]]:
        t = self.settings.timeout_s
        for attempt in range(3):
            admin = self.confluent()
            try:
                cluster_f = admin.describe_cluster(request_timeout=t)
                md = admin.list_topics(timeout=t)
            except Exception as e:
                raise translate(e, "the Metadata request") from None
            try:
                cluster = cluster_f.result(timeout=t + 1)
                break
            except Exception as e:
                # the brokers answered Metadata, but DescribeCluster waited for the broker Metadata
                # names as controller: in KRaft a broker at random, possibly one just stopped hard
                # until its session times out; a fresh client asks fresh Metadata
                if not retriable(e) or attempt == 2:
                    raise translate(e, "the Metadata request") from None
                self._confluent = None
        brokers = tuple(
            sorted(
                (BrokerInfo(BrokerId(n.id), n.host, n.port, n.rack) for n in cluster.nodes),
                key=lambda b: b.id,
            )
        )
        controller = cluster.controller.id if cluster.controller is not None else md.controller_id
        parts: dict[TopicPartition, PartitionMeta] = {}
        for name, tm in md.topics.items():
            if tm.error is not None and not tm.partitions:
                continue
            for pid, pm in tm.partitions.items():
                parts[(name, pid)] = PartitionMeta(
                    tuple(BrokerId(b) for b in pm.replicas),
                    tuple(BrokerId(b) for b in pm.isrs),
                    BrokerId(pm.leader) if pm.leader >= 0 else None,
                )
        controller_id = BrokerId(controller) if controller is not None and controller >= 0 else None
        return cluster.cluster_id, controller_id, brokers, parts

    def list_reassignments(self, attempts: int = 8) -> dict[TopicPartition, Reassignment]:
        """ListPartitionReassignments, sent where Metadata names the controller: in KRaft a broker at
        random, until the controller fences a broker that stopped hard (its session timeout, 9 s by
        default) possibly the broker that is gone; asked again (fresh metadata) while the error is
        retriable: eight attempts span about ten seconds, so a dead broker named every time is
        not what ends the answer."""
        raw = self._to_controller(
            "ListPartitionReassignments", lambda c: c.list_partition_reassignments(), attempts, {}
        )
        out: dict[TopicPartition, Reassignment] = {}
        for tp, r in raw.items():
            out[(tp.topic, tp.partition)] = Reassignment(
                tuple(BrokerId(b) for b in r["replicas"]),
                tuple(BrokerId(b) for b in r["adding_replicas"]),
                tuple(BrokerId(b) for b in r["removing_replicas"]),
            )
        return out

    # -- writes --------------------------------------------------------------------------------
    @_changes_cluster
    def alter_reassignments(
        self,
        targets: Mapping[TopicPartition, tuple[BrokerId, ...] | None],
        batch: int = 2_000,
        attempts: int = 5,
        *,
        allow_rf_change: bool = True,
    ) -> dict[TopicPartition, Outcome]:
        """AlterPartitionReassignments to the active controller: a target per partition, or None
        to cancel. Requests carry at most ``batch`` partitions. A request the controller did not
        take (NOT_CONTROLLER while it moves, no broker ready) changed nothing and is sent again,
        up to ``attempts`` times; partition errors are the broker's own, per partition, with the
        controller's message. A request whose answer did not come back (a timeout) raises
        :class:`AnswerLost` at once, unsent again (:func:`not_taken`). Raises
        :class:`ConsoleError` when a request never got an answer: the outcomes of the requests
        before it are in :class:`PartiallyApplied`'s ``outcomes``.

        ``allow_rf_change`` False: the requests carry ``AllowReplicationFactorChange=false`` where
        the broker taking them has AlterPartitionReassignments v1 (Kafka 4.1+; KIP-860), and go
        unguarded, as before, where it has not (:func:`_alter_reassignments`)."""
        from kafka import TopicPartition as KafkaTP

        out: dict[TopicPartition, Outcome] = {}
        items = list(targets.items())
        for start in range(0, len(items), batch):
            chunk = items[start : start + batch]
            request = {KafkaTP(t, p): (None if r is None else [int(b) for b in r]) for (t, p), r in chunk}
            answer = self._to_controller(
                "AlterPartitionReassignments",
                partial(_alter_reassignments, reassignments=request, allow_rf_change=allow_rf_change),
                attempts,
                out,
                write=True,
            )
            for (t, p), _ in chunk:
                err, said = answer.get(KafkaTP(t, p), (NO_ANSWER, None))
                out[(t, p)] = outcome_of(t, p, err, said)
        return out

    @_changes_cluster
    def elect_leaders(self, keys: Iterable[TopicPartition], batch: int = 2_000) -> dict[TopicPartition, Outcome]:
        """Preferred leader election (ElectLeaders, KIP-460) of ``keys``, in batches; per partition
        the broker's answer (ELECTION_NOT_NEEDED counts as accepted: the preferred replica leads)."""
        from confluent_kafka import ElectionType
        from confluent_kafka import TopicPartition as CTP

        admin = self.confluent()
        items = list(keys)
        out: dict[TopicPartition, Outcome] = {}
        for start in range(0, len(items), batch):
            chunk = items[start : start + batch]
            try:
                # no request_timeout/operation_timeout: confluent-kafka 2.16's binding refuses either
                # ("SystemError: more argument specifiers than keyword list entries"); the wait for
                # the answer is bounded here instead
                answer = admin.elect_leaders(ElectionType.PREFERRED, [CTP(t, p) for t, p in chunk]).result(
                    timeout=self.settings.timeout_s + 1
                )
            except Exception as e:
                err = translate(e, "ElectLeaders")
                raise (PartiallyApplied(err, out) if out else err) from None
            for tp, error in answer.items():
                # a KafkaError per partition (a KafkaException wrapping one in older releases)
                kerr = error.args[0] if isinstance(error, BaseException) and error.args else error
                code = None if kerr is None else str(kerr.name()) if hasattr(kerr, "name") else type(kerr).__name__
                ok = kerr is None or code == "ELECTION_NOT_NEEDED"
                text = None if ok else str(kerr.str()) if hasattr(kerr, "str") else str(kerr)
                out[(tp.topic, tp.partition)] = Outcome(tp.topic, tp.partition, ok, None if ok else code, text)
        return out

    @_changes_cluster
    def alter_configs(
        self, brokers: Mapping[BrokerId, Mapping[str, str | None]], topics: Mapping[str, Mapping[str, str | None]]
    ) -> None:
        """IncrementalAlterConfigs: each key SET to its value, or DELETEd for None. Raises
        :class:`ConsoleError` naming every resource that was not changed."""
        from confluent_kafka.admin import AlterConfigOpType, ConfigEntry, ConfigResource, ResourceType

        def resource(kind: Any, name: str, changes: Mapping[str, str | None]) -> Any:
            return ConfigResource(
                kind,
                name,
                incremental_configs=[
                    ConfigEntry(
                        k, v, incremental_operation=AlterConfigOpType.SET if v is not None else AlterConfigOpType.DELETE
                    )
                    for k, v in changes.items()
                ],
            )

        # librdkafka sends each BROKER resource to its own broker: one call each
        batches = [[resource(ResourceType.BROKER, str(b), c)] for b, c in brokers.items() if c]
        topic_res = [resource(ResourceType.TOPIC, t, c) for t, c in topics.items() if c]
        if topic_res:
            batches.append(topic_res)
        admin = self.confluent()
        failed: list[str] = []
        lost: list[str] = []
        for batch in batches:
            try:
                futures = admin.incremental_alter_configs(batch, request_timeout=self.settings.timeout_s)
            except Exception as e:
                raise translate(e, "IncrementalAlterConfigs") from None
            for res, fut in futures.items():
                try:
                    fut.result(timeout=self.settings.timeout_s + 1)
                except Exception as e:
                    said = (
                        f"{'broker' if res.restype == ResourceType.BROKER else 'topic'} {res.name}: "
                        f"{translate(e, 'IncrementalAlterConfigs').message}"
                    )
                    (lost if retriable(e) and not not_taken(e) else failed).append(said)
        if lost:
            raise AnswerLost(
                "No answer came back for the config change of " + "; ".join(lost + failed) + " (applied or not: "
                "not known)",
                "The console reads the configs the brokers report before setting anything again.",
            )
        if failed:
            raise ClusterUnavailable(
                "Configs were not changed on " + "; ".join(failed),
                "The console retries; check that the brokers named are up.",
            )

    @_changes_cluster
    def alter_cluster_default(self, changes: Mapping[str, str | None]) -> None:
        """IncrementalAlterConfigs on the cluster-wide default broker configs (the resource
        ``kafka-configs --entity-default`` names: type BROKER, name ""): each key SET, or DELETEd for
        None. Neither client takes that resource through its admin call (librdkafka refuses
        "Invalid ConfigResource", kafka-python wants a broker id), so the request kafka-python builds
        for it is sent to any broker, which hands it to the controller; its answer is checked here."""
        import kafka.errors
        from kafka.admin import AlterConfigOp, ConfigResource, ConfigResourceType

        resource = ConfigResource(
            ConfigResourceType.BROKER,
            "",
            {k: (AlterConfigOp.SET, v) if v is not None else (AlterConfigOp.DELETE, None) for k, v in changes.items()},
        )

        def send(c: Any) -> None:
            request = c._alter_configs_request([resource], incremental=True)

            async def call() -> Any:
                return await c._manager.send(request)

            for answer in c._manager.run(call).responses:
                if answer.error_code:
                    raise kafka.errors.for_code(answer.error_code)(answer.error_message or "")

        self._with_kp("IncrementalAlterConfigs on the cluster default", send)

    @_changes_cluster
    def alter_replica_log_dirs(self, moves: Mapping[tuple[str, int, BrokerId], str]) -> list[DirOutcome]:
        """AlterReplicaLogDirs (KIP-113) to each replica's broker: per replica the broker's answer
        (REPLICA_NOT_AVAILABLE for one it does not hold yet: it keeps the dir for when it creates it)."""
        from kafka.structs import TopicPartitionReplica

        if not moves:
            return []
        request = {TopicPartitionReplica(t, p, int(b)): d for (t, p, b), d in moves.items()}
        answer = self._with_kp("AlterReplicaLogDirs", lambda c: c.alter_replica_log_dirs(request))
        out = []
        for (t, p, b), d in moves.items():
            err = answer.get(TopicPartitionReplica(t, p, int(b)))
            code = None if err is None or getattr(err, "errno", 0) == 0 else str(getattr(err, "message", err))
            out.append(DirOutcome(t, p, b, d, code if err is not None else "NO_ANSWER"))
        return out

    @_changes_cluster
    def unregister_broker(self, broker: BrokerId) -> bool:
        """UnregisterBroker (API key 64; what ``kafka-cluster unregister --id N`` sends): the
        controller forgets the broker's registration. kafka-python 3.0.12 has no message for it:
        :mod:`console.adapters.protocol` declares it; it is sent to any broker, which hands it to
        the controller, and its answer's error code is checked here: False for
        BROKER_ID_NOT_REGISTERED (there was nothing to unregister). Unsupported (ZooKeeper mode,
        before Kafka 3.3) raises :class:`UnsupportedByCluster`."""
        import kafka.errors

        def send(c: Any) -> bool:
            from console.adapters.protocol import UnregisterBrokerRequest

            async def call() -> Any:
                return await c._manager.send(UnregisterBrokerRequest(broker_id=int(broker)))

            answer = c._manager.run(call)
            if answer.error_code == kafka.errors.BrokerIdNotRegisteredError.errno:
                return False
            if answer.error_code:
                raise kafka.errors.for_code(answer.error_code)(answer.error_message or "")
            return True

        return self._with_kp(f"UnregisterBroker of broker {broker}", send)

    def _to_controller(
        self,
        what: str,
        fn: Callable[[Any], T],
        attempts: int,
        done: dict[TopicPartition, Outcome],
        *,
        write: bool = False,
    ) -> T:
        """``fn`` on the kafka-python client; again (fresh client, fresh controller id) while Kafka
        calls the error retriable (the controller moving, a timeout, a connection lost). Anything
        that is not a Kafka error is raised as itself, at once.

        A ``write`` is sent again only when it is known not to have been taken (:func:`not_taken`:
        NOT_CONTROLLER, no broker ready to send it to); one whose answer did not come back raises
        :class:`AnswerLost` at once: the controller may have applied it, and what to send again is
        decided from what the cluster shows (:mod:`console.runs.settle`), never blind."""
        delay = 0.2
        for attempt in range(attempts):
            try:
                with self._lock:
                    return fn(self.kafka_python())
            except Exception as e:
                err = translate(e, what)  # raises ``e`` itself when it is not a Kafka error
                again = retriable(e)
                with self._lock:
                    self._drop_kp()
                if write and again and not not_taken(e):
                    err = AnswerLost(
                        f"{what} was sent and its answer did not come back ({err.message}): "
                        "the controller may have applied it.",
                        "The console reads what the cluster shows before sending anything again.",
                    )
                    raise (PartiallyApplied(err, done) if done else err) from None
                if not again or attempt == attempts - 1:
                    if again and isinstance(err, ClusterUnavailable):
                        err = ClusterUnavailable(
                            f"The controller did not take {what} after {attempts} attempts: {e}.",
                            ("Nothing of this request was applied. " if write else "")
                            + "Check that a controller is elected (Overview) and try again.",
                        )
                    raise (PartiallyApplied(err, done) if done else err) from None
                time.sleep(delay)
                delay = min(delay * 2, 2.0)
        raise AssertionError("unreachable")

    def describe_log_dirs(self, broker: BrokerId, partitions: dict[str, list[int]]) -> BrokerLogDirs:
        raw = self._with_kp(
            f"DescribeLogDirs on broker {broker}",
            lambda c: c.describe_log_dirs(partitions, brokers=[int(broker)]),
        )
        dirs: list[LogDir] = []
        replicas: list[tuple[str, int, str, int, bool]] = []
        for answer in raw:
            for d in answer["log_dirs"]:
                err = d.get("error_code", 0)
                total, usable = d.get("total_bytes", -1), d.get("usable_bytes", -1)
                cordoned = d.get("is_cordoned")  # only in v5 answers (Kafka 4.3 and later)
                dirs.append(
                    LogDir(
                        d["log_dir"],
                        None
                        if not err
                        else f"error {err}" + (" (KAFKA_STORAGE_ERROR: the dir is offline)" if err == 56 else ""),
                        total if total is not None and total >= 0 else None,
                        usable if usable is not None and usable >= 0 else None,
                        None if cordoned is None else bool(cordoned),
                    )
                )
                for t in d.get("topics", ()):
                    for p in t["partitions"]:
                        if p["partition_size"] >= 0:
                            replicas.append(
                                (t["name"], p["partition_index"], d["log_dir"], p["partition_size"], p["is_future_key"])
                            )
        return BrokerLogDirs(broker, tuple(dirs), tuple(replicas))

    def describe_configs(self, brokers: tuple[BrokerId, ...], topics: tuple[str, ...]) -> Configs:
        """Throttles set on brokers and topics (dynamic configs only), each topic's effective
        ``min.insync.replicas`` and ``remote.storage.enable`` (tiered storage, KIP-405) and each
        broker's ``cordoned.log.dirs`` in force (whatever set it;
        absent from the answer of a broker before 4.3). A broker's own rates are keyed by its id; the cluster-wide default
        rates (DescribeConfigs source ``DYNAMIC_DEFAULT_BROKER_CONFIG``) by ``DEFAULT_BROKER``, once,
        never as if each broker had set them."""
        from confluent_kafka.admin import ConfigResource, ConfigSource, ResourceType

        admin = self.confluent()
        # librdkafka takes one BROKER resource per call (each goes to its own broker).
        batches = [[ConfigResource(ResourceType.BROKER, str(b))] for b in brokers]
        if topics:
            batches.append([ConfigResource(ResourceType.TOPIC, t) for t in topics])
        futures: dict[Any, Any] = {}
        try:
            for batch in batches:
                futures.update(admin.describe_configs(batch, request_timeout=self.settings.timeout_s))
        except Exception as e:
            raise translate(e, "DescribeConfigs") from None
        if not futures:
            return Configs()
        own = {ConfigSource.DYNAMIC_BROKER_CONFIG.value, ConfigSource.DYNAMIC_TOPIC_CONFIG.value}
        default = ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG.value
        cluster_default: dict[str, str] = {}
        b_out: dict[str, dict[str, str]] = {}
        t_out: dict[str, dict[str, str]] = {}
        min_isr: dict[str, int] = {}
        tiered: set[str] = set()
        cordons: dict[str, tuple[str, ...]] = {}
        errors: list[ConsoleError] = []
        missing_brokers: list[str] = []
        missing_topics: list[str] = []
        for res, fut in futures.items():
            try:
                cfg = fut.result(timeout=self.settings.timeout_s + 1)
            except Exception as e:
                errors.append(translate(e, "DescribeConfigs"))  # raises ``e`` itself when it is not a Kafka error
                (missing_brokers if res.restype == ResourceType.BROKER else missing_topics).append(res.name)
                continue
            keys = BROKER_THROTTLE_KEYS if res.restype == ResourceType.BROKER else TOPIC_THROTTLE_KEYS
            found = {}
            for k in keys:
                entry = cfg.get(k)
                if entry is None:
                    continue
                if entry.value not in (None, "") and entry.source in own:
                    found[k] = entry.value
                # The cluster-wide default (``--entity-default``) is in force on every broker without
                # its own value; one that has its own still names the default among its synonyms.
                for named in (entry, *getattr(entry, "synonyms", {}).values()):
                    if named.name == k and named.source == default and named.value not in (None, ""):
                        cluster_default[k] = named.value
            if found:
                (b_out if res.restype == ResourceType.BROKER else t_out)[res.name] = found
            entry = cfg.get("min.insync.replicas")
            if res.restype == ResourceType.TOPIC and entry is not None and str(entry.value).isdigit():
                min_isr[res.name] = int(entry.value)
            entry = cfg.get(REMOTE_STORAGE_ENABLE)
            if res.restype == ResourceType.TOPIC and entry is not None and str(entry.value).lower() == "true":
                tiered.add(res.name)
            entry = cfg.get(CORDONED_LOG_DIRS)
            if res.restype == ResourceType.BROKER and entry is not None:
                cordons[res.name] = cordon_list(entry.value)
        if errors and len(errors) == len(futures):
            raise errors[0]
        if cluster_default:
            b_out[DEFAULT_BROKER] = cluster_default
        return Configs(
            b_out,
            t_out,
            min_isr,
            tuple(sorted(missing_brokers, key=int)),
            tuple(sorted(missing_topics)),
            cordons,
            frozenset(tiered),
        )

    def describe_registered(self) -> tuple[BrokerInfo, ...] | None:
        """Every registered broker, fenced ones included, each with ``fenced`` said (DescribeCluster
        v2, KIP-1073, Kafka ≥ 4.0: Metadata leaves fenced brokers out). None where the cluster does
        not say (older DescribeCluster versions carry no ``IsFenced``)."""
        raw = self._with_kp("DescribeCluster", lambda c: c.describe_cluster())
        brokers = raw.get("brokers") or ()
        if not brokers or any("is_fenced" not in b for b in brokers):
            return None
        return tuple(
            sorted(
                (
                    BrokerInfo(
                        BrokerId(int(b["broker_id"])), b.get("host"), b.get("port"), b.get("rack"), bool(b["is_fenced"])
                    )
                    for b in brokers
                ),
                key=lambda b: b.id,
            )
        )

    def describe_elr(self, topics: Iterable[str], page: int = 2_000) -> dict[TopicPartition, Elr]:
        """Eligible leader replicas and last-known ones of ``topics``' partitions (DescribeTopicPartitions,
        KIP-966; paged by the broker's partition limit through a cursor). Only partitions that have
        some are in the answer. A topic deleted meanwhile is left out."""
        names = sorted(set(topics))
        out: dict[TopicPartition, Elr] = {}
        cursor: dict[str, Any] | None = None
        seen: set[tuple[str, int]] = set()
        while names:
            raw = self._with_kp(
                "DescribeTopicPartitions",
                partial(_describe_topic_partitions, topics=names, page=page, cursor=cursor),
            )
            for t in raw.get("topics", ()):
                if t.get("error_code"):
                    continue
                for p in t.get("partitions", ()):
                    elr = tuple(BrokerId(int(b)) for b in p.get("eligible_leader_replicas") or ())
                    last = tuple(BrokerId(int(b)) for b in p.get("last_known_elr") or ())
                    if elr or last:
                        out[(t["name"], int(p["partition_index"]))] = Elr(elr, last)
            cursor = raw.get("next_cursor")
            if cursor is None:
                break
            mark = (str(cursor["topic_name"]), int(cursor["partition_index"]))
            if mark in seen:  # a broker that hands out the same cursor again: stop rather than loop
                break
            seen.add(mark)
        return out

    def read_cluster_info(self, zookeeper_configured: bool = False) -> ClusterInfo:
        """What the cluster is: its brokers' ApiVersions, its features, its controller quorum; each
        part with its status, never raising for cluster trouble (DescribeQuorum on a ZooKeeper
        cluster is ``UNSUPPORTED``: not available there)."""
        read_at = time.time()
        version: str | None = None
        apis: tuple[ApiRange, ...] = ()
        features: tuple[Feature, ...] = ()
        quorum: Quorum | None = None
        try:
            version, apis = self._with_kp("ApiVersions", _versions)
            v_status = SourceStatus.OK
        except ConsoleError as e:
            v_status = _status_of(e)
        except ValueError:  # DescribeCluster listed no broker
            v_status = SourceStatus.UNAVAILABLE
        f_status = q_status = v_status
        if v_status is not SourceStatus.UNAVAILABLE:  # a cluster that did not answer is not asked twice more
            try:
                features = features_of(self._with_kp("DescribeFeatures", lambda c: c.describe_features()))
                f_status = SourceStatus.OK
            except ConsoleError as e:
                f_status = _status_of(e)
            try:
                quorum = quorum_of(self._with_kp("DescribeQuorum", lambda c: c.describe_metadata_quorum()))
                q_status = SourceStatus.OK
            except ConsoleError as e:
                q_status = _status_of(e)
            except ValueError:
                q_status = SourceStatus.UNAVAILABLE
        return ClusterInfo(
            read_at=read_at,
            api_version=version,
            mode=decide_mode(q_status, features, zookeeper_configured),
            features=features,
            quorum=quorum,
            apis=apis,
            zookeeper_configured=zookeeper_configured,
            versions_status=v_status,
            features_status=f_status,
            quorum_status=q_status,
        )

    def _read_reassignments(
        self, problems: list[Finding]
    ) -> tuple[dict[TopicPartition, Reassignment] | None, SourceStatus]:
        """ListPartitionReassignments for :meth:`read`: None and its status when it could not be
        read (the reason added to ``problems``)."""
        try:
            return self.list_reassignments(), SourceStatus.OK
        except ConsoleError as e:
            problems.append(_problem("reassignments-unreadable", e))
            return None, _status_of(e)

    def _health_reads(
        self,
        parts: Mapping[TopicPartition, PartitionMeta],
        reassignments: Mapping[TopicPartition, Reassignment] | None,
        problems: list[Finding],
    ) -> _Health:
        """Fenced brokers (DescribeCluster) and the ELR of topics with a replica out of the ISR
        (DescribeTopicPartitions), for :meth:`read`; what the cluster does not support is said by
        the status, what it did not answer also by a finding in ``problems``."""
        try:
            registered = self.describe_registered()
            fenced_status = SourceStatus.OK if registered is not None else SourceStatus.UNSUPPORTED
        except ConsoleError as e:
            registered, fenced_status = None, _status_of(e)
        elr: dict[TopicPartition, Elr] = {}
        elr_status = SourceStatus.OK
        suspect = out_of_isr_topics(parts, reassignments)
        if suspect:
            try:
                elr = self.describe_elr(suspect)
            except ConsoleError as e:
                elr_status = _status_of(e)
                if elr_status is not SourceStatus.UNSUPPORTED:
                    problems.append(_problem("elr-unreadable", e))
        return _Health(registered, fenced_status, elr, elr_status)

    def read(self, lean: bool = False) -> ApiView:
        """Everything the Admin API can tell, part by part, never raising for cluster trouble.
        ``lean``: only what a cancel needs (metadata and the reassignments in flight); log dirs and
        configs are not asked for (their status says so: ``NOT_CONFIGURED``)."""
        problems: list[Finding] = []
        try:
            cluster_id, controller, brokers, parts = self.read_metadata()
        except ConsoleError as e:
            return ApiView(
                metadata_status=_status_of(e),
                reassignments_status=_status_of(e),
                log_dirs_status=_status_of(e),
                configs_status=_status_of(e),
                reassignments=None,
                problems=(
                    _problem("kafka-unavailable" if _status_of(e) is SourceStatus.UNAVAILABLE else "kafka-refused", e),
                ),
            )
        by_topic: dict[str, list[int]] = {}
        for t, p in parts:
            by_topic.setdefault(t, []).append(p)
        topics = tuple(sorted(by_topic))
        broker_ids = tuple(b.id for b in brokers)
        # lean: log dirs and configs are not asked for, and their status says so
        log_dirs: list[BrokerLogDirs] = []
        configs = Configs()
        logs_status = cfg_status = SourceStatus.NOT_CONFIGURED
        if lean:
            reassignments, lpr_status = self._read_reassignments(problems)
            moving = tuple(sorted({t for t, _ in reassignments})) if reassignments else ()
            with ThreadPoolExecutor(max_workers=1) as pool:
                # each moving topic's min.insync.replicas: what a cancel's projection compares with
                min_f = pool.submit(self.describe_configs, (), moving) if moving else None
                health = self._health_reads(parts, reassignments, problems)
                if min_f is not None:
                    with contextlib.suppress(ConsoleError):  # unknown min ISR: the projection says so
                        got = min_f.result()
                        configs = Configs(min_insync=got.min_insync, tiered_topics=got.tiered_topics)
        else:
            with ThreadPoolExecutor(max_workers=2) as pool:
                configs_f = pool.submit(self.describe_configs, broker_ids, topics)
                reassignments, lpr_status = self._read_reassignments(problems)
                health = self._health_reads(parts, reassignments, problems)
                logs_status = SourceStatus.OK
                for b in broker_ids:
                    try:
                        log_dirs.append(self.describe_log_dirs(b, by_topic))
                    except ConsoleError as e:
                        problems.append(_problem("log-dirs-unreadable", e, broker=b))
                        logs_status = _status_of(e)
                if log_dirs:
                    logs_status = SourceStatus.OK  # partial answers still give sizes for those brokers
                cfg_status = SourceStatus.OK
                try:
                    configs = configs_f.result()
                except ConsoleError as e:
                    cfg_status = _status_of(e)
                    problems.append(_problem("configs-unreadable", e))
                problems += [
                    Finding(
                        CONFIGS_PARTIAL,
                        Severity.WARNING,
                        f"Broker {b} did not answer DescribeConfigs: its throttles are unknown.",
                        "Check the broker; the console changes no throttle on it until it answers.",
                        broker=BrokerId(int(b)),
                    )
                    for b in configs.missing_brokers
                ]
                problems += [
                    Finding(
                        CONFIGS_PARTIAL,
                        Severity.WARNING,
                        f"The configs of topic {t} could not be read: its throttles are unknown.",
                        "It may be being deleted; the console changes no throttle on it until it answers.",
                        topic=t,
                    )
                    for t in configs.missing_topics
                ]
        if not parts and SourceStatus.UNAUTHORIZED in (lpr_status, cfg_status):
            # Metadata silently leaves out topics the principal may not DESCRIBE.
            problems.append(
                _problem(
                    "topics-hidden",
                    AuthorizationFailed(
                        "Metadata shows no topic, and the cluster refuses other reads: the console's principal "
                        "probably lacks DESCRIBE on the topics.",
                        "Grant DESCRIBE and DESCRIBE_CONFIGS on the topics and on CLUSTER (or give a ZooKeeper "
                        "connect string to read the znodes).",
                    ),
                )
            )
        return ApiView(
            cluster_id=cluster_id,
            controller=controller,
            brokers=brokers,
            partitions=parts,
            reassignments=reassignments,
            log_dirs=tuple(log_dirs),
            broker_throttles=configs.brokers,
            topic_throttles=configs.topics,
            min_insync=configs.min_insync,
            tiered_topics=configs.tiered_topics,
            registered=health.registered,
            elr=health.elr,
            cordons={BrokerId(int(b)): v for b, v in configs.cordons.items()},
            metadata_status=SourceStatus.OK,
            reassignments_status=lpr_status,
            log_dirs_status=logs_status,
            configs_status=cfg_status,
            fenced_status=health.fenced_status,
            elr_status=health.elr_status,
            problems=tuple(problems),
        )
