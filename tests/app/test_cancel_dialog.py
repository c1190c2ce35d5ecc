"""AppTest: the cancel dialog never blocks the page. The click is sent at once and the script run
ends while the partitions are still leaving the in-flight list (the fake controller lets them go
a few seconds after it accepted the cancel); a later run of the dialog's outcome fragment shows
them cancelled, and the run among them is cleaned up."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest
from streamlit.testing.v1 import AppTest

from components import keys
from console.core.model import BrokerId
from console.core.states import RunState
from console.moves.cancel import CancelVerdict
from console.plans.plan import Plan, PlanEntry
from console.storage.store import Store
from tests.app.pages import cancel_page, sign_in
from tests.integration.helpers import first_wave_sent
from tests.support import wait_for

LAG_S = 6.0
APP = str(Path(__file__).resolve().parents[2] / "app.py")


def outcome(at: AppTest) -> str:
    return next(m.value for m in at.markdown if m.value.startswith("**Outcome:**"))


def test_the_cancel_dialog_answers_at_once_and_shows_the_outcome_as_it_arrives(fake_cluster, sandbox_users):
    with fake_cluster.held() as fake:
        fake.create_topic("slow", [[0], [1]], size=4 * 10**11)  # copies for ever, within broker 2's disk
        fake.cancel_lag_s = LAG_S
    store = Store()
    plan = Plan.of([PlanEntry("slow", 0, (BrokerId(2),)), PlanEntry("slow", 1, (BrokerId(2),))])
    run_id = first_wave_sent(store, fake_cluster, fake_cluster.snapshot(), plan, "to cancel", None)
    in_flight = {("slow", 0), ("slow", 1)}
    assert set(fake_cluster.list_reassignments()) == in_flight

    at = AppTest.from_function(cancel_page, default_timeout=30).run()
    sign_in(at, "operator")
    assert not at.exception
    send = at.button(key=keys.CANCEL_SEND)
    assert send.label == "Send the cancel for 2 partitions" and not send.disabled

    t0 = time.monotonic()
    send.click().run()
    took = time.monotonic() - t0
    assert not at.exception
    # the script run ended before the controller let the partitions go: nothing waited for them
    assert set(fake_cluster.list_reassignments()) == in_flight, f"the run took {took:.1f} s"
    assert outcome(at).startswith("**Outcome:** 2 partitions accepted (still leaving the list)")
    assert at.button(key=keys.CANCEL_SEND).disabled  # sent once
    table = next(d.value for d in at.dataframe if "outcome" in d.value.columns)
    assert list(table["outcome"]) == [CancelVerdict.ACCEPTED.value] * 2
    sending = [a for a in store.audit.entries(action="cancel") if a.outcome == "sending"]
    assert len(sending) == 1 and sending[0].user == "operator"
    assert not store.audit.entries(action="cancel-complete")

    wait_for(lambda: not fake_cluster.list_reassignments(), timeout=30, what="the partitions left the list")
    at.run()  # the outcome fragment again
    assert not at.exception
    assert outcome(at).startswith("**Outcome:** 2 partitions cancelled")
    table = next(d.value for d in at.dataframe if "outcome" in d.value.columns)
    assert list(table["outcome"]) == [CancelVerdict.CANCELLED.value] * 2
    assert [(a.outcome, a.ref) for a in store.audit.entries(action="cancel-complete")] == [
        ("left the in-flight list; every broker shows the original replicas", sending[0].id)
    ]
    # the run's throttles off and the run ended: by the dialog, or by the server's worker when it held the run
    wait_for(lambda: store.runs.require(run_id).state is RunState.CANCELLED, timeout=30, what="the run cancelled")
    assert at.session_state[keys.LAST_ACTION].startswith("Cancel by operator: 2 partitions cancelled")


def test_the_live_page_opens_the_cancel_dialog_before_it_draws_the_page_again(
    fake_cluster, sandbox_users, monkeypatch: pytest.MonkeyPatch
):
    """The on-call click: "Cancel…" freezes the set (a lean read) in its callback, and the page's
    next run opens the dialog first; the tables and charts of the page are drawn after it."""
    from components import actions

    with fake_cluster.held() as fake:
        fake.create_topic("slow", [[0], [1]], size=4 * 10**11)
    plan = Plan.of([PlanEntry("slow", 0, (BrokerId(2),)), PlanEntry("slow", 1, (BrokerId(2),))])
    first_wave_sent(Store(), fake_cluster, fake_cluster.snapshot(), plan, "to cancel", None)
    at = AppTest.from_file(APP, default_timeout=60).run()
    sign_in(at, "operator")
    assert at.header[0].value == "Live reassignments"

    calls: list[tuple[str, int]] = []  # with the thread: the server's worker reads the cluster too
    read, open_dialog = fake_cluster.snapshot, actions.open_dialog

    def snapshot(max_age_s: float = 0.0, info: bool = False, lean: bool = False, full: bool = False) -> Any:
        calls.append(("lean read" if lean else "page read", threading.get_ident()))
        return read(max_age_s, info, lean, full)

    def opening(dialog: Any, *args: Any) -> None:
        calls.append(("dialog", threading.get_ident()))
        open_dialog(dialog, *args)

    monkeypatch.setattr(fake_cluster, "snapshot", snapshot)
    monkeypatch.setattr(actions, "open_dialog", opening)
    at.button(key=keys.LIVE_CANCEL_OPEN).click().run()
    assert not at.exception
    script = next(t for what, t in calls if what == "dialog")
    order = [what for what, t in calls if t == script]
    assert order[:3] == ["lean read", "dialog", "page read"], order
    assert at.button(key=keys.CANCEL_SEND).label == "Send the cancel for 2 partitions"


def at_risk_in_flight(fake_cluster) -> None:
    """risk-0 moving from 0,1 to 2,1 while its original 0 fell out of the ISR (min ISR 2: after a
    cancel only 1 could lead, and it refuses writes with acks=all); risk-1 moving safely."""
    with fake_cluster.held() as fake:
        fake.create_topic("risk", [[0, 1], [1, 2]], size=4 * 10**11)  # copies for ever, within broker 2's disk
        fake.min_isr["risk"] = 2
    plan = Plan.of([PlanEntry("risk", 0, (BrokerId(2), BrokerId(1))), PlanEntry("risk", 1, (BrokerId(0), BrokerId(2)))])
    first_wave_sent(Store(), fake_cluster, fake_cluster.snapshot(), plan, "to cancel", None)
    with fake_cluster.held() as fake:
        p = fake.parts[("risk", 0)]
        p.isr, p.leader = [BrokerId(1), *(b for b in p.isr if b == BrokerId(2))], BrokerId(1)
        assert {k for k, q in fake.parts.items() if q.adding} == {("risk", 0), ("risk", 1)}


def cancels_sent(fake_cluster) -> list[set[tuple[str, int]]]:
    with fake_cluster.held() as fake:
        return [set(c.args[0]) for c in fake.calls_to("alter_reassignments") if set(c.args[0].values()) == {None}]


def test_a_partition_at_risk_is_named_and_left_out_of_the_cancel_without_the_override(fake_cluster, sandbox_users):
    at_risk_in_flight(fake_cluster)
    at = AppTest.from_function(cancel_page, default_timeout=30).run()
    sign_in(at, "operator")
    assert not at.exception
    said = "\n".join(c.value for c in at.text)
    assert "risk-0: only 1 of its original replicas (1,0) could lead, fewer than min.insync.replicas=2" in said
    assert [w.value for w in at.warning] == [
        "At risk: risk-0 would refuse writes with acks=all (fewer than min.insync.replicas could lead). Kafka "
        "does not check this; without the override they are left out of the cancel (the others are sent)."
    ]
    assert not at.checkbox(key=keys.CANCEL_OVERRIDE).value
    send = at.button(key=keys.CANCEL_SEND)
    assert send.label == "Send the cancel for 1 partition (leaving out 1 at risk)" and not send.disabled

    send.click().run()
    assert not at.exception
    assert cancels_sent(fake_cluster) == [{("risk", 1)}]  # what is sent is what the button said
    table = next(d.value for d in at.dataframe if "outcome" in d.value.columns)
    outcomes = dict(zip(table["partition"], table["outcome"], strict=True))
    assert outcomes["risk-0"] == CancelVerdict.AT_RISK.value
    with fake_cluster.held() as fake:
        assert fake.parts[("risk", 0)].adding == (BrokerId(2),)  # still moving: not cancelled


def test_with_the_override_ticked_the_partition_at_risk_is_cancelled_too(fake_cluster, sandbox_users):
    at_risk_in_flight(fake_cluster)
    at = AppTest.from_function(cancel_page, default_timeout=30).run()
    sign_in(at, "operator")
    at.checkbox(key=keys.CANCEL_OVERRIDE).check().run()
    assert not at.exception
    send = at.button(key=keys.CANCEL_SEND)
    assert send.label == "Send the cancel for 2 partitions" and not send.disabled
    send.click().run()
    assert not at.exception
    assert cancels_sent(fake_cluster) == [{("risk", 0), ("risk", 1)}]
    table = next(d.value for d in at.dataframe if "outcome" in d.value.columns)
    assert CancelVerdict.AT_RISK.value not in set(table["outcome"])


def other_movers_page() -> None:
    """Live's "Chosen partitions" with one partition another mover is reassigning: the dialog."""
    import streamlit as st

    from components import actions, keys, widgets

    widgets.sign_in_box()
    settings = widgets.require_cluster()
    if widgets.identity().can("cancel"):
        if keys.CANCEL_SEEN not in st.session_state:
            actions.open_cancel(settings, [("clickstream", 0)], False)
        else:
            actions.open_dialog(actions.cancel_dialog, settings)


def test_a_chosen_partition_of_another_mover_alone_is_not_offered_as_a_cancel_of_none(fake_cluster, sandbox_users):
    """Walking the demo: one partition of another mover's chosen on Live, the dialog opened with
    "Cancel 0 reassignments: each partition goes back to its original replicas…" above the words
    saying whose it is. It now says only what is left alone and how to include it."""
    with fake_cluster.held() as fake:
        fake.copy_rate = 1  # stays in flight while the dialog is read
        fake.alter_reassignments({("clickstream", 0): (BrokerId(1),)})  # someone else's script
    at = AppTest.from_function(other_movers_page, default_timeout=30).run()
    sign_in(at, "operator")
    assert not at.exception
    said = "\n".join(t.value for t in at.text)
    assert "Cancel 0" not in said and "goes back to its original replicas" not in said, said
    assert said == (
        "Left alone: 1 reassignment this console did not start (clickstream-0); include them explicitly to "
        "cancel them too."
    )
    assert [i.value for i in at.info] == ["Nothing to cancel: tick the box above to cancel those."]
    at.checkbox(key=keys.CANCEL_OTHERS).check().run()
    assert not at.exception
    said = "\n".join(t.value for t in at.text)
    assert said.startswith("Cancel 1 reassignment: each partition goes back to its original replicas"), said
    assert at.button(key=keys.CANCEL_SEND).label == "Send the cancel for 1 partition"


@pytest.mark.parametrize("part", ["snapshot", "snapshot:reassignments"])
def test_a_dialog_opened_on_a_read_that_failed_says_the_read_failed_never_nothing_to_cancel(
    fake_cluster, sandbox_users, part
):
    from console.core.errors import ClusterUnavailable

    with fake_cluster.held() as fake:
        fake.create_topic("slow", [[0], [1]], size=4 * 10**11)
        fake.alter_reassignments({("slow", 0): (BrokerId(2),)})
        down = ClusterUnavailable("The cluster did not answer (timed out).", "Check the brokers.")
        fake.fail_next(part, down, times=1000)  # every read while the dialog is open
    at = AppTest.from_function(cancel_page, default_timeout=30).run()
    sign_in(at, "operator")
    assert not at.exception
    which = "Metadata" if part == "snapshot" else "ListPartitionReassignments"
    assert [e.value for e in at.error] == [
        f"The cluster's read failed ({which} did not answer (unavailable)): close this and press Cancel… again "
        "to read it again."
    ]
    assert not [i.value for i in at.info if "Nothing to cancel" in i.value]
    assert "Not in flight" not in "\n".join(c.value for c in at.text)


def test_a_box_ticked_just_before_the_cancel_click_counts(fake_cluster, sandbox_users):
    """CI met it in the browser: "Include reassignments this console did not start" ticked, then
    "Cancel…" clicked before the page's rerun for the tick had drawn the button again; the dialog
    opened without them ("Nothing to cancel"). Here both reach the server in one rerun, as then."""
    with fake_cluster.held() as fake:
        fake.copy_rate = 1  # stays in flight
        fake.alter_reassignments({("clickstream", 0): (BrokerId(1),)})  # another mover's
    at = AppTest.from_file(APP, default_timeout=60).run()
    sign_in(at, "operator")
    at.radio(key=keys.LIVE_CANCEL_SCOPE).set_value("A topic").run()
    assert not at.exception
    at.checkbox(key=keys.LIVE_CANCEL_OTHERS).check()
    at.button(key=keys.LIVE_CANCEL_OPEN).click().run()
    assert not at.exception
    assert at.button(key=keys.CANCEL_SEND).label == "Send the cancel for 1 partition"
