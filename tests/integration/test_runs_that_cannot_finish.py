"""Runs that can never finish end, or say why they wait, on the real sandbox: a topic deleted
mid-run, an adding broker that is down, and abandoning a run."""

from __future__ import annotations

import json

from console import cli
from console.access.auth import Identity
from console.core.states import RunState
from console.moves.waves import WaveLimits
from console.plans.plan import Plan, PlanEntry
from console.runs.executor import Executor
from console.services import runs as run_service
from console.state.reader import ClusterReader
from console.storage.store import Store
from tests.integration.helpers import BROKERS, admin, clear_throttles, make_topic, no_throttles_left
from tests.support import settings_for, wait_for

SLOW = 2_000  # bytes/s: a move stays in flight for minutes


def _first_wave_sent(
    store: Store,
    reader: ClusterReader,
    topic: str,
    to: int,
    name: str,
    how: run_service.RunSettings,
    stuck_after_s: float | None = None,
) -> tuple[Executor, int]:
    """A run moving partition 0 of ``topic`` to broker ``to`` (``how``: its :class:`RunSettings`), and
    its executor once the first wave is sent."""
    gateway = reader.gateway()
    plan = Plan.of([PlanEntry(topic, 0, (to,))])
    request = run_service.RunRequest(Identity.cli("ann"), plan, name, how)
    run_id = run_service.start_run(store, gateway, reader.snapshot(), request, users=None)
    executor = Executor(store, gateway, "ann", stuck_after_s=stuck_after_s)
    assert executor.tick(run_id).did.startswith("wave 1 submitted")
    return executor, run_id


def _ticks(executor: Executor, run_id: int, until: object, timeout: float, what: str) -> None:
    def step() -> bool:
        executor.tick(run_id)
        return bool(until())  # type: ignore[operator]

    wait_for(step, timeout=timeout, every=1.0, what=what)


def test_a_run_whose_topic_is_deleted_ends_with_the_reason(sandbox, tmp_path, monkeypatch):
    monkeypatch.setenv("CONSOLE_DATA_DIR", str(tmp_path))
    bs = sandbox.bootstrap_servers
    make_topic(bs, "s-deleted", 1, 1, 40, assignment=[[0]])
    store = Store()
    with ClusterReader(settings_for(sandbox)) as reader:
        executor, run_id = _first_wave_sent(
            store, reader, "s-deleted", 1, "deleted mid-run", how=run_service.RunSettings(rate=10_000)
        )
        try:
            # ZooKeeper mode deletes a topic only once its reassignment is over: the run must end
            # all the same, the partition gone, instead of waiting for it for ever
            client = admin(bs)  # kept alive until the futures resolve
            for f in client.delete_topics(["s-deleted"], operation_timeout=30).values():
                f.result(timeout=60)
            _ticks(executor, run_id, lambda: not store.runs.require(run_id).active, 120, "the run ended")
            run = store.runs.require(run_id)
            assert run.state is RunState.COMPLETED
            gone = [o for o in store.runs.outcomes(run_id) if o.code == "PARTITION_GONE"]
            assert [(o.name, o.message) for o in gone] == [("s-deleted-0", "its topic was deleted")]
            assert not store.runs.ledger(run_id)  # its throttles are off (the topic's went with it)
            rates = reader.snapshot().throttles.broker_map()
            assert not any(rates.get(b) for b in ("0", "1")), rates
        finally:
            clear_throttles(bs, BROKERS, [])


def test_a_run_whose_adding_broker_is_down_is_flagged_stuck_then_abandoned(sandbox, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("CONSOLE_DATA_DIR", str(tmp_path))
    bs = sandbox.bootstrap_servers
    make_topic(bs, "s-stuck", 1, 1, 300, assignment=[[0]])
    store = Store()
    with ClusterReader(settings_for(sandbox)) as reader:
        executor, run_id = _first_wave_sent(
            store,
            reader,
            "s-stuck",
            2,
            "stuck",
            stuck_after_s=5,
            how=run_service.RunSettings(rate=SLOW, limits=WaveLimits(1)),
        )
        try:
            sandbox.stop("broker-2", hard=True)
            wait_for(
                lambda: (b := reader.snapshot().broker(2)) is not None and not b.live,
                timeout=60,
                what="broker 2 seen down",
            )
            _ticks(executor, run_id, lambda: store.runs.stuck(run_id), 60, "the run flagged stuck")
            why = store.runs.stuck(run_id) or ""
            assert "broker 2 is down" in why and "s-stuck-0" in why, why
            # the CLI says so too
            assert cli.main(["runs", "--json"]) == 0
            (row,) = [r for r in json.loads(capsys.readouterr().out) if r["run"] == run_id]
            assert "broker 2 is down" in row["stuck"]
            store.runs.release(run_id, executor.owner)
            assert (
                cli.main(
                    [
                        "runs",
                        "--abandon",
                        str(run_id),
                        "--bootstrap-server",
                        bs,
                        "--why",
                        "broker 2 is gone",
                        "--cancel-reassignments",
                    ]
                )
                == 0
            )
            out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
            assert out["state"] == "abandoned" and out["cancelled"][0]["partition"] == "s-stuck-0"
        except BaseException:
            clear_throttles(bs, BROKERS, ["s-stuck"])
            raise
        finally:
            sandbox.start("broker-2")
        assert store.runs.require(run_id).state is RunState.ABANDONED
        wait_for(
            lambda: not (p := reader.snapshot().partition("s-stuck", 0)).reassigning and p.replicas == (0,),
            timeout=60,
            what="back on its original replica",
        )
        assert [a.outcome for a in store.audit.entries(action="run-stuck")] == ["stuck"]
        # what the run set on the live brokers is off; broker 2 was down, so its rate waits in the
        # ledger for the sweeper, which takes it off once the broker is back
        assert {e.name for e in store.runs.ledger(run_id)} == {"2"}
        wait_for(lambda: (b := reader.snapshot().broker(2)) is not None and b.live, timeout=90, what="broker 2 back")
        assert cli.main(["throttle", "--bootstrap-server", bs, "--sweep", "--yes"]) == 0
        assert not store.runs.ledger(run_id)
        wait_for(lambda: no_throttles_left(reader.snapshot()), timeout=30, what="no throttle left")
        wait_for(lambda: not reader.snapshot().under_replicated, timeout=90, what="every partition in sync again")
