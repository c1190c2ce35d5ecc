"""What `streamlit run serve.py` serves: the console (app.py) and its own routes, which set the
session cookie from the server (HttpOnly; Secure behind https). `make demo` and the guide start
the console this way; `streamlit run app.py` works too, but a sign-in then lasts for its tab only."""

from __future__ import annotations

import streamlit as st

from components import warmup
from components.session_routes import routes

warmup.start(clusters=True)  # at the server's start, not its first page: each cluster's worker drives its runs
# from now on, and the on-call's first look waits for less
app = st.App("app.py", routes=routes())
