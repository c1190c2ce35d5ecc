"""One grouping of a run's outcomes (console/present/outcomes.py) for ``submit`` and the Runs page:
refused in a wave, left out of a log dir, gone, not elected, log dirs not taken."""

from __future__ import annotations

from console.core.model import DIR_CANCELLED, DIR_OFFLINE, PARTITION_GONE, BrokerId, DirOutcome
from console.present.history import gone_rows, not_elected_rows, not_in_dir_rows, rejected_rows
from console.present.outcomes import group_outcomes
from console.storage.runs import ELECTION_WAVE, WaveOutcome

OUTCOMES = [
    WaveOutcome(1, "t", 0, True, None, None),
    WaveOutcome(1, "t", 1, False, "INVALID_REPLICA_ASSIGNMENT", "broker 9 is not alive"),
    WaveOutcome(1, "t", 2, False, DIR_OFFLINE, "dir /d2 of broker 2 went offline"),
    WaveOutcome(2, "t", 3, False, PARTITION_GONE, "t-3 no longer exists"),
    WaveOutcome(ELECTION_WAVE, "t", 0, False, "PREFERRED_LEADER_NOT_AVAILABLE", "not in sync"),
]
DIRS = [
    DirOutcome("t", 0, BrokerId(1), "/d2"),
    DirOutcome("t", 1, BrokerId(1), "/d3", "LOG_DIR_NOT_FOUND"),
    DirOutcome("t", 2, BrokerId(2), "/d2", DIR_OFFLINE),
    DirOutcome("t", 3, BrokerId(2), "/d2", DIR_CANCELLED),
]


def test_a_runs_outcomes_are_grouped_once_for_the_cli_and_the_pages() -> None:
    got = group_outcomes(OUTCOMES, DIRS)
    assert [o.name for o in got.rejected] == ["t-1"]
    assert [o.name for o in got.not_in_dir] == ["t-2"]
    assert [o.name for o in got.gone] == ["t-3"]
    assert [o.name for o in got.not_elected] == ["t-0"]
    assert [(d.partition, d.code) for d in got.dirs_not_taken] == [(1, "LOG_DIR_NOT_FOUND")]
    assert got.partly and not group_outcomes(OUTCOMES[:1]).partly
    # the Runs page's tables are the same groups
    assert [r["partition"] for r in rejected_rows(OUTCOMES)] == ["t-1"]
    assert [r["partition"] for r in not_in_dir_rows(OUTCOMES)] == ["t-2"]
    assert [r["partition"] for r in gone_rows(OUTCOMES)] == ["t-3"]
    assert [r["partition"] for r in not_elected_rows(OUTCOMES)] == ["t-0"]
