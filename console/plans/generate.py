"""Plan generators (pure): decommission, add brokers, rebalance, replication factor, fix racks,
drain a log dir and the official tool's ``--generate``, each over a snapshot, each with a quality
report. This module is the entry (:func:`generate`, :class:`Generated`, the goals by
:class:`~console.plans.generators.options.Goal`); what a generator is asked (``GenerateOptions``,
``Goal``, ``Metric``, ``check_options``) is defined in :mod:`console.plans.generators.options`;
the goals themselves live in :mod:`console.plans.generators`, one module per family, over
:mod:`console.plans.layout`.

Rules every goal keeps (docs/ARCHITECTURE.md, "Generators"):

* only partitions that may move are touched: not in flight (left alone, and said so), not
  offline, in the chosen topics, not matched by ``exclude_topics``;
* only eligible brokers receive replicas (KIP-841: registered, live, not fenced), never one in
  ``exclude_brokers``, one being drained, nor one that is cordoned (KIP-1066: every log dir
  cordoned; the report says so; a broker with some dirs cordoned still receives replicas, into its
  other dirs, since the generators place brokers, not dirs; draining a log dir places dirs, and
  never picks a cordoned or an offline one);
* no broker twice in a partition; the replication factor is kept unless the goal changes it;
* racks: a replica goes to a rack the partition lacks when one is free, and no move lowers the
  number of racks a partition spans (a finding says when the racks cannot allow it, e.g. RF 3 on
  2 racks);
* deterministic: the same snapshot, options and ``seed`` give the same plan; ties go to the lower
  broker id, after a tie-break order drawn from ``seed``;
* a goal that cannot be reached raises :class:`~console.core.errors.GoalImpossible` naming why,
  and input that cannot be used raises :class:`~console.core.errors.ConfigError`: no plan either way.

Balance goals move replicas from the most loaded broker to the least loaded one that can take
one, choosing the replica whose size brings the two closest to the mean, until the brokers are
within one replica (count) or within the tolerance of the mean (bytes), or the budget is spent.
Each partition moves at most once per plan. Preferred leaders (first replicas) are then evened
out by reordering the replicas of the partitions the plan already changes (no data moves)
(:mod:`~console.plans.generators.balance`).

Draining a log dir is the one goal that places dirs: a replica moves to another dir of its broker
(an entry with the same replicas and ``log_dirs`` naming the new dir) while one has room, else to
another broker as a decommission would move it (:mod:`~console.plans.generators.drain`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from time import perf_counter
from typing import TYPE_CHECKING

from console.core.model import ClusterState
from console.core.perf import without_gc
from console.plans.generators.balance import balance_bound
from console.plans.generators.brokers import add_brokers, decommission, rebalance
from console.plans.generators.context import Bound, Context, broker_loads, what_moved
from console.plans.generators.drain import drain_log_dir
from console.plans.generators.official import official
from console.plans.generators.options import GenerateOptions, Goal, check_options, on_racks
from console.plans.generators.replication import fix_racks, replication_factor
from console.plans.layout import Layout
from console.plans.plan import Plan
from console.plans.quality import Report, excess_bound

if TYPE_CHECKING:
    import pandas as pd


@dataclass(frozen=True)
class Generated:
    """A generated plan (only partitions that change) and its report."""

    plan: Plan
    report: Report

    def __repr__(self) -> str:
        return f"<Generated: {self.report.headline()}>"

    def to_pandas(self) -> pd.DataFrame:
        """The plan's entries (the report's per-broker table is ``report.to_pandas()``)."""
        return self.plan.to_pandas()


@without_gc
def generate(state: ClusterState, options: GenerateOptions) -> Generated:
    """The plan for ``options.goal`` on ``state`` and its quality report."""
    started = perf_counter()
    check_options(options)
    options = on_racks(state, options)
    lay = Layout.of(state)
    ctx = Context(lay, options)
    before = (lay.count.copy(), lay.leaders.copy(), lay.bytes.copy())
    racks_before = lay.rack_violations(ctx.rack_pool)
    bound, reached = _GOALS[options.goal](ctx)
    rows = lay.changed()
    plan = lay.plan(rows)
    moved, moved_bytes, leaders_moved, removed = what_moved(lay, rows)
    if options.goal in (Goal.REBALANCE, Goal.ADD_BROKERS, Goal.OFFICIAL):
        bound = balance_bound(ctx, before)
    report = Report(
        goal=options.describe(),
        moved_replicas=moved,
        moved_bytes=moved_bytes,
        lower_bound_replicas=bound[0],
        lower_bound_bytes=bound[1],
        leaders_moved=leaders_moved,
        partitions_changed=len(plan),
        brokers_before=broker_loads(lay, *before),
        brokers_after=broker_loads(lay, lay.count, lay.leaders, lay.bytes),
        balanced=tuple(lay.ids[i] for i in ctx.balance),
        rack_violations_before=racks_before,
        rack_violations_after=lay.rack_violations(ctx.rack_pool),
        reached=reached,
        findings=tuple(ctx.findings),
        seconds=perf_counter() - started,
        lower_bound_leaders=excess_bound(before[1][ctx.balance], lay.leaders[ctx.balance]) if ctx.balance else 0,
        removed_replicas=removed,
    )
    return Generated(plan, report)


_GOALS: dict[Goal, Callable[[Context], Bound]] = {
    Goal.DECOMMISSION: decommission,
    Goal.ADD_BROKERS: add_brokers,
    Goal.REBALANCE: rebalance,
    Goal.REPLICATION_FACTOR: replication_factor,
    Goal.FIX_RACKS: fix_racks,
    Goal.OFFICIAL: official,
    Goal.DRAIN_LOG_DIR: drain_log_dir,
}
"""Each goal's function (over the context's layout), by goal."""
