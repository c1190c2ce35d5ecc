"""The demo's reassignment is a run of the console (``sandbox up --demo-reassignment``), not another
mover's: recorded and audited in the console's store, its first wave in flight, its lease given up
for the console's server to drive the rest."""

from __future__ import annotations

from pathlib import Path

import pytest

from console.access.sandbox_users import ensure_sandbox_users
from console.cli import main
from console.core.model import cluster_key
from console.core.states import RunState, WaveState
from console.sandbox.cluster import Sandbox
from console.sandbox.demo import DEMO_THROTTLE_BYTES
from console.state.reader import ClusterReader
from console.storage.store import Store
from tests.integration.helpers import make_topic, no_throttles_left
from tests.support import settings_for, wait_for


def test_the_demo_move_is_a_console_run_with_its_first_wave_in_flight(
    sandbox: Sandbox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from console.cli.demo import DEMO_USER, start_demo_run

    monkeypatch.setenv("CONSOLE_DATA_DIR", str(tmp_path))
    bs = sandbox.bootstrap_servers
    topic = "demo-run"
    make_topic(bs, topic, 3, 2, 300)  # 300 KB a partition at 10 KB/s: in flight for the whole test
    run_id = start_demo_run(bs, None, ensure_sandbox_users(tmp_path), log=print, topic=topic)
    assert run_id is not None
    store = Store()
    run = store.runs.require(run_id)
    assert (run.author, run.state, run.rate) == (DEMO_USER, RunState.RUNNING, DEMO_THROTTLE_BYTES)
    assert [w.state for w in store.runs.waves(run_id)] == [WaveState.RUNNING]
    with ClusterReader(settings_for(sandbox)) as reader:
        state = reader.snapshot()
        moving = {p.key for p in state.in_flight if p.topic == topic}
        # the partitions in flight are the console's own: no "another mover" anywhere
        assert moving == {(topic, p) for p in range(3)}
        assert moving <= set(store.runs.active_partitions(cluster_key(state, "sandbox")))
        assert state.throttles, "the run throttles its wave"
    # audited as any run, and given up at once for the console's server to take over
    assert [(e.user, e.outcome) for e in store.audit.entries(run.cluster, "submit")] == [(DEMO_USER, "run recorded")]
    assert store.runs.take(run_id, "the console's server", 30).holder is None
    # a second `sandbox up --demo-reassignment` on the same cluster leaves the demo as it is
    assert start_demo_run(bs, None, ensure_sandbox_users(tmp_path), log=print, topic=topic) is None
    store.runs.release(run_id, "the console's server")

    assert main(["cancel", "--bootstrap-server", bs, "--run", str(run_id), "--yes"]) == 0
    wait_for(lambda: store.runs.require(run_id).state is RunState.CANCELLED, timeout=60, what="the run cancelled")
    with ClusterReader(settings_for(sandbox)) as reader:
        wait_for(lambda: no_throttles_left(reader.snapshot()), timeout=60, what="no throttle left")
