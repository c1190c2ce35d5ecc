"""AppTest: Review shows the plan's estimate (bytes, waves, duration and what it rests on) before
Submit… is opened, the same figure the submit dialog and the run use (issue: Review showed no
duration at all until Submit… was opened)."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from console.core.model import BrokerId
from tests.app.pages import APP, sign_in


def test_review_shows_the_estimate_before_submit(fake_cluster, sandbox_users):
    from console.access.auth import Identity
    from console.plans.plan import Plan, PlanEntry
    from console.services import plans as plan_service
    from console.storage.store import Store

    with fake_cluster.held() as fake:
        fake.create_topic("ut-est", [[0], [0], [1]], size=100 * 1024)
    state = fake_cluster.snapshot()
    plan = Plan.of([PlanEntry("ut-est", p, (BrokerId(2),)) for p in range(3)])
    plan_id = plan_service.save_plan(Store(), Identity.cli("ann"), state, "test", "estimate plan", plan)
    at = AppTest.from_file(APP, default_timeout=60).run()
    sign_in(at, "operator")
    at.query_params["plan"] = str(plan_id)
    at.switch_page("views/review.py").run()
    assert not at.exception
    at.text_input(key="review.rate").set_value("102.4 KB/s").run()  # 102,400 bytes/s
    assert not at.exception
    shown = [i.value for i in at.info if "Estimate" in i.value]
    assert len(shown) == 1, [i.value for i in at.info]
    line = shown[0]
    # broker 2 takes in 3 × 100 KB at 100 KB/s: 3 s, in one wave, at the throttle (no history)
    assert "3 partitions in 1 wave" in line and "≈ 3 s" in line and "at the throttle" in line, line
