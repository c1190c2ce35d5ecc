"""The console's names for Kafka's identifiers."""

from __future__ import annotations

from typing import NewType

BrokerId = NewType("BrokerId", int)
TopicPartition = tuple[str, int]
