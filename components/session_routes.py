"""The console's own HTTP routes, served next to Streamlit's by ``serve.py`` (``st.App``): they set
and clear the ``console_session`` cookie from the server, so it is HttpOnly (page scripts cannot
read it) and Secure when the browser came over https.

- ``POST <base>/console/session`` with the header ``X-Console-Ticket``: trades a sign-in's
  one-time ticket (:func:`console.services.sessions.redeem_ticket`) for the cookie.
- ``POST <base>/console/sign-out`` with the header ``X-Console-Sign-Out``: clears the cookie when
  the session it names has ended (signing out itself is the page's, through the service).

The page calls them with ``fetch`` (same origin; the tab keeps its state). Another site can make
a browser send neither: a cross-site form cannot set a header, and a cross-site ``fetch`` with one
needs a CORS permission the server does not give. The ticket is in a header, so it is in no URL,
history or access log.

Whether the request came over https is what the ASGI server says: uvicorn takes
``X-Forwarded-Proto`` (and the client's address from ``X-Forwarded-For``) only from the proxies
in ``FORWARDED_ALLOW_IPS`` (default: this host).
"""

from __future__ import annotations

import os
import time
from typing import Any

from components import deps
from console.services import sessions as session_service

COOKIE = "console_session"
TICKET_HEADER = "X-Console-Ticket"
SIGN_OUT_HEADER = "X-Console-Sign-Out"
SERVED = "_CONSOLE_SESSION_ROUTES"
"""Set (to the routes' base path) in the server's environment when these routes are served: the
page then calls them; without them a sign-in lasts for its tab only."""


def base_path() -> str:
    from streamlit import config

    base = str(config.get_option("server.baseUrlPath") or "").strip("/")
    return f"/{base}" if base else ""


def served() -> str | None:
    """The routes' base path when this server serves them, else None."""
    return os.environ.get(SERVED)


def _answer(status: int = 204) -> Any:
    from starlette.responses import Response

    return Response(status_code=status, headers={"Cache-Control": "no-store"})


def open_session(request: Any) -> Any:
    ticket = request.headers.get(TICKET_HEADER)
    if ticket is None:
        return _answer(400)
    store = deps.store()
    token = session_service.redeem_ticket(store, ticket)
    session = store.sessions.get(token) if token else None
    if token is None or session is None:
        return _answer(403)
    response = _answer()
    response.set_cookie(
        COOKIE,
        token,
        max_age=max(1, int(session.expires_at - time.time())),
        path=(served() or "") or "/",
        httponly=True,
        secure=request.url.scheme == "https",
        samesite="lax",
    )
    return response


def clear_session(request: Any) -> Any:
    if request.headers.get(SIGN_OUT_HEADER) is None:
        return _answer(400)
    response = _answer()
    token = request.cookies.get(COOKIE)
    if token and deps.store().sessions.get(token) is None:
        response.delete_cookie(
            COOKIE,
            path=(served() or "") or "/",
            httponly=True,
            secure=request.url.scheme == "https",
            samesite="lax",
        )
    return response


def routes() -> list[Any]:
    """The routes, for ``st.App(..., routes=routes())``; marks them served."""
    from starlette.routing import Route

    base = base_path()
    os.environ[SERVED] = base
    return [
        Route(f"{base}/console/session", open_session, methods=["POST"]),
        Route(f"{base}/console/sign-out", clear_session, methods=["POST"]),
    ]
