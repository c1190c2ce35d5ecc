"""The gateway's two clients (confluent-kafka and kafka-python, made on first use, dropped after a
failure) and how a request is sent through them: once, or to the controller again while it moves."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable
from functools import wraps
from typing import Any, Concatenate, ParamSpec, TypeVar

from console.access.settings import ConnectionSettings
from console.adapters.kafka.steer import Unanswering, steer, timed_out
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

P = ParamSpec("P")
C = TypeVar("C", bound="Client")


def _changes_cluster(method: Callable[Concatenate[C, P], T]) -> Callable[Concatenate[C, P], T]:
    """Marks a request that changes the cluster: ``writes`` is bumped once it returned or failed
    (a request that failed may still have been applied in part), so a snapshot read before it is
    no longer shared (:meth:`console.state.reader.ClusterReader.snapshot`)."""

    @wraps(method)
    def sent(self: C, /, *args: P.args, **kwargs: P.kwargs) -> T:
        try:
            return method(self, *args, **kwargs)
        finally:
            self.writes += 1

    return sent


class Client:
    """Long-lived, thread-safe holder of one cluster's admin clients."""

    def __init__(self, settings: ConnectionSettings) -> None:
        self.settings = settings
        self._lock = threading.Lock()
        self._confluent: Any = None
        self._kp: Any = None
        self.writes = 0
        """Requests that change the cluster sent through this gateway (see :func:`_changes_cluster`)."""
        self.unanswering = Unanswering()
        """Brokers a read timed out on lately: the next reads go to others (:mod:`.steer`)."""

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
