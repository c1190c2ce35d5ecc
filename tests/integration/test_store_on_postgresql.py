"""The store on a real PostgreSQL (the session's throwaway cluster): the store's own tests run on
it as they run on SQLite, and what PostgreSQL does differently holds the same guarantees."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import psycopg
import pytest

from console.core.errors import StoreError, StoreWriteClash
from console.storage import migrations
from console.storage.store import Store

ROOT = Path(__file__).resolve().parents[2]
STORE_TESTS = (
    "tests/unit/test_runs.py",
    "tests/unit/test_plans.py",
    "tests/unit/test_sessions.py",
    "tests/unit/test_drafts_store.py",
    "tests/unit/test_decommission.py",
    "tests/unit/test_executor.py",
    "tests/unit/test_answer_lost.py",
    "tests/unit/test_rebase.py",
    "tests/unit/test_store_backends.py",
    "tests/unit/test_run_lease.py",
    "tests/unit/test_cancel_follow.py",
    "tests/unit/test_audit_stream.py",
    "tests/unit/test_notify.py",
    "tests/unit/test_metrics.py",
)
ONLY_SQLITE = (
    # these read or write the SQLite file itself (a file made by an older console, a second file
    # beside the first); PostgreSQL's own cases are below
    "tests/unit/test_rebase.py::test_an_existing_database_gets_the_parent_column_and_the_authors_and_approval_clusters",
    "tests/unit/test_rebase.py::test_an_existing_database_of_rebased_plans_gets_their_lineage",
    "tests/unit/test_executor.py::test_a_cluster_without_the_api_is_sent_through_the_znode_when_zookeeper_is_known",
    "tests/unit/test_store_backends.py::test_a_path_or_a_sqlite_url_is_the_sqlite_file_and_the_environment_chooses_the_default",
    "tests/unit/test_store_backends.py::test_a_store_made_before_the_migrations_is_brought_up_to_date",
    "tests/unit/test_store_backends.py::test_a_store_newer_than_the_console_is_refused_and_left_as_it_is",
)


def test_the_store_s_tests_pass_on_postgresql(pg_cluster):
    env = {**os.environ, "CONSOLE_TEST_STORE_SERVER": pg_cluster.url(), "PYTHONPATH": str(ROOT)}
    deselected = [a for t in ONLY_SQLITE for a in ("--deselect", t)]
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", "unit", *deselected, *STORE_TESTS],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stdout[-6000:]
    summary = done.stdout.strip().splitlines()[-1]
    assert " passed" in summary and "failed" not in summary and int(summary.split(" passed")[0].split()[-1]) > 100


def test_the_audit_log_is_append_only_on_postgresql(pg_url):
    store = Store(pg_url)
    first = store.audit.record("ann", "c1", "cancel", {"cancel": [["t", 0]]}, "sending")
    store.audit.record("ann", "c1", "cancel", {}, "accepted", ref=first, response=[{"accepted": True}])
    with psycopg.connect(pg_url, autocommit=True) as db:
        for sql in ("UPDATE audit SET outcome = 'x'", "DELETE FROM audit", "TRUNCATE audit"):
            with pytest.raises(psycopg.errors.RaiseException, match="append-only"):
                db.execute(sql)  # type: ignore[arg-type]
    with pytest.raises(StoreError, match="append-only"):
        store.db.execute("DELETE FROM audit WHERE id = ?", (first,))
    assert [(e.user, e.outcome, e.ref) for e in store.audit.entries()] == [
        ("ann", "sending", None),
        ("ann", "accepted", first),
    ]


def test_a_failed_transaction_writes_nothing_and_a_clash_is_a_conflict(pg_url):
    store = Store(pg_url)
    with pytest.raises(RuntimeError), store.transaction():
        store.audit.record("ann", "c1", "x", {}, "sending")
        store.clusters.remember("c1", "prod")
        raise RuntimeError("the request could not be built")
    assert store.audit.entries() == [] and store.clusters.names() == {}
    store.db.execute("INSERT INTO sign_in_tickets (ticket_hash, sealed, expires_at) VALUES (?, ?, ?)", ("a", "b", 1.0))
    with pytest.raises(StoreWriteClash, match="same record"):
        store.db.execute(
            "INSERT INTO sign_in_tickets (ticket_hash, sealed, expires_at) VALUES (?, ?, ?)", ("a", "c", 2.0)
        )
    assert store.db.query("SELECT sealed FROM sign_in_tickets") == [("b",)]  # the connection is usable after


def test_migrations_apply_once_however_many_open_the_store_at_once_and_a_newer_store_is_refused(pg_url):
    errors: list[BaseException] = []

    def open_it() -> None:
        try:
            Store(pg_url).close()
        except BaseException as e:
            errors.append(e)

    threads = [threading.Thread(target=open_it) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    store = Store(pg_url)
    assert store.db.query("SELECT version FROM schema_version ORDER BY version") == [
        (m.version,) for m in migrations.MIGRATIONS
    ]
    store.db.execute(
        "INSERT INTO schema_version (version, applied_at, what) VALUES (?, ?, ?)", (migrations.LATEST + 1, 0.0, "later")
    )
    with pytest.raises(StoreError, match=f"schema version {migrations.LATEST + 1}; this console knows"):
        Store(pg_url)


def test_a_store_that_does_not_answer_is_a_store_error_naming_it_without_its_password(pg_cluster):
    url = pg_cluster.url("nope").replace("console@", "console:hunter2@")
    with pytest.raises(StoreError, match=r"postgresql://console:\*\*\*@127\.0\.0\.1") as caught:
        Store(url)
    assert "hunter2" not in str(caught.value)


def _history(store: Store) -> None:
    """A little of everything: a plan with a note and an approval, a run with its waves and
    outcomes, a throttle, audit entries referring to each other, a session, a draft."""
    from console.core.model import BrokerId, Outcome
    from console.plans.plan import Plan, PlanEntry
    from console.storage.runs import NewRun, RunLimits

    plan = Plan.of([PlanEntry("t", 0, (BrokerId(1), BrokerId(2)))])
    plan_id = store.plans.save("p", "c1", plan, plan, "ann")
    store.plans.add_note(plan_id, "bob", "100% fine?")
    store.plans.approve(plan_id, "bob", "h", "c1")
    wave = '{"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[1,2]}]}'
    run_id = store.runs.create(
        NewRun("c1", "r", "ann", wave, wave, "h", [wave], [("t", 0)], 1000, RunLimits(5, 500, None))
    )
    store.runs.add_outcomes(run_id, 1, [Outcome("t", 0, True, None, None)])
    store.runs.ledger_add(run_id, 1, "broker", "1", "leader.replication.throttled.rate", None, "1000")
    first = store.audit.record("ann", "c1", "submit-wave", {"run": run_id}, "sending")
    store.audit.record("ann", "c1", "submit-wave", {"run": run_id}, "accepted", ref=first, response=[1])
    store.sessions.create("x" * 43, "ann", 2e9)
    store.drafts.push("ann", "c1", 0, plan, keep=5)
    store.clusters.remember("c1", "prod")


def test_store_copy_moves_a_sqlite_history_to_postgresql_and_back_checked_and_audited(tmp_path, pg_cluster):
    from console.cli import main

    source = Store(tmp_path / "console.db")
    _history(source)
    before = {t: source.db.query(f"SELECT * FROM {t}") for t in source.db.tables() if t != "schema_version"}
    source.close()
    pg = pg_cluster.new_database()
    assert main(["store", "copy", "--from", f"sqlite://{tmp_path}/console.db", "--to", pg, "--json"]) == 0
    on_pg = Store(pg)
    copy_entry = on_pg.audit.entries(action="store-copy")
    assert [(e.user, e.outcome) for e in copy_entry] == [(os.environ.get("USER") or copy_entry[0].user, "completed")]
    assert {t: on_pg.db.query(f"SELECT * FROM {t}") for t in before if t != "audit"} == {
        t: rows for t, rows in before.items() if t != "audit"
    }
    assert on_pg.db.query("SELECT * FROM audit WHERE action <> 'store-copy'") == before["audit"]
    # new rows take new ids after the copied ones
    assert on_pg.audit.record("ann", "c1", "x", {}, "sending") == len(before["audit"]) + 2
    assert on_pg.plans.approvals(1)[0].approver == "bob" and on_pg.drafts.load("ann", "c1") is not None
    on_pg.close()
    # a target that holds anything is refused, and nothing is written to it
    assert main(["store", "copy", "--from", f"sqlite://{tmp_path}/console.db", "--to", pg]) == 1
    back = tmp_path / "back.db"
    assert main(["store", "copy", "--from", pg, "--to", str(back)]) == 0
    again = Store(back)
    assert again.db.query("SELECT * FROM runs") == before["runs"]
    assert len(again.audit.entries()) == len(before["audit"]) + 3  # the copy there, one entry, the copy back
