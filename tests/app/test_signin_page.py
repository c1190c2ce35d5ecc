"""AppTest: the sidebar's sign-in backs off after failed attempts and says until when; sign-ins,
sign-outs and refused sign-ins show on the Runs page's audit log with a filter; a sign-in through
Streamlit's own authentication is audited once per session."""

from __future__ import annotations

import json

import pytest
from streamlit.testing.v1 import AppTest

from console.present import history
from console.services.sessions import CONSOLE_WIDE, NAME_LIMIT
from console.storage.store import Store
from tests.app.pages import APP, sign_in

pytestmark = pytest.mark.usefixtures("fake_cluster", "sandbox_users")


def attempt(at: AppTest, user: str, password: str) -> str:
    at.text_input(key="auth.user").set_value(user)
    at.text_input(key="auth.password").set_value(password)
    at.button(key="FormSubmitter:sign_in-Sign in").click().run()
    assert not at.exception
    return " ".join(e.value for e in at.error)


def test_wrong_passwords_lock_the_name_and_the_page_says_until_when():
    at = AppTest.from_file(APP, default_timeout=60).run()
    said = [attempt(at, "admin", f"guess {i}") for i in range(NAME_LIMIT + 1)]
    assert said[: NAME_LIMIT - 1] == ["Unknown user or wrong password."] * (NAME_LIMIT - 1)
    assert all("Too many failed sign-ins: try again after" in s for s in said[NAME_LIMIT - 1 :])
    # the right password too, while the lock lasts
    assert "Too many failed sign-ins" in attempt(at, "admin", "admin-secret")
    assert not any("Signed in as" in c.value for c in at.sidebar.caption)
    # another user is not held up
    sign_in(at, "operator")
    assert any("Signed in as **operator**" in c.value for c in at.sidebar.caption)
    refused = [json.loads(a.request) for a in Store().audit.entries(action="sign-in") if a.outcome == "refused"]
    assert [r["attempts"] for r in refused] == [1, NAME_LIMIT - 1]


def test_sign_ins_are_on_the_runs_page_audit_log_and_its_export_with_a_filter():
    at = AppTest.from_file(APP, default_timeout=60).run()
    attempt(at, "viewer", "wrong")
    sign_in(at, "operator")
    at.switch_page("views/runs.py").run()
    assert not at.exception
    audit = at.dataframe[-1].value
    rows = set(zip(audit["user"], audit["action"], audit["outcome"], audit["cluster"], strict=True))
    assert {("viewer", "sign-in", "refused", CONSOLE_WIDE), ("operator", "sign-in", "signed in", CONSOLE_WIDE)} <= rows
    # the filter: sign-ins only, or none of them
    show = at.segmented_control(key="runs.audit_kind")
    show.set_value("cluster actions").run()
    assert not at.exception
    assert at.dataframe[-1].value.empty  # nothing but sign-ins happened
    show.set_value("sign-ins").run()
    assert set(at.dataframe[-1].value["action"]) == {"sign-in"}
    # the export holds what the table shows (both made from the same entries)
    entries = Store().audit.entries(clusters=("test", CONSOLE_WIDE))
    exported = json.loads(history.audit_json(entries))
    assert {(e["user"], e["action"], e["outcome"]) for e in exported} >= {
        ("viewer", "sign-in", "refused"),
        ("operator", "sign-in", "signed in"),
    }
    assert "operator,*,sign-in,signed in" in history.audit_csv(entries)
    # signing out is there too
    at.button(key="auth.sign_out").click().run()
    at.switch_page("views/runs.py").run()
    assert "sign-out" in set(at.dataframe[-1].value["action"])


def test_a_streamlit_sign_in_is_audited_once_per_session():
    at = AppTest.from_file(APP, default_timeout=60)
    at.user = {"is_logged_in": True, "email": "ann@example.com"}
    at.run()
    assert not at.exception
    assert any("Signed in as **ann@example.com**" in c.value for c in at.sidebar.caption)
    at.run()
    at.switch_page("views/overview.py").run()
    assert not at.exception
    entries = [(a.user, a.outcome) for a in Store().audit.entries(action="sign-in")]
    assert entries == [("ann@example.com", "signed in")]
    assert json.loads(Store().audit.entries(action="sign-in")[0].request)["source"] == "oidc"  # components/signin.py
