"""Overview's throttles with a cluster-wide default rate set (``kafka-configs --entity-default``):
shown once as the cluster default, never as each broker's, in one table that says of each setting
whether anything needs it; "Remove …" asks first, listing what it removes, keeps the default, and
then says what was removed while the table, read again at once, no longer lists it."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from console.core.limits import FOLLOWER_RATE, LEADER_RATE
from console.core.model import BrokerId
from tests.app.pages import APP, sign_in

SEVEN_MB = str(7_000_000)


def test_the_cluster_default_is_shown_as_such_and_the_sweep_asks_keeps_it_and_says_what_it_removed(
    fake_cluster, sandbox_users
):
    with fake_cluster.held() as fake:
        fake.cluster_default = {LEADER_RATE: SEVEN_MB, FOLLOWER_RATE: SEVEN_MB}
        fake.broker_configs[BrokerId(2)] = {FOLLOWER_RATE: str(5_000_000)}  # left behind by someone
    at = sign_in(AppTest.from_file(APP, default_timeout=60).run(), "operator")
    at.switch_page("views/overview.py").run()
    assert not at.exception
    (set_now,) = [t.value for t in at.table if "entity" in t.value.columns]  # one table, not two
    assert sorted(zip(set_now["entity"], set_now["config"], set_now["value"], set_now["needed"], strict=True)) == [
        ("broker 2", FOLLOWER_RATE, "5.0 MB/s", "left over: nothing in flight needs it"),
        ("cluster default (every broker)", FOLLOWER_RATE, "7.0 MB/s", "cluster default, kept"),
        ("cluster default (every broker)", LEADER_RATE, "7.0 MB/s", "cluster default, kept"),
    ]
    assert not [t for t in at.table if "on" in t.value.columns]
    assert any("--include-cluster-default" in c.value for c in at.caption)

    # one click asks, listing what it will remove; nothing is sent yet
    next(b for b in at.button if b.label == "Remove the 1 left-over setting…").click()
    at.run()
    assert not at.exception
    listed = next(t.value for t in at.table if "on" in t.value.columns)
    assert list(zip(listed["on"], listed["config"], listed["value"], strict=True)) == [
        ("broker 2", FOLLOWER_RATE, "5.0 MB/s")
    ]
    with fake_cluster.held() as fake:
        assert fake.broker_configs[BrokerId(2)] == {FOLLOWER_RATE: "5000000"}

    next(b for b in at.button if b.label == "Remove 1 throttle setting").click()
    at.run()
    assert not at.exception
    assert [s.value for s in at.success] == [
        f"Removed 1 throttle setting (read back from the brokers):  \nbroker 2: {FOLLOWER_RATE} (5.0 MB/s)"
    ]
    with fake_cluster.held() as fake:
        assert fake.broker_configs[BrokerId(2)] == {}
        assert fake.cluster_default == {LEADER_RATE: SEVEN_MB, FOLLOWER_RATE: SEVEN_MB}
    # the table was read again at once: broker 2's setting is gone from it
    (set_now,) = [t.value for t in at.table if "entity" in t.value.columns]
    assert "broker 2" not in set(set_now["entity"])
    assert not any(b.label.startswith("Remove the") for b in at.button)
