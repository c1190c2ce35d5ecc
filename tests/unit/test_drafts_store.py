"""Draft edits (pure) and the SQLite store."""

from __future__ import annotations

import pytest

from console.core.errors import PlanFormatError
from console.plans import drafting as drafts
from console.plans.plan import Plan, PlanEntry, rollback
from console.storage.store import Store
from tests.unit.builders import ids, snapshot


def test_from_assignment_records_the_basis_and_originals():
    state = snapshot(
        {("t", 0): [0, 1], ("t", 1): [1, 2], ("u", 0): [3, 0, 1]}, nbrokers=4, lpr={("u", 0): ([3, 0, 1], [3], [1])}
    )
    plan = drafts.from_assignment(state, topics=["t"], partitions=[("u", 0)])
    assert [(e.key, e.replicas) for e in plan.entries] == [(("t", 0), (0, 1)), (("t", 1), (1, 2)), (("u", 0), (0, 1))]
    assert plan.basis[("u", 0)] == (3, 0, 1)


def test_bulk_edits():
    plan = Plan.of([PlanEntry("t", 0, ids(0, 1)), PlanEntry("t", 1, ids(1, 2)), PlanEntry("u", 0, ids(1, 0))])
    replaced = drafts.replace_broker(plan, 1, 3, keys=[("t", 0), ("t", 1)])
    assert [e.replicas for e in replaced.entries] == [(0, 3), (3, 2), (1, 0)]
    assert drafts.replace_broker(plan, 1, 0).entries[0].replicas == (0, 1)  # already holds 0: unchanged
    first = drafts.move_to_first(plan, 1)
    assert [e.replicas for e in first.entries] == [(1, 0), (1, 2), (1, 0)]
    state = snapshot({("t", 0): [0, 1], ("t", 1): [1, 2]}, nbrokers=4)
    grown = drafts.set_replication_factor(plan, state, "t", 3)
    assert all(len(e.replicas) == 3 and len(set(e.replicas)) == 3 for e in grown.entries[:2])
    assert grown.entries[2] == plan.entries[2]
    assert [e.replicas for e in drafts.set_replication_factor(plan, state, "t", 1).entries[:2]] == [(0,), (1,)]
    with pytest.raises(PlanFormatError):
        drafts.set_replication_factor(plan, state, "t", 9)


def test_parse_ids_and_set_entry():
    assert drafts.parse_ids("1, 2,3") == (1, 2, 3)
    for bad in ("", "a", "1,1", "-1"):
        with pytest.raises(PlanFormatError):
            drafts.parse_ids(bad)
    plan = drafts.set_entry(Plan.of([PlanEntry("t", 0, ids(0))]), "t", 0, ids(2, 1), ("any", "any"))
    assert plan.entries == (PlanEntry("t", 0, ids(2, 1), None),)
    for dirs in (("/d",), ("any", "relative")):
        with pytest.raises(PlanFormatError):
            drafts.set_entry(plan, "t", 0, ids(2, 1), dirs)


def test_store_saves_plans_with_rollback_basis_and_notes(tmp_path):
    state = snapshot({("t", 0): [0, 1], ("t", 1): [1, 2]}, nbrokers=4)
    plan = drafts.replace_broker(drafts.from_assignment(state, topics=["t"]), 1, 3)
    store = Store(tmp_path / "console.db")
    pid = store.plans.save("move off 1", "sandbox", plan, rollback(state, plan), "alice", state.fingerprint())
    assert store.plans.save("move off 1", "sandbox", plan, rollback(state, plan), "bob") == pid  # overwrite by name
    saved = store.plans.load(pid)
    assert saved.plan == plan and saved.plan.basis == plan.basis
    assert saved.rollback_json == rollback(state, plan).to_json()
    assert [s.name for s in store.plans.list("sandbox")] == ["move off 1"] and store.plans.list("other") == []
    store.plans.add_note(pid, "carol", "looks fine")
    store.plans.add_note(pid, "carol", "   ")
    assert [(n.author, n.note) for n in store.plans.notes(pid)] == [("carol", "looks fine")]
    assert Store(tmp_path / "console.db").plans.load(pid).summary.author == "bob"  # another handle sees it
    store.plans.delete(pid)
    assert store.plans.load(pid) is None
