"""Overview's throttles with a cluster-wide default rate set (``kafka-configs --entity-default``):
shown once as the cluster default, never as each broker's; the sweep button removes only the
leftovers it lists, keeps the default, and says what the brokers report afterwards."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from console.core.limits import FOLLOWER_RATE, LEADER_RATE
from console.core.model import BrokerId
from tests.app.pages import APP, sign_in

SEVEN_MB = str(7 * 2**20)


def test_the_cluster_default_is_shown_as_such_and_the_sweep_keeps_it(fake_cluster, sandbox_users):
    with fake_cluster.held() as fake:
        fake.cluster_default = {LEADER_RATE: SEVEN_MB, FOLLOWER_RATE: SEVEN_MB}
        fake.broker_configs[BrokerId(2)] = {FOLLOWER_RATE: str(5 * 2**20)}  # left behind by someone
    at = sign_in(AppTest.from_file(APP, default_timeout=60).run(), "operator")
    at.switch_page("views/overview.py").run()
    assert not at.exception
    tables = [d.value for d in at.dataframe]
    set_now = next(t for t in tables if "entity" in t.columns)
    assert sorted(zip(set_now["entity"], set_now["config"], set_now["value"], strict=True)) == [
        ("broker 2", FOLLOWER_RATE, "5.0 MB/s"),
        ("cluster default (every broker)", FOLLOWER_RATE, "7.0 MB/s"),
        ("cluster default (every broker)", LEADER_RATE, "7.0 MB/s"),
    ]
    leftovers = next(t for t in tables if "on" in t.columns)
    assert list(leftovers["on"]) == ["broker 2"]
    assert any("--include-cluster-default" in c.value for c in at.caption)

    next(b for b in at.button if b.label == "Remove these throttles").click()
    at.run()
    assert not at.exception
    assert [s.value for s in at.success] == [
        "Removed 1 throttle setting (read back from the brokers). The table above follows at the next refresh."
    ]
    with fake_cluster.held() as fake:
        assert fake.broker_configs[BrokerId(2)] == {}
        assert fake.cluster_default == {LEADER_RATE: SEVEN_MB, FOLLOWER_RATE: SEVEN_MB}
