"""Which replica a balance step moves: each source broker's movable replicas sorted by size
(:class:`Candidates`, built by :func:`candidates_of`), and the pick of the one whose size is
nearest the ideal that may go to the destination without lowering the racks its partition spans
(:func:`pick`; :func:`pick_passing_over` when the rack rules most of them out)."""

from __future__ import annotations

import math
from array import array
from bisect import bisect_left
from collections.abc import Iterator, MutableSequence
from dataclasses import dataclass
from typing import cast

import numpy as np

from console.plans.columns import PAD
from console.plans.generators.context import Context
from console.plans.generators.zones import Zones
from console.plans.layout import Layout

WINDOW = 64
"""Candidate replicas a balance step looks at around the ideal size."""


BLOCK = 256
"""Candidates per block of :class:`Candidates`: removing one copies at most this many entries."""


@dataclass(slots=True)
class Candidates:
    """One source broker's movable replicas for :func:`pick`, sorted by (size, row), cut in blocks
    of at most :data:`BLOCK` so that removing one copies the rest of its block only (at 1M
    partitions a broker has thousands: a flat sequence copied half of them per removal). Per
    block, three aligned sequences: the rows, their sizes, and the rack bits a destination must not
    be on for the row to move there (worked out once what :func:`pick` asks of every candidate);
    and each block's last size, to find the block a size falls in. No block is empty."""

    rows: list[MutableSequence[int]]
    sizes: list[MutableSequence[int]]
    fails: list[MutableSequence[int]]
    last: list[int]
    narrow: bool = False
    """The fails are bytes (up to 7 racks): :func:`pick` may pass over those a rack rules out in bulk."""

    @staticmethod
    def of(rows: np.ndarray, sizes: np.ndarray, fails: np.ndarray) -> Candidates:
        """From aligned arrays sorted by (size, row)."""
        cuts = range(0, len(rows), BLOCK)
        block_sizes = [_ints(sizes[a : a + BLOCK]) for a in cuts]
        narrow = fails.dtype != object and (not len(fails) or (int(fails.min()) >= 0 and int(fails.max()) < 256))
        return Candidates(
            [_ints(rows[a : a + BLOCK]) for a in cuts],
            block_sizes,
            [
                bytearray(fails[a : a + BLOCK].astype(np.uint8).tobytes()) if narrow else _ints(fails[a : a + BLOCK])
                for a in cuts
            ],
            [s[-1] for s in block_sizes],
            narrow,
        )

    def remove(self, b: int, i: int) -> None:
        """Remove entry ``i`` of block ``b``."""
        sizes = self.sizes[b]
        del self.rows[b][i], sizes[i], self.fails[b][i]
        if not sizes:
            del self.rows[b], self.sizes[b], self.fails[b], self.last[b]
        elif i == len(sizes):
            self.last[b] = sizes[-1]

    def movable(self, b: int, i: int, reps: list[list[int]], sb: int, db: int) -> int:
        """The row of entry ``i`` of block ``b`` when its partition has a replica on broker ``sb`` and
        none on ``db`` (that replica may move from one to the other), else -1."""
        row = self.rows[b][i]
        r = reps[row]
        return -1 if db in r or sb not in r else row

    def forget(self, row: int, size: int) -> None:
        """Remove ``row`` (of ``size``) when it is among the candidates."""
        last, blocks = self.last, self.sizes
        b = bisect_left(last, size)
        while b < len(last):
            sizes, rows = blocks[b], self.rows[b]
            i = bisect_left(sizes, size)
            n = len(sizes)
            while i < n and sizes[i] == size:
                if rows[i] == row:
                    del rows[i], sizes[i], self.fails[b][i]
                    if i == n - 1:
                        if i:
                            last[b] = sizes[-1]
                        else:
                            del self.rows[b], self.sizes[b], self.fails[b], last[b]
                    return
                i += 1
            if i < n:
                return
            b += 1  # the same size may go on in the next block

    def flat(self) -> tuple[list[int], list[int], list[int]]:
        """The rows, sizes and fails in order (for tests)."""
        return (
            [x for s in self.rows for x in s],
            [x for s in self.sizes for x in s],
            [x for s in self.fails for x in s],
        )


def candidates_of(ctx: Context, sources: list[int]) -> list[Candidates | None]:
    """Per broker position: the candidates of each of ``sources`` (None for the others).

    A move from ``s`` to ``d`` on another rack must not lower the racks the partition spans: it
    may not go when ``d``'s rack is among the partition's other replicas unless ``s``'s rack stays
    among them too. Both are bit masks of the row's racks (every rack of its replicas; the racks
    two of its brokers share), so a candidate's ``fails`` is 0 when another of its brokers is on
    ``s``'s rack, else the bits of all its racks."""
    lay = ctx.lay
    m, _ = lay.matrix()
    size = np.array(lay.size, np.int64)
    by_size = np.argsort(size, kind="stable")  # rows in (size, row) order
    ordered = m[by_size]
    is_source = np.zeros(len(lay.ids) + 1, np.bool_)  # the last cell: padding
    is_source[sources] = True
    at, col = np.nonzero(
        is_source[np.where(ordered == PAD, len(lay.ids), ordered)] & ctx.movable_mask[by_size][:, None]
    )
    pos = ordered[at, col]
    # by position, keeping (size, row) order within each: a stable sort on small ints (a radix sort)
    order = np.argsort(pos.astype(np.int16) if len(lay.ids) < 2**15 else pos, kind="stable")
    r_idx, pos = by_size[at[order]], pos[order]
    sizes = size[r_idx]
    bounds = np.searchsorted(pos, np.arange(len(lay.ids) + 1)).tolist()
    bits, every, twice = rack_masks(lay, m)
    fails = np.where(twice[r_idx] & bits[pos] != 0, 0, every[r_idx])
    out: list[Candidates | None] = [None] * len(lay.ids)
    for i in sources:
        a, b = bounds[i], bounds[i + 1]
        out[i] = Candidates.of(r_idx[a:b], sizes[a:b], fails[a:b])
    return out


def _ints(a: np.ndarray) -> MutableSequence[int]:
    """A 1-d array as a compact sequence of ints (a Python list when beyond int64)."""
    if a.dtype == object:
        return list(a.tolist())
    return array("q", (a if a.dtype == np.int64 else a.astype(np.int64)).tobytes())


def rack_masks(lay: Layout, m: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each position's rack as one bit (no rack, -1, is bit 0), and per row of the position matrix
    ``m`` the bits of the racks its replicas are on and of the racks two of its brokers share.
    int64 up to 61 racks, Python ints (object arrays) beyond."""
    wide = len(lay.rack_names) >= 62
    bits = np.array([1 << (k + 1) for k in lay.rack], object if wide else np.int64)
    real = m != PAD
    table = np.append(bits, np.zeros(1, bits.dtype))
    cell = table[np.where(real, m, len(bits))]  # 0 for padding
    every = np.zeros(m.shape[0], bits.dtype)
    twice = np.zeros(m.shape[0], bits.dtype)
    for j in range(m.shape[1]):
        every |= cell[:, j]
        for k in range(j + 1, m.shape[1]):
            same = real[:, j] & real[:, k] & (m[:, j] != m[:, k]) & (cell[:, j] == cell[:, k])
            twice |= np.where(same, cell[:, j], 0)
    return bits, every, twice


def pick(c: Candidates, reps: list[list[int]], sb: int, db: int, rack: int, ideal: float, limit: int, room: int) -> int:
    """A replica on broker ``sb`` (of its candidates ``c``) that may move to broker ``db``: its size
    nearest ``ideal`` (strictly between 0 and ``limit`` when ``limit`` is not -1, at most ``room``
    bytes when ``room`` is not -1); it leaves the candidates; -1 when none of the window may.
    ``rack`` is ``db``'s rack bit when the two brokers' racks differ and racks count, else 0: the
    move must not lower the racks the partition spans (:func:`candidates_of`).

    The window walks out from ``ideal`` both ways, the nearer size first: ``hb, hi`` is the next
    candidate above (block, index; size ``hs``, infinite past the end), ``lb, li`` the next below
    (size ``ls``, minus infinite before the start)."""
    bounded = limit >= 0 or room >= 0
    if rack and not bounded and c.narrow and (allows := ALLOWS.get(rack)) is not None:
        return pick_passing_over(c, reps, sb, db, allows, ideal)
    last, blocks, fails = c.last, c.sizes, c.fails
    nb = len(last)
    inf = math.inf
    hb = bisect_left(last, ideal)
    if hb < nb:
        high = blocks[hb]
        hi = bisect_left(high, ideal)
        hs: float = high[hi]
        high_fails = fails[hb]
    else:
        high, hi, hs, high_fails = [], 0, inf, []
    if hb < nb and hi > 0:
        lb, li, low, low_fails = hb, hi - 1, high, high_fails
    else:
        lb = hb - 1
        low, low_fails = (blocks[lb], fails[lb]) if lb >= 0 else ([], [])
        li = len(low) - 1
    ls: float = low[li] if lb >= 0 else -inf
    checked = steps = 0
    while checked < WINDOW and steps < 8 * WINDOW:
        if hs - ideal <= ideal - ls:
            if hs == inf:
                break  # both ways are spent
            b, i, size, f = hb, hi, hs, high_fails[hi]
            hi += 1
            if hi < len(high):
                hs = high[hi]
            else:
                hb += 1
                if hb < nb:
                    high, high_fails, hi = blocks[hb], fails[hb], 0
                    hs = high[0]
                else:
                    hs = inf
        else:
            b, i, size, f = lb, li, ls, low_fails[li]
            li -= 1
            if li >= 0:
                ls = low[li]
            else:
                lb -= 1
                if lb >= 0:
                    low, low_fails = blocks[lb], fails[lb]
                    li = len(low) - 1
                    ls = low[li]
                else:
                    ls = -inf
        steps += 1
        if bounded and ((limit >= 0 and not 0 < size < limit) or (room >= 0 and size > room)):
            continue
        checked += 1
        if f & rack:
            continue
        row = c.movable(b, i, reps, sb, db)
        if row >= 0:
            c.remove(b, i)
            return row
    return -1


ALLOWS = {1 << k: bytes(0 if v & 1 << k else 1 for v in range(256)) for k in range(8)}
"""Per rack bit: which fails (a byte) let a candidate go to that rack (1) or not (0)."""


def pick_passing_over(c: Candidates, reps: list[list[int]], sb: int, db: int, allows: bytes, ideal: float) -> int:
    """:func:`pick` when every candidate counts toward the window (no size limit, no byte budget)
    and the fails are bytes: the same pick, but the candidates the destination's rack rules out
    (most of those looked at, once the balance is under way) are passed over in bulk.

    The window visits the candidates in the order of their distance to ``ideal`` (the one above
    first on a tie): the first one the rack allows on each side (found with ``bytes.find``), the
    nearer of the two comes first, and the candidates visited before it are those of its side in
    between and those of the other side strictly nearer (nearer or as near, when it is below)."""
    last, blocks, fails = c.last, c.sizes, cast(list[bytearray], c.fails)
    nb = len(last)
    hb = bisect_left(last, ideal)
    hi = bisect_left(blocks[hb], ideal) if hb < nb else 0
    if hi > 0:
        lb, li = hb, hi - 1
    else:
        lb = hb - 1
        li = len(blocks[lb]) - 1 if lb >= 0 else -1
    left = WINDOW  # candidates the window may still visit
    while left > 0:
        # the first candidate the rack allows above (ub, ui; un visited before it on that side) and below
        ub, ui, un, bb, bi, bn = _first_allowed(fails, blocks, hb, hi, lb, li, allows, left)
        up = ub < nb and un < left
        down = bb >= 0 and bn < left
        if not up and not down:
            return -1
        if up and (not down or blocks[ub][ui] - ideal <= ideal - blocks[bb][bi]):
            # above comes first: below, those strictly nearer are visited before it
            near = blocks[ub][ui] - ideal
            seen = un
            while lb >= 0 and seen < left and ideal - blocks[lb][li] < near:
                seen += 1
                li -= 1
                if li < 0:
                    lb -= 1
                    li = len(blocks[lb]) - 1 if lb >= 0 else -1
            if seen >= left:
                return -1
            b, i = ub, ui
            hb, hi = (ub, ui + 1) if ui + 1 < len(blocks[ub]) else (ub + 1, 0)
        else:
            # below comes first: above, those as near or nearer are visited before it
            near = ideal - blocks[bb][bi]
            seen = bn
            while hb < nb and seen < left and blocks[hb][hi] - ideal <= near:
                seen += 1
                hi += 1
                if hi == len(blocks[hb]):
                    hb, hi = hb + 1, 0
            if seen >= left:
                return -1
            b, i = bb, bi
            lb, li = (bb, bi - 1) if bi > 0 else (bb - 1, len(blocks[bb - 1]) - 1 if bb > 0 else -1)
        left -= seen + 1
        row = c.movable(b, i, reps, sb, db)
        if row >= 0:
            c.remove(b, i)
            return row
    return -1


def _first_allowed(
    fails: list[bytearray],
    blocks: list[MutableSequence[int]],
    hb: int,
    hi: int,
    lb: int,
    li: int,
    allows: bytes,
    left: int,
) -> tuple[int, int, int, int, int, int]:
    """For :func:`pick_passing_over`: the first candidate the rack ``allows`` from entry ``hi`` of
    block ``hb`` up, and from entry ``li`` of block ``lb`` down, each as its block, its index and
    the candidates passed over before it on that side. None within the window's ``left`` above when
    the block is past the last or ``left`` or more are passed over; none below when the block is -1.
    Each block is searched at once (``bytes.translate`` then ``find``)."""
    nb = len(blocks)
    ub, ui, un = hb, hi, 0
    while ub < nb:
        j = fails[ub].translate(allows).find(1, ui)
        if j >= 0:
            un += j - ui
            ui = j
            break
        un += len(fails[ub]) - ui
        if un >= left:
            break
        ub, ui = ub + 1, 0
    bb, bi, bn = lb, li, 0
    while bb >= 0:
        j = fails[bb].translate(allows).rfind(1, 0, bi + 1)
        if j >= 0:
            bn += bi - j
            bi = j
            break
        bn += bi + 1
        if bn >= left or bb == 0:
            bb = -1
            break
        bb -= 1
        bi = len(blocks[bb]) - 1
    return ub, ui, un, bb, bi, bn


def pick_zoned(
    c: Candidates,
    reps: list[list[int]],
    sb: int,
    db: int,
    rack: int,
    bounds: tuple[float, int, int],
    zones: Zones,
    d: int,
) -> int:
    """:func:`pick` with the least cross-zone bytes preference: of the same window (``bounds``:
    the ideal size, the limit and the room, as :func:`pick` takes them), the nearest candidate
    whose partition's leader (the copy's source) is in the zone of ``d`` (``db``'s position), else
    the nearest that may go, as :func:`pick` would take it; it leaves the candidates; -1 when none
    of the window may move."""
    ideal, limit, room = bounds
    bounded = limit >= 0 or room >= 0
    dz = zones.zone_list[d]
    source = zones.source_list
    first: tuple[int, int, int] | None = None
    checked = steps = 0
    for b, i, size in _nearest(c, ideal):
        if checked >= WINDOW or steps >= 8 * WINDOW:
            break
        steps += 1
        if bounded and ((limit >= 0 and not 0 < size < limit) or (room >= 0 and size > room)):
            continue
        checked += 1
        if c.fails[b][i] & rack:
            continue
        row = c.movable(b, i, reps, sb, db)
        if row < 0:
            continue
        if dz >= 0 and source[row] == dz:
            c.remove(b, i)
            return row
        if first is None:
            first = (b, i, row)
    if first is None:
        return -1
    c.remove(first[0], first[1])
    return first[2]


def _nearest(c: Candidates, ideal: float) -> Iterator[tuple[int, int, int]]:
    """The candidates (block, index, size) from the size nearest ``ideal`` outwards, the one above
    first when as near (the order :func:`pick` visits them in)."""
    blocks, nb = c.sizes, len(c.sizes)
    hb = bisect_left(c.last, ideal)
    hi = bisect_left(blocks[hb], ideal) if hb < nb else 0
    lb, li = (hb, hi - 1) if hb < nb and hi > 0 else (hb - 1, len(blocks[hb - 1]) - 1 if hb > 0 else -1)
    while True:
        hs = blocks[hb][hi] if hb < nb else math.inf
        ls = blocks[lb][li] if lb >= 0 else -math.inf
        if hs == math.inf and ls == -math.inf:
            return
        if hs - ideal <= ideal - ls:
            yield hb, hi, int(hs)
            hi += 1
            if hi == len(blocks[hb]):
                hb, hi = hb + 1, 0
        else:
            yield lb, li, int(ls)
            li -= 1
            if li < 0:
                lb -= 1
                li = len(blocks[lb]) - 1 if lb >= 0 else -1
