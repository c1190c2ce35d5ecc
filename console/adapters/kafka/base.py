"""The gateway's two clients (confluent-kafka and kafka-python, made on first use, dropped after a
failure) and how a request is sent through them: once, or to the controller again while it moves."""

from __future__ import annotations

import contextlib
import importlib
import random
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

from console.access.settings import ConnectionSettings
from console.adapters.kafka.requests import Requests
from console.adapters.kafka.steer import Unanswering, bootstrapped, first_answer, steer, timed_out
from console.adapters.kafka.translate import _SETTINGS_HINT, not_taken, retriable, translate
from console.core.errors import (
    AnswerLost,
    ClusterUnavailable,
    ConfigError,
    PartiallyApplied,
)
from console.core.model import (
    Outcome,
    TopicPartition,
)

T = TypeVar("T")

for _module in ("kafka.admin", "kafka.protocol.admin", "kafka.protocol.metadata"):
    importlib.import_module(_module)  # kafka-python loaded whole, here, once (see Client.kafka_python)


class Client:
    """Long-lived, thread-safe holder of one cluster's admin clients, and how a request goes through
    them (once; to a broker that answers; to the controller again while it moves): what every API
    family of the gateway sends through."""

    def __init__(self, settings: ConnectionSettings) -> None:
        self.settings = settings
        self._lock = threading.Lock()
        self._confluent: Any = None
        self._kp: Any = None
        self.unanswering = Unanswering()
        self.requests = Requests()
        """Told of every request sent through this client (:mod:`.requests`): each API family reports its own."""
        """Brokers a read timed out on lately: the next reads go to others (:mod:`.steer`)."""
        self.answered: int | None = None
        """The broker that gave the last answer to :meth:`_any_broker`: a controller request goes to
        it when the broker Metadata names is passed over (:meth:`_route_to_controller`)."""

    # -- clients -------------------------------------------------------------------------------
    def drop_confluent(self) -> None:
        """The next :meth:`confluent` makes a fresh confluent-kafka client (which asks fresh Metadata)."""
        self._confluent = None

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
            # kafka-python is imported when this module is, never first inside a request: the reads
            # race brokers and bootstrap servers on threads, and two threads importing its modules
            # at once deadlock on their import locks (`make demo` died of it under load)
            from kafka.admin import KafkaAdminClient

            kwargs = {
                "request_timeout_ms": int(self.settings.timeout_s * 1000),
                "bootstrap_timeout_ms": int(self.settings.timeout_s * 1000),
                "client_id": "reassignment-console",
                **self.settings.to_kafka_python(),
            }
            self._kp = bootstrapped(lambda kw: KafkaAdminClient(**kw), kwargs, self.unanswering)
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

    def _kp_read(self, what: str, fn: Callable[[Any], T], *, answered_by_broker: bool = True) -> T:
        """A read through kafka-python that a hung broker does not hold up: it goes to a broker no
        read timed out on lately, and once more to another when the one it went to timed out (that
        one then passed over). A request a broker hands on to the controller (DescribeQuorum, not
        ``answered_by_broker``) also times out when the quorum has no leader, on every broker
        alike: when the other broker times out too, neither is blamed."""
        suspect: int | None = None
        with self._lock:
            for again in (True, False):
                picked = None
                try:
                    client = self.kafka_python()  # a new one bootstraps: that may time out too
                    picked = steer(client, self.unanswering)
                    return fn(client)
                except Exception as e:
                    err = translate(e, what)
                    if again and picked is not None and picked.last is not None and timed_out(e):
                        suspect = picked.last
                        self.unanswering.mark(suspect)
                        continue
                    if suspect is not None and not answered_by_broker and timed_out(e):
                        self.unanswering.clear(suspect)  # the controller did not answer, not that broker
                    if isinstance(err, ClusterUnavailable) and answered_by_broker:  # not the client's fault else
                        self._drop_kp()
                    raise err from None
        raise AssertionError("a read is tried twice at most")  # pragma: no cover

    def _any_broker(self, what: str, request: Callable[[], Any], parse: Callable[[Any], T]) -> T:
        """A request any broker answers (KRaft brokers hand a controller's request on to it), sent
        to one and, while it is silent, to the next as well (:func:`.steer.first_answer`): the first
        answer, parsed; a broker that hangs holds it up for a second, not for the whole timeout."""
        with self._lock:
            try:
                client = self.kafka_python()
                self.answered, response = first_answer(client, request, self.unanswering, self.settings.timeout_s)
                return parse(response)
            except Exception as e:
                err = translate(e, what)
                if isinstance(err, ClusterUnavailable):
                    self._drop_kp()
                raise err from None

    def _route_to_controller(self, client: Any) -> None:
        """Where ``client`` sends its next controller request: the broker that answered last
        (:meth:`_any_broker`: it answers now), else the one Metadata named, else another, never one
        a request timed out on lately while there is another. In KRaft any broker hands the request
        to the controller; a ZooKeeper cluster's broker answers NOT_CONTROLLER, and kafka-python asks
        Metadata for the controller (steered too) and sends it there. A client without kafka-python's
        connection manager and its cluster view is left as it is. Hold ``_lock``."""
        cluster = getattr(getattr(client, "_manager", None), "cluster", None)
        if cluster is None:
            return
        steer(client, self.unanswering)
        avoided = self.unanswering.avoided()
        others = [b.node_id for b in cluster.brokers() if b.node_id not in avoided]
        named = client._controller_id
        if self.answered in others:
            client._controller_id = self.answered
        elif named not in others and others:
            client._controller_id = random.choice(others)

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
                    client = self.kafka_python()
                    self._route_to_controller(client)
                    return fn(client)
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
                            + "Check that a controller is elected and try again.",
                        )
                    raise (PartiallyApplied(err, done) if done else err) from None
                time.sleep(delay)
                delay = min(delay * 2, 2.0)
        raise AssertionError("unreachable")


class ClientPart:
    """One family of the gateway's requests, sent through the cluster's one :class:`Client`."""

    def __init__(self, client: Client) -> None:
        self.client = client
