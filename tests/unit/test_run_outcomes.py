"""One grouping of a run's outcomes (console/present/outcomes.py) for ``submit`` and the Runs page:
refused in a wave, left out of a log dir, gone, cancelled by an operator, not elected, log dirs not taken."""

from __future__ import annotations

from console.core.model import DIR_CANCELLED, DIR_OFFLINE, PARTITION_CANCELLED, PARTITION_GONE, BrokerId, DirOutcome
from console.core.states import WaveState
from console.plans.plan import Plan, PlanEntry
from console.present.history import (
    cancelled_rows,
    gone_rows,
    not_elected_rows,
    not_in_dir_rows,
    problems_text,
    rejected_rows,
    wave_rows,
)
from console.present.outcomes import group_outcomes
from console.storage.runs import ELECTION_WAVE, Wave, WaveOutcome
from tests.unit.builders import ids

OUTCOMES = [
    WaveOutcome(1, "t", 0, True, None, None),
    WaveOutcome(1, "t", 1, False, "INVALID_REPLICA_ASSIGNMENT", "broker 9 is not alive"),
    WaveOutcome(1, "t", 2, False, DIR_OFFLINE, "dir /d2 of broker 2 went offline"),
    WaveOutcome(2, "t", 3, False, PARTITION_GONE, "t-3 no longer exists"),
    WaveOutcome(2, "t", 4, True, None, None),
    WaveOutcome(2, "t", 4, False, PARTITION_CANCELLED, "cancelled: left the in-flight list away from its target"),
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
    assert [o.name for o in got.cancelled] == ["t-4"]  # neither refused by the controller nor gone
    assert got.partly and not group_outcomes(OUTCOMES[:1]).partly
    # the Runs page's tables are the same groups
    assert [r["partition"] for r in rejected_rows(OUTCOMES)] == ["t-1"]
    assert [r["partition"] for r in not_in_dir_rows(OUTCOMES)] == ["t-2"]
    assert [r["partition"] for r in gone_rows(OUTCOMES)] == ["t-3"]
    assert [r["partition"] for r in not_elected_rows(OUTCOMES)] == ["t-0"]
    assert [r["partition"] for r in cancelled_rows(OUTCOMES)] == ["t-4"]
    assert problems_text(OUTCOMES) == ("1 partition cancelled: t-4; 1 replica not in its log dir (a dir went offline)")


def test_a_waves_row_counts_a_cancelled_partition_as_cancelled_not_rejected() -> None:
    wave = Wave(
        7, 2, WaveState.COMPLETED, Plan.of([PlanEntry("t", 3, ids(1)), PlanEntry("t", 4, ids(1))]).to_json(), 1.0, 2.0
    )
    (row,) = wave_rows(None, [wave], OUTCOMES)
    assert (row["partitions"], row["rejected"], row["cancelled"]) == (2, 0, 1)


def test_a_partition_cancelled_while_its_run_went_on_says_where_it_is_against_before_the_run() -> None:
    """A cancel puts the original brokers back in the order the reassignment listed them: a partition
    on 1,2 before the run came back on 2,1, its preferred leader changed, and the record said "back to
    their original replicas" (as a person walking the demo found)."""
    from console.core.model import BrokerId
    from console.runs.watching import cancelled_where

    b = [BrokerId(1), BrokerId(2)]
    assert cancelled_where(b, b) == "cancelled: back on 1,2, as before the run"
    assert cancelled_where(b[::-1], b) == (
        "cancelled: back on its brokers before the run in another order, 2,1 (was 1,2): its preferred leader is "
        "now 2, not 1; the run's rollback JSON puts the order back"
    )
    assert cancelled_where([BrokerId(3)], b) == (
        "cancelled: left the in-flight list away from its target, on 3 (before the run: 1,2)"
    )
