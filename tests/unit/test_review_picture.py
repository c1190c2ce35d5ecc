"""The Review page's broker × partition picture: each replica before and after, with its role."""

from __future__ import annotations

from console.plans.diff import diff
from console.plans.plan import Plan, PlanEntry
from console.present.review import plan_cells
from tests.unit.builders import ids, snapshot


def test_each_replica_before_and_after_has_its_role_and_the_leaders_their_label() -> None:
    state = snapshot({("t", 0): [1, 2]})
    changes = diff(state, Plan.of([PlanEntry("t", 0, ids(2, 3))])).changes
    assert plan_cells(changes) == [
        {"partition": "t-0", "broker": "1", "when": "before", "role": "leader", "label": "L"},
        {"partition": "t-0", "broker": "2", "when": "before", "role": "kept", "label": ""},
        {"partition": "t-0", "broker": "2", "when": "after", "role": "leader", "label": "L"},
        {"partition": "t-0", "broker": "3", "when": "after", "role": "arriving", "label": ""},
    ]
    state = snapshot({("t", 0): [2, 1]})
    changes = diff(state, Plan.of([PlanEntry("t", 0, ids(3, 2))])).changes
    roles = [(c["broker"], c["when"], c["role"]) for c in plan_cells(changes)]
    assert roles == [
        ("2", "before", "leader"),
        ("1", "before", "leaving"),
        ("3", "after", "arriving"),
        ("2", "after", "leader"),
    ]
