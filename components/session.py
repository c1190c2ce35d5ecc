"""Sign-in against the users file that lasts across reloads and tabs.

Signing in opens a server-side session (:func:`console.services.sessions.sign_in`: a row in the
store, expiring after ``CONSOLE_SESSION_HOURS``, default 12 h). The page then has the browser call
the console's own route (:mod:`components.session_routes`, served by ``serve.py``) with a one-time
ticket, valid a minute; the server answers with the session's opaque random token in the
``console_session`` cookie, HttpOnly (no page script can read it) and Secure behind https. The
tab keeps its state. The cookie holds nothing but the token, which means
something only while its row exists. A new tab or a reload sends the cookie with its WebSocket handshake
(``st.context.cookies``), and every rerun checks the token against the store, so signing out
(the row is deleted) signs out every tab at its next rerun. The token never goes into the URL:
shared links (``?plan=N``) carry no session.
"""

from __future__ import annotations

import json

import streamlit as st

from components import deps, keys, session_routes
from console.access.auth import Identity, Users, session_ttl_s
from console.core.errors import ConsoleError
from console.services import sessions as session_service

COOKIE = session_routes.COOKIE


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


def client() -> str:
    """Where this tab's browser connected from (its address; "local" on this host), for the
    sign-in back-off."""
    try:
        return str(st.context.ip_address or "local")
    except Exception:
        return "local"


def sign_in(users: Users, name: str, password: str) -> session_service.SignedIn | session_service.Refused:
    """Check the password and open a session for this tab (the browser collects its cookie
    through :func:`keep_cookie` on the next run); refused for an unknown user, a wrong password,
    or a name or client locked after failed attempts."""
    signed = session_service.sign_in(deps.store(), users, name, password, session_ttl_s(), client())
    if isinstance(signed, session_service.SignedIn):
        st.session_state[keys.SESSION_TOKEN] = signed.token
        st.session_state[keys.SESSION_TICKET] = (signed.token, signed.ticket)
        st.session_state.pop(keys.SESSION_ENDED, None)
    return signed


def sign_out() -> str | None:
    """End this tab's session everywhere (the store's row goes; the cookie is cleared by the
    server on the next run, :func:`forget_cookie`); why it could not, or None."""
    token = st.session_state.get(keys.SESSION_TOKEN)
    if token is not None:
        try:
            session_service.sign_out(deps.store(), token)
        except ConsoleError as e:
            return f"Not signed out: {e.message} {e.hint}"
        st.session_state[keys.SESSION_ENDED] = token
        st.session_state[keys.SESSION_CLEAR] = True
    st.session_state.pop(keys.SESSION_TOKEN, None)
    st.session_state.pop(keys.SESSION_TICKET, None)
    return None


def _call(route: str, header: str, value: str) -> None:
    """Have the browser call one of the console's routes (same origin; the tab stays as it is)."""
    url = json.dumps(f"{session_routes.served() or ''}/console/{route}")
    headers = json.dumps({header: value})
    st.html(
        f"<script>fetch({url}, {{method: 'POST', credentials: 'same-origin', headers: {headers}}});</script>",
        unsafe_allow_javascript=True,
        width="content",
    )


def keep_cookie() -> None:
    """Have the server set the session cookie of the tab that signed in (HttpOnly): the browser
    trades the sign-in's one-time ticket for it. Without the console's routes (``streamlit run
    app.py``, tests) the sign-in lasts for this tab."""
    pending = st.session_state.pop(keys.SESSION_TICKET, None)
    if not pending or pending[0] != st.session_state.get(keys.SESSION_TOKEN) or browser_token() == pending[0]:
        return
    if session_routes.served() is not None:
        _call("session", session_routes.TICKET_HEADER, pending[1])


def forget_cookie() -> None:
    """After a sign-out here, have the server clear the browser's cookie (it does when the cookie
    names an ended session: a newer sign-in in another tab keeps its own)."""
    if st.session_state.pop(keys.SESSION_CLEAR, None) and session_routes.served() is not None:
        _call("sign-out", session_routes.SIGN_OUT_HEADER, "1")


def audit_streamlit_sign_in(who: Identity) -> None:
    """Audit a sign-in through Streamlit's own authentication, once per browser session."""
    if st.session_state.get(keys.STREAMLIT_AUDITED) == who.name:
        return
    try:
        session_service.record_streamlit_sign_in(deps.store(), who, client())
    except ConsoleError as e:
        st.sidebar.error(f"Cannot record the sign-in: {e.message} {e.hint}")
        return
    st.session_state[keys.STREAMLIT_AUDITED] = who.name
