"""The demo's reassignment as a run of this console (``sandbox up --demo-reassignment``): the
``payments`` topic moved one broker along, throttled, recorded and audited in the console's store
like any run, its first wave sent here; the console's server drives the rest, so the demo shows the
console's own flow (its Runs page, its rollback, its cancel) and not another mover's."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from console.access.auth import Identity, load_users
from console.access.settings import settings_from_args
from console.core.errors import SandboxError
from console.core.model import ClusterState, cluster_key
from console.core.states import WaveState
from console.plans.plan import Plan, PlanEntry
from console.runs.executor import Executor
from console.sandbox.demo import DEMO_REASSIGN_TOPIC, DEMO_THROTTLE_BYTES, one_broker_along
from console.services.runs import RunRequest, RunSettings, start_run
from console.state.reader import ClusterReader
from console.storage.store import Store

DEMO_USER = "sandbox-demo"
"""Who the demo's run is recorded as started by."""
FIRST_WAVE_S = 60.0
"""How long the first wave may take to be sent before the demo gives up."""


def demo_plan(state: ClusterState, topic: str = DEMO_REASSIGN_TOPIC) -> Plan:
    """Every partition of ``topic`` moved one broker along the ring of the cluster's brokers."""
    ring = sorted(b.id for b in state.brokers)
    entries = [
        PlanEntry(p.topic, p.partition, one_broker_along(p.replicas, ring))
        for p in state.partitions
        if p.topic == topic
    ]
    if not entries:
        raise SandboxError(f"The demo topic {topic} is not in the cluster.")
    return Plan(tuple(sorted(entries, key=lambda e: e.partition)))


def start_demo_run(
    bootstrap: str,
    zookeeper: str | None,
    users_file: Path,
    log: Callable[[str], None] = print,
    topic: str = DEMO_REASSIGN_TOPIC,
) -> int | None:
    """Record the demo's run in the console's store and send its first wave; None when the cluster
    already has the demo's topic in flight or the console already runs on it (a sandbox brought up
    again keeps its demo). The run is the sandbox's users' (``users_file``: no two-person rule)."""
    store = Store()
    with ClusterReader(settings_from_args(bootstrap, zookeeper, name="sandbox")) as reader:
        state = reader.snapshot(info=True)
        key = cluster_key(state, reader.settings.name)
        if any(p.topic == topic for p in state.in_flight) or store.runs.list(key, active_only=True):
            return None
        gateway = reader.gateway()
        plan = demo_plan(state, topic)
        log(f"Starting the console's run of {topic} ({len(plan)} partitions), throttled ...")
        name = f"demo: {topic} one broker along"
        request = RunRequest(Identity.cli(DEMO_USER), plan, name, RunSettings(rate=DEMO_THROTTLE_BYTES))
        run_id = start_run(store, gateway, state, request, users=load_users(users_file))
        _send_first_wave(store, Executor(store, gateway, DEMO_USER), run_id)
    return run_id


def _send_first_wave(store: Store, executor: Executor, run_id: int) -> None:
    """Drive ``run_id`` until its first wave is running, then give its lease up at once so that the
    console's server (its worker) takes the run over on its first page load."""
    deadline = time.monotonic() + FIRST_WAVE_S
    try:
        while True:
            executor.tick(run_id)
            waves = store.runs.waves(run_id)
            if any(w.state is not WaveState.PENDING and w.state is not WaveState.SUBMITTING for w in waves):
                return  # running (or, on a fast cluster, already done)
            if time.monotonic() > deadline:
                raise SandboxError(f"The demo's run {run_id} did not send its first wave within {FIRST_WAVE_S:.0f} s.")
            time.sleep(0.5)
    finally:
        store.runs.release(run_id, executor.owner)
