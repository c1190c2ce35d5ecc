"""The Drafts page's Generate section on the fake cluster: an impossible goal says why, a possible
one shows its report, and "Open in Review" saves it with its report for the Review page."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from tests.app.pages import APP, sign_in


def test_generate_then_open_in_review(fake_cluster, sandbox_users):
    at = sign_in(AppTest.from_file(APP, default_timeout=60).run(), "operator")
    at.switch_page("views/drafts.py").run()
    assert not at.exception and at.header[0].value == "Drafts"

    # draining one of three brokers cannot keep RF 3: the page says why and keeps no plan
    at.multiselect(key="drafts.generate.drain").set_value([2])
    at.button(key="FormSubmitter:generate.decommission-Generate").click().run()
    assert not at.exception
    assert any("fewer than the 3 replicas" in e.value and "Drain fewer brokers" in e.value for e in at.error), [
        e.value for e in at.error
    ]
    assert at.session_state["drafts.generate.result"] is None

    # topics by pattern: a pattern that is not a regular expression is named, no plan
    at.segmented_control(key="drafts.generate.goal").set_value("Rebalance").run()
    at.text_input(key="drafts.generate.pattern").set_value("orders(")
    at.button(key="FormSubmitter:generate.rebalance-Generate").click().run()
    assert not at.exception
    assert any("is not a regular expression" in e.value for e in at.error), [e.value for e in at.error]
    at.text_input(key="drafts.generate.pattern").set_value("orders|inventory")
    at.button(key="FormSubmitter:generate.rebalance-Generate").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    plan, _ = at.session_state["drafts.generate.result"]
    assert {e.topic for e in plan.entries} <= {"orders", "inventory"}

    # the replication factor of one topic, down to 2: a plan and its report
    at.segmented_control(key="drafts.generate.goal").set_value("Replication factor").run()
    at.multiselect(key="drafts.generate.rf_topics").set_value(["orders"])
    at.number_input(key="drafts.generate.rf").set_value(2)
    at.button(key="FormSubmitter:generate.replication-factor-Generate").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    plan, report = at.session_state["drafts.generate.result"]
    assert len(plan) == 12 and all(len(e.replicas) == 2 for e in plan.entries)
    assert report.moved_replicas == 0 and report.goal == "replication factor 2 for orders"
    labels = [m.label for m in at.metric]
    assert at.metric[labels.index("Replicas moved")].value == "0"
    assert any("12 partitions change" in s.value and "12 replicas removed" in s.value for s in at.success)

    next(b for b in at.button if b.label == "Open in Review").click().run()
    assert not at.exception
    assert at.header[0].value == "Review a plan"
    assert any(s.value == "How it was generated" for s in at.subheader)
    saved = at.session_state["review.cache"][1]
    assert saved.report is not None and saved.report.goal == "replication factor 2 for orders"


def test_drain_a_log_dir_into_the_brokers_other_dir(fake_cluster, sandbox_users):
    with fake_cluster.held() as fake:
        fake.log_dirs = ("/data/d1", "/data/d2")  # as the sandbox: two dirs per broker, replicas in the first
    at = sign_in(AppTest.from_file(APP, default_timeout=60).run(), "operator")
    at.switch_page("views/drafts.py").run()
    at.segmented_control(key="drafts.generate.goal").set_value("Drain a log dir").run()
    assert not at.exception
    at.selectbox(key="drafts.generate.dir_broker").set_value(1).run()
    picker = at.selectbox(key="drafts.generate.log_dir")
    assert picker.options[0].startswith("/data/d1 · ") and "free" in picker.options[0]
    picker.set_value("/data/d1")
    at.button(key="FormSubmitter:generate.drain-log-dir-Generate").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    plan, report = at.session_state["drafts.generate.result"]
    assert report.goal == "drain log dir /data/d1 of broker 1" and len(plan)
    assert all(
        e.log_dirs == tuple("/data/d2" if b == 1 else "any" for b in e.replicas) and 1 in e.replicas
        for e in plan.entries
    )


def test_save_as_follows_the_goal_and_the_report_survives_a_reload(fake_cluster, sandbox_users):
    """A decommission was saved, submitted and audited as "replication factor 2 for orders": the
    name offered kept the first goal's. And a generated report was lost on reload."""
    at = sign_in(AppTest.from_file(APP, default_timeout=60).run(), "operator")
    at.switch_page("views/drafts.py").run()
    at.segmented_control(key="drafts.generate.goal").set_value("Replication factor").run()
    at.multiselect(key="drafts.generate.rf_topics").set_value(["orders"])
    at.number_input(key="drafts.generate.rf").set_value(2)
    at.button(key="FormSubmitter:generate.replication-factor-Generate").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert at.text_input(key="drafts.generate.name").value.startswith("replication factor 2 for orders · ")

    at.multiselect(key="drafts.generate.rf_topics").set_value(["clickstream"])  # another plan, another goal
    at.button(key="FormSubmitter:generate.replication-factor-Generate").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    _, report = at.session_state["drafts.generate.result"]
    goal = "replication factor 2 for clickstream"
    assert report.goal == goal
    assert at.text_input(key="drafts.generate.name").value.startswith(f"{goal} · ")

    # a reload is a new session: signed in again (the cookie), the report and its plan are back
    again = sign_in(AppTest.from_file(APP, default_timeout=60).run(), "operator")
    again.switch_page("views/drafts.py").run()
    assert not again.exception
    plan, back = again.session_state["drafts.generate.result"]
    assert back.goal == goal and plan.to_json() == at.session_state["drafts.generate.result"][0].to_json()
    assert again.text_input(key="drafts.generate.name").value.startswith(f"{goal} · ")
    assert any(b.label == "Open in Review" for b in again.button)

    # someone else signing in on this screen does not get it
    other = sign_in(AppTest.from_file(APP, default_timeout=60).run(), "admin")
    other.switch_page("views/drafts.py").run()
    assert not other.exception
    assert "drafts.generate.result" not in other.session_state or other.session_state["drafts.generate.result"] is None
