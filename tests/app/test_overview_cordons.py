"""Overview's cordons (KIP-1066) on the fake cluster: the brokers table's cordoned column and the log
dirs table say what the brokers report; a signed-in operator cordons and uncordons a broker (or one
log dir) with the page's buttons, through the service (audited); a viewer gets no buttons; a cluster
below metadata.version 4.3-IV0 says "not available on this cluster"."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from console.core.limits import CORDONED_LOG_DIRS
from console.core.model import BrokerId
from tests.app.pages import APP, sign_in
from tests.fakes.app import AppCluster

DIRS = ("/k/d1", "/k/d2")


def two_dirs(fake_cluster: AppCluster, level: int = 33) -> None:
    with fake_cluster.held() as fake:
        fake.log_dirs = DIRS
        fake.at_level(level)
        fake.broker_configs.setdefault(BrokerId(2), {})[CORDONED_LOG_DIRS] = DIRS[1]


def cordon_column(at: AppTest) -> dict[int, str]:
    brokers = next(d.value for d in at.dataframe if "cordoned" in d.value.columns and "eligible" in d.value.columns)
    return dict(zip(brokers["broker"], brokers["cordoned"], strict=True))


def test_overview_shows_cordons_and_an_operator_cordons_and_uncordons(fake_cluster, sandbox_users):
    two_dirs(fake_cluster)
    at = sign_in(AppTest.from_file(APP, default_timeout=60).run(), "operator")
    at.switch_page("views/overview.py").run()
    assert not at.exception
    assert cordon_column(at) == {0: "—", 1: "—", 2: "1 of 2 dirs cordoned"}
    dirs = next(d.value for d in at.dataframe if "log dir" in d.value.columns)
    assert dict(zip(zip(dirs["broker"], dirs["log dir"], strict=True), dirs["cordoned"], strict=True)) == {
        (0, DIRS[0]): "—",
        (0, DIRS[1]): "—",
        (1, DIRS[0]): "—",
        (1, DIRS[1]): "—",
        (2, DIRS[0]): "—",
        (2, DIRS[1]): "cordoned",
    }

    # the chosen broker's cordon in words under the picker (the picker's labels said it, "0 (—)", and kept
    # saying it in the browser after a cordon: a picker keeps the labels it first drew)
    assert at.selectbox(key="overview.cordon_broker").options == ["0", "1", "2"]
    assert "Broker 0 now: not cordoned." in [c.value for c in at.caption]
    at.selectbox(key="overview.cordon_broker").set_value(1).run()
    next(b for b in at.button if b.label == "Cordon broker 1").click()
    at.run()
    assert not at.exception
    assert [s.value for s in at.success] == [
        "Cordoned broker 1: cordoned.log.dirs (none) → '*' (read back from the broker)."
    ]
    with fake_cluster.held() as fake:
        assert fake.cordon_entries(1) == ("*",)
    # at once, not after a refresh: the tables above are drawn from the cluster read after the cordon
    assert cordon_column(at)[1] == "cordoned"
    assert "Broker 1 now: cordoned." in [c.value for c in at.caption]

    at.selectbox(key="overview.cordon_broker").set_value(2).run()
    at.selectbox(key="overview.cordon_dir").set_value(DIRS[1]).run()
    next(b for b in at.button if b.label == f"Uncordon log dir {DIRS[1]} of broker 2").click()
    at.run()
    assert not at.exception and at.success
    with fake_cluster.held() as fake:
        assert fake.cordon_entries(2) == ()
        assert fake.cordon_entries(1) == ("*",)
    at.selectbox(key="overview.cordon_broker").set_value(1).run()
    at.selectbox(key="overview.cordon_dir").set_value("the whole broker").run()
    next(b for b in at.button if b.label == "Uncordon broker 1").click()
    at.run()
    with fake_cluster.held() as fake:
        assert fake.cordon_entries(1) == ()
    assert cordon_column(at)[1] == "—"


def test_a_viewer_sees_cordons_but_no_buttons(fake_cluster):
    two_dirs(fake_cluster)
    at = AppTest.from_file(APP, default_timeout=60).run()
    at.switch_page("views/overview.py").run()
    assert not at.exception
    assert cordon_column(at)[2] == "1 of 2 dirs cordoned"
    assert not [b for b in at.button if "ordon" in b.label]
    assert any("may not cordon" in c.value for c in at.caption)


def test_below_4_3_overview_says_not_available(fake_cluster, sandbox_users):
    two_dirs(fake_cluster, level=29)
    at = sign_in(AppTest.from_file(APP, default_timeout=60).run(), "operator")
    at.switch_page("views/overview.py").run()
    assert not at.exception
    assert set(cordon_column(at).values()) == {"not available on this cluster"}
    assert any("Cordoned brokers and log dirs: not available on this cluster" in c.value for c in at.caption)
    assert not [b for b in at.button if "ordon" in b.label]


@pytest.mark.parametrize("level", [30, 33], ids=["Kafka 4.3", "Kafka 4.4"])
def test_review_lets_an_operator_submit_onto_a_cordoned_broker_only_when_ticked(fake_cluster, sandbox_users, level):
    """Kafka 4.3's controller takes the move, so the operator may override the console's check; Kafka
    4.4's refuses it (met in the browser: the override was offered, and the run failed at once)."""
    from console.access.auth import Identity
    from console.plans.plan import Plan, PlanEntry
    from console.services import plans as plan_service
    from console.storage.store import Store

    with fake_cluster.held() as fake:
        fake.at_level(level)
        fake.create_topic("cx", [[0], [1]], size=1024)
        fake.broker_configs.setdefault(BrokerId(2), {})[CORDONED_LOG_DIRS] = "*"
    state = fake_cluster.snapshot()
    plan = Plan.of([PlanEntry("cx", 0, (BrokerId(2),))]).with_basis(state)
    plan_id = plan_service.save_plan(Store(), Identity.cli("ann"), state, "test", "onto 2", plan)

    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params["plan"] = str(plan_id)
    at.run()
    sign_in(at, "operator")
    at.switch_page("views/review.py").run()
    assert not at.exception
    assert not [b for b in at.button if b.label == "Submit…"]
    if level == 33:
        assert "must not be submitted" in at.error[0].value
        assert not [c for c in at.checkbox if c.key == "review.allow_cordoned"], "no override offered"
        codes = {str(c) for t in at.table for c in t.value.get("code", [])}
        assert "cordoned-broker-refused" in codes, codes
        return
    assert "cordoned brokers or log dirs" in at.error[0].value
    at.checkbox(key="review.allow_cordoned").check().run()
    assert not at.exception
    assert [b for b in at.button if b.label == "Submit…"]
