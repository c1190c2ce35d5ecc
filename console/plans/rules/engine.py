"""The rules engine: each rule a finding's code(s), severity, a vectorised condition over an
:class:`~console.plans.rules.batch.EntryBatch` (with the cluster's
:class:`~console.plans.rules.batch.BrokerTable`) and the words of the finding for one hit.

A runner evaluates every rule over its batches (:func:`evaluate`), orders the hits as the review
shows them (errors first, then plan order, then rule order, then replica cell) and builds only the
findings it keeps (:func:`say`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from console.core.model import Severity
from console.plans.columns import Bools, Ints
from console.plans.rules.batch import BrokerTable, EntryBatch

Hits = tuple[Ints, Ints]
"""Rows of the batch and cells of their replica lists (0 for a rule about the whole entry)."""
Said = tuple[str, str, str]
"""A finding's code, message and hint."""


@dataclass(frozen=True)
class Rule:
    """One check of a plan entry."""

    codes: tuple[str, ...]
    """The codes it may give (most rules one)."""
    severity: Severity
    when: Callable[[EntryBatch, BrokerTable], Hits]
    """The rows (and cells) where the finding holds, for a whole batch at once."""
    say: Callable[[EntryBatch, BrokerTable, int, int], Said]
    """The finding's words for one hit (row, cell)."""


def rows(mask: Bools) -> Hits:
    r = np.flatnonzero(mask).astype(np.int64)
    return r, np.zeros(len(r), np.int64)


def cells(mask: Bools) -> Hits:
    r, c = np.nonzero(mask)
    return r.astype(np.int64), c.astype(np.int64)


def listed(pairs: list[tuple[int, int]]) -> Hits:
    a = np.array(pairs, np.int64).reshape(-1, 2)
    return a[:, 0].copy(), a[:, 1].copy()


@dataclass(frozen=True)
class Found:
    """Every hit of a batch: its rule (index in the rule list), row, cell and severity rank."""

    rule: Ints
    row: Ints
    cell: Ints
    rank: Ints

    def ordered(self) -> Found:
        """Errors first, then by row (plan order), then rule, then cell."""
        order = np.lexsort((self.cell, self.rule, self.row, self.rank))
        return Found(self.rule[order], self.row[order], self.cell[order], self.rank[order])


def evaluate(batch: EntryBatch, table: BrokerTable, rules: tuple[Rule, ...]) -> Found:
    """The hits of every rule over ``batch``, in rule order (not yet ordered for display)."""
    parts = []
    for k, rule in enumerate(rules):
        r, c = rule.when(batch, table) if len(batch) else (np.zeros(0, np.int64), np.zeros(0, np.int64))
        parts.append((np.full(len(r), k, np.int64), r, c, np.full(len(r), rule.severity.rank, np.int64)))
    if not parts:
        empty = np.zeros(0, np.int64)
        return Found(empty, empty, empty, empty)
    return Found(*(np.concatenate([p[n] for p in parts]) for n in range(4)))


def say(batch: EntryBatch, table: BrokerTable, rules: tuple[Rule, ...], found: Found) -> list[Said]:
    """The words of each hit of ``found``, in its order."""
    return [
        rules[k].say(batch, table, i, j)
        for k, i, j in zip(found.rule.tolist(), found.row.tolist(), found.cell.tolist(), strict=True)
    ]
