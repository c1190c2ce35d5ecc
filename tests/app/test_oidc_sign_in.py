"""AppTest: people signed in through the identity provider (``st.user``, as Streamlit's OIDC
sign-in fills it) get the roles their groups have on the cluster shown, are audited once per
session, and a viewer's writes are disabled."""

from __future__ import annotations

import json

import pytest
from streamlit.testing.v1 import AppTest

from console.storage.store import Store
from tests.app.pages import APP

pytestmark = pytest.mark.usefixtures("fake_cluster")  # the cluster is named "test"

AUTH = {
    "redirect_uri": "http://localhost:8501/oauth2callback",
    "cookie_secret": "not-a-real-secret-for-tests",
    "client_id": "reassignment-console",
    "client_secret": "x",
    "server_metadata_url": "http://127.0.0.1:9/realms/x/.well-known/openid-configuration",
}


def app_as(user: dict[str, object] | None, groups: dict[str, object]) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60)
    at.secrets["auth"] = AUTH
    at.secrets["access"] = {"claim": "groups", "groups": groups}
    at.user = user if user is not None else {"is_logged_in": False}
    return at.run()


def sidebar_captions(at: AppTest) -> list[str]:
    return [c.value for c in at.sidebar.caption]


def test_a_member_of_a_mapped_group_gets_its_roles_on_the_cluster_shown_and_is_audited_once():
    alice = {"is_logged_in": True, "email": "alice@example.com", "groups": ["kafka-ops"]}
    at = app_as(alice, {"kafka-ops": {"test": ["operator", "approver"], "*": ["viewer"]}})
    assert not at.exception
    assert "Signed in as **alice@example.com** through the identity provider (approver, operator, viewer)" in (
        sidebar_captions(at)
    )
    assert [b.label for b in at.sidebar.button] == ["Sign out"]
    at.run()  # another rerun of the same session: no second audit entry
    [entry] = Store().audit.entries(action="sign-in")
    assert (entry.user, entry.cluster, entry.outcome) == ("alice@example.com", "*", "signed in")
    assert json.loads(entry.request) == {"source": "oidc", "groups": ["kafka-ops"]}


def test_the_same_group_on_another_cluster_is_a_viewer_there():
    alice = {"is_logged_in": True, "email": "alice@example.com", "groups": ["kafka-ops"]}
    at = app_as(alice, {"kafka-ops": {"staging": ["operator"], "*": ["viewer"]}})
    assert not at.exception
    assert "Signed in as **alice@example.com** through the identity provider (viewer)" in sidebar_captions(at)
    at.switch_page("views/live.py").run()
    assert not at.exception
    cancel = next(b for b in at.button if b.label == "Cancel…")
    assert cancel.disabled


def test_someone_in_no_mapped_group_is_a_viewer():
    nina = {"is_logged_in": True, "email": "nina@example.com", "preferred_username": "nina"}
    at = app_as(nina, {"kafka-ops": ["operator"]})
    assert not at.exception
    assert "Signed in as **nina@example.com** through the identity provider (viewer)" in sidebar_captions(at)


def test_not_signed_in_the_provider_is_offered():
    at = app_as(None, {"kafka-ops": ["operator"]})
    assert not at.exception
    assert "Sign in with the identity provider" in [b.label for b in at.sidebar.button]
    assert Store().audit.entries() == []


def test_a_bad_mapping_is_said_and_nobody_gets_roles_from_groups():
    alice = {"is_logged_in": True, "email": "alice@example.com", "groups": ["kafka-ops"]}
    at = app_as(alice, {"kafka-ops": ["superuser"]})
    assert not at.exception
    assert any("[access.groups] 'kafka-ops' in secrets.toml gives unknown roles" in e.value for e in at.sidebar.error)
    assert "Signed in as **alice@example.com** through the identity provider (viewer)" in sidebar_captions(at)


def test_one_sign_in_at_the_provider_is_audited_once_however_many_sessions_use_it():
    import uuid

    sid = f"sid-{uuid.uuid4()}"  # the provider's session: unique to this test (the server remembers it)
    alice = {"is_logged_in": True, "email": "alice@example.com", "groups": ["kafka-ops"], "sid": sid}
    for _ in range(3):  # a reload, another tab: each a new Streamlit session
        assert not app_as(alice, {"kafka-ops": ["operator"]}).exception
    assert len(Store().audit.entries(action="sign-in")) == 1
    again = {**alice, "sid": f"{sid}-again"}  # signed out and in again at the provider
    assert not app_as(again, {"kafka-ops": ["operator"]}).exception
    assert len(Store().audit.entries(action="sign-in")) == 2
