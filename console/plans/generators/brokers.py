"""The goals that move replicas between brokers: decommission (drain brokers, or racks), add
brokers and rebalance (by count, bytes or preferred leaders), over :mod:`console.plans.layout`
(the balance loop is :mod:`~console.plans.generators.balance`)."""

from __future__ import annotations

from console.core.errors import GoalImpossible
from console.core.format import ids_text, plural
from console.core.model import Severity
from console.plans.generators.balance import balance, even_leaders
from console.plans.generators.context import Bound, Context
from console.plans.generators.options import Metric

DRAIN_INCOMPLETE = "drain-incomplete"
"""The report's warning that some replicas on the drained brokers cannot move now: the brokers will not
be empty after the plan (a decommission does not go on with such a plan)."""


def decommission(ctx: Context) -> Bound:
    lay, drained = ctx.lay, set(ctx.options.brokers)
    if not ctx.balance:
        raise GoalImpossible(
            f"Draining {ids_text(sorted(drained))} leaves no eligible broker to move replicas to.",
            "Bring brokers back, or exclude fewer brokers.",
        )
    rows, left_out = ctx.filtered(ctx.rows_with(ctx.drained_positions))  # the goal is judged on the topics chosen
    stuck = [r for r in rows if not ctx.movable[r]]
    movable = [r for r in rows if ctx.movable[r]]
    widest = max(movable, key=lambda r: (len(lay.reps[r]), -r), default=None)
    if widest is not None and len(lay.reps[widest]) > len(ctx.balance):
        p = lay.state.partitions[widest]
        raise GoalImpossible(
            f"Draining {ids_text(sorted(drained))} would leave {plural(len(ctx.balance), 'eligible broker')}, fewer than the "
            f"{len(lay.reps[widest])} replicas of {p.name} (topic {p.topic}).",
            "Drain fewer brokers, add brokers first, or lower the topic's replication factor.",
        )
    if stuck:
        ctx.note(
            DRAIN_INCOMPLETE,
            Severity.WARNING,
            f"{plural(len(stuck), 'partition')} with a replica on {ids_text(sorted(drained))} cannot move now (in flight "
            "or offline): the brokers will not be empty after this plan.",
            "Generate again once those partitions can move.",
        )
    brokers = f"broker{'s' if len(drained) > 1 else ''} {ids_text(sorted(drained))}"
    ctx.note_left_out(
        left_out,
        f"on {brokers}",
        f"{brokers} will still hold {'them' if len(left_out) > 1 else 'it'}",
    )
    moved = size = 0
    for row in ctx.by_size(movable):
        r = lay.reps[row]
        led_by_drained = r[0] in drained
        for b in [b for b in r if b in drained]:
            d = ctx.destination(row, leaving=b)
            if d is None:
                p = lay.state.partitions[row]
                raise GoalImpossible(
                    f"No eligible broker can take {p.name}'s replica on {b}: every other one is drained, "
                    "excluded, down, cordoned or holds it already.",
                    "Drain fewer brokers or exclude fewer.",
                )
            lay.move(row, b, d)
            moved += 1
            size += lay.size[row]
        if led_by_drained:
            lay.lead(row, ctx.lighter_leader(row))
    even_leaders(ctx, lay.changed())
    return (moved, size), not stuck


def add_brokers(ctx: Context) -> Bound:
    lay, new = ctx.lay, set(ctx.options.brokers)
    down = sorted(b for b in new if not lay.eligible[lay.position[b]])
    if down:
        raise GoalImpossible(
            f"Broker {ids_text(down)} is not live (or fenced): it cannot receive replicas.",
            "Start it and wait until it is registered, then generate again.",
        )
    cordoned = sorted(new & ctx.cordoned)
    if cordoned:
        raise GoalImpossible(
            f"Broker {ids_text(cordoned)} is cordoned: never a destination.",
            f"Uncordon it first (python -m console uncordon --broker {cordoned[0]}), then generate again.",
        )
    excluded = sorted(new & set(ctx.options.exclude_brokers))
    if excluded:
        raise GoalImpossible(
            f"Broker {ids_text(excluded)} is both to fill and excluded.", "Drop it from --exclude-brokers."
        )
    dests = [i for i in ctx.balance if lay.ids[i] in new]
    sources = [i for i in ctx.balance if lay.ids[i] not in new]
    if not sources:
        raise GoalImpossible("There are no other eligible brokers to take replicas from.")
    reached = balance(ctx, Metric.COUNT, sources, dests)
    even_leaders(ctx, lay.changed())
    return (0, 0), reached


def rebalance(ctx: Context) -> Bound:
    metric = ctx.options.metric
    if len(ctx.balance) < 2:
        raise GoalImpossible("Fewer than two eligible brokers: there is nothing to balance between.")
    if metric is Metric.LEADERS:
        before = ctx.lay.leaders[ctx.balance].copy()
        reached = even_leaders(ctx, [r for r, ok in enumerate(ctx.movable) if ok], budget=ctx.options.max_moves)
        after = ctx.lay.leaders[ctx.balance]
        if not reached:
            ctx.note(
                "leaders-not-even",
                Severity.INFO,
                f"Reordering replicas evens preferred leaders to {int(after.max())}–{int(after.min())} per broker "
                f"(from {int(before.max())}–{int(before.min())}); more needs replicas to move.",
                "Rebalance by count first, then by leaders.",
            )
        return (0, 0), reached
    reached = balance(ctx, metric, ctx.balance, ctx.balance)
    even_leaders(ctx, ctx.lay.changed())
    return (0, 0), reached
