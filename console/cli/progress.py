"""The progress lines of a run ``submit`` drives: what each step did and, while a wave runs, its
bytes left, the copy rate and the ETA, from the estimates the Runs page shows
(:func:`console.present.estimate.wave_eta`)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

from console.core.model import ClusterState, SourceStatus
from console.core.states import WaveState
from console.moves.progress import CopyTracker, Progress
from console.plans.plan import parse_plan
from console.present.estimate import progress_text, wave_eta

if TYPE_CHECKING:
    from console.core.calibration import Calibration
    from console.runs.steps import Step
    from console.storage.store import Store

SHARED_S = 5.0
"""A snapshot the executor read this recently is the one a progress line reads (one read a tick, not two)."""


class RunProgress:
    """Called with each step of the run (``Executor.drive``'s ``progress``): prints its line on
    stderr when it says something new (the executor steps once a second, its lines read the
    cluster as read within :data:`SHARED_S`: the same line again is not printed)."""

    def __init__(
        self, store: Store, snapshot: Callable[..., ClusterState], calibration: Calibration | None = None
    ) -> None:
        self.store = store
        self.snapshot = snapshot
        self.calibration = calibration
        self.copies = CopyTracker()
        self.waves: dict[tuple[int, int], Progress] = {}
        self.said = ""

    def __call__(self, step: Step) -> None:
        line = self.line(step)
        if line != self.said:
            print(line, file=sys.stderr, flush=True)
            self.said = line

    def line(self, step: Step) -> str:
        """``run 3: wave 1: 2 of 6 done; 12.0 MB left, copying at 40.0 KB/s (broker 2, the busiest),
        ETA 5 min 3 s``; the step's words alone outside a running wave."""
        said = f"run {step.run.id}: {step.did}"
        if step.wave is None or step.run.state.terminal:
            return said
        waves = self.store.runs.waves(step.run.id)
        wave = next((w for w in waves if w.number == step.wave), None)
        if wave is None or wave.state is not WaveState.RUNNING:
            return said
        now = self.snapshot(max_age_s=SHARED_S)
        if now.status.metadata is not SourceStatus.OK:
            return said
        keys = [e.key for e in parse_plan(wave.entries_json).entries]
        tracker = self.waves.setdefault((step.run.id, wave.number), Progress())
        tracker.update(now, keys)
        self.copies.observe(now)
        eta = wave_eta(
            now,
            step.run.state,
            keys,
            lambda: [parse_plan(w.entries_json).entries for w in waves if w.state is WaveState.PENDING],
            step.run.rate,
            self.copies.rates(),
            self.copies.dir_rates(),
            self.calibration,
        )
        busiest = max(tracker.broker_rates().items(), key=lambda kv: kv[1], default=None)
        return f"{said}; " + progress_text(eta, (busiest[0][1], busiest[1]) if busiest is not None else None)
