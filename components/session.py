"""Sign-in against the users file that lasts across reloads and tabs.

Signing in opens a server-side session (:func:`console.services.sessions.sign_in`: a row in the
store, expiring after ``CONSOLE_SESSION_HOURS``, default 12 h) and hands the browser its opaque
random token in the ``console_session`` cookie. Streamlit can only set a cookie from the page's
JavaScript, so the cookie is not HttpOnly; it holds nothing but the token, which means something
only while its row exists. A new tab or a reload sends the cookie with its WebSocket handshake
(``st.context.cookies``), and every rerun checks the token against the store, so signing out
(the row is deleted) signs out every tab at its next rerun. The token never goes into the URL:
shared links (``?plan=N``) carry no session.
"""

from __future__ import annotations

import json
import time
from email.utils import formatdate

import streamlit as st

from components import deps, keys
from console.access.auth import Identity, Users, session_ttl_s
from console.core.errors import ConsoleError
from console.services import sessions as session_service

COOKIE = "console_session"


def browser_token() -> str | None:
    """The session cookie the browser sent when this tab connected (or None)."""
    try:
        token = st.context.cookies.get(COOKIE)
    except Exception:
        return None
    return str(token) if token else None


def identity(users: Users) -> Identity | None:
    """Who this tab's session token signs in (the token signed in here, else the browser's
    cookie), as the users file has them now; None when there is no live session."""
    token = st.session_state.get(keys.SESSION_TOKEN)
    if token is None:
        cookie = browser_token()
        if cookie is None or cookie == st.session_state.get(keys.SESSION_ENDED):
            return None
        token = cookie
    try:
        who = session_service.resume_session(deps.store(), users, token)
    except ConsoleError as e:
        st.sidebar.error(f"Cannot check the sign-in: {e.message} {e.hint}")
        return None
    if who is None:  # signed out (here or in another tab), expired, or not a token of ours
        st.session_state.pop(keys.SESSION_TOKEN, None)
        st.session_state[keys.SESSION_ENDED] = token
        return None
    st.session_state[keys.SESSION_TOKEN] = token
    return who


def sign_in(users: Users, name: str, password: str) -> session_service.SignedIn | None:
    """Check the password and open a session for this tab (its cookie is written by
    :func:`keep_cookie` on the next run); None for an unknown user or a wrong password."""
    signed = session_service.sign_in(deps.store(), users, name, password, session_ttl_s())
    if signed is not None:
        st.session_state[keys.SESSION_TOKEN] = signed.token
        st.session_state[keys.SESSION_COOKIE] = (signed.token, signed.expires_at)
        st.session_state.pop(keys.SESSION_ENDED, None)
    return signed


def sign_out() -> str | None:
    """End this tab's session everywhere (the store's row goes; the cookie is cleared next run);
    why it could not, or None."""
    token = st.session_state.get(keys.SESSION_TOKEN)
    if token is not None:
        try:
            session_service.sign_out(deps.store(), token)
        except ConsoleError as e:
            return f"Not signed out: {e.message} {e.hint}"
        st.session_state[keys.SESSION_ENDED] = token
    st.session_state.pop(keys.SESSION_TOKEN, None)
    st.session_state.pop(keys.SESSION_COOKIE, None)
    return None


def _script(js: str) -> None:
    st.html(f"<script>{js}</script>", unsafe_allow_javascript=True, width="content")


def keep_cookie() -> None:
    """Write the session cookie in the tab that signed in (the same text every run, so the
    browser runs it once)."""
    pending = st.session_state.get(keys.SESSION_COOKIE)
    if not pending or pending[0] != st.session_state.get(keys.SESSION_TOKEN) or browser_token() == pending[0]:
        return
    token, expires_at = pending
    if expires_at <= time.time():
        return
    value = json.dumps(f"{COOKIE}={token}; Expires={formatdate(expires_at, usegmt=True)}; Path=/; SameSite=Lax")
    _script(f"document.cookie = {value} + (location.protocol === 'https:' ? '; Secure' : '');")


def forget_cookie() -> None:
    """Clear the browser's cookie when it still holds the session that ended here (a newer
    sign-in in another tab keeps its own)."""
    ended = st.session_state.get(keys.SESSION_ENDED)
    if not ended:
        return
    mine, gone = json.dumps(f"{COOKIE}={ended}"), json.dumps(f"{COOKIE}=; Max-Age=0; Path=/; SameSite=Lax")
    _script(f"if (document.cookie.split('; ').indexOf({mine}) >= 0) {{ document.cookie = {gone}; }}")
