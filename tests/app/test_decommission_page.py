"""The Drafts page's decommission flow on the fake Kafka 4 cluster: an operator starts it for a
broker (cordoned, drain plan saved, offered in Review), the flow follows the run the plan was
submitted as, says the broker still runs, and once it is shut down unregisters it; a viewer sees
the flow but gets no button."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from components import deps
from console.access.auth import Identity
from console.core.limits import CORDONED_LOG_DIRS
from console.core.model import BrokerId
from console.core.states import RunState
from console.services import runs as run_service
from tests.app.pages import APP, sign_in
from tests.fakes.app import AppCluster
from tests.support import wait_for


def with_broker_3(fake_cluster: AppCluster) -> None:
    with fake_cluster.held() as fake:
        fake.kafka4 = True
        fake.at_level(33)
        fake.racks[BrokerId(3)] = "rack-a"
        fake.live.add(BrokerId(3))
        fake.create_topic("leaving", [[3, 0], [1, 3]], size=10_000)


def drafts(at: AppTest) -> AppTest:
    at.switch_page("views/drafts.py").run()
    assert not at.exception
    return at


def button(at: AppTest, label: str) -> object:
    return next(b for b in at.button if b.label == label)


def start_flow() -> AppTest:
    """An operator's Drafts page, with the decommission of broker 3 started from it."""
    at = drafts(sign_in(AppTest.from_file(APP, default_timeout=60).run(), "operator"))
    at.multiselect(key="decommission.brokers").set_value([3])
    next(b for b in at.button if b.label == "Start the decommission").click()
    return at.run()


def test_an_operator_decommissions_a_broker_from_the_drafts_page(fake_cluster, sandbox_users):
    with_broker_3(fake_cluster)
    at = start_flow()
    assert not at.exception and not at.error, [e.value for e in at.error]
    text = " ".join(m.value for m in at.markdown)
    assert (
        "Decommission 1" in text
        and ":material/play_circle:] **review**" in text
        and ":material/check_circle:] cordon" in text
    )
    with fake_cluster.held() as fake:
        assert fake.broker_configs[BrokerId(3)][CORDONED_LOG_DIRS] == "*"
    assert any(b.label == "Open the drain plan in Review" for b in at.button)

    store = deps.store()
    flow = store.decommissions.list()[0]
    saved = store.plans.load(flow.plan_id or 0)
    assert saved is not None
    run_id = run_service.start_run(
        store,
        fake_cluster,
        fake_cluster.snapshot(),
        run_service.RunRequest(Identity.cli("olga"), saved.plan, "drain"),
        users=None,
    )
    wait_for(lambda: store.runs.require(run_id).state is RunState.COMPLETED, timeout=30, what="drain run completed")

    button(at, "Check and continue").click()  # type: ignore[attr-defined]
    at.run()
    assert not at.exception
    assert any("Broker 3 is still running" in w.value for w in at.warning)
    assert ":material/block:] **shut down**" in " ".join(m.value for m in at.markdown)

    with fake_cluster.held() as fake:
        fake.stop_broker(3)  # shut down on its host: fenced
    button(at, "Check and continue").click()  # type: ignore[attr-defined]
    at.run()
    assert ":material/play_circle:] **unregister**" in " ".join(m.value for m in at.markdown)
    unregister = button(at, "Unregister broker 3")
    assert unregister.disabled  # type: ignore[attr-defined]
    at.checkbox(key="decommission.sure.1").check().run()
    button(at, "Unregister broker 3").click()  # type: ignore[attr-defined]
    at.run()
    assert not at.exception and not at.error
    assert ":material/check_circle:] done" in " ".join(m.value for m in at.markdown)
    with fake_cluster.held() as fake:
        assert BrokerId(3) not in fake.racks
    assert [e.outcome for e in store.audit.entries() if e.action == "unregister-broker"] == ["sending", "unregistered"]


def test_a_viewer_sees_the_flow_without_buttons(fake_cluster, sandbox_users):
    with_broker_3(fake_cluster)
    start_flow()
    viewer = drafts(sign_in(AppTest.from_file(APP, default_timeout=60).run(), "viewer"))
    assert "Decommission 1" in " ".join(m.value for m in viewer.markdown)
    assert not [b for b in viewer.button if b.label in ("Check and continue", "Abandon", "Start the decommission")]
    assert any("Sign in as an operator" in i.value for i in viewer.info)


def test_overview_offers_to_unregister_a_fenced_broker_that_holds_nothing(fake_cluster, sandbox_users):
    with fake_cluster.held() as fake:
        fake.kafka4 = True
        fake.at_level(33)
        fake.racks[BrokerId(3)] = "rack-a"  # registered, shut down (fenced), holds nothing
    at = sign_in(AppTest.from_file(APP, default_timeout=60).run(), "operator")
    at.switch_page("views/overview.py").run()
    assert not at.exception
    assert any("Broker 3 is registered but fenced and holds no replica" in w.value for w in at.warning)
    assert button(at, "Unregister broker 3").disabled  # type: ignore[attr-defined]
    at.checkbox(key="overview.unregister_sure").check().run()
    button(at, "Unregister broker 3").click()  # type: ignore[attr-defined]
    at.run()
    assert [s.value for s in at.success] == ["Unregistered broker 3: the controller no longer knows it."]
    with fake_cluster.held() as fake:
        assert BrokerId(3) not in fake.racks


def test_on_the_three_broker_demo_a_drain_that_cannot_fit_is_said_before_anything_is_cordoned(
    fake_cluster, sandbox_users
):
    """The default demo (three brokers, topics of replication factor 3): the flow cordoned broker 2,
    then stopped at its drain plan. Now it says the drain cannot fit and cordons nothing."""
    with fake_cluster.held() as fake:
        fake.kafka4 = True
        fake.at_level(33)
    at = drafts(sign_in(AppTest.from_file(APP, default_timeout=60).run(), "operator"))
    at.multiselect(key="decommission.brokers").set_value([2])
    button(at, "Start the decommission").click()  # type: ignore[attr-defined]
    at.run()
    assert not at.exception
    said = [e.value for e in at.error]
    assert any("Not started: The drain cannot fit: Draining 2 would leave 2 eligible brokers" in e for e in said), said
    assert any("Nothing was cordoned." in e for e in said)
    assert not any("Decommission 1" in m.value for m in at.markdown)
    with fake_cluster.held() as fake:
        assert CORDONED_LOG_DIRS not in fake.broker_configs.get(BrokerId(2), {})
