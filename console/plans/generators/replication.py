"""The goals that change which brokers a partition spans without balancing: the replication
factor (replicas added or removed) and fix racks (replicas moved to the racks a partition lacks),
over :mod:`console.plans.layout`."""

from __future__ import annotations

from collections.abc import Sequence

from console.core.errors import GoalImpossible
from console.core.format import plural
from console.core.model import ClusterState, Partition, Severity
from console.plans.generators.context import Bound, Context


def replication_factor(ctx: Context) -> Bound:
    lay, opts = ctx.lay, ctx.options
    n = opts.replication_factor or 0  # check_options: 1 or more
    if n > len(ctx.balance):
        raise GoalImpossible(
            f"Replication factor {n} needs {n} eligible brokers; this cluster has {len(ctx.balance)}"
            + (" (after exclusions and cordons)." if opts.exclude_brokers or ctx.cordoned else "."),
            "Lower the replication factor or add brokers.",
        )
    moved = size = 0
    parts = lay.state.partitions
    rows = [r for r, ok in enumerate(ctx.movable) if ok]
    _refuse_below_min_isr(lay.state, [parts[r] for r in rows if len(lay.reps[r]) > n], n)
    for row in ctx.by_size(rows):
        r = lay.reps[row]
        while len(r) < n:
            d = ctx.destination(row)
            if d is None:
                raise GoalImpossible(f"No eligible broker can take a new replica of {parts[row].name}.")
            lay.add(row, d)
            moved += 1
            size += lay.size[row]
        while len(r) > n:
            lay.drop(row, _removal(ctx, row, parts[row].leader))
    return (moved, size), True


def _refuse_below_min_isr(state: ClusterState, lowered: Sequence[Partition], n: int) -> None:
    """Review refuses a plan that lowers a partition's replication factor below its topic's
    ``min.insync.replicas`` (it would then refuse writes with acks=all): the goal is refused first."""
    mins = state.min_insync_index
    below = sorted({p.topic for p in lowered if mins.get(p.topic, 0) > n})
    if below:
        t = below[0]
        raise GoalImpossible(
            f"Replication factor {n} is fewer than min.insync.replicas={mins[t]} of topic {t}"
            + (f" (and of {plural(len(below) - 1, 'more topic')})" if len(below) > 1 else "")
            + ": Kafka completes such a move, and the partitions then refuse writes with acks=all.",
            f"Keep at least {mins[t]} replicas, or lower the topic's min.insync.replicas first.",
        )


def _removal(ctx: Context, row: int, leader: int | None) -> int:
    """The replica of ``row`` to remove: never the current leader; from the rack with the most
    replicas of the partition, then the most loaded broker."""
    lay = ctx.lay
    r = lay.reps[row]
    keep = leader if leader in r else r[0]
    racks = [lay.rack[lay.position[b]] for b in r]
    score = ctx.score()
    return max(
        (b for b in r if b != keep),
        key=lambda b: (racks.count(lay.rack[lay.position[b]]) if ctx.rack_aware else 0, score[lay.position[b]]),
    )


def fix_racks(ctx: Context) -> Bound:
    lay = ctx.lay
    if not ctx.rack_aware:
        ctx.note("no-racks", Severity.INFO, "The brokers have no racks (or only some do): there is nothing to fix.")
        return (0, 0), True
    moved = size = 0
    unfixable = 0
    for row in ctx.by_size(r for r in lay.short_of_racks(ctx.rack_pool).tolist() if ctx.movable[r]):
        r = lay.reps[row]
        cap = min(len(r), ctx.racks)
        while lay.rack_count(row) < cap:
            racks = [lay.rack[lay.position[b]] for b in r]
            shared = [b for b, k in zip(r, racks, strict=False) if racks.count(k) > 1]
            score = ctx.score()
            victim = max(shared, key=lambda b: (b != r[0], score[lay.position[b]]))
            d = ctx.destination(row, leaving=victim, need_new_rack=True)
            if d is None:
                unfixable += 1
                break
            lay.move(row, victim, d)
            moved += 1
            size += lay.size[row]
    if unfixable:
        ctx.note(
            "racks-unfixable",
            Severity.WARNING,
            f"{plural(unfixable, 'partition')} could not be spread further: no eligible broker on a missing rack can "
            "take them.",
            "Check which racks have live, non-excluded brokers.",
        )
    return (moved, size), not unfixable
