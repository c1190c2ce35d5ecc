"""AppTest: Review of a saved plan that is running (or ran) says so and links to its run, instead of
only "3 errors: must not be submitted" (the errors are against the cluster the run changed); the
audit log names the cluster by its name, not its id."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from console.access.auth import Identity
from console.core.model import BrokerId
from console.plans.plan import Plan, PlanEntry
from console.services import plans as plan_service
from console.storage.store import Store
from tests.app.pages import APP
from tests.integration.helpers import first_wave_sent

TOPIC = "app-ran"


def test_review_of_a_running_plan_says_it_is_running_with_a_link_to_the_run(fake_cluster):
    with fake_cluster.held() as fake:
        fake.create_topic(TOPIC, [[0], [1]], size=4 * 10**11)  # copies for ever: the run stays running
    store = Store()
    drafted = fake_cluster.snapshot()
    plan = Plan.of([PlanEntry(TOPIC, 0, (BrokerId(2),)), PlanEntry(TOPIC, 1, (BrokerId(2),))]).with_basis(drafted)
    plan_id = plan_service.save_plan(store, Identity.cli("ann"), drafted, "test", "to broker 2", plan)
    run_id = first_wave_sent(store, fake_cluster, drafted, plan, "to broker 2", None)

    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params["plan"] = str(plan_id)
    at.run()
    at.switch_page("views/review.py").run()
    assert not at.exception and at.header[0].value == "Review a plan"
    said = [i.value for i in at.info if "These moves are running" in i.value]
    assert len(said) == 1 and f"run #{run_id} “" in said[0] and "running, by ann" in said[0], [i.value for i in at.info]
    link = next(p for p in at.page_link if p.value == f"Open run #{run_id}")
    assert link.proto.query_string == f"run={run_id}" and link.proto.page.endswith("runs")
    assert all("must not be submitted as it is" not in e.value for e in at.error)  # "again", if errors

    # the Runs page's audit log names the cluster as the pages know it ("test"), not by its id
    at.switch_page("views/runs.py").run()
    assert not at.exception
    audit = next(d.value for d in at.dataframe if "action" in d.value.columns)
    assert set(audit["cluster"]) == {"test"} and "submit" in set(audit["action"])
    assert Store().clusters.names() == {"fake-cluster": "test"}
