"""The least cross-zone bytes preference of the goals that place replicas by load (decommission,
add brokers, rebalance by count or bytes).

A new replica copies its partition's log from the partition's leader (the current one: it leads
until the reassignment completes), so a move costs its bytes across zones when the destination is
in another zone than that leader. Racks are zones unless ``[pricing.zones]`` maps them
(:attr:`~console.plans.generators.options.GenerateOptions.zones`); a broker without a rack is in
no known zone, and a copy to or from it is never counted as staying in its zone.

Two strengths (:attr:`~console.plans.generators.options.GenerateOptions.zone_weight`):

* **a tie-breaker** (weight 0): of the choices the goal rates alike, the one copying in its zone.
  A decommission's destinations within one replica of the least loaded one (the balance it
  reaches is the same, ±1 replica); a balance step's destinations as loaded as each other, and
  the replicas of its window (the :data:`~console.plans.generators.candidates.WINDOW` candidates
  nearest the size it looks for, which keep the count balance alike);
* **a weight** ``w`` above 0, on top of the tie-breaker: a byte copied across zones counts as ``w``
  bytes of load on its destination: a decommission adds ``w`` times the replica's bytes to the
  load score of a destination in another zone; a balance step adds ``w`` times the size it looks
  for to the load of a destination in another zone than its source (by count: in replicas of the
  mean size). Balance is traded for bytes across zones: the report says how much of each.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from console.plans.columns import PAD, Ints, columns_of
from console.plans.generators.options import GenerateOptions
from console.plans.layout import Layout


@dataclass(frozen=True)
class Zones:
    """The zone of each broker (by position) and of each partition's copy source (by row), as
    codes (-1: not known), and the preference's weight."""

    weight: float
    zone: Ints
    source: Ints
    zone_list: list[int]
    source_list: list[int]

    @staticmethod
    def of(lay: Layout, options: GenerateOptions) -> Zones | None:
        """None when the preference is not asked."""
        if options.zone_weight is None:
            return None
        named = dict(options.zones)
        codes: dict[str, int] = {}
        of_rack = [codes.setdefault(named.get(r, r), len(codes)) for r in lay.rack_names]
        zone = np.array([of_rack[r] if r >= 0 else -1 for r in lay.rack] + [-1], np.int64)  # last: no broker
        leader = columns_of(lay.state).leader
        ids = np.array(lay.ids, np.int64)
        at = np.searchsorted(ids, leader)
        found = (leader != PAD) & (at < len(ids)) & (ids[np.minimum(at, len(ids) - 1)] == leader)
        source = zone[np.where(found, at, len(ids))]
        return Zones(float(options.zone_weight), zone[:-1], source, zone[:-1].tolist(), source.tolist())

    def destination(self, row: int, score: np.ndarray, means: tuple[float, float], size: int) -> int:
        """A decommission's destination for a replica of ``row`` (its ``size``) among those with a
        finite load ``score``: the least of score + weight × bytes across zones / mean bytes, and of
        those within one replica of it (this replica's count and bytes in the score's units), one in
        the copy source's zone first."""
        zs = int(self.source[row])
        if zs < 0:
            return int(np.argmin(score))
        cross = self.zone != zs
        cost = score + np.where(cross, self.weight * size / means[1], 0.0)
        best = int(np.argmin(cost))
        near = ~cross & (cost <= cost[best] + 1.0 / means[0] + size / means[1])
        if not near.any():
            return best
        return int(np.argmin(np.where(near, cost, np.inf)))

    def crosses(self, s: int, d: int) -> bool:
        """Whether destination ``d`` is outside source ``s``'s zone (or either zone is not known)."""
        zs = self.zone_list[s]
        return zs < 0 or self.zone_list[d] != zs
