"""An operator console for Apache Kafka partition reassignment: the public surface.

One import gives what notebooks and scripts use (the app and the CLI import the modules they
need directly)::

    from console import connect, parse_plan, diff, validate, rollback, Store

    with connect() as cluster:                 # the running sandbox, or connect("host:9092")
        state = cluster.snapshot(info=True)    # ClusterState: R, I, AR, RR of every partition; the release
    plan = parse_plan(open("plan.json").read())
    findings = validate(state, plan)           # errors first
    changes = diff(state, plan)                # per partition, broker, rack, movement
    back = rollback(state, plan).to_json()     # the way back, as the official tool of that release prints it
    made = generate(state, GenerateOptions(Goal.DECOMMISSION, (3,)))   # a plan for a goal, and its report
    runs = Store().runs.list()                 # the console's runs; Store().runs.detail(id) one with its waves
    past = load_history(tables_dir, state.cluster_id)   # moves, copy rates, broker load (pipeline output)

In a Jupyter kernel the records display as HTML (a summary, a table cut to 20 rows, the app's
charts) and each has ``.to_pandas()``: ``state``, ``plan``, ``changes``, ``findings``, ``made``
(and ``made.report``), a run's detail, ``past`` and a pipeline job's result.

Names are imported on first use, so ``import console`` stays cheap. The package's layout and
its two data paths are described in docs/ARCHITECTURE.md.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_PUBLIC = {
    # reading a cluster
    "connect": "console.state.reader",
    "ClusterReader": "console.state.reader",
    "ConnectionSettings": "console.access.settings",
    "settings_from_args": "console.access.settings",
    "ClusterState": "console.core.model",
    "Partition": "console.core.model",
    "Broker": "console.core.model",
    "Finding": "console.core.model",
    "Findings": "console.core.model",
    "Severity": "console.core.model",
    "BrokerId": "console.core.model",
    # plans
    "Plan": "console.plans.plan",
    "PlanEntry": "console.plans.plan",
    "parse_plan": "console.plans.plan",
    "rollback": "console.plans.plan",
    "plan_hash": "console.plans.plan",
    "diff": "console.plans.diff",
    "validate": "console.plans.validate",
    "rebase": "console.plans.rebase",
    "generate": "console.plans.generate",
    "GenerateOptions": "console.plans.generators.options",
    "Goal": "console.plans.generators.options",
    "Metric": "console.plans.generators.options",
    "Generated": "console.plans.generate",
    "Report": "console.plans.quality",
    "PlanDiff": "console.plans.diff",
    "impact": "console.moves.impact_columns",
    "Impact": "console.moves.impact",
    "Pricing": "console.moves.impact",
    "read_state": "console.state.document",
    # runs
    "Store": "console.storage.store",
    "RunState": "console.core.states",
    "WaveState": "console.core.states",
    "WaveLimits": "console.moves.waves",
    "plan_waves": "console.moves.waves",
    "plan_estimate": "console.moves.waves",
    "estimate_run": "console.moves.progress",
    "RunDetail": "console.storage.runs",
    "LiveGateway": "console.adapters.gateway",
    "plan_cancel": "console.moves.cancel",
    "services": "console.services",
    # history (the Spark pipeline; the readers need no Spark)
    "replica_rows": "console.pipeline.snapshots",
    "SnapshotWriter": "console.pipeline.collect",
    "load_history": "console.pipeline.tables",
    "load_calibration": "console.pipeline.calibration",
    "history_job": "console.pipeline.jobs",
    "review_job": "console.pipeline.jobs",
    "generate_job": "console.pipeline.jobs",
    "JobResult": "console.pipeline.jobs",
    "SparkSettings": "console.pipeline.spark",
    # errors
    "ConsoleError": "console.core.errors",
    "ConfigError": "console.core.errors",
    "PlanFormatError": "console.core.errors",
    "ClusterUnavailable": "console.core.errors",
    "GoalImpossible": "console.core.errors",
}
_MODULES = {"services"}
"""Names that stand for a whole module rather than one of its attributes."""
__all__ = sorted(_PUBLIC)

if TYPE_CHECKING:
    from console import services
    from console.access.settings import ConnectionSettings, settings_from_args
    from console.adapters.gateway import LiveGateway
    from console.core.errors import ClusterUnavailable, ConfigError, ConsoleError, GoalImpossible, PlanFormatError
    from console.core.model import Broker, BrokerId, ClusterState, Finding, Findings, Partition, Severity
    from console.core.states import RunState, WaveState
    from console.moves.cancel import plan_cancel
    from console.moves.progress import estimate_run
    from console.moves.waves import WaveLimits, plan_estimate, plan_waves
    from console.pipeline.calibration import load_calibration
    from console.pipeline.collect import SnapshotWriter
    from console.pipeline.jobs import JobResult, generate_job, history_job, review_job
    from console.pipeline.snapshots import replica_rows
    from console.pipeline.spark import SparkSettings
    from console.pipeline.tables import load_history
    from console.plans.diff import PlanDiff, diff
    from console.plans.generate import Generated, generate
    from console.plans.generators.options import GenerateOptions, Goal, Metric
    from console.plans.plan import Plan, PlanEntry, parse_plan, plan_hash, rollback
    from console.plans.quality import Report
    from console.plans.rebase import rebase
    from console.plans.validate import validate
    from console.state.document import read_state
    from console.state.reader import ClusterReader, connect
    from console.storage.runs import RunDetail
    from console.storage.store import Store


def __getattr__(name: str) -> Any:
    module = _PUBLIC.get(name)
    if module is None:
        raise AttributeError(f"module 'console' has no attribute {name!r}")
    value = importlib.import_module(module) if name in _MODULES else getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__


def _register_display() -> None:
    """In an IPython kernel, show the console's records with :mod:`console.present.notebook`
    (outside one, nothing more is imported)."""
    import sys

    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    if shell is not None and hasattr(shell, "display_formatter"):
        from console.present.notebook import register

        register(shell)


_register_display()
