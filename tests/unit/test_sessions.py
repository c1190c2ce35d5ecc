"""Sign-in sessions (server-side, behind an opaque cookie token), autosaved drafts, and what the
Drafts page says at once about unknown names."""

from __future__ import annotations

import json
import time

import pytest

from console.access.auth import APPROVER, OPERATOR, VIEWER, Identity, Users, hash_password, session_ttl_s
from console.core.errors import ConfigError
from console.plans import drafting as drafts
from console.plans.plan import Plan, PlanEntry
from console.plans.validate import validate
from console.present.drafts import unknown_lines
from console.services import drafts as draft_service
from console.services import sessions as session_service
from console.storage.drafts import decode_plan, encode_plan
from console.storage.sessions import token_digest
from tests.unit.builders import ids, snapshot


@pytest.fixture(scope="module")
def users():
    return Users(
        {"ann": hash_password("ann-secret"), "vic": hash_password("vic-secret")},
        {"ann": frozenset({OPERATOR}), "vic": frozenset({VIEWER})},
    )


# -- sessions ------------------------------------------------------------------------------------
def test_sign_in_opens_a_session_that_a_second_tab_resumes_and_sign_out_ends_everywhere(store, users):
    signed = session_service.sign_in(store, users, "ann", "ann-secret", 3600)
    assert isinstance(signed, session_service.SignedIn)
    assert signed.identity == Identity("ann", frozenset({OPERATOR}), "users file")
    assert signed.expires_at == pytest.approx(time.time() + 3600, abs=5)
    # the store keeps only the token's digest
    assert signed.token not in json.dumps(store.db.query("SELECT * FROM sessions"))
    assert store.db.query("SELECT token_hash FROM sessions") == [(token_digest(signed.token),)]
    # every tab holding the cookie is the same session
    for _ in range(2):
        assert session_service.resume_session(store, users, signed.token) == signed.identity
    assert session_service.sign_out(store, signed.token)
    assert session_service.resume_session(store, users, signed.token) is None
    assert not session_service.sign_out(store, signed.token)  # already ended: nothing to audit
    audit = [(a.user, a.cluster, a.action, a.outcome) for a in store.audit.entries()]
    assert audit == [("ann", "*", "sign-in", "signed in"), ("ann", "*", "sign-out", "signed out")]
    assert signed.token not in json.dumps([a.request for a in store.audit.entries()])


def test_wrong_password_or_unknown_user_opens_nothing_and_is_audited(store, users):
    for name, password in (("ann", "wrong"), ("mallory", "x")):
        refused = session_service.sign_in(store, users, name, password, 3600)
        assert refused == session_service.Refused(session_service.Refusal.WRONG)
        assert refused.message() == "Unknown user or wrong password."
    assert store.sessions.count() == 0
    assert [(a.user, a.outcome) for a in store.audit.entries(action="sign-in")] == [
        ("ann", "refused"),
        ("mallory", "refused"),
    ]


def test_sessions_expire(store, users):
    signed = session_service.sign_in(store, users, "ann", "ann-secret", 60)
    assert isinstance(signed, session_service.SignedIn)
    now = time.time()
    assert store.sessions.get(signed.token, now=now + 59) is not None
    assert store.sessions.get(signed.token, now=now + 61) is None
    # expired rows are purged when the next session opens
    store.sessions.create("x" * 43, "vic", now + 10, now=now + 61)
    assert store.db.query("SELECT user FROM sessions") == [("vic",)]


def test_tampered_unknown_or_malformed_tokens_sign_nobody_in(store, users):
    signed = session_service.sign_in(store, users, "ann", "ann-secret", 3600)
    assert isinstance(signed, session_service.SignedIn)
    token = signed.token
    flipped = token[:-1] + ("A" if token[-1] != "A" else "B")
    for bad in (
        flipped,
        token + "x",
        token[:-1],
        "A" * 43,
        "",
        None,
        "a b",
        "'; DROP TABLE sessions; --",
        token_digest(token),
    ):
        assert session_service.resume_session(store, users, bad) is None, bad
    assert not session_service.sign_out(store, flipped)
    assert session_service.resume_session(store, users, token) is not None  # the real one still works


def test_a_session_takes_the_users_file_as_it_is_now(store, users):
    signed = session_service.sign_in(store, users, "ann", "ann-secret", 3600)
    assert isinstance(signed, session_service.SignedIn)
    promoted = Users(users.passwords, {**users.roles, "ann": frozenset({OPERATOR, APPROVER})})
    assert session_service.resume_session(store, promoted, signed.token).roles == {OPERATOR, APPROVER}
    removed = Users({"vic": users.passwords["vic"]}, {"vic": frozenset({VIEWER})})
    assert session_service.resume_session(store, removed, signed.token) is None


def test_session_hours(monkeypatch):
    monkeypatch.delenv("CONSOLE_SESSION_HOURS", raising=False)
    assert session_ttl_s() == 12 * 3600
    monkeypatch.setenv("CONSOLE_SESSION_HOURS", "0.5")
    assert session_ttl_s() == 1800
    for bad in ("soon", "0", "-1", "nan", "inf"):
        monkeypatch.setenv("CONSOLE_SESSION_HOURS", bad)
        with pytest.raises(ConfigError):
            session_ttl_s()


def test_only_operators_and_approvers_may_save_plans():
    assert not Identity("vic").can("save plans")
    assert "needs the operator or approver role" in Identity("vic").why_not("save plans")
    assert Identity("ann", frozenset({OPERATOR})).can("save plans")
    assert Identity("abe", frozenset({APPROVER})).can("save plans")
    assert not Identity("abe", frozenset({APPROVER})).can("submit")


# -- autosaved drafts ----------------------------------------------------------------------------
def _plan(*targets: int, basis: bool = True) -> Plan:
    entries = [PlanEntry("t", i, ids(b, (b + 1) % 4)) for i, b in enumerate(targets)]
    return Plan.of(entries, {e.key: ids(0, 1) for e in entries} if basis else None)


def test_a_plan_with_its_basis_and_log_dirs_comes_back_as_it_was():
    plan = Plan.of([PlanEntry("t", 1, ids(2, 3), ("any", "/d")), PlanEntry("t", 0, ids(1))], {("t", 0): ids(0)})
    again = decode_plan(encode_plan(plan))
    assert again == plan and again.basis == plan.basis
    assert decode_plan(encode_plan(Plan(()))) == Plan(())


def test_autosave_push_undo_discard(store):
    a, b, c = _plan(1), _plan(1, 2), _plan(3)
    assert store.drafts.load("ann", "k") is None
    # the page's stack: history [None], draft a; then b; then c
    draft_service.autosave_draft(store, "ann", "k", 1, a)
    draft_service.autosave_draft(store, "ann", "k", 2, b)
    draft_service.autosave_draft(store, "ann", "k", 3, c)
    saved = store.drafts.load("ann", "k")
    assert saved.draft == c and saved.history == [a, b] and saved.base == 1
    assert saved.draft.basis == c.basis
    draft_service.autosave_undo(store, "ann", "k", 2)  # Undo: b is the draft again
    saved = store.drafts.load("ann", "k")
    assert saved.draft == b and saved.history == [a]
    draft_service.autosave_draft(store, "ann", "k", 3, a)  # a new change after an undo drops what was above
    assert store.drafts.load("ann", "k").steps == [a, b, a]
    # per user and per cluster
    assert store.drafts.load("bob", "k") is None and store.drafts.load("ann", "other") is None
    draft_service.discard_autosave(store, "ann", "k")
    assert store.drafts.load("ann", "k") is None and store.drafts.steps("ann", "k") == []


def test_undo_back_to_no_draft_restores_nothing(store):
    draft_service.autosave_stack(store, "ann", "k", [None, _plan(1)])
    assert store.drafts.load("ann", "k").history == [None]
    draft_service.autosave_undo(store, "ann", "k", 0)
    assert store.drafts.load("ann", "k") is None


def test_undo_steps_kept_are_bounded(store):
    for pos in range(1, 40):
        draft_service.autosave_draft(store, "ann", "k", pos, _plan(pos % 4))
    steps = store.drafts.steps("ann", "k")
    assert len(steps) == draft_service.UNDO_STEPS_KEPT + 1 and steps[-1][0] == 39
    assert draft_service.undo_steps_kept(10) == draft_service.UNDO_STEPS_KEPT
    assert draft_service.undo_steps_kept(draft_service.UNDO_PARTITIONS_KEPT) == 1
    # a whole stack (a draft adopted at sign-in) keeps the same tail, at its own positions
    stack = [None] + [_plan(i % 4) for i in range(30)]
    draft_service.autosave_stack(store, "bob", "k", stack)
    saved = store.drafts.load("bob", "k")
    assert saved.steps == stack[-draft_service.UNDO_STEPS_KEPT - 1 :] and saved.base == len(stack) - len(saved.steps)


def test_a_gap_left_by_two_tabs_cuts_the_history_there(store):
    a, b, c = _plan(1), _plan(2), _plan(3)
    draft_service.autosave_stack(store, "ann", "k", [a, b], base=0)
    draft_service.autosave_draft(store, "ann", "k", 5, c)  # another tab, further along
    saved = store.drafts.load("ann", "k")
    assert saved.draft == c and saved.history == [] and saved.base == 5


# -- unknown names on the Drafts page ------------------------------------------------------------
def test_unknown_topics_partitions_and_brokers_in_a_line_each():
    state = snapshot({("t", 0): [0, 1], ("t", 1): [1, 2]}, nbrokers=3)
    draft = drafts.from_assignment(state, topics=["t"])
    assert unknown_lines(validate(state, draft), state, draft) == []
    draft = Plan.of(
        [
            *draft.entries,
            PlanEntry("t", 7, ids(0)),
            PlanEntry("gone", 0, ids(1)),
            PlanEntry("gone", 1, ids(1)),
            PlanEntry("t", 9, ids(2)),
        ]
    )
    draft = drafts.replace_broker(draft, 2, 9, keys=[("t", 1)])
    lines = unknown_lines(validate(state, draft), state, draft)
    assert lines == ["Unknown topic: gone (2 entries)", "Unknown partitions: t-7, t-9", "Unknown broker: 9 (in t-1)"]
    many = Plan.of([PlanEntry("t", p, ids(0)) for p in range(2, 12)])
    assert unknown_lines(validate(state, many), state, many) == [
        "Unknown partitions: t-2, t-3, t-4, t-5, t-6 and 5 more"
    ]
    assert unknown_lines(validate(state, Plan(())), state, Plan(())) == []
