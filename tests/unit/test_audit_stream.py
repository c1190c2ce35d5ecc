"""The audit log as a stream, with fake sinks: in id order, at least once, a cursor per sink that a
restart resumes from, nothing lost while a sink refuses; the JSON-lines file; the settings."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Sequence
from pathlib import Path

import pytest

from console.access.settings import ConnectionSettings
from console.core.errors import ClusterUnavailable
from console.storage.audit import AuditEntry
from console.storage.store import Store
from console.stream.settings import StreamSettings, from_mapping, sinks_of
from console.stream.shipper import Shipper
from console.stream.sinks import FileSink, KafkaSink


class FlakySink:
    """Takes what it is given, except while ``down`` (raises, as an unreachable cluster does) or
    beyond ``take_at_most`` per batch (as a producer some of whose records timed out)."""

    def __init__(self, name: str = "fake") -> None:
        self.name = name
        self.got: list[int] = []
        self.down = False
        self.take_at_most: int | None = None

    def take(self, entries: Sequence[AuditEntry]) -> int:
        if self.down:
            raise ClusterUnavailable("the topic's cluster does not answer", "")
        n = len(entries) if self.take_at_most is None else min(len(entries), self.take_at_most)
        self.got.extend(e.id for e in entries[:n])
        return n

    def close(self) -> None:
        return None


def write(store: Store, n: int, user: str = "ann") -> list[int]:
    return [store.audit.record(user, "c1", "submit", {"i": i}, "run recorded") for i in range(n)]


def test_entries_reach_a_sink_in_order_once_each_and_its_cursor_moves(store: Store) -> None:
    ids = write(store, 7)
    sink = FlakySink()
    shipper = Shipper(store, [sink], batch=3)
    assert shipper.drain() == 7
    assert sink.got == ids
    assert store.stream.get("fake") == ids[-1]
    assert shipper.drain() == 0 and sink.got == ids  # nothing new: nothing sent again


def test_nothing_is_lost_while_the_sink_is_down_and_it_resumes_in_order(store: Store) -> None:
    sink = FlakySink()
    shipper = Shipper(store, [sink])
    first = write(store, 2)
    shipper.drain()
    sink.down = True
    during = write(store, 3)
    (turn,) = shipper.ship_once()
    assert turn.taken == 0 and turn.problem and "does not answer" in turn.problem
    assert store.stream.get("fake") == first[-1]
    sink.down = False
    after = write(store, 1)
    shipper.drain()
    assert sink.got == first + during + after


def test_a_partly_delivered_batch_is_resumed_after_its_last_delivered_entry(store: Store) -> None:
    ids = write(store, 5)
    sink = FlakySink()
    sink.take_at_most = 2
    shipper = Shipper(store, [sink])
    (turn,) = shipper.ship_once()
    assert (turn.taken, turn.cursor) == (
        2,
        ids[1],
    ) and turn.problem == "3 entries not delivered yet; sent again on the next turn"
    sink.take_at_most = None
    shipper.drain()
    assert sink.got == ids


def test_a_restarted_shipper_resumes_from_the_stored_cursor(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.db")
    ids = write(store, 4)
    Shipper(store, [FlakySink()], batch=2).ship_once()
    store.close()
    again = Store(tmp_path / "s.db")  # a restart: a new process, the same store
    sink = FlakySink()
    more = write(again, 1)
    Shipper(again, [sink]).drain()
    assert sink.got == ids[2:] + more
    again.close()


def test_each_sink_keeps_its_own_cursor(store: Store) -> None:
    ids = write(store, 3)
    up, down = FlakySink("up"), FlakySink("down")
    down.down = True
    shipper = Shipper(store, [up, down])
    shipper.drain()
    assert up.got == ids and down.got == []
    assert (store.stream.get("up"), store.stream.get("down")) == (ids[-1], 0)
    down.down = False
    shipper.drain()
    assert down.got == ids


def test_a_gap_in_the_ids_is_waited_for_then_passed_over(store: Store) -> None:
    ids = write(store, 3)
    store.stream.advance("fake", ids[0] - 2)  # as if an id before the first were given and never committed
    now = [100.0]
    sink = FlakySink()
    shipper = Shipper(store, [sink], gap_wait_s=5, clock=lambda: now[0])
    assert shipper.drain() == 0  # the missing id may still come
    now[0] += 4
    assert shipper.drain() == 0
    now[0] += 2
    assert shipper.drain() == 3 and sink.got == ids


def test_a_cursor_never_goes_back(store: Store) -> None:
    store.stream.advance("s", 5)
    store.stream.advance("s", 3)
    assert store.stream.get("s") == 5 and store.stream.get("other") == 0


def test_the_json_lines_file_holds_one_entry_per_line_with_its_id(store: Store, tmp_path: Path) -> None:
    first = store.audit.record("ann", "c1", "submit", {"run": 1, "name": "x"}, "run recorded", plan_hash="abc")
    second = store.audit.record("bob", "c1", "cancel", {"run": 1}, "sent", ref=first, response={"ok": True})
    path = tmp_path / "audit.jsonl"
    shipper = Shipper(store, [FileSink(path)])
    shipper.drain()
    third = store.audit.record("ann", "c2", "throttle", {"rate": 5}, "refused")
    shipper.drain()
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert [x["id"] for x in lines] == [first, second, third]
    assert lines[0]["request"] == {"run": 1, "name": "x"} and lines[0]["plan_hash"] == "abc"
    assert lines[0]["response"] is None and lines[1]["response"] == {"ok": True} and lines[1]["ref"] == first
    assert (lines[2]["user"], lines[2]["cluster"], lines[2]["action"], lines[2]["outcome"]) == (
        "ann",
        "c2",
        "throttle",
        "refused",
    )
    entry = store.audit.entries()[0]
    assert lines[0]["at"] == entry.at
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert store.stream.get(FileSink(path).name) == third


def test_a_file_that_cannot_be_written_is_said_and_retried(store: Store, tmp_path: Path) -> None:
    write(store, 2)
    sink = FileSink(tmp_path / "missing-dir" / "audit.jsonl")
    shipper = Shipper(store, [sink])
    (turn,) = shipper.ship_once()
    assert turn.taken == 0 and turn.problem and "No such file or directory" in turn.problem
    (tmp_path / "missing-dir").mkdir()
    assert shipper.drain() == 2


def test_the_settings_are_off_by_default_and_say_what_is_wrong() -> None:
    assert from_mapping(None) == (StreamSettings(), []) and not StreamSettings().on
    ok, problems = from_mapping({"file": "/tmp/a.jsonl", "topic": "audit", "cluster": "prod"})
    assert ok.on and problems == []
    _, problems = from_mapping({"topic": "audit", "colour": "red"})
    assert problems == [
        "[audit_stream] in secrets.toml: unknown keys colour (known: file, topic, cluster).",
        "[audit_stream] in secrets.toml: topic needs cluster = the name of a [clusters.<name>] table to produce to.",
    ]
    _, problems = from_mapping({"file": 3})
    assert problems == ["[audit_stream] in secrets.toml: file must be a non-empty string."]


def test_the_topic_sink_uses_the_named_clusters_settings() -> None:
    prod = ConnectionSettings({"bootstrap.servers": "k:9093", "security.protocol": "SSL"}, name="prod")
    sinks, problems = sinks_of(StreamSettings(topic="audit", cluster="prod"), {"prod": prod})
    (sink,) = sinks
    assert problems == [] and isinstance(sink, KafkaSink) and sink.settings is prod and sink.name == "kafka:prod/audit"
    sinks, problems = sinks_of(StreamSettings(topic="audit", cluster="nope"), {"prod": prod})
    assert sinks == [] and problems == [
        "[audit_stream] in secrets.toml: cluster 'nope' is not a known cluster (known: prod); the topic gets "
        "nothing until then."
    ]


def test_the_command_ships_to_a_file_once_and_resumes_after_its_cursor(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from console import cli

    monkeypatch.setenv("CONSOLE_DATA_DIR", str(tmp_path))
    store = Store()
    ids = write(store, 3)
    path = tmp_path / "audit.jsonl"
    assert cli.main(["audit-stream", "--file", str(path), "--once"]) == 0
    more = write(store, 2)
    assert cli.main(["audit-stream", "--file", str(path), "--once"]) == 0
    assert [json.loads(line)["id"] for line in path.read_text().splitlines()] == ids + more
    assert f"file:{path.resolve()}: up to entry {more[-1]}" in capsys.readouterr().err
    assert cli.main(["audit-stream", "--once"]) == 2
    assert "Nothing to ship to." in capsys.readouterr().err
    assert cli.main(["audit-stream", "--topic", "t", "--once"]) == 2
    assert "--topic needs the topic's cluster." in capsys.readouterr().err
    store.close()
