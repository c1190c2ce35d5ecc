"""AppTest over every page: on the fake cluster, with no cluster, and with a real cluster that stops answering."""

from __future__ import annotations

import json

from streamlit.testing.v1 import AppTest

from components.widgets import STATE_WIDTH, TIME_WIDTH
from tests.app.pages import APP, sign_in


def test_live_and_overview_pages(fake_cluster):
    at = AppTest.from_file(APP, default_timeout=60).run()
    assert not at.exception
    assert at.header[0].value == "Live reassignments"
    assert [m.label for m in at.metric][:2] == ["Reassigning partitions", "Truly under-replicated"]
    assert any("last refreshed" in c.value for c in at.caption)
    at.toggle(key="live.in_flight_only").set_value(False).run()
    assert not at.exception
    assert at.dataframe, "every partition is listed when not only in-flight ones"
    at.multiselect(key="live.topics").set_value(["orders"]).run()
    assert not at.exception
    assert set(at.dataframe[0].value["partition"]) == {f"orders-{i}" for i in range(12)}
    at.switch_page("views/overview.py").run()
    assert not at.exception
    assert at.metric[0].value == "3/3"
    brokers = at.dataframe[0].value
    assert list(brokers["rack"]) == ["rack-a", "rack-b", "rack-c"]


def test_no_cluster_configured(env_cluster, monkeypatch):
    monkeypatch.delenv("CONSOLE_BOOTSTRAP_SERVERS", raising=False)
    at = AppTest.from_file(APP, default_timeout=30).run()
    assert not at.exception
    assert "No cluster configured" in at.info[0].value
    at.switch_page("views/overview.py").run()
    assert not at.exception and "No cluster configured" in at.info[0].value


def test_cluster_that_stops_answering_keeps_the_last_good_picture(sandbox, env_cluster, monkeypatch):
    monkeypatch.setenv("CONSOLE_TIMEOUT_S", "2")  # "not answering" said after 2 s, not the default 10
    env_cluster(sandbox.bootstrap_servers)
    at = AppTest.from_file(APP, default_timeout=60).run()
    assert not at.exception and not at.error
    env_cluster("127.0.0.1:1")  # same cluster name, now unreachable
    at.run()
    assert not at.exception
    assert "last good picture" in at.error[0].value
    # the on-call line never says "nothing" in flight for a read that did not answer
    said = next(m.value for m in at.markdown if "In flight now" in m.value)
    assert "unknown" in said and "nothing" not in said, said
    at.switch_page("views/overview.py").run()
    assert not at.exception and "not answering" in at.error[0].value


def test_drafts_and_review_pages(fake_cluster, sandbox_users):
    at = AppTest.from_file(APP, default_timeout=60).run()
    sign_in(at, "approver")  # saving a draft needs the operator or approver role
    at.switch_page("views/drafts.py").run()
    assert not at.exception and at.header[0].value == "Drafts"
    at.multiselect(key="drafts.topics").set_value(["orders"]).run()
    at.button[0].click().run()  # Start draft
    assert not at.exception
    assert at.metric[0].value == "12"
    # bulk edit: replace broker 0 by 1 (where 1 is not already a replica: RF 3 on 3 brokers means never)
    at.selectbox(key="drafts.rf_topic").set_value("orders")
    at.number_input(key="drafts.rf").set_value(2)
    at.button(key="FormSubmitter:rf-Set").click().run()
    assert not at.exception
    edited = at.session_state["drafts.plan"]
    assert all(len(e.replicas) == 2 for e in edited.entries)
    at.button[0].click().run()  # Undo
    assert all(len(e.replicas) == 3 for e in at.session_state["drafts.plan"].entries)
    at.button(key="FormSubmitter:rf-Set").click().run()
    at.text_input(key="drafts.name").set_value("orders to RF 2")
    at.button(key="FormSubmitter:save-Save draft").click().run()
    assert not at.exception and "Saved as plan" in at.success[0].value
    plan_id = at.session_state["drafts.saved_id"]

    at.switch_page("views/review.py").run()
    assert not at.exception and at.header[0].value == "Review a plan"
    assert at.query_params["plan"] == [str(plan_id)] or at.query_params["plan"] == str(plan_id)
    labels = [m.label for m in at.metric]
    assert labels[0] == "Partitions" and at.metric[0].value == "12"
    assert at.metric[labels.index("Replicas + / −")].value == "0 / 12"
    assert "warnings" in at.warning[0].value  # the RF change needs acknowledging
    # an approver, not an operator: the submit section says why there is no Submit
    assert any("may not submit" in c.value and "operator role" in c.value for c in at.caption)
    assert not [b for b in at.button if b.label == "Submit…"]
    checked = at.session_state["review.cache"][1]
    for view in ("Movement", "Replicas before/after", "Partitions", "Racks", "Brokers"):
        at.segmented_control(key="review.view").set_value(view).run()
        assert not at.exception, view
    # reruns keep the check while the assignment and brokers stay the same; "Check again" redoes it
    assert at.session_state["review.cache"][1] is checked
    next(b for b in at.button if b.label == "Check again").click().run()
    assert not at.exception and at.session_state["review.cache"][1] is not checked
    at.text_area(key="review.note.approver").set_value("RF 2 is fine for orders")
    at.button(key="FormSubmitter:note-Add note").click().run()
    assert not at.exception
    assert "RF 2 is fine for orders" in [t.value for t in at.text]  # plain text, under the author and time


def test_sign_in_roles_runs_page_and_audit_log(fake_cluster, sandbox_users):
    from console.access.auth import Identity
    from console.plans.plan import Plan, PlanEntry
    from console.services import runs as run_service
    from console.storage.store import Store
    from tests.support import wait_for

    at = AppTest.from_file(APP, default_timeout=60).run()
    assert not at.exception
    at.text_input(key="auth.user").set_value("viewer")
    at.text_input(key="auth.password").set_value("wrong")
    at.button(key="FormSubmitter:sign_in-Sign in").click().run()
    assert "wrong password" in at.error[0].value
    at.text_input(key="auth.password").set_value("viewer-secret")
    at.button(key="FormSubmitter:sign_in-Sign in").click().run()
    assert any("Signed in as **viewer**" in c.value for c in at.sidebar.caption)
    at.switch_page("views/runs.py").run()
    assert not at.exception and "No runs yet" in at.info[0].value

    with fake_cluster.held() as fake:
        fake.create_topic("app-run", [[0]], size=20 * 1024)
    run_id = run_service.start_run(
        Store(),
        fake_cluster,
        fake_cluster.snapshot(),
        run_service.RunRequest(Identity.cli("ann"), Plan.of([PlanEntry("app-run", 0, (1,))]), "app run"),
        users=None,
    )
    at.run()  # the page starts the server's worker, which drives the run
    assert not at.exception
    wait_for(lambda: Store().runs.get(run_id).state == "completed", timeout=60, what="the server's worker completed it")
    at.run()
    assert at.dataframe[0].value["state"][0] == "completed"
    waves = next(d for d in at.dataframe if "submitted" in d.value.columns)
    # the wave's times fit however the grid first sized its columns (to "—" before they happened)
    widths = {c: json.loads(waves.proto.columns)[c].get("width") for c in ("state", "submitted", "completed")}
    assert widths == {"state": STATE_WIDTH, "submitted": TIME_WIDTH, "completed": TIME_WIDTH}, widths
    # and the run's state ("running" when the page opened, "completed" now)
    assert json.loads(at.dataframe[0].proto.columns)["state"].get("width") == STATE_WIDTH
    audit = at.dataframe[-1].value
    assert {"submit", "submit-wave", "wave-complete", "run-completed"} <= set(audit["action"])
    # a viewer cannot cancel from the Live page: the button is off and the page says why
    at.switch_page("views/live.py").run()
    assert not at.exception
    assert next(b for b in at.button if b.label == "Cancel…").disabled
    assert any("viewer may not cancel" in c.value for c in at.caption)


def test_a_throttle_change_is_confirmed_with_what_the_brokers_report(fake_cluster, sandbox_users):
    from console.plans.plan import Plan, PlanEntry
    from console.storage.store import Store
    from tests.integration.helpers import first_wave_sent
    from tests.support import wait_for

    with fake_cluster.held() as fake:
        fake.create_topic("app-rate", [[0]], size=60 * 1024)
    store = Store()
    run_id = first_wave_sent(
        store,
        fake_cluster,
        fake_cluster.snapshot(),
        Plan.of([PlanEntry("app-rate", 0, (2,))]),
        "rate change",
        2_000,
    )
    at = AppTest.from_file(APP, default_timeout=60).run()
    sign_in(at, "operator")
    at.switch_page("views/runs.py").run()
    assert not at.exception
    # above the cluster's ceiling (10 GB/s) a throttle is effectively none: said, and asked before it is sent
    at.text_input(key=f"runs.rate.{run_id}").set_value("99999 GB/s").run()
    assert any("is above 10.0 GB/s" in w.value and "effectively unthrottled" in w.value for w in at.warning)
    assert next(b for b in at.button if b.label == "Change the throttle").disabled
    at.checkbox(key=f"runs.unthrottled.{run_id}").check().run()
    assert not next(b for b in at.button if b.label == "Change the throttle").disabled
    at.text_input(key=f"runs.rate.{run_id}").set_value("1 MB/s").run()
    assert not any("effectively unthrottled" in w.value for w in at.warning)
    next(b for b in at.button if b.label == "Change the throttle").click().run()
    assert not at.exception
    done = " ".join(s.value for s in at.success)
    assert "set to 1.0 MB/s" in done and "the brokers now report" in done and "broker 0: 1.0 MB/s" in done, done
    assert "1.0 MB/s" in " ".join(map(str, at.dataframe[0].value.iloc[0].tolist()))  # the runs table has it
    wait_for(lambda: store.runs.require(run_id).state == "completed", timeout=90, what="the run completed")
