"""The console's own producer, for the audit log as a stream: records sent in order, each keyed by
its id, and which of them the cluster took (idempotent, ``acks=all``, one in flight per partition
kept in order by the idempotent producer)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from console.access.settings import ConnectionSettings
from console.adapters.kafka.translate import _SETTINGS_HINT, translate
from console.core.errors import ConfigError

DELIVERY_TIMEOUT_S = 15.0
"""How long a record may wait for the cluster before it counts as not delivered (sent again later)."""


class OrderedProducer:
    """Sends (key, value) records to one topic; :meth:`send` returns how many of them, from the
    first, the cluster acknowledged (a record after one that failed is not counted, so a caller that
    resumes after that count keeps the order and loses nothing)."""

    def __init__(self, settings: ConnectionSettings, topic: str, timeout_s: float = DELIVERY_TIMEOUT_S) -> None:
        from confluent_kafka import KafkaException, Producer

        self.topic = topic
        self.timeout_s = timeout_s
        conf: dict[str, Any] = {
            "log_level": "0",
            "enable.idempotence": True,
            "acks": "all",
            "message.timeout.ms": int(timeout_s * 1000),
            "socket.connection.setup.timeout.ms": int(min(timeout_s, settings.timeout_s) * 1000),
        }
        conf.update(settings.to_confluent())
        try:
            self._producer = Producer(conf)
        except (KafkaException, TypeError, ValueError) as e:
            raise ConfigError(
                f"The connection settings of {settings.name or 'the cluster'} are not usable for the audit stream: {e}.",
                _SETTINGS_HINT,
            ) from None

    def send(self, records: Sequence[tuple[str, bytes]]) -> int:
        """Produce ``records`` in order and wait for their answers (at most the delivery timeout and
        a little); the number delivered from the first on."""
        ok = [False] * len(records)

        def answered(i: int) -> Any:
            def cb(err: Any, _msg: Any) -> None:
                ok[i] = err is None

            return cb

        from confluent_kafka import KafkaException

        try:
            for i, (key, value) in enumerate(records):
                while True:
                    try:
                        self._producer.produce(self.topic, value=value, key=key.encode(), on_delivery=answered(i))
                        break
                    except BufferError:  # the local queue is full: let answers come in first
                        self._producer.poll(0.1)
        except KafkaException as e:
            raise translate(e, f"Produce to {self.topic}") from None
        finally:
            self._producer.flush(self.timeout_s + 5)
        n = 0
        while n < len(ok) and ok[n]:
            n += 1
        return n

    def close(self) -> None:
        self._producer.flush(1)
