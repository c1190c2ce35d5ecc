"""What the Runs page offers for an active run: only what applies to it as it is, a reason on every
button drawn off, and how a paused run ends."""

from __future__ import annotations

from console.core.states import RunState, SubmitPath, WaveState
from console.present.run_controls import ZOOKEEPER_NO_CANCEL, run_controls
from console.storage.runs import Run, RunLimits, Wave
from console.storage.store import Store

ENTRIES = '{"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[1]}]}'


def run(state: RunState, path: SubmitPath = SubmitPath.API) -> Run:
    return Run(7, "c1", "drain", "ann", 0.0, 0.0, state, ENTRIES, ENTRIES, "h", 10_000, RunLimits(5, 500, None), path)


def waves(*states: WaveState) -> list[Wave]:
    return [Wave(7, n, s, ENTRIES, None, None) for n, s in enumerate(states, 1)]


def test_paused_between_waves_stops_here_and_has_nothing_to_cancel() -> None:
    c = run_controls(run(RunState.PAUSED), waves(WaveState.COMPLETED, WaveState.PENDING, WaveState.PENDING), 0)
    assert (c.pause, c.resume, c.stop, c.cancel) == (False, True, "Stop here", False)
    assert "ends as stopped now" in c.stop_help
    assert c.ending is not None
    assert "paused** between waves: 1 of 3 completed" in c.ending and "wave 2 waits for Resume" in c.ending
    for way in ("**Resume**", "**Stop here**", "**Abandon…**", "nothing to cancel"):
        assert way in c.ending, way
    assert "Cancel the run" not in c.ending


def test_paused_while_a_wave_copies_says_each_way_to_end_it() -> None:
    c = run_controls(run(RunState.PAUSED), waves(WaveState.COMPLETED, WaveState.RUNNING, WaveState.PENDING), 1)
    assert (c.stop, c.cancel, c.cancel_off) == ("Stop after this wave", True, None)
    assert c.stop_help.startswith("Wave 2 finishes") and "wave 2's partitions" in c.cancel_help
    assert c.ending is not None and "wave 2 of 3 is still copying; wave 3 waits for Resume" in c.ending
    for way in ("**Resume**", "**Stop after this wave**", "**Cancel the run…**", "**Abandon…**"):
        assert way in c.ending, way


def test_paused_on_the_last_wave_completes_with_it() -> None:
    c = run_controls(run(RunState.PAUSED), waves(WaveState.COMPLETED, WaveState.RUNNING), 1)
    assert c.ending is not None and "it is the last wave: the run completes when it does" in c.ending


def test_running_and_stopping() -> None:
    running = run_controls(run(RunState.RUNNING), waves(WaveState.RUNNING, WaveState.PENDING), 1)
    assert (running.pause, running.resume, running.stop, running.ending) == (True, False, "Stop after this wave", None)
    stopping = run_controls(run(RunState.STOPPING), waves(WaveState.RUNNING, WaveState.PENDING), 1)
    assert stopping.stop is None and stopping.cancel and not stopping.pause and not stopping.resume


def test_a_cancel_that_cannot_be_pressed_says_why() -> None:
    c = run_controls(run(RunState.RUNNING, SubmitPath.ZOOKEEPER), waves(WaveState.RUNNING), 1)
    assert c.cancel and c.cancel_off == ZOOKEEPER_NO_CANCEL


def test_the_newest_audit_entry_of_the_clusters_a_page_shows(store: Store) -> None:
    """The Runs page tells that its picture is out of date by this one number."""
    assert store.audit.latest_id(("c1", "*")) == 0
    first = store.audit.record("ann", "c1", "pause", {"run": 7}, "paused")
    store.audit.record("bob", "c2", "pause", {"run": 8}, "paused")  # another cluster's: not this page's
    assert store.audit.latest_id(("c1", "*")) == first
    signed = store.audit.record("bob", "*", "sign-in", {}, "signed in")
    assert store.audit.latest_id(("c1", "*")) == signed
