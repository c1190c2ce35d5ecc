"""Stale plans brought up to date: what changed since the draft, the rebased plan, the store's link
to the plan it came from, and the CLI's refusals of unusable input."""

from __future__ import annotations

import json
import sqlite3

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from console import cli
from console.access.auth import Identity
from console.core.errors import ConfigError, NotPermitted
from console.plans import validate as v
from console.plans.plan import Plan, PlanEntry, rollback
from console.plans.rebase import KINDS, RebaseOptions, Since, count_rows, rebase, report_json, report_rows, report_text
from console.plans.rules import codes
from console.services import plans as plan_service
from console.storage.store import Store
from tests.unit.builders import ids, snapshot


def kinds(report):
    return {r.key: r.kind for r in report.rows}


# A cluster where, since the plan was drafted: t-0 was moved by someone else, t-1 is being
# reassigned, t-2 finished at the plan's target, t-3 did not change, t-9 and topic gone-0 are gone.
NOW = {("t", 0): [2, 3], ("t", 1): [3, 0, 1], ("t", 2): [1, 2], ("t", 3): [0, 1]}
IN_FLIGHT = {("t", 1): ([3, 0, 1], [3], [1])}
PLAN = Plan.of(
    [
        PlanEntry("t", 0, ids(1, 2)),
        PlanEntry("t", 1, ids(0, 2)),
        PlanEntry("t", 2, ids(1, 2)),
        PlanEntry("t", 3, ids(1, 2), ("any", "/data/a")),
        PlanEntry("t", 9, ids(0, 1)),
        PlanEntry("gone", 0, ids(0, 1)),
    ],
    {
        ("t", 0): ids(0, 1),
        ("t", 1): ids(0, 1),
        ("t", 2): ids(0, 1),
        ("t", 3): ids(0, 1),
        ("t", 9): ids(0, 1),
        ("gone", 0): ids(0, 1),
    },
)


@pytest.fixture
def state():
    return snapshot(NOW, nbrokers=4, lpr=IN_FLIGHT)


def test_each_kind_of_change_since_the_draft(state):
    report = rebase(state, PLAN)
    assert kinds(report) == {
        ("t", 0): Since.MOVED,
        ("t", 1): Since.IN_FLIGHT,
        ("t", 2): Since.COMPLETED,
        ("t", 3): Since.UNCHANGED,
        ("t", 9): Since.GONE,
        ("gone", 0): Since.GONE,
    }
    assert report.counts == {
        Since.GONE: 2,
        Since.IN_FLIGHT: 1,
        Since.COMPLETED: 1,
        Since.MOVED: 1,
        Since.UNCHANGED: 1,
        Since.NO_BASIS: 0,
    }
    assert list(report.counts) == list(KINDS)
    # changed: what the stale finding and the unknown-partition errors report
    assert report.changed == 5 and not next(r for r in report.rows if r.key == ("t", 3)).changed
    rows = {r.key: r for r in report.rows}
    assert rows[("gone", 0)].detail == "the topic no longer exists"
    assert rows[("t", 9)].detail == "the partition no longer exists"
    assert rows[("t", 1)].detail == "reassigning now toward 3,0 (from 0,1)"
    assert rows[("t", 0)].detail == "moved by someone else: was 0,1, now 2,3"
    assert rows[("t", 2)].detail == "already at the target 1,2 (was 0,1)"
    assert (rows[("t", 1)].current, rows[("t", 1)].adding, rows[("t", 1)].removing) == (ids(3, 0, 1), ids(3), ids(1))


def test_in_flight_toward_the_plans_own_target_says_so():
    state = snapshot({("t", 0): [2, 0, 1]}, nbrokers=3, lpr={("t", 0): ([2, 0, 1], [2], [1])})
    (row,) = rebase(state, Plan.of([PlanEntry("t", 0, ids(2, 0))], {("t", 0): ids(0, 1)})).rows
    assert row.kind is Since.IN_FLIGHT and row.detail.startswith("reassigning now toward the plan's target")
    assert row.to_do  # not finished yet


def test_a_no_op_since_drafting_is_unchanged_not_completed():
    state = snapshot({("t", 0): [0, 1]}, nbrokers=3)
    (row,) = rebase(state, Plan.of([PlanEntry("t", 0, ids(0, 1))], {("t", 0): ids(0, 1)})).rows
    assert row.kind is Since.UNCHANGED and not row.to_do


def test_a_reorder_is_not_completed():
    state = snapshot({("t", 0): [1, 0]}, nbrokers=3)
    (row,) = rebase(state, Plan.of([PlanEntry("t", 0, ids(0, 1))], {("t", 0): ids(2, 1)})).rows
    assert row.kind is Since.MOVED and row.to_do


def test_without_a_basis_only_in_flight_completed_and_gone_are_told(state):
    report = rebase(state, Plan(PLAN.entries, {}))
    assert kinds(report) == {
        ("t", 0): Since.NO_BASIS,
        ("t", 1): Since.IN_FLIGHT,
        ("t", 2): Since.COMPLETED,
        ("t", 3): Since.NO_BASIS,
        ("t", 9): Since.GONE,
        ("gone", 0): Since.GONE,
    }
    assert report.changed == 0 and not report.has_basis
    assert "No basis given" in report_text(report)
    # a basis for some partitions only: those are told, the rest are not
    partial = rebase(state, Plan(PLAN.entries, {("t", 0): ids(0, 1)}))
    assert kinds(partial)[("t", 0)] is Since.MOVED and kinds(partial)[("t", 3)] is Since.NO_BASIS


def test_default_keeps_every_target_and_takes_the_current_replicas_as_basis(state):
    report = rebase(state, PLAN)
    assert report.plan.entries == PLAN.entries  # targets and chosen log dirs as they were
    assert report.plan.basis == {
        ("t", 0): ids(2, 3),
        ("t", 1): ids(3, 0, 1),
        ("t", 2): ids(1, 2),
        ("t", 3): ids(0, 1),
    }  # a gone partition has no basis
    assert report.dropped == () and report.left_to_do == 3  # t-0, t-1 and t-3; t-2 is at its target
    found = {f.code for f in v.validate(state, report.plan)}
    assert codes.STALE not in found and codes.STALE in {f.code for f in v.validate(state, PLAN)}
    assert {codes.UNKNOWN_TOPIC, codes.UNKNOWN_PARTITION} <= found  # kept, the gone ones stay errors


@pytest.mark.parametrize(
    "options, dropped",
    [
        (RebaseOptions(drop_completed=True), {("t", 2)}),
        (RebaseOptions(drop_gone=True), {("t", 9), ("gone", 0)}),
        (RebaseOptions(drop_completed=True, drop_gone=True), {("t", 2), ("t", 9), ("gone", 0)}),
    ],
)
def test_options_drop_completed_and_gone_partitions(state, options, dropped):
    report = rebase(state, PLAN, options)
    assert set(report.dropped) == dropped
    assert set(report.plan.keys) == set(PLAN.keys) - dropped
    assert {r.key for r in report.rows if not r.kept} == dropped
    assert report.left_to_do == 3
    assert len(report.rows) == len(PLAN)  # the report still covers every planned partition
    if options.drop_gone:
        assert not v.errors(v.validate(state, report.plan))
    assert {r["since the draft"]: r["in the new plan"] for r in count_rows(report)}["completed"] == (
        "dropped" if options.drop_completed else "kept"
    )


def test_nothing_left_to_do():
    state = snapshot({("t", 0): [1, 2]}, nbrokers=3)
    plan = Plan.of([PlanEntry("t", 0, ids(1, 2)), PlanEntry("x", 0, ids(0))], {("t", 0): ids(0, 1)})
    assert rebase(state, plan).left_to_do == 0
    dropped = rebase(state, plan, RebaseOptions(drop_completed=True, drop_gone=True))
    assert not dropped.plan.entries and dropped.left_to_do == 0


def test_a_rollback_drafted_while_its_run_was_in_flight(state):
    """The rollback of a run in flight takes R (adding replicas included) as its basis: stale the
    moment the run completes. Brought up to date, it is a clean plan back to the originals."""
    during = snapshot({("r", 0): [2, 0, 1]}, nbrokers=3, lpr={("r", 0): ([2, 0, 1], [2], [1])})
    back = rollback(during, Plan.of([PlanEntry("r", 0, ids(2, 0))])).with_basis(during)
    assert back.entries[0].replicas == ids(0, 1) and back.basis == {("r", 0): ids(2, 0, 1)}
    after = snapshot({("r", 0): [2, 0]}, nbrokers=3)
    assert codes.STALE in {f.code for f in v.validate(after, back)}
    report = rebase(after, back)
    assert kinds(report) == {("r", 0): Since.MOVED}
    assert not v.errors(v.validate(after, report.plan)) and report.plan.entries == back.entries


def test_rows_counts_text_and_json(state):
    report = rebase(state, PLAN, RebaseOptions(drop_gone=True))
    rows = report_rows(report)
    assert len(rows) == len(PLAN) and rows[0] == {
        "partition": "gone-0",
        "since the draft": "gone",
        "when drafted": "0,1",
        "now": "gone",
        "target": "0,1",
        "kept": False,
        "detail": "the topic no longer exists",
    }
    assert [r["partition"] for r in report_rows(report, only_changed=True)] == ["gone-0", "t-0", "t-1", "t-2", "t-9"]
    assert len(report_rows(report, limit=2)) == 2
    assert report.counts_text() == "2 gone, 1 in flight, 1 completed, 1 moved, 1 unchanged"
    text = report_text(report)
    assert "6 planned partitions: 2 gone" in text and "t-0: moved: moved by someone else" in text
    assert "(dropped)" in text and "keeps 4 partitions, drops 2; 3 would change" in text
    doc = json.loads(json.dumps(report_json(report)))
    assert doc["counts"]["gone"] == 2 and doc["dropped"] == ["gone-0", "t-9"] and doc["left_to_do"] == 3
    assert doc["partitions"][1]["current"] == [2, 3] and doc["partitions"][1]["basis"] == [0, 1]


# -- the property: a rebased plan is never stale against the snapshot it was rebased on -------------
@st.composite
def cases(draw):
    brokers = list(range(4))
    n = draw(st.integers(1, 6))
    parts: dict[tuple[str, int], list[int]] = {}
    lpr = {}
    for p in range(n):
        r = draw(st.lists(st.sampled_from(brokers), min_size=1, max_size=3, unique=True))
        new = [b for b in brokers if b not in r]
        if new and draw(st.booleans()):  # in flight: one adding replica, the last original removed
            parts[("t", p)] = [new[0], *r]
            lpr[("t", p)] = ([new[0], *r], [new[0]], [r[-1]])
        else:
            parts[("t", p)] = r
    keys = draw(st.lists(st.sampled_from([*parts, ("t", 50), ("gone", 0)]), min_size=1, unique=True))
    replicas = st.lists(st.sampled_from(brokers), min_size=1, max_size=3, unique=True).map(lambda b: ids(*b))
    entries = [
        PlanEntry(t, p, draw(st.one_of(st.just(ids(*parts[(t, p)])), replicas) if (t, p) in parts else replicas))
        for t, p in keys
    ]
    basis = {
        k: draw(st.one_of(st.just(ids(*parts[k])), replicas) if k in parts else replicas)
        for k in keys
        if draw(st.booleans())
    }
    options = RebaseOptions(draw(st.booleans()), draw(st.booleans()))
    return snapshot(parts, nbrokers=4, lpr=lpr), Plan.of(entries, basis), options


@settings(max_examples=150, deadline=None)
@given(cases())
def test_the_rebased_plan_is_never_stale_against_its_snapshot(case):
    state, plan, options = case
    report = rebase(state, plan, options)
    index = state.partition_index
    assert report.plan.basis == {k: index[k].replicas for k in report.plan.keys if k in index}
    assert codes.STALE not in {f.code for f in v.validate(state, report.plan)}
    targets = {e.key: e for e in plan.entries}
    assert all(targets[e.key] == e for e in report.plan.entries)  # targets as they were
    assert sum(report.counts.values()) == len(plan) == len(report.rows)
    for r in report.rows:
        assert r.kept == (not options.drops(r.kind))
        assert (r.kind is Since.GONE) == (r.key not in index)
    # rebasing again against the same snapshot changes nothing more
    again = rebase(state, report.plan, options)
    assert again.plan == report.plan and not again.changed


# -- the store: the link to the plan it came from, on new and old databases -----------------------
def test_saved_as_a_new_version_linked_to_the_old(tmp_path, state):
    store = Store(tmp_path / "console.db")
    drafted = snapshot({("t", 0): [0, 1], ("t", 1): [0, 1], ("t", 2): [0, 1], ("t", 3): [0, 1]}, nbrokers=4)
    old = plan_service.save_plan(
        store,
        Identity.cli("ann"),
        drafted,
        "c",
        "drain 0",
        Plan.of(e for e in PLAN.entries if e.key in drafted.partition_index).with_basis(drafted),
    )
    new = plan_service.save_rebased_plan(
        store, Identity.cli("bob"), state, "c", old, RebaseOptions(drop_completed=True)
    )
    saved = store.plans.load(new)
    assert saved.summary.name == "drain 0 (up to date, v2)" and saved.summary.parent_id == old
    assert saved.summary.author == "bob" and saved.plan.keys == (("t", 0), ("t", 1), ("t", 3))
    assert saved.plan.basis == {("t", 0): ids(2, 3), ("t", 1): ids(3, 0, 1), ("t", 3): ids(0, 1)}
    assert codes.STALE not in {f.code for f in v.validate(state, saved.plan)}
    assert store.plans.load(old).summary.parent_id is None and len(store.plans.load(old).plan) == 4  # left as it was
    (entry,) = store.audit.entries(action="plan-rebased")
    assert entry.user == "bob" and f'"from":{old}' in entry.request and entry.outcome == "saved"
    # again from the old one: the next version, never over another plan
    v3 = store.plans.load(plan_service.save_rebased_plan(store, Identity.cli("bob"), state, "c", old))
    assert v3.summary.name == "drain 0 (up to date, v3)" and v3.summary.parent_id == old
    # the new one is up to date: there is nothing to bring up to date (refused, audited)
    with pytest.raises(NotPermitted, match=f"Plan {new} is not stale: none of its partitions moved"):
        plan_service.save_rebased_plan(store, Identity.cli("bob"), state, "c", new)
    assert [(e.user, e.outcome) for e in store.audit.entries(action="rebase")] == [("bob", "refused")]
    assert len(store.plans.list()) == 3
    # re-saving it from the Drafts page (no parent given) keeps the link
    plan_service.save_plan(store, Identity.cli("bob"), state, "c", v3.summary.name, v3.plan)
    assert store.plans.load(v3.summary.id).summary.parent_id == old
    assert {s.id: s.parent_id for s in store.plans.list("c1")}[v3.summary.id] == old
    # deleting the parent leaves the child (and its link number) alone
    store.plans.delete(old)
    assert store.plans.load(v3.summary.id).summary.parent_id == old
    assert store.plans.authors(v3.summary.id) == {"ann", "bob"}  # the parent's author stays one of its authors


def test_nothing_left_is_refused_and_nothing_saved(tmp_path):
    store = Store(tmp_path / "console.db")
    drafted = snapshot({("t", 0): [0, 1]}, nbrokers=3)
    old = plan_service.save_plan(
        store, Identity.cli("ann"), drafted, "c", "p", Plan.of([PlanEntry("t", 0, ids(1, 2))]).with_basis(drafted)
    )
    done = snapshot({("t", 0): [1, 2]}, nbrokers=3)
    with pytest.raises(ConfigError, match="Nothing is left"):
        plan_service.save_rebased_plan(store, Identity.cli("bob"), done, "c", old, RebaseOptions(drop_completed=True))
    assert [s.id for s in store.plans.list()] == [old] and not store.audit.entries(action="plan-rebased")
    with pytest.raises(ConfigError, match="not in the store"):
        plan_service.save_rebased_plan(store, Identity.cli("bob"), done, "c", 999)


def test_rebased_names():
    assert plan_service.rebased_name("x", []) == "x (up to date, v2)"
    assert plan_service.rebased_name("x (up to date, v2)", ["x (up to date, v2)"]) == "x (up to date, v3)"
    assert plan_service.rebased_name("x", ["x (up to date, v7)", "y (up to date, v9)"]) == "x (up to date, v8)"


def test_an_existing_database_gets_the_parent_column_and_the_authors_and_approval_clusters(tmp_path):
    path = tmp_path / "console.db"
    db = sqlite3.connect(path)  # the plans and approvals tables as consoles before the link and the authors made them
    db.executescript("""
        CREATE TABLE plans (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL, cluster TEXT NOT NULL,
            author TEXT NOT NULL, created_at REAL NOT NULL, updated_at REAL NOT NULL, partitions INTEGER NOT NULL,
            fingerprint TEXT, plan_json TEXT NOT NULL, rollback_json TEXT NOT NULL, basis_json TEXT NOT NULL,
            UNIQUE (cluster, name));
        CREATE TABLE plan_approvals (plan_id INTEGER NOT NULL REFERENCES plans(id), approver TEXT NOT NULL,
            at REAL NOT NULL, plan_hash TEXT NOT NULL);
        INSERT INTO plans (name, cluster, author, created_at, updated_at, partitions, fingerprint, plan_json,
            rollback_json, basis_json) VALUES ('old', 'c1', 'ann', 1, 1, 1, NULL,
            '{"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[1,2]}]}',
            '{"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[0,1]}]}', '[["t",0,[0,1]]]');
        INSERT INTO plan_approvals VALUES (1, 'carl', 2, 'h');
    """)
    db.close()
    store = Store(path)
    old = store.plans.load(1)
    assert old.summary.parent_id is None and old.plan.basis == {("t", 0): ids(0, 1)}
    assert store.plans.authors(1) == {"ann"}
    assert [(a.approver, a.cluster) for a in store.plans.approvals(1)] == [("carl", "c1")]  # its plan's cluster
    state = snapshot({("t", 0): [0, 2]}, nbrokers=3)
    new = plan_service.save_rebased_plan(store, Identity.cli("bob"), state, "c", 1)
    assert store.plans.load(new).summary.parent_id == 1
    assert store.plans.authors(new) == {"ann", "bob"}
    Store(path).close()  # opening a migrated store again migrates nothing
    cols = [r[1] for r in sqlite3.connect(path).execute("PRAGMA table_info(plans)")]
    assert cols.count("parent_id") == 1


def test_an_existing_database_of_rebased_plans_gets_their_lineage(tmp_path):
    path = tmp_path / "console.db"
    store = Store(path)
    state = snapshot({("t", 0): [0, 1]}, nbrokers=3)
    plan = Plan.of([PlanEntry("t", 0, ids(1, 2))]).with_basis(state)
    p1 = store.plans.save("p", "c1", plan, plan, "ann")
    p2 = store.plans.save("p (up to date, v2)", "c1", plan, plan, "bob", parent_id=p1)
    p3 = store.plans.save("p (up to date, v3)", "c1", plan, plan, "cy", parent_id=p2)
    store.close()
    with sqlite3.connect(path) as db:  # as a console before authors were kept left it
        db.execute("DELETE FROM plan_authors")
    store = Store(path)
    assert [store.plans.authors(p) for p in (p1, p2, p3)] == [{"ann"}, {"ann", "bob"}, {"ann", "bob", "cy"}]


# -- the CLI: unusable input is refused before any cluster is asked ----------------------------------
def test_cli_refuses_unusable_files(tmp_path, capsys):
    good = tmp_path / "plan.json"
    good.write_text(Plan.of([PlanEntry("t", 0, ids(1))]).to_json())
    bad = tmp_path / "bad.json"
    bad.write_text('{"partitions":[{"topic":"t","partition":0,"replicas":[1,1]}]}')
    nowhere = ["--bootstrap-server", "127.0.0.1:1", "--timeout", "1"]
    assert cli.main(["rebase", *nowhere, "--reassignment-json-file", str(bad)]) == 2
    assert "the same broker appears twice" in capsys.readouterr().err
    assert cli.main(["rebase", *nowhere, "--reassignment-json-file", str(tmp_path / "missing.json")]) == 2
    assert "Check the path given to --reassignment-json-file" in capsys.readouterr().err
    assert cli.main(["rebase", *nowhere, "--reassignment-json-file", str(good), "--basis-json-file", str(bad)]) == 2
    out = capsys.readouterr()
    assert out.out == "" and "the same broker appears twice" in out.err


def test_a_draft_never_replaces_another_plan_of_its_name(tmp_path):
    """Met in the browser: a draft loaded from other JSON kept the saved plan's name, and its save
    replaced that plan's content."""
    from console.core.errors import ConfigError

    store = Store(tmp_path / "console.db")
    state = snapshot({("t", 0): [0, 1], ("t", 1): [0, 1]}, nbrokers=3)
    ann = Identity.cli("ann")
    first = plan_service.save_plan(
        store, ann, state, "c", "keep", Plan.of([PlanEntry("t", 0, ids(1, 2))]), draft_of=None
    )
    other = Plan.of([PlanEntry("t", 1, ids(2, 0))])
    with pytest.raises(ConfigError, match=f"Plan {first} is named 'keep' already"):
        plan_service.save_plan(store, ann, state, "c", " keep ", other, draft_of=None)
    assert store.plans.load(first).plan.entries[0].partition == 0  # untouched
    again = plan_service.save_plan(store, ann, state, "c", "keep", other, draft_of=first)  # the same draft, saved again
    assert again == first and store.plans.load(first).plan.entries[0].partition == 1
    assert plan_service.save_plan(store, ann, state, "c", "keep", other) == first  # by name, as the CLI saves
