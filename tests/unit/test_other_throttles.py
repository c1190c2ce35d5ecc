"""After a cancel of reassignments another tool started with its throttle (as
``kafka-reassign-partitions.sh --execute --throttle`` sets it: the topic's replica lists, a rate on
every broker involved), the throttles it left on the cancelled partitions' topics and brokers are
said, left by another tool, and removed on request: exactly those, only while nothing in flight
needs them, never the cluster default nor what the console's runs set (issue 42). On the fake."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from console import cli
from console.access.auth import Identity
from console.cli import run_control
from console.cli import runs as runs_cli
from console.cli.exits import Exit
from console.core.limits import FOLLOWER_LIST, FOLLOWER_RATE, LEADER_LIST, LEADER_RATE
from console.core.model import BrokerId
from console.core.shown import BrokerTopicConfigs
from console.moves.cancel import plan_cancel
from console.moves.throttles import Leftover, LeftoverKind, left_on, leftover_throttles
from console.present.throttles import cleared_lines, sweep_command
from console.services import cancel as cancel_service
from console.services import other_throttles
from console.services import runs as run_service
from console.storage.store import Store
from tests.fakes.cluster import FakeCluster, FakeReader

pytestmark = pytest.mark.usefixtures("no_sleep")
ANN = Identity.cli("ann")
RATES = {LEADER_RATE: "1000", FOLLOWER_RATE: "1000"}


def official_moves() -> FakeCluster:
    """theirs-0 and theirs-1 moving from 0 and 1 onto 2 with the official tool's throttles; broker
    3 has a rate of its own (not the cancel's), and a cluster default is set."""
    fake = FakeCluster.of(4, {"theirs": [[0], [1]], "quiet": [[3]]}, size=10**9, copy_rate=1)
    fake.alter_reassignments({("theirs", 0): (BrokerId(2),), ("theirs", 1): (BrokerId(2),)})
    fake.topic_configs["theirs"] = {LEADER_LIST: "0:0,1:1", FOLLOWER_LIST: "0:2,1:2"}
    for b in (0, 1, 2):
        fake.broker_configs[BrokerId(b)] = dict(RATES)
    fake.broker_configs[BrokerId(3)] = {FOLLOWER_RATE: "5000"}
    fake.cluster_default = {FOLLOWER_RATE: "7000000"}
    return fake


def cancel_all(store: Store, fake: FakeCluster) -> list[Leftover]:
    seen = plan_cancel(fake.snapshot(lean=True), None, {})
    report = cancel_service.cancel_seen(store, fake, ANN, fake.cluster_id, seen, {}, wait_s=1)
    assert report.result is not None and len(report.result.left) == 2
    others = other_throttles.left_by_others(store, fake, fake.cluster_id, seen.cancel)
    assert others.topics == ("theirs",) and others.brokers == (0, 1, 2)
    return list(others.settings)


def on(settings: list[Leftover]) -> set[tuple[str, str]]:
    return {(lo.where, lo.key) for lo in settings}


THEIRS = {("topic theirs", LEADER_LIST), ("topic theirs", FOLLOWER_LIST)} | {
    (f"broker {b}", k) for b in (0, 1, 2) for k in RATES
}


def test_only_the_cancels_topics_and_brokers_and_never_what_a_run_set_or_the_default() -> None:
    state = official_moves().snapshot()
    assert left_on(leftover_throttles(state), ["theirs"], [BrokerId(0)]) == [], "in flight: needed"
    fake = official_moves()
    fake.alter_reassignments({("theirs", 0): None, ("theirs", 1): None})
    left = leftover_throttles(fake.snapshot(), include_cluster_default=True)
    got = left_on(left, ["theirs"], [BrokerId(0), BrokerId(2)], {("broker", "2", LEADER_RATE)})
    assert on(got) == {
        ("topic theirs", LEADER_LIST),
        ("topic theirs", FOLLOWER_LIST),
        ("broker 0", LEADER_RATE),
        ("broker 0", FOLLOWER_RATE),
        ("broker 2", FOLLOWER_RATE),
    }


def test_after_a_cancel_the_other_tools_throttles_are_listed_and_removed_exactly(store: Store) -> None:
    fake = official_moves()
    offered = cancel_all(store, fake)
    assert on(offered) == THEIRS, "broker 3's own rate and the cluster default are not the cancel's"
    done = other_throttles.clear_left_by_others(store, fake, ANN, offered, {"after_cancel": 1})
    assert on(list(done.sweep.removed)) == THEIRS and not done.sweep.still_set and not done.sweep.unconfirmed
    assert "theirs" not in fake.topic_configs or not fake.topic_configs["theirs"]
    assert all(not fake.broker_configs[BrokerId(b)] for b in (0, 1, 2))
    assert fake.broker_configs[BrokerId(3)] == {FOLLOWER_RATE: "5000"} and fake.cluster_default
    sweep = store.audit.entries(action="throttle-sweep")
    request = json.loads(sweep[0].request)
    assert request["left_by"] == "another tool" and request["after_cancel"] == 1
    assert [e.outcome for e in sweep] == ["sending", "removed"]


def test_a_topic_list_is_removed_only_once_every_broker_shows_it_gone(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Met on a loaded sandbox: the read-back asked one broker, which had applied the removal, and
    said "Removed (read back from the brokers)"; another broker, behind, still showed the topic's
    lists, as ``kafka-configs --describe`` did when it asked that one."""
    fake = official_moves()
    offered = cancel_all(store, fake)
    lists = {LEADER_LIST: "0:0,1:1", FOLLOWER_LIST: "0:2,1:2"}
    fake.topic_configs_behind[BrokerId(2)] = {"theirs": dict(lists)}
    looks: list[int] = []
    asked = fake.topic_configs_seen

    def catching_up(topics: tuple[str, ...]) -> tuple[BrokerTopicConfigs, ...]:
        looks.append(1)
        seen = asked(topics)
        if len(looks) == 2:  # broker 2 applies the change after the second look
            fake.topic_configs_behind.clear()
        return seen

    monkeypatch.setattr(fake, "topic_configs_seen", catching_up)
    done = other_throttles.clear_left_by_others(store, fake, ANN, offered)
    assert len(looks) == 3, "asked again while broker 2 still showed the lists"
    assert on(list(done.sweep.removed)) == THEIRS and not done.sweep.still_set

    fake = official_moves()
    offered = cancel_all(store, fake)
    fake.topic_configs_behind[BrokerId(2)] = {"theirs": dict(lists)}  # and it stays behind
    report = run_service.sweep(store, fake, ANN, offered, confirm_s=0)
    assert on(list(report.still_set)) == {("topic theirs", LEADER_LIST), ("topic theirs", FOLLOWER_LIST)}
    assert on(list(report.removed)) == THEIRS - on(list(report.still_set))
    assert "Removed (read back from the brokers): topic theirs" not in "\n".join(
        cleared_lines(report.removed, report.still_set, report.unconfirmed, (), ())
    )


def test_a_setting_something_in_flight_needs_by_the_click_is_kept_and_said(store: Store) -> None:
    fake = official_moves()
    offered = cancel_all(store, fake)
    fake.create_topic("later", [[2]])
    fake.alter_reassignments({("later", 0): (BrokerId(3),)})  # broker 2 takes part again
    fake.topic_configs["theirs"] = {}  # and someone removed the topic's lists meanwhile
    done = other_throttles.clear_left_by_others(store, fake, ANN, offered)
    assert on(list(done.needed_now)) == {("broker 2", LEADER_RATE), ("broker 2", FOLLOWER_RATE)}
    assert on(list(done.gone_already)) == {("topic theirs", LEADER_LIST), ("topic theirs", FOLLOWER_LIST)}
    assert on(list(done.sweep.removed)) == {(f"broker {b}", k) for b in (0, 1) for k in RATES}
    assert fake.broker_configs[BrokerId(2)] == RATES


def test_what_the_consoles_own_run_set_is_taken_off_by_the_run_and_never_listed(store: Store) -> None:
    from console.plans.plan import Plan, PlanEntry
    from tests.integration.helpers import first_wave_sent

    fake = FakeCluster.of(3, {"mine": [[0]]}, size=10**9, copy_rate=1)
    plan = Plan.of([PlanEntry("mine", 0, (BrokerId(1),))])
    run_id = first_wave_sent(store, fake, fake.snapshot(), plan, "mine", 1000)
    assert store.runs.ledger(run_id)
    seen = plan_cancel(fake.snapshot(lean=True), None, store.runs.active_partitions(fake.cluster_id))
    cancel_service.cancel_seen(
        store, fake, ANN, fake.cluster_id, seen, store.runs.active_partitions(fake.cluster_id), wait_s=1
    )
    assert other_throttles.left_by_others(store, fake, fake.cluster_id, seen.cancel).settings == ()


def cli_cancel(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str], fake: FakeCluster, *extra: str
) -> tuple[int, str, str]:
    monkeypatch.setenv("CONSOLE_DATA_DIR", str(tmp_path))
    monkeypatch.setattr(runs_cli, "connect", lambda args: FakeReader(fake))
    monkeypatch.setattr(run_control, "connect", lambda args: FakeReader(fake))
    monkeypatch.setattr("console.services.cancel.LOOK_EVERY_S", 0.01, raising=False)
    code = cli.main(list(extra))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_the_cli_cancel_says_what_the_other_tool_left_and_the_exact_command(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fake = official_moves()
    cancel = ["cancel", "--bootstrap-server", "fake:9092", "--all", "--yes", "--wait", "5"]
    code, _, err = cli_cancel(monkeypatch, tmp_path, capsys, fake, *cancel)
    assert code == Exit.OK, err
    assert "Throttles left by another tool (the official tool's --cancel would clear them), on topic theirs " in err
    assert "  broker 0: leader.replication.throttled.rate (1.0 KB/s)" in err
    assert "  topic theirs: follower.replication.throttled.replicas (0:2, 1:2)" in err
    command = "python -m console throttle --sweep --topic theirs --broker 0 --broker 1 --broker 2"
    assert f"Remove them: {command} --bootstrap-server fake:9092" in err
    assert fake.broker_configs[BrokerId(0)] == RATES, "only said"

    code, _, err = cli_cancel(
        monkeypatch, tmp_path, capsys, fake, *command.split()[3:], "--bootstrap-server", "x", "--yes"
    )
    assert code == Exit.OK, err
    assert all(not fake.broker_configs[BrokerId(b)] for b in (0, 1, 2)) and not fake.topic_configs["theirs"]
    assert fake.broker_configs[BrokerId(3)] == {FOLLOWER_RATE: "5000"}, "not the cancel's"


def test_the_cli_cancel_with_clear_throttles_removes_them_in_the_same_command(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fake = official_moves()
    cancel = ["cancel", "--bootstrap-server", "fake:9092", "--all", "--yes", "--wait", "5", "--json"]
    code, out, err = cli_cancel(monkeypatch, tmp_path, capsys, fake, *cancel, "--clear-throttles")
    assert code == Exit.OK, err
    said = json.loads(out.strip().splitlines()[-1])
    assert len(said["left_by_other_tools"]) == 8 and sorted(said["throttles_cleared"]) == sorted(
        said["left_by_other_tools"]
    )
    assert "Removed (read back from the brokers): broker 2: follower.replication.throttled.rate (1.0 KB/s)" in err
    assert all(not fake.broker_configs[BrokerId(b)] for b in (0, 1, 2)) and not fake.topic_configs["theirs"]
    assert fake.broker_configs[BrokerId(3)] == {FOLLOWER_RATE: "5000"} and fake.cluster_default
    assert Store(tmp_path / "console.db").audit.entries(action="throttle-sweep")[-1].outcome == "removed"


def test_the_command_quotes_what_a_shell_would_split() -> None:
    lo = Leftover(LeftoverKind.TOPIC, "a b", LEADER_LIST, "*")
    assert sweep_command([lo], ["--command-config", "my file"]) == (
        "python -m console throttle --sweep --topic 'a b' --command-config 'my file'"
    )
