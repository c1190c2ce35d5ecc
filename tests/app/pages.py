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
