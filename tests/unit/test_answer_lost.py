"""A request that changes the cluster and loses its answer (a timeout after the controller took it, or
before): the console reads what the cluster shows and says applied, not applied or not known; it
never says "nothing was applied" unseen, and never sends the request again blind.

The fake applies the call and then raises :class:`AnswerLost` (``applied=True``), or raises it
without applying; the Kafka adapter's own retry loop is checked with a client that raises
kafka-python's errors.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from kafka import errors as ke

from console.access.auth import Identity
from console.access.settings import ConnectionSettings
from console.adapters.kafka.base import Client
from console.core.errors import AnswerLost, ClusterUnavailable, ConsoleError
from console.core.model import ClusterState
from console.core.states import RunState, WaveState
from console.moves.cancel import plan_cancel
from console.moves.waves import WaveLimits
from console.plans.plan import Plan, PlanEntry
from console.runs.audited import ANSWER_LOST
from console.runs.executor import Executor
from console.runs.settle import APPLIED_UNANSWERED
from console.runs.steps import Step
from console.services import cancel as cancel_service
from console.services import runs as run_service
from console.storage.store import Store
from tests.fakes.cluster import FakeCluster
from tests.unit.builders import ids

pytestmark = pytest.mark.usefixtures("no_sleep")

LOST = AnswerLost("AlterPartitionReassignments was sent and its answer did not come back.", "Look first.")


class _Fake(FakeCluster):
    """The fake, whose next ``blind_looks`` lean reads (the look after a lost answer) get no
    answer from ListPartitionReassignments."""

    blind_looks = 0

    def snapshot(self, max_age_s: float = 0.0, *, lean: bool = False, full: bool = False) -> ClusterState:
        if lean and self.blind_looks > 0:
            self.blind_looks -= 1
            self.fail_next("snapshot:reassignments", ClusterUnavailable("ListPartitionReassignments timed out."))
        return super().snapshot(max_age_s, lean=lean, full=full)


def _cluster() -> _Fake:
    return _Fake.of(4, {"t": [(0, 1), (1, 2)], "u": [(2, 0)]}, size=4_000, copy_rate=10_000)


def _start(store: Store, fake: FakeCluster) -> int:
    plan = Plan.of([PlanEntry("t", 0, ids(3, 1)), PlanEntry("t", 1, ids(0, 2))])
    return run_service.start_run(
        store,
        fake,
        fake.snapshot(),
        run_service.RunRequest(
            Identity.cli("ann"), plan, "r", run_service.RunSettings(rate=1_000, limits=WaveLimits())
        ),
        users=None,
    )


def _tick(ex: Executor, run_id: int) -> Step:
    try:
        return ex.tick(run_id)
    except ConsoleError as e:
        return Step(ex.store.runs.require(run_id), None, f"retrying: {e.message}")


def _to_end(ex: Executor, fake: FakeCluster, run_id: int) -> list[Step]:
    steps: list[Step] = []
    for _ in range(100):
        steps.append(_tick(ex, run_id))
        if steps[-1].run.state.terminal:
            return steps
        fake.advance(1.0)
    raise AssertionError([s.did for s in steps[-5:]])


def _answers(store: Store, action: str) -> list[tuple[str, str | None]]:
    return [(e.outcome, e.response) for e in store.audit.entries() if e.action == action and e.ref is not None]


def test_a_wave_the_controller_took_before_its_answer_was_lost_is_applied_and_not_sent_again(store: Store) -> None:
    fake = _cluster()
    run_id = _start(store, fake)
    fake.fail_next("alter_reassignments", LOST, applied=True)

    steps = _to_end(Executor(store, fake, "ann"), fake, run_id)

    assert steps[-1].run.state is RunState.COMPLETED
    assert len(fake.calls_to("alter_reassignments")) == 1  # looked at, never sent again
    outcomes = store.runs.outcomes(run_id, 1)
    assert {o.code for o in outcomes} == {APPLIED_UNANSWERED} and all(o.accepted for o in outcomes)
    [(word, response)] = _answers(store, "submit-wave")
    assert word == "accepted" and "the answer was lost; the cluster shows it applied" in (response or "")


def test_a_wave_whose_answer_was_lost_before_the_controller_took_it_is_sent_again_after_a_look(store: Store) -> None:
    fake = _cluster()
    run_id = _start(store, fake)
    fake.fail_next("alter_reassignments", LOST)  # raised before anything changed

    steps = _to_end(Executor(store, fake, "ann"), fake, run_id)

    assert steps[-1].run.state is RunState.COMPLETED
    calls = fake.calls_to("alter_reassignments")
    assert len(calls) == 2 and calls[0].args == calls[1].args  # the same partitions, once more, after the look
    assert {o.code for o in store.runs.outcomes(run_id, 1)} == {None}
    looks = [c for c in fake.calls if c.method == "snapshot"]
    assert looks, "the cluster was read between the lost answer and the second request"


def test_a_lost_answer_the_cluster_cannot_tell_is_said_not_known_and_reconciled_at_the_next_step(store: Store) -> None:
    fake = _cluster()
    run_id = _start(store, fake)
    ex = Executor(store, fake, "ann")
    fake.fail_next("alter_reassignments", LOST, applied=True)
    fake.blind_looks = 1  # the look after the lost answer: ListPartitionReassignments does not answer

    first = _tick(ex, run_id)

    assert first.did.startswith("retrying:") and "not known" in first.did
    assert next(w.state for w in store.runs.waves(run_id)) is WaveState.SUBMITTING
    [(word, response)] = _answers(store, "submit-wave")
    assert word == ANSWER_LOST and json.loads(response or "{}")["applied"] == "not known"
    steps = _to_end(ex, fake, run_id)
    assert steps[-1].run.state is RunState.COMPLETED
    assert len(fake.calls_to("alter_reassignments")) == 1  # the next step found it applied: not sent twice
    assert {o.code for o in store.runs.outcomes(run_id, 1)} == {"ALREADY_SENT"}


def test_a_throttle_whose_answer_was_lost_is_applied_when_the_brokers_report_it(store: Store) -> None:
    fake = _cluster()
    run_id = _start(store, fake)
    fake.fail_next("alter_configs", AnswerLost("No answer came back for the config change.", ""), applied=True)

    steps = _to_end(Executor(store, fake, "ann"), fake, run_id)

    assert steps[-1].run.state is RunState.COMPLETED
    throttle_answers = _answers(store, "throttle-set")
    assert throttle_answers[0][0] == "applied" and "the brokers report it" in (throttle_answers[0][1] or "")
    sets = list(fake.calls_to("alter_configs"))
    assert len(sets) == 2  # the throttle once, its removal once: not set again after the lost answer


def test_a_cancel_whose_answer_was_lost_says_what_the_cluster_shows(tmp_path: Path) -> None:
    fake = _cluster()
    store = Store(tmp_path / "c.db")
    run_id = _start(store, fake)
    ex = Executor(store, fake, "ann")
    while store.runs.waves(run_id)[0].state is not WaveState.RUNNING:
        _tick(ex, run_id)
    state = fake.snapshot()
    plan = plan_cancel(state, [("t", 0)], ours=[("t", 0)])
    assert list(plan.targets) == [("t", 0)]
    fake.fail_next("alter_reassignments", LOST, applied=True)

    result = cancel_service.cancel(store, fake, Identity.cli("ann"), state.cluster_id or "c", plan, {}, wait_s=1)

    assert [o.code for o in result.accepted] == [APPLIED_UNANSWERED]
    assert len(fake.calls_to("alter_reassignments")) == 2  # the wave, then the cancel once
    store.close()


class _Client:
    """kafka-python's admin client as the adapter's retry loop sees it: each call raises the next error."""

    def __init__(self, errors: list[Exception]) -> None:
        self.errors = errors
        self.calls = 0

    def close(self) -> None:
        pass


def _gateway(client: _Client) -> Client:
    """The gateway's connection, through which its API families send."""
    gw = Client(ConnectionSettings({"bootstrap.servers": "127.0.0.1:1"}))
    gw._kp = client  # the retry loop drops it after a failure; it is put back for the next try
    gw.kafka_python = lambda: client  # type: ignore[method-assign]
    return gw


def _call(client: _Client) -> Any:
    client.calls += 1
    raise client.errors[min(client.calls, len(client.errors)) - 1]


def test_the_adapter_sends_a_write_whose_answer_timed_out_only_once() -> None:
    client = _Client([ke.KafkaTimeoutError("Request timed out")])
    with pytest.raises(AnswerLost) as lost:
        _gateway(client)._to_controller("AlterPartitionReassignments", lambda c: _call(c), 5, {}, write=True)
    assert client.calls == 1
    assert "may have applied it" in lost.value.message and "Nothing of this request" not in str(lost.value)


def test_the_adapter_sends_again_a_write_the_controller_did_not_take_and_says_so_truly() -> None:
    client = _Client([ke.NotControllerError()])
    with pytest.raises(ClusterUnavailable) as failed:
        _gateway(client)._to_controller("AlterPartitionReassignments", lambda c: _call(c), 3, {}, write=True)
    assert client.calls == 3 and not isinstance(failed.value, AnswerLost)
    assert "Nothing of this request was applied" in failed.value.hint
