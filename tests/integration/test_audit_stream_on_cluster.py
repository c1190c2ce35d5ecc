"""The audit log as a stream to a real Kafka topic on the sandbox: entries arrive in order with their
ids (read back with confluent-kafka's consumer), and none is lost while the topic's broker is down
for a while (its only replica on broker 2, stopped and started again) or the producer points at a
port where nothing listens (then at the right one)."""

from __future__ import annotations

import json
import time
import uuid
from pathlib import Path

from confluent_kafka import Consumer

from console.access.settings import ConnectionSettings
from console.sandbox.cluster import Sandbox
from console.state.reader import ClusterReader
from console.storage.store import Store
from console.stream.shipper import Shipper, start_thread
from console.stream.sinks import KafkaSink
from tests.integration.helpers import make_topic
from tests.support import settings_for, wait_for


def consume_all(bs: str, topic: str, want: int, timeout: float = 60.0) -> list[dict[str, object]]:
    """Every record of ``topic`` from the start, until ``want`` distinct ids were read."""
    c = Consumer(
        {
            "bootstrap.servers": bs,
            "group.id": f"audit-reader-{uuid.uuid4()}",
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
        }
    )
    c.subscribe([topic])
    got: list[dict[str, object]] = []
    deadline = time.monotonic() + timeout
    try:
        while len({r["id"] for r in got}) < want and time.monotonic() < deadline:
            msg = c.poll(0.5)
            if msg is None or msg.error():
                continue
            record = json.loads(msg.value())
            assert msg.key().decode() == str(record["id"])
            got.append(record)
    finally:
        c.close()
    return got


def in_order_once_each(got: list[dict[str, object]]) -> list[int]:
    """The ids in the order they first arrived (a record sent again after a timeout may repeat)."""
    seen: list[int] = []
    for r in got:
        i = int(str(r["id"]))
        if i not in seen:
            seen.append(i)
    return seen


def test_entries_arrive_on_the_topic_in_order_with_their_ids(sandbox: Sandbox, tmp_path: Path) -> None:
    bs, topic = sandbox.bootstrap_servers, "audit-stream-order"
    make_topic(bs, topic, 1, 1, 0, assignment=[[0]])
    store = Store(tmp_path / "console.db")
    ids = [store.audit.record("ann", "c1", "submit", {"i": i}, "run recorded") for i in range(25)]
    Shipper(store, [KafkaSink(settings_for(sandbox), topic)], batch=10).drain()
    got = consume_all(bs, topic, len(ids))
    assert [r["id"] for r in got] == ids  # once each: nothing was sent again
    assert got[3]["request"] == {"i": 3} and got[3]["user"] == "ann" and got[3]["outcome"] == "run recorded"
    assert store.stream.get(f"kafka:sandbox/{topic}") == ids[-1]


def test_none_is_lost_while_the_topics_broker_is_down(sandbox: Sandbox, tmp_path: Path) -> None:
    bs, topic = sandbox.bootstrap_servers, "audit-stream-outage"
    make_topic(bs, topic, 1, 1, 0, assignment=[[2]])  # its only replica on broker 2
    store = Store(tmp_path / "console.db")
    shipper = Shipper(store, [KafkaSink(settings_for(sandbox), topic, timeout_s=4.0)])
    stop = start_thread(shipper, interval_s=0.2)
    ids: list[int] = []

    def write(n: int, phase: str) -> None:
        ids.extend(store.audit.record("ann", "c1", "throttle", {"phase": phase, "i": i}, "sent") for i in range(n))

    try:
        write(5, "before")
        wait_for(lambda: store.stream.get(shipper.sinks[0].name) == ids[-1], timeout=30, what="the first entries")
        sandbox.stop("broker-2")
        try:
            write(5, "during")
            wait_for(lambda: shipper.last[shipper.sinks[0].name].problem, timeout=30, what="a failed delivery")
            assert store.stream.get(shipper.sinks[0].name) == ids[4]  # the cursor waits
            write(5, "during")
        finally:
            sandbox.start("broker-2")
        with ClusterReader(settings_for(sandbox)) as reader:
            wait_for(lambda: (b := reader.snapshot().broker(2)) is not None and b.live, timeout=90, what="broker 2")
        write(5, "after")
        wait_for(lambda: store.stream.get(shipper.sinks[0].name) == ids[-1], timeout=90, what="every entry shipped")
    finally:
        stop.set()
    got = consume_all(bs, topic, len(ids))
    assert in_order_once_each(got) == ids
    phases = {int(str(r["id"])): r["request"]["phase"] for r in got}  # type: ignore[index]
    assert [phases[i] for i in ids] == ["before"] * 5 + ["during"] * 10 + ["after"] * 5


def test_a_producer_pointed_at_the_wrong_port_loses_nothing_once_pointed_right(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    bs, topic = sandbox.bootstrap_servers, "audit-stream-port"
    make_topic(bs, topic, 1, 1, 0, assignment=[[1]])
    store = Store(tmp_path / "console.db")
    ids = [store.audit.record("bob", "c1", "cancel", {"i": i}, "accepted") for i in range(6)]
    wrong = ConnectionSettings({"bootstrap.servers": "127.0.0.1:1"}, name="audit", timeout_s=2.0)
    (turn,) = Shipper(store, [KafkaSink(wrong, topic, timeout_s=3.0)]).ship_once()
    assert turn.taken == 0 and turn.problem and store.stream.get("kafka:audit/audit-stream-port") == 0
    right = ConnectionSettings({"bootstrap.servers": bs}, name="audit", timeout_s=5.0)
    more = store.audit.record("bob", "c1", "cancel", {"i": 6}, "accepted")
    Shipper(store, [KafkaSink(right, topic)]).drain()  # the same sink (same name): it resumes from its cursor
    assert in_order_once_each(consume_all(bs, topic, len(ids) + 1)) == [*ids, more]
