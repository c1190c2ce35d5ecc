"""A wave is completed once every broker shows its partitions at their targets, not as soon as
the controller does: a broker whose metadata trails the controller's holds the wave (and the next
one) with words saying what it still shows, up to ``AGREE_S``; the wave's audit entry says what
the brokers showed and how long it took."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from console.access.auth import Identity
from console.core.model import BrokerId
from console.core.states import RunState, WaveState
from console.moves.readback import AGREE_S
from console.moves.waves import WaveLimits
from console.plans.plan import Plan, PlanEntry
from console.runs import watching
from console.runs.executor import Executor
from console.runs.steps import Step
from console.services import runs as run_service
from console.storage.store import Store
from tests.fakes.cluster import FakeCluster

pytestmark = pytest.mark.unit


def two_waves(store: Store, lag_s: float) -> tuple[FakeCluster, Executor, int]:
    """t-0 and t-1 each onto broker 3, one move per broker: two waves; broker 2 trails the controller by ``lag_s``."""
    fake = FakeCluster.of(4, {"t": [(0, 1), (1, 2)]}, size=4_000, copy_rate=10_000)
    fake.broker_lag_s = {BrokerId(2): lag_s}
    CLOCK[:] = [fake]
    plan = Plan.of([PlanEntry("t", 0, (BrokerId(3), BrokerId(1))), PlanEntry("t", 1, (BrokerId(3), BrokerId(2)))])
    how = run_service.RunSettings(limits=WaveLimits(moves_per_broker=1))
    run_id = run_service.start_run(
        store, fake, fake.snapshot(), run_service.RunRequest(Identity.cli("ann"), plan, "r", how), users=None
    )
    ex = Executor(store, fake, "ann", settle_s=0, poll_s=0)
    return fake, ex, run_id


@pytest.fixture(autouse=True)
def fake_time(monkeypatch: pytest.MonkeyPatch, no_sleep: list[float]) -> None:
    """The wave's deadline on the fake's clock (set by each test through ``CLOCK``)."""
    monkeypatch.setattr(watching, "time", SimpleNamespace(sleep=no_sleep.append, monotonic=lambda: CLOCK[0].clock))


CLOCK: list[FakeCluster] = []


def ticks_until_wave_done(ex: Executor, fake: FakeCluster, run_id: int, wave: int) -> list[Step]:
    steps = []
    for _ in range(200):
        steps.append(ex.tick(run_id))
        if store_wave(ex.store, run_id, wave) is WaveState.COMPLETED:
            return steps
        fake.advance(1.0)
    raise AssertionError(f"wave {wave} never completed: {[s.did for s in steps[-3:]]}")


def store_wave(store: Store, run_id: int, number: int) -> WaveState:
    return next(w.state for w in store.runs.waves(run_id) if w.number == number)


def test_a_wave_waits_for_every_broker_to_show_its_partitions_at_their_target(store: Store) -> None:
    fake, ex, run_id = two_waves(store, lag_s=5.0)
    steps = ticks_until_wave_done(ex, fake, run_id, 1)
    held = [s.did for s in steps if "at the target on the controller" in s.did]
    assert held, [s.did for s in steps]
    assert held[0].startswith("wave 1: at the target on the controller; the brokers still show the old replica set")
    assert "(broker 2: 1)" in held[0]
    assert len(held) >= 3, "held while broker 2 lagged (about 5 s of ticks)"
    assert not [c for c in fake.calls_to("alter_reassignments") if ("t", 1) in c.args[0]], "wave 2 not sent yet"
    (done,) = store.audit.entries(action="wave-complete")
    brokers = json.loads(done.response or "{}")["brokers"]
    assert brokers["shown"] == 1 and brokers["behind_count"] == 0 and 4.0 <= brokers["slowest_s"] <= 7.0


def test_brokers_that_never_catch_up_hold_the_wave_only_until_the_deadline_and_it_is_said(store: Store) -> None:
    fake, ex, run_id = two_waves(store, lag_s=10 * AGREE_S)
    steps = ticks_until_wave_done(ex, fake, run_id, 1)
    held = [s for s in steps if "at the target on the controller" in s.did]
    assert AGREE_S - 2 <= len(held) <= AGREE_S + 2
    (done,) = store.audit.entries(action="wave-complete")
    brokers = json.loads(done.response or "{}")["brokers"]
    assert brokers["shown"] == 0 and brokers["behind_count"] == 1
    assert brokers["behind"] == [{"partition": "t-0", "brokers": {"2": [0, 1]}}]
    assert store.runs.require(run_id).state is RunState.RUNNING
