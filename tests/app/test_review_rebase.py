"""AppTest: the Review page of a saved plan made stale by a move (on the fake cluster) offers "Bring
up to date", saves the new version linked to the old, and links to reviewing it."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from console.access.auth import Identity
from console.core.model import BrokerId
from console.plans.plan import Plan, PlanEntry
from console.services import plans as plan_service
from console.storage.store import Store
from tests.app.pages import APP, sign_in
from tests.support import wait_for

TOPIC = "app-rebase"


def test_review_of_a_stale_plan_brings_it_up_to_date(fake_cluster, sandbox_users):
    with fake_cluster.held() as fake:
        fake.create_topic(TOPIC, [[0, 1], [1, 2]], size=2 * 1024)
    store = Store()
    drafted = fake_cluster.snapshot()
    plan = Plan.of(
        [PlanEntry(TOPIC, 0, (BrokerId(1), BrokerId(2))), PlanEntry(TOPIC, 1, (BrokerId(2), BrokerId(0)))]
    ).with_basis(drafted)
    old = plan_service.save_plan(store, Identity.cli("ann"), drafted, "test", "spread", plan)
    # someone else moves partition 0 meanwhile: the saved plan is stale
    moved = fake_cluster.alter_reassignments({(TOPIC, 0): (BrokerId(0), BrokerId(2))})
    assert all(o.accepted for o in moved.values())
    wait_for(lambda: not fake_cluster.snapshot().in_flight, timeout=120, what="reassignments to complete")

    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params["plan"] = str(old)
    at.run()
    sign_in(at, "operator")  # bringing a plan up to date saves a plan: an operator or an approver does
    at.switch_page("views/review.py").run()
    assert not at.exception and at.header[0].value == "Review a plan"
    assert "must not be submitted" in at.error[0].value  # "1 error" / "2 errors": the plan has errors
    assert "Bring up to date" in [s.value for s in at.subheader]
    assert any("1 moved, 1 unchanged" in m.value for m in at.markdown)
    table = next(d.value for d in at.dataframe if "since the draft" in d.value.columns)
    assert list(table["partition"]) == [f"{TOPIC}-0"] and list(table["since the draft"]) == ["moved"]
    assert list(table["now"]) == ["0,2"] and list(table["when drafted"]) == ["0,1"]
    assert at.checkbox(key="review.drop_completed").disabled  # nothing completed, nothing gone
    assert at.checkbox(key="review.drop_gone").disabled

    next(b for b in at.button if b.label == "Save as a new plan, up to date").click().run()
    assert not at.exception
    (new,) = [s for s in Store().plans.list() if s.id != old]
    assert new.name == "spread (up to date, v2)" and new.parent_id == old and new.author == "operator"
    assert f"Saved as plan #{new.id}" in at.success[-1].value
    (link,) = at.page_link
    assert link.value == f"Review plan #{new.id}" and link.proto.query_string == f"plan={new.id}"
    assert link.proto.page.endswith("review")

    # reviewed like any other: no stale error, and it says where it came from
    at.query_params["plan"] = str(new.id)
    at.switch_page("views/review.py").run()
    assert not at.exception
    assert at.query_params["plan"] in (str(new.id), [str(new.id)])
    assert any(f"Rebased from plan [#{old}]" in c.value and "spread" in c.value for c in at.caption)
    assert "Bring up to date" not in [s.value for s in at.subheader]
    assert not at.error and "stale" not in " ".join(str(d.value) for d in at.dataframe)
