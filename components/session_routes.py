"""The console's own HTTP routes, served next to Streamlit's by ``serve.py`` (``st.App``): they set
and clear the ``console_session`` cookie from the server, so it is HttpOnly (page scripts cannot
read it) and Secure when the browser came over https.

- ``<base>/console/session?ticket=…&next=…``: trades a sign-in's one-time ticket
  (:func:`console.services.sessions.redeem_ticket`) for the cookie, then sends the browser back to
  ``next`` (a path of this server only).
- ``<base>/console/sign-out?next=…``: clears the cookie when the session it names has ended (so a
  link from another site cannot sign anyone out), then sends the browser back.

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
SERVED = "_CONSOLE_SESSION_ROUTES"
"""Set (to the routes' base path) in the server's environment when these routes are served: the
page then sends the browser through them; without them a sign-in lasts for its tab only."""


def base_path() -> str:
    from streamlit import config

    base = str(config.get_option("server.baseUrlPath") or "").strip("/")
    return f"/{base}" if base else ""


def served() -> str | None:
    """The routes' base path when this server serves them, else None."""
    return os.environ.get(SERVED)


def _next(raw: str | None, base: str) -> str:
    """Where to send the browser back: a path on this server, else the console's start page."""
    if raw and raw.startswith("/") and not raw.startswith("//") and "\\" not in raw and len(raw) <= 2000:
        return raw
    return base + "/"


def _redirect(to: str) -> Any:
    from starlette.responses import RedirectResponse

    response = RedirectResponse(to, status_code=303)
    response.headers["Cache-Control"] = "no-store"
    response.headers["Referrer-Policy"] = "no-referrer"
    return response


def open_session(request: Any) -> Any:
    base = served() or ""
    response = _redirect(_next(request.query_params.get("next"), base))
    store = deps.store()
    token = session_service.redeem_ticket(store, request.query_params.get("ticket"))
    session = store.sessions.get(token) if token else None
    if token and session is not None:
        response.set_cookie(
            COOKIE,
            token,
            max_age=max(1, int(session.expires_at - time.time())),
            path=base or "/",
            httponly=True,
            secure=request.url.scheme == "https",
            samesite="lax",
        )
    return response


def clear_session(request: Any) -> Any:
    base = served() or ""
    response = _redirect(_next(request.query_params.get("next"), base))
    token = request.cookies.get(COOKIE)
    if token and deps.store().sessions.get(token) is None:
        response.delete_cookie(
            COOKIE, path=base or "/", httponly=True, secure=request.url.scheme == "https", samesite="lax"
        )
    return response


def routes() -> list[Any]:
    """The routes, for ``st.App(..., routes=routes())``; marks them served."""
    from starlette.routing import Route

    base = base_path()
    os.environ[SERVED] = base
    return [
        Route(f"{base}/console/session", open_session, methods=["GET"]),
        Route(f"{base}/console/sign-out", clear_session, methods=["GET"]),
    ]
