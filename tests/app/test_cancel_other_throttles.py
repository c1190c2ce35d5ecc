"""AppTest: the cancel dialog's outcome, once the partitions left the in-flight list, names the
throttles another tool (the official ``--throttle``) left on their topic and brokers, and removes
exactly those after a confirmation that lists them, saying what the brokers report (issue 42)."""

from __future__ import annotations

import json

from streamlit.testing.v1 import AppTest

from components import keys
from console.core.limits import FOLLOWER_LIST, FOLLOWER_RATE, LEADER_LIST, LEADER_RATE
from console.core.model import BrokerId
from console.storage.store import Store
from tests.app.pages import cancel_page, sign_in
from tests.support import wait_for

RATES = {LEADER_RATE: "1000", FOLLOWER_RATE: "1000"}


def test_the_cancel_outcome_offers_to_remove_what_another_tool_left_and_removes_exactly_that(
    fake_cluster, sandbox_users
):
    with fake_cluster.held() as fake:
        fake.create_topic("theirs", [[0], [1]], size=4 * 10**11)  # copies for ever
        fake.alter_reassignments({("theirs", 0): (BrokerId(2),), ("theirs", 1): (BrokerId(2),)})
        fake.topic_configs["theirs"] = {LEADER_LIST: "0:0,1:1", FOLLOWER_LIST: "0:2,1:2"}
        for b in (0, 1, 2):
            fake.broker_configs[BrokerId(b)] = dict(RATES)
    at = AppTest.from_function(cancel_page, default_timeout=30).run()
    sign_in(at, "operator")
    at.button(key=keys.CANCEL_SEND).click().run()
    assert not at.exception

    def offered() -> bool:
        at.run()
        return any(b.key == keys.CANCEL_CLEAR_ASK for b in at.button)

    wait_for(offered, timeout=30, what="the outcome's offer")
    (warning,) = [w.value for w in at.warning if "left by another tool" in w.value]
    assert warning.startswith(
        "8 throttle settings left by another tool (the official tool's --cancel would clear them), on topic "
        "theirs (brokers 0,1,2): nothing in flight needs them"
    )
    listed = next(t.value for t in at.table if "config" in t.value.columns)
    assert len(listed) == 8 and set(listed["on"]) == {"topic theirs", "broker 0", "broker 1", "broker 2"}
    with fake_cluster.held() as fake:
        assert fake.broker_configs[BrokerId(0)] == RATES, "nothing removed before the confirmation"

    at.button(key=keys.CANCEL_CLEAR_ASK).click().run()
    remove = at.button(key=keys.CANCEL_CLEAR)
    assert remove.label == "Remove 8 throttle settings"
    assert any("Remove exactly the 8 throttle settings above" in m.value for m in at.markdown)
    remove.click().run()
    assert not at.exception
    said = next(m.value for m in at.markdown if m.value.startswith("Removed (read back from the brokers)"))
    assert said.count("Removed (read back from the brokers)") == 8
    assert "broker 0: leader.replication.throttled.rate (1.0 KB/s)" in said
    with fake_cluster.held() as fake:
        assert all(not fake.broker_configs[BrokerId(b)] for b in (0, 1, 2)) and not fake.topic_configs["theirs"]
    entries = Store().audit.entries(action="throttle-sweep")
    assert [e.outcome for e in entries] == ["sending", "removed"] and entries[0].user == "operator"
    assert json.loads(entries[0].request)["left_by"] == "another tool"
    assert not any(b.key == keys.CANCEL_CLEAR for b in at.button), "removed once: no button to press again"
