"""What every plan generator goal shares, over :mod:`console.plans.layout`: the options' brokers
and topics checked against the cluster (:func:`check_named`), the :class:`Context` a goal runs in
(which partitions may move, which brokers receive, how load scores, the findings said on the way),
and what the plan moved, read off the layout for the report (:func:`what_moved`,
:func:`broker_loads`)."""

from __future__ import annotations

import random
from collections.abc import Iterable
from operator import mul

import numpy as np

from console.core.errors import ConfigError
from console.core.format import ids_text, plural
from console.core.model import ClusterState, Finding, Severity
from console.plans.columns import PAD, columns_of, distinct, member, widen
from console.plans.generators.options import GenerateOptions, Goal, chosen_topics
from console.plans.generators.zones import Zones
from console.plans.layout import Layout
from console.plans.quality import BrokerLoad

Bound = tuple[tuple[int, int], bool]
"""What a goal returns: (lower bound replicas, lower bound bytes) and whether the goal was reached."""


def check_named(lay: Layout, options: GenerateOptions) -> None:
    """Refuse brokers and topics the options name that the cluster does not have."""
    known = set(lay.ids)
    for name, ids in (
        ("--exclude-brokers", options.exclude_brokers),
        (
            "the brokers to drain"
            if options.goal is Goal.DECOMMISSION
            else "the broker of the log dir"
            if options.goal is Goal.DRAIN_LOG_DIR
            else "the brokers",
            options.brokers,
        ),
    ):
        unknown = sorted(set(ids) - known)
        if unknown:
            raise ConfigError(
                f"{name}: no broker {ids_text(unknown)} in this cluster (it has {ids_text(lay.ids)}).",
                "Pick brokers from the cluster's broker list (python -m console state).",
            )
    topics = set(options.topics)
    every = lay.state.topics
    missing = sorted(topics - set(every))
    if missing:
        raise ConfigError(
            f"No topic {', '.join(missing)} in this cluster.", "Check the topic names (python -m console state)."
        )


class Context:
    def __init__(self, lay: Layout, options: GenerateOptions) -> None:
        self.lay = lay
        self.options = options
        self.findings: list[Finding] = []
        state = lay.state
        parts = state.partitions
        check_named(lay, options)
        every = state.topics
        chosen = chosen_topics(options, every)
        cols = columns_of(state)
        if len(chosen) == len(every):  # every topic
            in_topics = np.ones(len(parts), np.bool_)
        else:
            in_topics = np.fromiter((p.topic in chosen for p in parts), np.bool_, len(parts))
        led = cols.leader != PAD
        self.in_topics: list[bool] = in_topics.tolist()
        """Partitions of the topics the goal works on (the topic filter's choice)."""
        self.movable_mask = in_topics & ~cols.reassigning & led & (cols.replicas != PAD).any(axis=1)
        """Partitions that may move (numpy); :attr:`movable` as a list."""
        self.movable: list[bool] = self.movable_mask.tolist()
        flight = int((in_topics & cols.reassigning).sum())
        if flight:
            self.note(
                "in-flight-left-alone",
                Severity.INFO,
                f"{plural(flight, 'partition')} of the chosen topics {'is' if flight == 1 else 'are'} being reassigned now "
                "and left alone; they count at their target.",
                "Generate again once they complete to include them.",
            )
        offline = int((in_topics & ~cols.reassigning & ~led).sum())
        if offline:
            self.note(
                "offline-left-alone",
                Severity.WARNING,
                f"{plural(offline, 'partition')} of the chosen topics {'has' if offline == 1 else 'have'} no leader and "
                "cannot be moved: left alone.",
                "Bring their brokers back first.",
            )
        drained = set(options.brokers) if options.goal is Goal.DECOMMISSION else set()
        excluded_b = set(options.exclude_brokers)
        self.drained_positions = {lay.position[b] for b in drained}
        self.cordoned = {b for b, c in zip(lay.ids, lay.cordoned, strict=False) if c}
        """Broker ids cordoned as a whole (KIP-1066): never a destination."""
        self.dest = np.array(
            [
                e and b not in excluded_b and b not in drained and b not in self.cordoned
                for b, e in zip(lay.ids, lay.eligible, strict=False)
            ],
            np.bool_,
        )
        self.balance = [int(i) for i in np.flatnonzero(self.dest)]
        """Positions of the brokers that are balanced and reported on."""
        self.rack_pool = self.balance
        self.rack_codes = np.array(lay.rack, np.int64)
        self._means: tuple[float, float] | None = None
        self.rack_of = dict(zip(lay.ids, lay.rack, strict=False))
        """Broker id → rack code."""
        self.racks = len({lay.rack[i] for i in self.balance})
        self.rack_aware = lay.racks_known
        down = [b for b, e in zip(lay.ids, lay.eligible, strict=False) if not e]
        if down:
            self.note(
                "ineligible-brokers",
                Severity.INFO,
                f"Broker{'s' if len(down) > 1 else ''} {ids_text(down)} {'are' if len(down) > 1 else 'is'} not live "
                "(or fenced): never a destination.",
            )
        self._cordon_notes(state, down)
        self._rack_notes()
        order = list(range(len(lay.ids)))
        random.Random(options.seed).shuffle(order)
        self.tiebreak = np.empty(len(lay.ids), np.float64)
        self.tiebreak[order] = np.arange(len(lay.ids)) * 1e-9
        self.zones = self._zones()
        """The least cross-zone bytes preference, when asked (and the zones are known)."""

    def _zones(self) -> Zones | None:
        if self.options.zone_weight is not None and not self.rack_aware:
            self.note(
                "zones-unknown",
                Severity.INFO,
                "Least cross-zone bytes was asked, but not every live broker has a rack: the zones are not "
                "known, and the plan is made as without it.",
                "Set broker.rack on every broker (racks are zones unless [pricing.zones] maps them).",
            )
            return None
        return Zones.of(self.lay, self.options)

    def _rack_notes(self) -> None:
        """Say when racks are not taken into account, or are fewer than a replication factor."""
        lay = self.lay
        with_rack = [lay.rack[i] >= 0 for i, e in enumerate(lay.eligible) if e]
        if any(with_rack) and not all(with_rack):
            self.note(
                "racks-partial",
                Severity.WARNING,
                "Only some live brokers have a rack: racks are not taken into account.",
                "Set broker.rack on every broker.",
            )
        elif self.rack_aware and self.balance:
            lens = lay.start()[1][self.movable_mask]
            widest = int(lens.max()) if len(lens) else 0
            if widest > self.racks:
                self.note(
                    "racks-fewer-than-rf",
                    Severity.INFO,
                    f"Replication factor {widest} on {plural(self.racks, 'rack')}: such partitions can span only "
                    f"{self.racks} racks, so some racks hold two of their replicas.",
                )

    def note(self, code: str, severity: Severity, message: str, hint: str = "") -> None:
        self.findings.append(Finding(code, severity, message, hint))

    def filtered(self, rows: Iterable[int]) -> tuple[list[int], list[int]]:
        """``rows`` split into those of the topics chosen and those the topic filter leaves out."""
        rows = list(rows)
        return [r for r in rows if self.in_topics[r]], [r for r in rows if not self.in_topics[r]]

    def note_left_out(self, rows: list[int], where: str, after: str) -> None:
        """Say (information, not a warning: it was asked for) that the topic filter leaves ``rows``,
        which hold a replica ``where``, out of the plan, and what that leaves ``after`` it."""
        if not rows:
            return
        parts = self.lay.state.partitions
        topics = sorted({parts[r].topic for r in rows})
        names = ", ".join(topics[:5]) + (f" and {len(topics) - 5} more" if len(topics) > 5 else "")
        self.note(
            "left-out-by-filter",
            Severity.INFO,
            f"{plural(len(rows), 'partition')} of {plural(len(topics), 'topic')} the topic filter leaves out ({names}) "
            f"{'has' if len(rows) == 1 else 'have'} a replica {where}: this plan moves the chosen topics only, so "
            f"{after}.",
            "Choose those topics too (or no topic filter) to move them as well.",
        )

    def _cordon_notes(self, state: ClusterState, down: list[int]) -> None:
        """Say which brokers are cordoned (never a destination) and which have only some log dirs
        cordoned (still destinations, into their other dirs); brokers down are said already."""
        for b in sorted(self.cordoned - set(down)):
            self.note(
                "cordoned-broker",
                Severity.INFO,
                f"Broker {b} is cordoned: never a destination.",
                f"Uncordon it (python -m console uncordon --broker {b}) to let it receive replicas again.",
            )
        for broker in state.brokers:
            dirs = broker.cordoned_dirs
            if broker.cordoned is False and broker.eligible and dirs:
                self.note(
                    "cordoned-log-dirs",
                    Severity.INFO,
                    f"Broker {broker.id} has {len(dirs)} of {plural(len(broker.log_dirs), 'log dir')} cordoned "
                    f"({', '.join(dirs)}): it still receives replicas, into its other dirs.",
                )

    def rows_with(self, positions: Iterable[int]) -> list[int]:
        """Rows (partitions) holding a replica on any of ``positions``."""
        m, _ = self.lay.matrix()
        hit = np.isin(m, np.array(sorted(positions), np.int64)) & (m != PAD)
        return [int(i) for i in np.flatnonzero(hit.any(axis=1))]

    def smallest(self, wanted: dict[int, int]) -> int:
        """Bytes of the ``wanted[i]`` smallest replicas position ``i`` held at the start, summed over ``wanted``."""
        if not wanted:
            return 0
        lay = self.lay
        m, _ = lay.start()
        size = np.array(lay.size, np.int64)
        by_size = np.argsort(size, kind="stable")  # rows from the smallest
        ordered = m[by_size]
        table = np.zeros(len(lay.ids) + 1, np.bool_)  # the positions wanted (the last cell: padding)
        table[list(wanted)] = True
        at, col = np.nonzero(
            table[np.where(ordered == PAD, len(lay.ids), ordered)] & self.movable_mask[by_size][:, None]
        )
        pos, sizes = ordered[at, col], size[by_size[at]]
        # by position, the smallest first within each: a stable sort on small ints (a radix sort)
        order = np.argsort(pos.astype(np.int16) if len(lay.ids) < 2**15 else pos, kind="stable")
        pos, sizes = pos[order], sizes[order]
        total = 0
        for i, k in wanted.items():
            a, b = np.searchsorted(pos, [i, i + 1])
            total += int(sizes[a : min(b, a + k)].sum())
        return total

    def score(self) -> np.ndarray:
        """How loaded each broker is, replicas and bytes weighed alike against their means (at the start)."""
        lay, idx = self.lay, self.balance
        if self._means is None:
            self._means = (
                max(float(lay.count[idx].mean()), 1.0) if idx else 1.0,
                max(float(lay.bytes[idx].mean()), 1.0) if idx else 1.0,
            )
        out: np.ndarray = lay.count / self._means[0] + lay.bytes / self._means[1] + self.tiebreak
        return out

    def destination(self, row: int, leaving: int | None = None, need_new_rack: bool = False) -> int | None:
        """The least loaded broker that may take a replica of ``row`` (in place of ``leaving``):
        eligible, not in the partition, on a rack the partition lacks when one has room."""
        lay = self.lay
        members = [b for b in lay.reps[row] if b != leaving]
        cand = self.dest.copy()
        for b in members:
            cand[lay.position[b]] = False
        if leaving is not None:
            cand[lay.position[leaving]] = False
        if not cand.any():
            return None
        if self.rack_aware:
            present = np.zeros(len(lay.rack_names) + 1, np.bool_)  # the last cell stands for "no rack" (-1)
            present[[lay.rack[lay.position[b]] for b in members]] = True
            fresh = cand & ~present[self.rack_codes]
            if fresh.any():
                cand = fresh
            elif need_new_rack:
                return None
        score = np.where(cand, self.score(), np.inf)
        if self.zones is not None and self._means is not None:
            return lay.ids[self.zones.destination(row, score, self._means, lay.size[row])]
        return lay.ids[int(np.argmin(score))]

    def lighter_leader(self, row: int) -> int:
        """The replica of ``row`` that leads the fewest partitions (eligible ones first)."""
        lay = self.lay
        return min(
            lay.reps[row],
            key=lambda b: (
                not lay.eligible[lay.position[b]],
                lay.leaders[lay.position[b]] + self.tiebreak[lay.position[b]],
            ),
        )

    def by_size(self, rows: Iterable[int]) -> list[int]:
        size = self.lay.size
        return sorted(rows, key=lambda r: (-size[r], r))


def what_moved(lay: Layout, rows: list[int]) -> tuple[int, int, int, int]:
    """Replicas copied to a new broker, their bytes, preferred leaders changed, replicas dropped
    without a copy elsewhere, over the changed ``rows`` (worked out on the position matrices)."""
    if not rows:
        return 0, 0, 0, 0
    at = np.array(rows, np.int64)
    m, lens = lay.matrix()
    s, start_lens = lay.start()
    width = max(m.shape[1], s.shape[1])
    new, old = widen(m[at], width), widen(s[at], width)
    new_lens, old_lens = lens[at], start_lens[at]
    added = ((new != PAD) & ~member(new, old)).sum(axis=1)
    # a broker twice in a row counts once (as a set): such rows, and those with a dir chosen, one by one
    odd = np.flatnonzero(distinct(np.where(new == PAD, -1, new)) < new_lens).tolist()
    if lay.dirs:
        odd = sorted(set(odd) | {k for k, row in enumerate(rows) if row in lay.dirs})
    for k in odd:
        row = rows[k]
        added[k] = len(set(lay.reps[row]) - set(lay.original[row])) + len(
            lay.dir_moves(row)
        )  # a move between dirs copies the replica too
    size = sum(map(mul, added.tolist(), map(lay.size.__getitem__, rows)))
    leaders = int(((new_lens > 0) & (old_lens > 0) & (new[:, 0] != old[:, 0])).sum())
    removed = int(np.maximum(old_lens - new_lens, 0).sum())
    return int(added.sum()), size, leaders, removed


def broker_loads(lay: Layout, count: np.ndarray, leaders: np.ndarray, size: np.ndarray) -> tuple[BrokerLoad, ...]:
    return tuple(
        BrokerLoad(
            b, lay.rack_names[lay.rack[i]] if lay.rack[i] >= 0 else None, int(count[i]), int(leaders[i]), int(size[i])
        )
        for i, b in enumerate(lay.ids)
    )
