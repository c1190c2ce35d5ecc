"""AppTest: Live's "Cancel log dir moves…" (in the "Log dir moves in flight" section). An operator's
click freezes the moves in flight and opens a dialog listing exactly the replicas asked back into
their current dir; the send is audited and its answers shown per replica. A viewer sees the button
off and can send nothing."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from components import keys
from console.core.model import BrokerId
from console.plans.logdirs import dir_moves_in_flight
from console.storage.store import Store
from tests.app.pages import APP, sign_in

D1, D2 = "/data", "/data2"


def moving_dirs(fake_cluster) -> None:  # type: ignore[no-untyped-def]
    """Two replicas of a big topic being copied to the brokers' second dir (for ever)."""
    with fake_cluster.held() as fake:
        fake.log_dirs = (D1, D2)
        fake.create_topic("big", [[0], [1]], size=10**12)
        fake.alter_replica_log_dirs({("big", 0, BrokerId(0)): D2, ("big", 1, BrokerId(1)): D2})


def test_an_operator_cancels_the_log_dir_moves_from_live_after_seeing_exactly_which(fake_cluster, sandbox_users):
    moving_dirs(fake_cluster)
    at = AppTest.from_file(APP, default_timeout=60).run()
    sign_in(at, "operator")
    assert at.header[0].value == "Live reassignments"
    assert any(m.value.startswith("**Log dir moves in flight** (2)") for m in at.markdown)
    button = at.button(key=keys.LIVE_DIR_CANCEL_OPEN)
    assert button.label == "Cancel log dir moves…" and not button.disabled

    button.click().run()
    assert not at.exception
    send = at.button(key=keys.DIR_CANCEL_SEND)
    assert send.label == "Send the cancel for 2 log dir moves" and not send.disabled
    listed = next(c.value for c in at.text if "on broker" in c.value)
    assert listed.splitlines() == [
        f"big-0 on broker 0: {D1} → {D2} (stays in {D1})",
        f"big-1 on broker 1: {D1} → {D2} (stays in {D1})",
    ]
    assert len(dir_moves_in_flight(fake_cluster.snapshot())) == 2  # nothing sent before the confirmation

    send.click().run()  # sent by the button's callback (AppTest then runs the whole page, without the dialog)
    assert not at.exception
    assert not dir_moves_in_flight(fake_cluster.snapshot())
    audit = [(a.user, a.outcome) for a in Store().audit.entries(action="cancel-log-dir-moves")]
    assert audit == [("operator", "sending"), ("operator", "2 cancelled")]
    assert at.session_state[keys.LAST_ACTION] == "Cancel of log dir moves by operator: 2 log dir moves cancelled."
    assert any(i.value == at.session_state[keys.LAST_ACTION] for i in at.info)  # on the page too


def dir_cancel_page() -> None:
    """The dialog on its own, opened again on each run (AppTest runs only full reruns; in a browser
    the dialog's own rerun keeps it open): sign in, then the log dir moves in flight."""
    import streamlit as st

    from components import actions, keys, widgets

    widgets.sign_in_box()
    settings = widgets.require_cluster()
    if widgets.identity().can("cancel"):
        if keys.DIR_CANCEL_SEEN not in st.session_state:
            actions.freeze_dir_cancel(settings)
        actions.open_dialog(actions.dir_cancel_dialog, settings)


def test_the_dialog_shows_each_replicas_answer_once_sent(fake_cluster, sandbox_users):
    moving_dirs(fake_cluster)
    at = AppTest.from_function(dir_cancel_page, default_timeout=30).run()
    sign_in(at, "operator")
    with fake_cluster.held() as fake:  # one of the two finishes before the click: left alone
        fake.alter_replica_log_dirs({("big", 1, BrokerId(1)): D1})
    at.button(key=keys.DIR_CANCEL_SEND).click().run()
    assert not at.exception
    assert any(m.value == "**Outcome:** 1 log dir move cancelled, 1 no longer moving." for m in at.markdown)
    table = next(d.value for d in at.dataframe if "outcome" in d.value.columns)
    assert list(zip(table["partition"], table["outcome"], strict=True)) == [
        ("big-0", f"accepted: stays in {D1}"),
        ("big-1", "no longer moving"),
    ]
    assert at.button(key=keys.DIR_CANCEL_SEND).disabled  # sent once


def test_a_viewer_sees_the_log_dir_moves_but_cannot_cancel_them(fake_cluster, sandbox_users):
    moving_dirs(fake_cluster)
    at = AppTest.from_file(APP, default_timeout=60).run()
    sign_in(at, "viewer")
    assert any(m.value.startswith("**Log dir moves in flight** (2)") for m in at.markdown)
    button = at.button(key=keys.LIVE_DIR_CANCEL_OPEN)
    assert button.disabled
    assert len(dir_moves_in_flight(fake_cluster.snapshot())) == 2
    assert not Store().audit.entries(action="cancel-log-dir-moves")


def run_cancel_page() -> None:
    """The Runs page's "Cancel the run…" on its own: the run's partitions, the dialog opened again on each run."""
    import streamlit as st

    from components import actions, deps, keys, widgets

    widgets.sign_in_box()
    settings = widgets.require_cluster()
    if widgets.identity().can("cancel"):
        if keys.CANCEL_SEEN not in st.session_state:
            ours = list(deps.store().runs.active_partitions("fake-cluster"))
            actions.open_cancel(settings, ours, False)
        else:
            actions.open_dialog(actions.cancel_dialog, settings)


def test_cancelling_a_run_lists_and_cancels_the_log_dir_moves_it_asked_for(fake_cluster, sandbox_users):
    from console.plans.plan import Plan, PlanEntry
    from tests.integration.helpers import first_wave_sent

    with fake_cluster.held() as fake:
        fake.log_dirs = (D1, D2)
        fake.create_topic("big", [[0], [1]], size=10**12)
    plan = Plan.of([PlanEntry("big", 0, (BrokerId(0),), (D2,)), PlanEntry("big", 1, (BrokerId(2),))])
    store = Store()
    first_wave_sent(store, fake_cluster, fake_cluster.snapshot(), plan, "dirs", None)
    assert len(dir_moves_in_flight(fake_cluster.snapshot())) == 1
    at = AppTest.from_function(run_cancel_page, default_timeout=30).run()
    sign_in(at, "operator")
    listed = next(c.value for c in at.text if "log dir move" in c.value)
    assert f"big-0 on broker 0: {D1} → {D2} (stays in {D1})" in listed
    send = at.button(key=keys.CANCEL_SEND)
    assert send.label == "Send the cancel for 1 partition and 1 log dir move"
    send.click().run()
    assert not at.exception
    assert not dir_moves_in_flight(fake_cluster.snapshot())
    assert [a.outcome for a in store.audit.entries(action="cancel-log-dir-moves")] == ["sending", "1 cancelled"]
    assert any(m.value == "**Log dir moves:** 1 log dir move cancelled." for m in at.markdown)
