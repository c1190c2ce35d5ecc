"""AppTest: the submit dialog says the service's refusal of a cluster not read in full (issue: the
page started a run on a snapshot whose ListPartitionReassignments had not answered)."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from console.core.errors import ClusterUnavailable
from console.core.model import BrokerId
from tests.app.pages import APP, sign_in


def test_the_submit_dialog_refuses_a_cluster_whose_reassignments_did_not_answer(fake_cluster, sandbox_users):
    from console.access.auth import Identity
    from console.plans.plan import Plan, PlanEntry
    from console.services import plans as plan_service
    from console.storage.store import Store

    with fake_cluster.held() as fake:
        fake.create_topic("ut-refuse", [[0], [0]], size=1000)
    state = fake_cluster.snapshot()
    plan = Plan.of([PlanEntry("ut-refuse", p, (BrokerId(1),)) for p in range(2)])
    plan_id = plan_service.save_plan(Store(), Identity.cli("ann"), state, "test", "refused plan", plan)
    at = AppTest.from_file(APP, default_timeout=60).run()
    sign_in(at, "operator")
    at.query_params["plan"] = str(plan_id)
    at.switch_page("views/review.py").run()
    assert not at.exception
    at.text_input(key="review.rate").set_value("10 MB/s").run()
    with fake_cluster.held() as fake:
        fake.fail_next("snapshot:reassignments", ClusterUnavailable("timed out"), times=1000)
    next(b for b in at.button if b.label == "Submit…").click().run()
    assert not at.exception
    said = " ".join(e.value for e in at.error)
    assert "could not be read in full (ListPartitionReassignments did not answer)" in said, said
    assert "Start the run" not in [b.label for b in at.button]
    assert Store().runs.list() == []
