"""A cancel's words against what the brokers show, on a real cluster whose brokers trail the
controller: one broker (a follower voter) is paused (SIGSTOP) before the cancel, so that its own
metadata keeps the old replica sets while the controller has taken the cancel. The console does
not say "cancelled" while that broker cannot be read or shows the old replica set; it says so once
every broker shows the original replicas, which the official ``kafka-topics --describe`` asked of
that broker then confirms. Slow (a sandbox of its own, a broker paused): marked to run alone,
``pytest -m lagging_brokers``."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator

import pytest

from console.access.auth import Identity
from console.moves.cancel import CancelVerdict, plan_cancel
from console.sandbox.cluster import Sandbox
from console.sandbox.demo import set_broker_rates
from console.services import cancel as cancel_service
from console.state.reader import ClusterReader
from console.storage.store import Store
from tests.integration.helpers import (
    BROKERS,
    LAG_SESSION_S,
    in_flight,
    make_topic,
    reassign,
    throttle_topic_all,
)
from tests.support import own_sandbox, settings_for, wait_for

pytestmark = pytest.mark.lagging_brokers
TOPIC = "lagging"
PARTS = 4
PAUSE_S = 8.0


@pytest.fixture(scope="module")
def lagged(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sandbox]:
    """A paused broker stays registered and unfenced (a session timeout longer than the pause)."""
    yield from own_sandbox(
        tmp_path_factory, "sandbox-lagging", broker_config={"broker.session.timeout.ms": LAG_SESSION_S * 1000}
    )


def described(sb: Sandbox, broker: int) -> dict[int, tuple[int, ...]]:
    """Each partition's replicas as the official ``kafka-topics --describe`` prints them, asked of ``broker``."""
    port = next(b["port"] for b in sb.brokers if b["id"] == broker)
    done = subprocess_describe(sb, f"127.0.0.1:{port}")
    out: dict[int, tuple[int, ...]] = {}
    for line in done.splitlines():
        fields = dict(f.split(": ", 1) for f in line.strip().split("\t") if ": " in f)
        if fields.get("Topic") == TOPIC and "Partition" in fields:
            out[int(fields["Partition"])] = tuple(int(b) for b in fields["Replicas"].split(","))
    return out


def subprocess_describe(sb: Sandbox, bootstrap: str) -> str:
    import subprocess

    argv = sb.tool_argv("org.apache.kafka.tools.TopicCommand", "--bootstrap-server", bootstrap, "--describe")
    return subprocess.run([*argv, "--topic", TOPIC], capture_output=True, text=True, timeout=120, check=True).stdout


def answered(read, lean: bool):  # type: ignore[no-untyped-def]
    """A snapshot once Metadata answered (tried up to five times)."""
    from console.core.model import SourceStatus

    for _ in range(5):
        state = read(0.0, lean=lean)
        if state.status.metadata is SourceStatus.OK:
            return state
    raise AssertionError("Metadata did not answer in five reads")


def moving_from_0_and_1(bs: str, topic: str) -> None:
    """``topic``'s partitions, two on broker 0 and two on 1, moving to broker 2 throttled at 2 KB/s
    (200 KB each: still copying when cancelled)."""
    make_topic(bs, topic, PARTS, 1, 200, assignment=[[0], [0], [1], [1]])
    set_broker_rates(bs, BROKERS, 2000)
    throttle_topic_all(bs, topic)
    reassign(bs, {(topic, p): [2] for p in range(PARTS)})
    wait_for(lambda: len(in_flight(bs, topic)) == PARTS, what="the moves in flight")


def follower_voter(reader: ClusterReader) -> int:
    """A voter that does not lead the quorum among brokers 0 and 1 (a source of the moves)."""
    quorum = reader.cluster_info(max_age_s=0).quorum
    assert quorum is not None and quorum.leader is not None
    return next(b for b in (0, 1) if b != quorum.leader)


def test_the_cancel_is_said_done_only_once_every_broker_shows_the_original_replicas(lagged, tmp_path, monkeypatch):
    monkeypatch.setenv("CONSOLE_DATA_DIR", str(tmp_path))
    bs = lagged.bootstrap_servers
    moving_from_0_and_1(bs, TOPIC)
    store = Store()
    with ClusterReader(settings_for(lagged)) as reader:
        victim = follower_voter(reader)
        seen = plan_cancel(reader.snapshot(lean=True), None, {})
        assert len(seen.cancel) == PARTS
        gateway = reader.gateway()
        # the cancel's look at what is in flight is taken once Metadata answered: what is under test
        # is what the console says after the controller took the cancel
        taken = gateway.snapshot
        monkeypatch.setattr(gateway, "snapshot", lambda max_age_s=0.0, *, lean=False: answered(taken, lean))
        pid = lagged.proc(f"broker-{victim}").pid
        os.kill(pid, signal.SIGSTOP)
        said: list[tuple[float, set[CancelVerdict]]] = []
        try:
            report = cancel_service.cancel_seen(store, gateway, Identity.cli("ann"), "sandbox", seen, {}, wait_s=0)
            assert report.count(CancelVerdict.ACCEPTED) == PARTS, report.rows()
            wait_for(lambda: not list(gateway.list_reassignments()), what="the controller took the cancel")
            taken_at = time.monotonic()
            while time.monotonic() - taken_at < PAUSE_S:
                report = cancel_service.look_back(gateway, report.leaving(()))
                said.append((time.monotonic() - taken_at, {v for _, v, _ in report.verdicts}))
                # fixed wait: the broker stays paused PAUSE_S, the cancel looked at once a second meanwhile
                time.sleep(1)
        finally:
            os.kill(pid, signal.SIGCONT)
        resumed_at = time.monotonic()
        # while the broker could not be read, nothing was said cancelled
        assert said and all(CancelVerdict.CANCELLED not in v for _, v in said), said
        assert "no answer from 1 broker " + str(victim) in report.summary(), report.summary()

        def settled() -> bool:
            nonlocal report
            report = cancel_service.look_back(gateway, report)
            return report.settled

        wait_for(settled, timeout=90, every=1, what="every broker shows the original replicas")
        took = time.monotonic() - resumed_at
        assert [v for _, v, _ in report.verdicts] == [CancelVerdict.CANCELLED] * PARTS, report.rows()
        assert report.result is not None and report.result.shown.agreed_s
        paused_for = resumed_at - report.result.answered_at  # from the controller's answer to the resume
        assert min(report.result.shown.agreed_s.values()) >= paused_for - 1, "not shown while the broker was paused"
        # what the console says now, the official tool asked of that very broker shows
        assert described(lagged, victim) == {p: (0,) if p < 2 else (1,) for p in range(PARTS)}
        print(f"brokers agreed {took:.1f} s after the broker resumed: {report.summary()}")


RECHECK = "lagging-recheck"
READS = 4
"""Lean reads taken while the broker is paused (each request goes to the next broker once the paused
one was silent a second: every read covers the partitions; 2 to 4 of 4 did not when a request that
met the paused broker waited out its timeout)."""


def test_a_cancel_while_a_broker_is_paused_never_says_a_partition_is_gone(lagged, tmp_path, monkeypatch):
    """The cancel's recheck reads the cluster while a broker is paused: every read covers the
    partitions (each request goes on to another broker); a read that did not would have them said
    not read, never gone (they are in flight all along); after the cancel, a partition no broker
    answered for is "not read back"."""
    from console.core.model import SourceStatus, partition_name
    from console.moves.cancel import recheck

    monkeypatch.setenv("CONSOLE_DATA_DIR", str(tmp_path))
    bs = lagged.bootstrap_servers
    moving_from_0_and_1(bs, RECHECK)
    store = Store()
    with ClusterReader(settings_for(lagged)) as reader:
        victim = follower_voter(reader)
        seen = plan_cancel(answered(reader.snapshot, True), [(RECHECK, p) for p in range(PARTS)], {}, True)
        assert len(seen.cancel) == PARTS
        gateway = reader.gateway()
        pid = lagged.proc(f"broker-{victim}").pid
        os.kill(pid, signal.SIGSTOP)
        partial = 0
        said: list[tuple[str, CancelVerdict, str]] = []
        try:
            for _ in range(READS):
                now = gateway.snapshot(lean=True)
                covered = SourceStatus.OK == now.status.metadata == now.status.reassignments
                partial += not covered
                said += [(partition_name(*k), v, d) for k, (v, d) in recheck(seen, now).verdicts.items()]
            report = cancel_service.cancel_seen(store, gateway, Identity.cli("ann"), "sandbox", seen, {}, wait_s=0)
            said += [(f"{t}-{p}", v, d) for (t, p), v, d in report.verdicts]
            report = cancel_service.look_back(gateway, report.leaving(gateway.list_reassignments()))
            said += [(f"{t}-{p}", v, d) for (t, p), v, d in report.verdicts]
        finally:
            os.kill(pid, signal.SIGCONT)
        print(
            f"{partial} of {READS} reads did not cover the partitions ({[f.message for f in now.findings]}); said: {said}"
        )
        assert partial == 0, "a read missed what is in flight while one broker hung"
        assert all(v is not CancelVerdict.GONE for _, v, _ in said), said
        assert all("gone" not in d for _, _, d in said), said
        for _, v, d in said:
            if v is CancelVerdict.NOT_READ and d.startswith("broker"):
                assert d == f"broker {victim} did not answer", said  # the broker named is the one paused
            if v is CancelVerdict.UNCONFIRMED and report.result is not None and report.result.shown.silent:
                assert f"broker {victim} did not answer" in d, said
        if left := in_flight(bs, RECHECK):  # not sent while unread: cancelled now, the broker answering again
            reassign(bs, dict.fromkeys(left))
        wait_for(lambda: not in_flight(bs, RECHECK), timeout=90, what="the moves cancelled")


QUICK = ("--wait", "0", "--json")
"""The answer said as JSON, nothing waited for after it (the brokers' read-back is another test's)."""
TRIES = 3
"""On-call cancels tried each way (the command line, the Live page's service) with a broker paused."""
GOAL_S = 15.0
"""From the cancel asked for (a fresh connection: nothing known of the paused broker) to the
controller's answer."""


def _cli_cancel(bs: str, topic: str, capsys: pytest.CaptureFixture[str]) -> set[str]:
    """``cancel --topic`` as on-call types it (default timeout, nothing waited for after the answer):
    the partitions the controller accepted."""
    import json

    from console import cli

    capsys.readouterr()
    code = cli.main(["cancel", "--bootstrap-server", bs, "--topic", topic, "--include-others", "--yes", *QUICK])
    out, err = capsys.readouterr()
    assert code == 0, (code, out, err)
    return set(json.loads(out)["accepted"])


def _page_cancel(bs: str, topic: str) -> set[str]:
    """What the Live page's Cancel… and Send do: a fresh lean read and its plan (the dialog's open,
    :func:`components.actions.freeze_cancel`), then :func:`cancel_service.cancel_seen` without waiting
    (the dialog's Send): the partitions the controller accepted."""
    from console.access.settings import ConnectionSettings
    from console.core.model import cluster_key

    with ClusterReader(ConnectionSettings({"bootstrap.servers": bs}, name="sandbox")) as reader:
        state = reader.snapshot(lean=True)
        plan = plan_cancel(state, [(topic, p) for p in range(PARTS)], {}, True)
        assert len(plan.cancel) == PARTS, (plan.explain(), [f.message for f in state.findings])
        report = cancel_service.cancel_seen(
            Store(), reader.gateway(), Identity.cli("ann"), cluster_key(state, "sandbox"), plan, {}, wait_s=0
        )
    assert report.result is not None, report.rows()
    return {o.name for o in report.result.accepted}


def test_the_on_call_cancel_is_sent_and_taken_while_a_broker_hangs(lagged, tmp_path, monkeypatch, capsys):
    """A follower voter paused (SIGSTOP: its sockets open, nothing answering) before the on-call engineer
    cancels, from a fresh connection that knows nothing of it: the command line's cancel and the Live
    page's are sent and accepted by the controller in every try, each within ``GOAL_S``."""
    monkeypatch.setenv("CONSOLE_DATA_DIR", str(tmp_path))
    bs = lagged.bootstrap_servers
    set_broker_rates(bs, BROKERS, 2000)
    with ClusterReader(settings_for(lagged)) as reader:
        quorum = reader.cluster_info(max_age_s=0).quorum
        assert quorum is not None and quorum.leader is not None
    followers = [b for b in BROKERS if b != quorum.leader]
    took: list[tuple[str, int, float, str]] = []
    for i in range(TRIES):
        for how in ("cli", "page"):
            topic = f"hung-{how}-{i}"
            make_topic(bs, topic, PARTS, 1, 200, assignment=[[0], [1], [2], [0]])
            throttle_topic_all(bs, topic)
            reassign(bs, {(topic, p): [(p + 1) % 3] for p in range(PARTS)})
            wait_for(lambda t=topic: len(in_flight(bs, t)) == PARTS, what="the moves in flight")
            victim = followers[i % len(followers)]
            pid = lagged.proc(f"broker-{victim}").pid
            os.kill(pid, signal.SIGSTOP)
            t0 = time.monotonic()
            try:
                accepted = _cli_cancel(bs, topic, capsys) if how == "cli" else _page_cancel(bs, topic)
                said = "accepted" if len(accepted) == PARTS else f"accepted {sorted(accepted)}"
            except Exception as e:  # said with the time it took: the other tries go on
                said = f"failed: {str(e)[:300]}"
            took.append((how, victim, time.monotonic() - t0, said))
            os.kill(pid, signal.SIGCONT)
            if left := in_flight(bs, topic):  # not taken: cancelled now, the broker answering again
                reassign(bs, dict.fromkeys(left))
            wait_for(lambda t=topic: not in_flight(bs, t), timeout=120, what="the moves cancelled")
    print(
        "on-call cancels with a broker paused: "
        + "; ".join(f"{h} (broker {v} paused) {s:.1f} s {w}" for h, v, s, w in took)
    )
    assert all(w == "accepted" for *_, w in took), took
    assert max(s for _, _, s, _ in took) < GOAL_S, took
