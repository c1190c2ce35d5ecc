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


def test_topics_a_filter_leaves_out_are_said_and_the_goal_is_judged_on_the_topics_chosen(fake_cluster, sandbox_users):
    """Draining broker 0 of one topic said "the goal is not fully reached … Generate again" for the
    other topics' replicas on broker 0, which the topic filter left out on purpose."""
    at = sign_in(AppTest.from_file(APP, default_timeout=60).run(), "operator")
    at.switch_page("views/drafts.py").run()
    at.multiselect(key="drafts.generate.drain").set_value([0])
    next(m for m in at.multiselect if m.label == "Only topics (none: all)").set_value(["clickstream"])
    at.button(key="FormSubmitter:generate.decommission-Generate").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    plan, report = at.session_state["drafts.generate.result"]
    assert {e.topic for e in plan.entries} == {"clickstream"} and report.reached
    said = " ".join(w.value for w in at.warning)
    assert "not fully reached" not in said and "Generate again" not in said, said
    assert any("decommission" in s.value and "partitions change" in s.value for s in at.success)
    # what the filter left on broker 0 is said, as information: the other topics, by name
    shown = " ".join(str(v) for t in at.table for v in t.value.to_numpy().ravel())
    assert "of 4 topics the topic filter leaves out (audit-log, inventory, orders, payments)" in shown, shown
    assert "broker 0 will still hold them" in shown, shown


def test_review_says_the_generators_warning_beside_its_verdict(fake_cluster, sandbox_users):
    """Review said "No errors and no warnings" right above the generator's warning that the goal
    was not reached: the two must agree."""
    from dataclasses import replace

    from console.access.auth import Identity
    from console.plans.generate import generate
    from console.plans.generators.options import GenerateOptions, Goal
    from console.services import plans as plan_service
    from console.storage.store import Store

    state = fake_cluster.snapshot()
    # when the plan was generated, a partition of the topic on broker 0 had no leader (it could not move)
    down = next(p for p in state.partitions if p.topic == "clickstream" and p.replicas == (0,))
    offline = replace(down, leader=None, isr=())
    then = replace(state, partitions=tuple(offline if p.key == down.key else p for p in state.partitions))
    made = generate(then, GenerateOptions(Goal.DECOMMISSION, (0,), topics=("clickstream",)))
    assert not made.report.reached and any(f.code == "drain-incomplete" for f in made.report.findings)
    plan_id = plan_service.save_plan(
        Store(), Identity.cli("ann"), state, "test", "drain 0 of clickstream", made.plan, made.report
    )
    at = sign_in(AppTest.from_file(APP, default_timeout=60).run(), "operator")
    at.switch_page("views/review.py").run()
    at.query_params["plan"] = str(plan_id)
    at.run()
    assert not at.exception and at.header[0].value == "Review a plan"
    assert at.session_state["review.cache"][1].report is not None
    assert not any(s.value == "No errors and no warnings." for s in at.success), [s.value for s in at.success]
    assert any(s.value == "No errors and no warnings in the review." for s in at.success)
    warned = next(w.value for w in at.warning if "The generator warned" in w.value)
    assert "The goal is not fully reached." in warned and "cannot move now" in warned, warned


def test_least_cross_zone_bytes_on_the_generate_form(fake_cluster, sandbox_users):
    """The balance goals and decommission offer the preference; the report carries the impact."""
    at = sign_in(AppTest.from_file(APP, default_timeout=60).run(), "operator")
    at.switch_page("views/drafts.py").run()
    at.segmented_control(key="drafts.generate.goal").set_value("Rebalance").run()
    assert "No preference" in at.selectbox(key="drafts.generate.zones").options
    at.selectbox(key="drafts.generate.zones").set_value("Least, as a tie-breaker (same balance)")
    at.button(key="FormSubmitter:generate.rebalance-Generate").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    _, report = at.session_state["drafts.generate.result"]
    assert report.goal == "rebalance count (least cross-zone bytes)"
    assert report.impact is not None and report.impact.headline.startswith("copies ")
    assert any(c.value.startswith("**Impact:** copies ") for c in at.caption), [c.value for c in at.caption]

    at.selectbox(key="drafts.generate.zones").set_value("Least, weighted")
    at.number_input(key="drafts.generate.zone_weight").set_value(2.0)
    at.button(key="FormSubmitter:generate.rebalance-Generate").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert at.session_state["drafts.generate.result"][1].goal == "rebalance count (least cross-zone bytes, weight 2)"

    # the goals that place no replica by load do not offer it
    at.segmented_control(key="drafts.generate.goal").set_value("Fix racks").run()
    assert not at.exception and not any(s.key == "drafts.generate.zones" for s in at.selectbox)
