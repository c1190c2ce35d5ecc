"""Helpers for the AppTests: where the app's entry script is, and signing in as a sandbox user."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

from console.access.auth import SANDBOX_USERS

APP = str(Path(__file__).resolve().parents[2] / "app.py")
"""app.py, for ``AppTest.from_file(APP)``."""


def sign_in(at: AppTest, user: str) -> AppTest:
    """Sign ``at`` in as the sandbox's ``user`` (viewer, operator, approver, admin), with its password."""
    at.text_input(key="auth.user").set_value(user)
    at.text_input(key="auth.password").set_value(SANDBOX_USERS[user][0])
    at.button(key="FormSubmitter:sign_in-Sign in").click().run()
    assert not at.exception
    return at


def cancel_page() -> None:
    """The cancel dialog on its own (AppTest runs only full reruns, so the script opens it again on
    each run, as the dialog's fragment reruns in a browser): sign in, then everything in flight.
    For ``AppTest.from_function``: it imports what it uses."""
    import streamlit as st

    from components import actions, keys, widgets

    widgets.sign_in_box()
    settings = widgets.require_cluster()
    if widgets.identity().can("cancel"):
        if keys.CANCEL_SEEN not in st.session_state:
            actions.open_cancel(settings, None, True)
        else:
            actions.open_dialog(actions.cancel_dialog, settings)
