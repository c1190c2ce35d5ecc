"""Where the audit stream goes: a JSON-lines file, a Kafka topic. A sink takes a batch of entries in
order and says how many of them, from the first, it has taken for good."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Protocol

import msgspec

from console.access.settings import ConnectionSettings
from console.storage.audit import AuditEntry


def encode(entry: AuditEntry) -> bytes:
    """One entry as one line of JSON (no newline), its fields in order, with ``request`` and
    ``response`` as JSON, not text."""
    fields = asdict(entry)
    fields["request"] = msgspec.Raw(entry.request.encode())
    fields["response"] = None if entry.response is None else msgspec.Raw(entry.response.encode())
    return msgspec.json.encode(fields)


class Sink(Protocol):
    name: str
    """The sink's name in the store's cursors: ``file:<path>``, ``kafka:<cluster>/<topic>``."""

    def take(self, entries: Sequence[AuditEntry]) -> int:
        """Append ``entries`` in order; how many of them, from the first, are taken for good."""
        ...

    def close(self) -> None: ...


class FileSink:
    """Appends one JSON line per entry to ``path`` (created 0600 when missing) and syncs it to disk
    before the cursor moves: after a crash between the two, entries are appended again (at least
    once; a reader drops the ids it has seen)."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self.name = f"file:{self.path.resolve()}"

    def take(self, entries: Sequence[AuditEntry]) -> int:
        if not entries:
            return 0
        data = b"".join(encode(e) + b"\n" for e in entries)
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        return len(entries)

    def close(self) -> None:
        return None


class KafkaSink:
    """Produces each entry to ``topic`` (key: the entry's id, value: its JSON) with the console's own
    producer and the cluster's connection and security settings. The producer is made on first use
    and again after a batch that was not all delivered."""

    def __init__(self, settings: ConnectionSettings, topic: str, timeout_s: float | None = None) -> None:
        self.settings = settings
        self.topic = topic
        self.timeout_s = timeout_s
        self.name = f"kafka:{settings.name or settings.bootstrap_servers}/{topic}"
        self._producer: OrderedProducerLike | None = None

    def take(self, entries: Sequence[AuditEntry]) -> int:
        from console.adapters.kafka.producer import DELIVERY_TIMEOUT_S, OrderedProducer

        if not entries:
            return 0
        if self._producer is None:
            self._producer = OrderedProducer(self.settings, self.topic, self.timeout_s or DELIVERY_TIMEOUT_S)
        n = self._producer.send([(str(e.id), encode(e)) for e in entries])
        if n < len(entries):
            self.close()
        return n

    def close(self) -> None:
        if self._producer is not None:
            producer, self._producer = self._producer, None
            producer.close()


class OrderedProducerLike(Protocol):
    def send(self, records: Sequence[tuple[str, bytes]]) -> int: ...

    def close(self) -> None: ...
