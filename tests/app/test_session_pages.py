"""AppTest: the Drafts page with sign-in sessions: viewers cannot save, unknown names are said at
once, and a signed-in user's draft is autosaved and comes back in a new session."""

from __future__ import annotations

import json

import pytest
from streamlit.testing.v1 import AppTest
from streamlit.testing.v1.errors import AppTestError

from console.storage.store import Store
from tests.app.pages import APP, sign_in

pytestmark = pytest.mark.usefixtures("fake_cluster", "sandbox_users")


def drafts_page(user: str | None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60).run()
    assert not at.exception
    if user:
        sign_in(at, user)
    at.switch_page("views/drafts.py").run()
    assert not at.exception and at.header[0].value == "Drafts"
    return at


def start_from(at: AppTest, topics: list[str]) -> None:
    at.multiselect(key="drafts.topics").set_value(topics).run()
    next(b for b in at.button if b.label == "Start draft").click().run()
    assert not at.exception


def draft_of(at: AppTest):
    return at.session_state["drafts.plan"] if "drafts.plan" in at.session_state else None  # noqa: SIM401 (AppTest session state has no get)


def save_button(at: AppTest):
    return at.button(key="FormSubmitter:save-Save draft")


def test_a_viewer_cannot_save_a_draft_and_is_told_why():
    at = drafts_page("viewer")
    start_from(at, ["orders"])
    assert at.metric[0].value == "12"
    assert save_button(at).disabled
    assert any("viewer may not save plans: it needs the operator or approver role" in c.value for c in at.caption)
    with pytest.raises(AppTestError, match="disabled"):  # as in a browser, a disabled button cannot be clicked
        save_button(at).click()
    assert Store().plans.list() == []
    # an approver may
    at = drafts_page("approver")
    start_from(at, ["orders"])
    assert not save_button(at).disabled
    assert not any("may not save plans" in c.value for c in at.caption)
    at.text_input(key="drafts.name").set_value("by the approver")
    save_button(at).click().run()
    assert not at.exception and "Saved as plan" in at.success[0].value
    assert [(p.name, p.author) for p in Store().plans.list()] == [("by the approver", "approver")]


def test_unknown_topics_partitions_and_brokers_are_said_at_once():
    at = drafts_page(None)
    assert any("Not autosaved: sign in" in c.value for c in at.caption)
    at.segmented_control(key="drafts.source").set_value("JSON").run()
    at.text_area[0].set_value(
        json.dumps(
            {
                "version": 1,
                "partitions": [
                    {"topic": "orders", "partition": 0, "replicas": [0, 1, 2]},
                    {"topic": "orders", "partition": 99, "replicas": [0, 1, 2]},
                    {"topic": "orders", "partition": 1, "replicas": [0, 1, 7]},
                    {"topic": "no-such-topic", "partition": 0, "replicas": [0]},
                ],
            }
        )
    )  # in a form: the text goes with the click of Load
    next(b for b in at.button if b.label == "Load").click().run()
    assert not at.exception and at.metric[0].value == "4"
    warning = next(w.value for w in at.warning if "does not know" in w.value)
    assert "Unknown topic: no-such-topic (1 entry)" in warning
    assert "Unknown partition: orders-99" in warning
    assert "Unknown broker: 7 (in orders-1)" in warning
    # other findings (e.g. no change for orders-0) are for the Review page
    assert "orders-0" not in warning


def test_a_signed_in_users_draft_is_autosaved_and_comes_back():
    at = drafts_page("operator")
    assert any("Autosaved as you edit" in c.value for c in at.caption)
    start_from(at, ["orders"])
    at.selectbox(key="drafts.rf_topic").set_value("orders")
    at.number_input(key="drafts.rf").set_value(2)
    at.button(key="FormSubmitter:rf-Set").click().run()
    assert not at.exception
    assert all(len(e.replicas) == 2 for e in at.session_state["drafts.plan"].entries)

    # a new session (a reload, another tab, another day) that signs in as the same user
    again = drafts_page("operator")
    assert any("was brought back" in c.value for c in again.caption)
    assert again.metric[0].value == "12"
    assert all(len(e.replicas) == 2 for e in again.session_state["drafts.plan"].entries)
    assert again.session_state["drafts.plan"].basis == at.session_state["drafts.plan"].basis
    next(b for b in again.button if b.label == "Undo").click().run()  # the undo history came back too
    assert not again.exception
    assert all(len(e.replicas) == 3 for e in again.session_state["drafts.plan"].entries)
    third = drafts_page("operator")
    assert all(len(e.replicas) == 3 for e in third.session_state["drafts.plan"].entries)

    # per user: someone else has no draft; not signed in, nothing comes back
    other = drafts_page("admin")
    assert other.session_state["drafts.plan"] is None
    assert draft_of(drafts_page(None)) is None

    # signing out takes the draft off the screen (it stays autosaved); discarding removes it
    third.sidebar.button(key="auth.sign_out").click().run()
    assert not third.exception and third.session_state["drafts.plan"] is None
    assert any("Not autosaved: sign in" in c.value for c in third.caption)
    sign_in(third, "operator")
    assert third.session_state["drafts.plan"] is not None
    next(b for b in third.button if b.label == "Discard draft").click().run()
    assert drafts_page("operator").session_state["drafts.plan"] is None


def test_a_draft_started_before_signing_in_is_kept_and_autosaved():
    at = drafts_page(None)
    start_from(at, ["orders"])
    sign_in(at, "operator")
    assert at.metric[0].value == "12"
    assert any("Autosaved as you edit" in c.value for c in at.caption)
    assert drafts_page("operator").metric[0].value == "12"
