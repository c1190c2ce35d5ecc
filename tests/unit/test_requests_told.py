"""Every request the gateway sends is told to whoever listens (what the benchmarks count the
console's load on a cluster with), through the request families themselves: kafka-python's client
stood in for by one that answers as a broker would."""

from __future__ import annotations

from typing import Any

import pytest
from kafka import errors as ke

from console.access.settings import ConnectionSettings
from console.adapters.kafka import KafkaGateway
from console.adapters.kafka.requests import Api, Sent
from console.core.errors import ClusterUnavailable
from console.core.model import BrokerId


class Answering:
    """kafka-python's admin client as the log dirs and DescribeTopicPartitions calls see it."""

    def describe_log_dirs(self, partitions: dict[str, list[int]], brokers: list[int]) -> list[dict[str, Any]]:
        replicas = [
            {"partition_index": p, "partition_size": 7, "is_future_key": False} for p in partitions.get("t", [])
        ]
        return [
            {"broker": brokers[0], "log_dirs": [{"log_dir": "/d", "topics": [{"name": "t", "partitions": replicas}]}]}
        ]

    def describe_topic_partitions(self, topics: list[str], response_partition_limit: int, cursor: Any) -> Any:
        return {"topics": [], "next_cursor": None if cursor else {"topic_name": "t", "partition_index": 1}}


@pytest.fixture
def kafka(monkeypatch: pytest.MonkeyPatch) -> KafkaGateway:
    gateway = KafkaGateway(ConnectionSettings({"bootstrap.servers": "127.0.0.1:1"}, name="x", timeout_s=1.0))
    answering = Answering()
    monkeypatch.setattr(gateway.client, "kafka_python", lambda: answering)
    return gateway


def test_each_request_is_told_with_its_api_what_it_names_and_its_broker(kafka: KafkaGateway) -> None:
    told: list[Sent] = []
    stop = kafka.requests.listen(told.append)
    got = kafka.log_dirs.describe_log_dirs(BrokerId(2), {"t": [0, 1, 2], "u": [4]})
    assert [r[:2] for r in got.replicas] == [("t", 0), ("t", 1), ("t", 2)]
    kafka.log_dirs.describe_log_dirs(BrokerId(1), {})  # a broker's dirs only: no partition named
    kafka.reads.describe_elr(["t", "u"], page=1)  # two pages: two requests
    assert told == [
        Sent(Api.DESCRIBE_LOG_DIRS, 4, 2),
        Sent(Api.DESCRIBE_LOG_DIRS, 0, 1),
        Sent(Api.DESCRIBE_TOPIC_PARTITIONS, 2),
        Sent(Api.DESCRIBE_TOPIC_PARTITIONS, 2),
    ]
    stop()
    kafka.log_dirs.describe_log_dirs(BrokerId(2), {"t": [0]})
    assert len(told) == 4  # no longer told


def test_several_listen_at_once_and_a_request_that_fails_is_told_too(
    kafka: KafkaGateway, monkeypatch: pytest.MonkeyPatch
) -> None:
    first: list[Sent] = []
    second: list[Sent] = []
    kafka.requests.listen(first.append)
    kafka.requests.listen(second.append)
    kafka.requests.sent(Api.METADATA)
    assert first == second == [Sent(Api.METADATA, 0, None)]

    def unreachable() -> Any:
        raise ke.KafkaConnectionError("connection refused")

    monkeypatch.setattr(kafka.client, "kafka_python", unreachable)
    with pytest.raises(ClusterUnavailable):
        kafka.log_dirs.describe_log_dirs(BrokerId(0), {"t": [0]})
    assert first[-1] == second[-1] == Sent(Api.DESCRIBE_LOG_DIRS, 1, 0)
