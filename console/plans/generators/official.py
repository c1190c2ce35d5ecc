"""The official tool's ``kafka-reassign-partitions.sh --generate``, emulated over
:mod:`console.plans.layout` (AdminUtils' assignment, :mod:`console.plans.kafka_assign`)."""

from __future__ import annotations

import random

from console.core.errors import GoalImpossible
from console.core.format import ids_text
from console.core.model import Severity
from console.plans.generators.context import Bound, Context
from console.plans.kafka_assign import rack_aware, rack_unaware
from console.plans.layout import Layout


def official(ctx: Context) -> Bound:
    """``kafka-reassign-partitions.sh --generate``: AdminUtils.assignReplicasToBrokers per topic, with
    the start index and replica shift drawn from ``seed`` (the tool draws them at random)."""
    lay, opts = ctx.lay, ctx.options
    excluded = set(opts.exclude_brokers) | ctx.cordoned
    live = [b for b in sorted(set(opts.brokers)) if lay.eligible[lay.position[b]] and b not in excluded]
    dropped = sorted(set(opts.brokers) - set(live))
    if dropped:
        ctx.note(
            "official-dropped-brokers",
            Severity.WARNING,
            f"Broker {ids_text(dropped)} of the broker list {'are' if len(dropped) > 1 else 'is'} not live, cordoned "
            "or excluded, and left out (the official tool drops brokers that are not live without a word).",
        )
    if not live:
        raise GoalImpossible("No broker of the broker list is live, uncordoned and not excluded.")
    racks = {b: lay.rack[lay.position[b]] for b in live}
    with_rack = [k >= 0 for k in racks.values()]
    if any(with_rack) and not all(with_rack):
        raise GoalImpossible(
            "Not all brokers have rack information. Add --disable-rack-aware in command line to make "
            "replica assignment without rack information.",
            "The console follows the official tool here; give only brokers with racks, or none.",
        )
    rnd = random.Random(opts.seed)
    rows_of: dict[str, list[int]] = {}
    for i, p in enumerate(lay.state.partitions):
        if p.topic in opts.topics:
            rows_of.setdefault(p.topic, []).append(i)
    for topic in sorted(rows_of):
        rows = sorted(rows_of[topic], key=lambda r: lay.state.partitions[r].partition)
        rf = len(lay.reps[rows[0]])
        if rf > len(live):
            raise GoalImpossible(
                f"Replication factor: {rf} larger than available brokers: {len(live)} (topic {topic})."
            )
        assignment = (
            rack_aware(live, racks, len(rows), rf, rnd) if all(with_rack) else rack_unaware(live, len(rows), rf, rnd)
        )
        for row, target in zip(rows, assignment, strict=False):
            if ctx.movable[row] and target != lay.reps[row]:
                _assign(lay, row, target)
    return (0, 0), True


def _assign(lay: Layout, row: int, target: list[int]) -> None:
    """Set partition ``row``'s replicas to ``target`` (a reorder, moves and changes of length alike)."""
    for b in [b for b in lay.reps[row] if b not in target]:
        lay.drop(row, b)
    for b in target:
        if b not in lay.reps[row]:
            lay.add(row, b)
    for b in reversed(target):
        lay.lead(row, b)
