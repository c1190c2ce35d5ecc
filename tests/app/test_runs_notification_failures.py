"""AppTest: notifications Apprise could not deliver (the receiver is down) are shown on the Runs
page, latest first, with the event, the run, the destination without its secrets and the error."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from console.access.auth import Identity
from console.core.model import BrokerId
from console.notify import hub
from console.plans.plan import Plan, PlanEntry
from console.services import runs as run_service
from console.storage.store import Store
from tests.app.pages import APP, sign_in


def test_the_runs_page_shows_the_notifications_that_could_not_be_delivered(
    fake_cluster, sandbox_users, notify_settings, closed_port
):
    notify_settings(
        f"""retries = 1
backoff_s = 0.1
[[clusters."*".destinations]]
url = "json://127.0.0.1:{closed_port}/hook"
"""
    )
    with fake_cluster.held() as fake:
        fake.create_topic("n", [[0, 1]], size=10**12)  # its copy takes for ever: the run stays running
    plan = Plan.of([PlanEntry("n", 0, (BrokerId(2), BrokerId(1)))])
    store = Store()
    run_id = run_service.start_run(
        store, fake_cluster, fake_cluster.snapshot(), run_service.RunRequest(Identity.cli("ann"), plan, "n"), users=None
    )
    assert hub.notifier().delivery.drain(30)

    at = AppTest.from_file(APP, default_timeout=60).run()
    sign_in(at, "viewer")
    at.switch_page("views/runs.py").run()
    assert not at.exception
    said = [w.value for w in at.warning if "Notifications not delivered" in w.value]
    assert len(said) == 1 and "1 message given up on after retries" in said[0]
    table = next(d.value for d in at.dataframe if "destination" in d.value.columns)
    assert list(table["event"]) == ["run-started"] and list(table["run"]) == [run_id]
    assert list(table["destination"]) == [f"json://127.0.0.1:{closed_port}/…"] and list(table["attempts"]) == [2]
    assert table["error"][0]
    (audited,) = [a for a in store.audit.entries() if a.action == "notification-failed"]
    assert audited.user == "console" and audited.outcome == "failed"
