"""The write path's pure parts: what a cancel means, outcomes, and the append-only audit log."""

from __future__ import annotations

import sqlite3

import kafka.errors as ke
import pytest

from console.adapters.kafka.wire import NO_ANSWER, outcome_of
from console.core.model import split_outcomes
from console.moves.cancel import keys_of, plan_cancel
from console.state.merge import merge
from console.storage.store import Store
from tests.unit.builders import api


def in_flight_state():
    # t-0 moves 0,1 -> 1,2 (in sync); t-1 moves 0,1 -> 2,3 with neither original in sync; t-2 is idle
    meta = {("t", 0): ([1, 2, 0], [1, 0], 1), ("t", 1): ([2, 3, 0, 1], [2, 3], 2), ("t", 2): ([0, 1], [0, 1], 0)}
    lpr = {("t", 0): ([1, 2, 0], [2], [0]), ("t", 1): ([2, 3, 0, 1], [2, 3], [0, 1])}
    return merge(api(meta, lpr=lpr, nbrokers=4), None)


def test_cancel_plan_scopes_ownership_and_risk():
    state = in_flight_state()
    everything = plan_cancel(state, None)
    assert [p.key for p in everything.cancel] == [("t", 0), ("t", 1)] and not everything.not_ours
    assert [p.key for p in everything.at_risk] == [("t", 1)]  # no original replica in sync
    assert everything.targets == {("t", 0): None, ("t", 1): None}
    topic = plan_cancel(state, keys_of(state, "t"), ours=[("t", 0)])
    assert [p.key for p in topic.cancel] == [("t", 0)] and [p.key for p in topic.not_ours] == [("t", 1)]
    assert topic.not_in_flight == (("t", 2),)
    text = "\n".join(topic.explain())
    assert "t-0: 1,2,0 → back to 1,0 (dropping 2)" in text and "did not start" in text and "t-2" in text
    assert [p.key for p in plan_cancel(state, [("t", 1)], include_others=True).at_risk] == [("t", 1)]
    assert keys_of(state, "t", [2]) == [("t", 2)] and keys_of(state, "nope") == []


def test_outcomes_carry_the_brokers_own_error():
    ok = outcome_of("t", 0, None)
    bad = outcome_of("t", 1, ke.NoReassignmentInProgressError)
    silent = outcome_of("t", 2, NO_ANSWER)
    assert ok.accepted and not bad.accepted and bad.code == "NO_REASSIGNMENT_IN_PROGRESS"
    assert bad.message.startswith("NO_REASSIGNMENT_IN_PROGRESS (85)")
    assert silent.code == "NO_ANSWER"
    assert split_outcomes([ok, bad, silent]) == ([ok], [bad, silent])


def test_audit_log_is_append_only(tmp_path):
    store = Store(tmp_path / "c.db")
    first = store.audit.record("ann", "c1", "cancel", {"cancel": [["t", 0]]}, "sending")
    store.audit.record(
        "ann", "c1", "cancel", {"cancel": [["t", 0]]}, "accepted", ref=first, response=[{"accepted": True}]
    )
    entries = store.audit.entries(cluster="c1")
    assert [(e.user, e.action, e.outcome, e.ref) for e in entries] == [
        ("ann", "cancel", "sending", None),
        ("ann", "cancel", "accepted", first),
    ]
    db = sqlite3.connect(tmp_path / "c.db")
    for sql in ("UPDATE audit SET outcome = 'x'", "DELETE FROM audit"):
        with pytest.raises(sqlite3.DatabaseError, match="append-only"):
            db.execute(sql)


def test_two_person_rule():
    from console.access.auth import approval_problem
    from console.storage.plans import Approval

    ann = {"ann"}
    assert "someone who authored no version of it (authors: ann)" in approval_problem(ann, [], "h1", "c")
    assert "only by its authors (ann)" in approval_problem(ann, [Approval("ann", 1.0, "h1", "c")], "h1", "c")
    assert "changed since it was approved" in approval_problem(ann, [Approval("bob", 1.0, "h0", "c")], "h1", "c")
    assert "approved on another cluster" in approval_problem(ann, [Approval("bob", 1.0, "h1", "d")], "h1", "c")
    assert approval_problem(ann, [Approval("bob", 1.0, "h1", "c")], "h1", "c") is None
    # an author of any version (here bob brought ann's plan up to date) does not count
    both = {"ann", "bob"}
    assert "only by its authors (ann, bob)" in approval_problem(both, [Approval("bob", 1.0, "h1", "c")], "h1", "c")


def test_users_file_passwords_and_roles(tmp_path):
    from console.access.auth import OPERATOR, VIEWER, check_password, hash_password, load_users, write_users

    stored = hash_password("s3cret")
    assert stored.startswith("scrypt$") and "s3cret" not in stored
    assert check_password("s3cret", stored) and not check_password("nope", stored) and not check_password("x", "junk")
    write_users(tmp_path / "u.json", {"ann": ("pw", [OPERATOR]), "vic": ("pw2", [VIEWER])}, two_person_rule=True)
    users = load_users(tmp_path / "u.json")
    assert users.two_person_rule and users.login("ann", "bad") is None
    ann = users.login("ann", "pw")
    assert ann.can("cancel") and ann.can("submit") and not ann.can("approve")
    vic = users.login("vic", "pw2")
    assert not vic.can("cancel") and "needs the operator role" in vic.why_not("cancel")
    assert load_users(tmp_path / "none.json") is None
    (tmp_path / "bad.json").write_text('{"users": {"x": {"password": "p", "roles": ["root"]}}}')
    (tmp_path / "bad.json").chmod(0o600)
    with pytest.raises(Exception, match="unknown roles"):
        load_users(tmp_path / "bad.json")
