"""A run's outcomes grouped by what became of them, the same from ``submit`` and on the Runs page:
partitions the controller refused in a wave, replicas left out of their log dir (a dir went
offline), partitions that no longer exist, partitions an operator cancelled while the run went on,
partitions the closing election did not make lead, and log dir moves the broker did not take."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from console.core.model import DIR_CANCELLED, DIR_OFFLINE, PARTITION_CANCELLED, PARTITION_GONE, DirOutcome
from console.storage.runs import ELECTION_WAVE, WaveOutcome


@dataclass(frozen=True)
class RunOutcomes:
    rejected: tuple[WaveOutcome, ...] = ()
    """Refused in a wave by the controller (not the election's, a dir gone offline, nor a partition gone)."""
    not_in_dir: tuple[WaveOutcome, ...] = ()
    """Left out of the log dir the plan asked: a dir went offline during the move."""
    gone: tuple[WaveOutcome, ...] = ()
    """Deleted during the run (the console's finding, not the controller's refusal)."""
    not_elected: tuple[WaveOutcome, ...] = ()
    """Their preferred leader not elected by the closing election: led as they were (shown, not a failure)."""
    dirs_not_taken: tuple[DirOutcome, ...] = ()
    """Log dirs the broker refused (a cordoned one, one it does not have): the replica is in another of its dirs."""
    cancelled: tuple[WaveOutcome, ...] = ()
    """Cancelled by an operator while the run went on: back to their original replicas."""

    @property
    def partly(self) -> bool:
        """Whether part of the run did not happen as the plan asked (``submit`` exits 3)."""
        return bool(self.rejected or self.not_in_dir or self.dirs_not_taken or self.gone or self.cancelled)


def group_outcomes(outcomes: Iterable[WaveOutcome], dir_moves: Iterable[DirOutcome] = ()) -> RunOutcomes:
    """``outcomes`` (a run's wave answers) and ``dir_moves`` (its AlterReplicaLogDirs answers) grouped."""
    failed = [o for o in outcomes if not o.accepted]
    return RunOutcomes(
        tuple(
            o
            for o in failed
            if o.wave != ELECTION_WAVE and o.code not in (DIR_OFFLINE, PARTITION_GONE, PARTITION_CANCELLED)
        ),
        tuple(o for o in failed if o.code == DIR_OFFLINE),
        tuple(o for o in failed if o.code == PARTITION_GONE),
        tuple(o for o in failed if o.wave == ELECTION_WAVE),
        tuple(
            d
            for d in dir_moves
            if not (d.accepted or d.remembered or d.code in (DIR_CANCELLED, DIR_OFFLINE))  # offline: not_in_dir
        ),
        tuple(o for o in failed if o.code == PARTITION_CANCELLED),
    )
