"""The working model plan generators edit (pure): every partition's replicas, sizes and per-broker load.

A generator starts from a snapshot, changes replica lists in place through :meth:`Layout.move`,
:meth:`Layout.add`, :meth:`Layout.drop` and :meth:`Layout.lead`, which keep the per-broker
replica, preferred-leader and byte counts up to date (and may choose a replica's log dir with
:meth:`Layout.move_dir`), and ends with :meth:`Layout.plan`: the partitions whose replicas (or
chosen dirs) changed, in the official format.

What a partition counts as:

* its **replicas** are R, or R − RR (the target) while it is being reassigned: that is where it
  will be once what is in flight completes;
* its **preferred leader** is its first replica (where leadership goes after a preferred leader
  election, which the console runs at the end of a run);
* its **size** is the leader's log size (else the largest replica's; 0 when no size is known),
  and every replica is counted at that size.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import repeat
from operator import attrgetter
from typing import cast

import numpy as np

from console.core.limits import INT32_MAX
from console.core.model import BrokerId, ClusterState
from console.plans.columns import PAD, BrokerTable, Ints, columns_of, distinct, lookup, padded, widen
from console.plans.plan import ANY, Plan, entry_of_tuple

NO_RACK = -1


@dataclass
class Layout:
    """A mutable copy of a snapshot's assignment with per-broker load (positions, not ids, index
    the arrays: ``ids[i]`` is the broker at position ``i``)."""

    state: ClusterState
    ids: list[int]
    """Every broker id the snapshot knows (registered or named by a replica list), sorted."""
    position: dict[int, int]
    rack: list[int]
    """Rack code per position (:data:`NO_RACK` when the broker has none)."""
    rack_names: list[str]
    eligible: list[bool]
    """KIP-841: registered, live and not fenced: may receive replicas."""
    cordoned: list[bool]
    """KIP-1066: every log dir of the broker is cordoned: never a destination (a broker with only
    some dirs cordoned still receives replicas, into its other dirs)."""
    reps: list[list[int]]
    """Per partition (``state.partitions`` order): replica ids, target order."""
    size: list[int]
    in_flight: list[bool]
    count: Ints
    leaders: Ints
    bytes: Ints
    original: list[tuple[int, ...]] = field(default_factory=list)
    """Per partition: the replicas the generator started from."""
    dirty: set[int] = field(default_factory=set)
    """Rows edited since the start (their row of the matrix is rebuilt on demand)."""
    dirs: dict[int, dict[int, str]] = field(default_factory=dict)
    """Per row, the log dir chosen for some of its replicas (broker id → absolute path): a move
    between the dirs of one broker, or where a replica lands on its new broker. The others go to
    ``"any"`` dir, as the broker picks."""
    _start: tuple[Ints, Ints] | None = None
    _edits: int = 0
    """Edits made through the methods below (a matrix built at this count is still current)."""
    _matrix: tuple[int, Ints, Ints] | None = None
    _fresh: set[int] = field(default_factory=set)
    """Rows edited since :attr:`_matrix` was built (all of :attr:`dirty` before the first)."""

    @staticmethod
    def of(state: ClusterState) -> Layout:
        parts = state.partitions
        cols = columns_of(state)
        flight = cols.reassigning
        moving = np.flatnonzero(flight).tolist()
        original: list[tuple[int, ...]] = list(map(attrgetter("replicas"), parts))
        for i in moving:
            original[i] = parts[i].target
        reps: list[list[int]] = list(map(list, original))
        named = cols.replicas[~flight] if moving else cols.replicas
        named = named[named != PAD]
        if len(named) and (int(named.min()) < 0 or int(named.max()) > INT32_MAX):  # not Kafka's ids: as they are
            listed = {b for r in reps for b in r}
        else:
            listed = set(BrokerTable.of(named).ids.tolist()) | {b for i in moving for b in original[i]}
        ids = sorted({int(b.id) for b in state.brokers} | listed)
        position = {b: i for i, b in enumerate(ids)}
        names = sorted({b.rack for b in state.brokers if b.rack is not None})
        code = {r: i for i, r in enumerate(names)}
        known = state.broker_index
        rack = [
            code[known[BrokerId(b)].rack] if b in known and known[BrokerId(b)].rack is not None else NO_RACK  # type: ignore[index]
            for b in ids
        ]
        eligible = [BrokerId(b) in known and known[BrokerId(b)].eligible for b in ids]
        cordoned = [BrokerId(b) in known and known[BrokerId(b)].cordoned is True for b in ids]
        size = np.where(cols.size == PAD, 0, cols.size).astype(np.int64)
        layout = Layout(
            state,
            ids,
            position,
            rack,
            names,
            eligible,
            cordoned,
            reps,
            size.tolist(),
            flight.tolist(),
            np.zeros(len(ids), np.int64),
            np.zeros(len(ids), np.int64),
            np.zeros(len(ids), np.int64),
            original,
        )
        if not moving:  # the snapshot's replica columns are the start (as :meth:`start` would build them)
            layout._start = (layout._positions(cols.replicas), cols.original_len)
        layout.count, layout.leaders, layout.bytes = layout.loads()
        return layout

    # -- load --------------------------------------------------------------------------------
    def start(self) -> tuple[Ints, Ints]:
        """The replica positions the generator started from, as :meth:`matrix` (built once)."""
        if self._start is None:
            m, lens = padded(self.original)
            self._start = (self._positions(m), lens)
        return self._start

    def _positions(self, m: Ints) -> Ints:
        """The broker ids of the padded matrix ``m`` as their positions in :attr:`ids` (padding stays)."""
        if not m.size:
            return m
        return lookup(np.array(self.ids, np.int64), np.arange(len(self.ids), dtype=np.int64), m)

    def matrix(self) -> tuple[Ints, Ints]:
        """Replica positions as a padded matrix and the lengths (:func:`console.plans.columns.padded`):
        built once, then only the edited rows are redone, and kept until the next edit (callers
        must not write into it)."""
        if not self.dirty:
            return self.start()
        kept = self._matrix
        if kept is not None and kept[0] == self._edits:
            return kept[1], kept[2]
        m, lens = self.start() if kept is None else (kept[1], kept[2])
        rows = np.array(sorted(self._fresh), np.int64)
        self._fresh = set()
        new, new_lens = padded([self.reps[i] for i in rows.tolist()])
        new = self._positions(new)
        width = max(m.shape[1], new.shape[1])
        m = widen(m, width).copy() if width == m.shape[1] else widen(m, width)
        m[rows] = widen(new, width)
        lens = lens.copy()
        lens[rows] = new_lens
        self._matrix = (self._edits, m, lens)
        return m, lens

    def short_of_racks(self, among: list[int] | None = None) -> Ints:
        """Rows whose replicas span fewer racks than they could (see :meth:`rack_violations`)."""
        if not self.racks_known or not self.reps:
            return np.zeros(0, np.int64)
        pool = among if among is not None else [i for i, e in enumerate(self.eligible) if e]
        racks = len({self.rack[i] for i in pool})
        m, lens = self.matrix()
        codes = np.where(m == PAD, -1, np.array([*self.rack, -1], np.int64)[np.where(m == PAD, len(self.rack), m)])
        out: Ints = np.flatnonzero(distinct(codes) < np.minimum(lens, racks))
        return out

    def loads(self) -> tuple[Ints, Ints, Ints]:
        """(replicas, preferred leaders, bytes) per broker position, counted afresh."""
        m, lens = self.matrix()
        n = len(self.ids)
        real = m != PAD
        count = np.bincount(m[real], minlength=n).astype(np.int64)
        size = np.array(self.size, np.int64)
        weights = np.broadcast_to(size[:, None], m.shape)[real]
        total = (
            np.bincount(m[real], weights=weights, minlength=n).astype(np.int64)
            if len(weights)
            else np.zeros(n, np.int64)
        )
        has = lens > 0
        leaders = np.bincount(m[has, 0], minlength=n).astype(np.int64) if has.any() else np.zeros(n, np.int64)
        return count, leaders, total

    def rack_violations(self, among: list[int] | None = None) -> int:
        """Partitions whose replicas span fewer racks than they could: fewer than min(RF, racks of
        the brokers ``among`` (positions; default: every eligible broker))."""
        return len(self.short_of_racks(among))

    @property
    def racks_known(self) -> bool:
        """Every eligible broker has a rack (rack awareness applies)."""
        live = [r for r, e in zip(self.rack, self.eligible, strict=False) if e]
        return bool(live) and all(r != NO_RACK for r in live)

    def rack_count(self, row: int, without: int | None = None, plus: int | None = None) -> int:
        """Distinct racks of partition ``row``'s replicas, optionally without broker id ``without`` and
        with broker id ``plus``."""
        racks = {self.rack[self.position[b]] for b in self.reps[row] if b != without}
        if plus is not None:
            racks.add(self.rack[self.position[plus]])
        return len(racks)

    # -- edits -------------------------------------------------------------------------------
    def move(self, row: int, old: int, new: int) -> None:
        """Replace replica ``old`` of partition ``row`` by ``new`` in the same place."""
        self._edits += 1
        r = self.reps[row]
        k = r.index(old)
        r[k] = new
        self.dirty.add(row)
        self._fresh.add(row)
        self._forget_dir(row, old)
        i, j, s = self.position[old], self.position[new], self.size[row]
        self.count[i] -= 1
        self.count[j] += 1
        self.bytes[i] -= s
        self.bytes[j] += s
        if k == 0:
            self.leaders[i] -= 1
            self.leaders[j] += 1

    def move_many(self, rows: list[int], old: list[int], new: list[int]) -> None:
        """:meth:`move` for each ``(rows[k], old[k], new[k])`` in turn, the per-broker counts
        updated once for all (a balance goal makes hundreds of thousands of moves)."""
        if not rows:
            return
        self._edits += 1
        reps, position, dirs = self.reps, self.position, self.dirs
        led_from: list[int] = []
        led_to: list[int] = []
        for row, o, n in zip(rows, old, new, strict=True):
            r = reps[row]
            k = r.index(o)
            r[k] = n
            if dirs:
                self._forget_dir(row, o)
            if k == 0:
                led_from.append(position[o])
                led_to.append(position[n])
        self.dirty.update(rows)
        self._fresh.update(rows)
        i = np.fromiter(map(position.__getitem__, old), np.int64, len(old))
        j = np.fromiter(map(position.__getitem__, new), np.int64, len(new))
        size = np.fromiter(map(self.size.__getitem__, rows), np.int64, len(rows))
        np.subtract.at(self.count, i, 1)
        np.add.at(self.count, j, 1)
        np.subtract.at(self.bytes, i, size)
        np.add.at(self.bytes, j, size)
        np.subtract.at(self.leaders, np.array(led_from, np.int64), 1)
        np.add.at(self.leaders, np.array(led_to, np.int64), 1)

    def add(self, row: int, new: int) -> None:
        """Append replica ``new`` to partition ``row`` (a follower)."""
        self._edits += 1
        r = self.reps[row]
        r.append(new)
        self.dirty.add(row)
        self._fresh.add(row)
        j = self.position[new]
        self.count[j] += 1
        self.bytes[j] += self.size[row]
        if len(r) == 1:
            self.leaders[j] += 1

    def drop(self, row: int, old: int) -> None:
        """Remove replica ``old`` of partition ``row`` (never its first replica unless it is the last)."""
        self._edits += 1
        r = self.reps[row]
        k = r.index(old)
        del r[k]
        self.dirty.add(row)
        self._fresh.add(row)
        self._forget_dir(row, old)
        i = self.position[old]
        self.count[i] -= 1
        self.bytes[i] -= self.size[row]
        if k == 0:
            self.leaders[i] -= 1
            if r:
                self.leaders[self.position[r[0]]] += 1

    def lead(self, row: int, broker: int) -> None:
        """Make ``broker`` (a replica of ``row``) its preferred leader; the others keep their order."""
        r = self.reps[row]
        if r[0] == broker:
            return
        self._edits += 1
        self.leaders[self.position[r[0]]] -= 1
        self.leaders[self.position[broker]] += 1
        r.remove(broker)
        r.insert(0, broker)
        self.dirty.add(row)
        self._fresh.add(row)

    def move_dir(self, row: int, broker: int, path: str) -> None:
        """Send partition ``row``'s replica on ``broker`` (one of its replicas) to log dir ``path`` of
        that broker: a move between its dirs when the replica is there already. Per-broker loads do
        not change."""
        self._edits += 1
        self.dirs.setdefault(row, {})[broker] = path
        self.dirty.add(row)
        self._fresh.add(row)

    def _forget_dir(self, row: int, broker: int) -> None:
        chosen = self.dirs.get(row)
        if chosen is not None and chosen.pop(broker, None) is not None and not chosen:
            del self.dirs[row]

    # -- result ------------------------------------------------------------------------------
    def changed(self) -> list[int]:
        """Rows whose replica list (or order) differs from the start, or with a log dir chosen."""
        if not self.dirty:
            return []
        rows = np.array(sorted(self.dirty), np.int64)
        m, lens = self.matrix()
        s, start_lens = self.start()
        width = max(m.shape[1], s.shape[1])
        differ = (lens[rows] != start_lens[rows]) | (widen(m[rows], width) != widen(s[rows], width)).any(axis=1)
        if self.dirs:
            differ |= np.isin(rows, np.fromiter(self.dirs, np.int64, len(self.dirs)))
        out: list[int] = rows[differ].tolist()
        return out

    def dir_moves(self, row: int) -> list[int]:
        """Brokers of ``row`` whose replica moves between their own log dirs (it stays on the broker)."""
        return [b for b in self.dirs.get(row, ()) if b in self.original[row] and b in self.reps[row]]

    def plan(self, rows: list[int] | None = None) -> Plan:
        """The partitions that change (``rows``, :meth:`changed` when not given), as a plan (with the
        snapshot's replicas as its basis); an entry carries ``log_dirs`` when a dir was chosen for
        one of its replicas (``"any"`` for the others)."""
        parts = self.state.partitions
        if rows is None:
            rows = self.changed()
        reps, dirs = cast(list[list[BrokerId]], self.reps), self.dirs
        changed = list(map(parts.__getitem__, rows))
        topics = list(map(attrgetter("topic"), changed))
        numbers = list(map(attrgetter("partition"), changed))
        targets = map(tuple, map(reps.__getitem__, rows))
        chosen_dirs = (
            [tuple(chosen.get(b, ANY) for b in reps[i]) if (chosen := dirs.get(i)) else None for i in rows]
            if dirs
            else repeat(None)
        )
        entries = list(
            map(entry_of_tuple, zip(topics, numbers, targets, chosen_dirs, strict=False))
        )  # repeat(None) is endless
        basis = dict(zip(zip(topics, numbers, strict=True), map(attrgetter("replicas"), changed), strict=True))
        return Plan.of(entries, basis)
