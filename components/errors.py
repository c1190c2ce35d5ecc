"""What a page shows when something escapes it.

An error the console raises on purpose (a :class:`~console.core.errors.ConsoleError`) that the page
did not catch is shown as it is: its message and hint. Anything else is a bug in the console's own
code: its traceback goes to the server log under a short reference, and the page shows an "internal
error" box naming that reference, never a message that blames the cluster.
"""

from __future__ import annotations

import logging
import secrets
from typing import Protocol

import streamlit as st

from console.core.errors import ConsoleError

log = logging.getLogger("console.app")
"""The logger internal errors are written to (with their traceback)."""


class Page(Protocol):
    def run(self) -> None: ...


def internal_error(exc: BaseException) -> str:
    """Log ``exc`` with its traceback under a new reference and show the internal-error box; the
    reference."""
    ref = secrets.token_hex(3).upper()
    log.error("Internal error (ref %s): %s: %s", ref, type(exc).__name__, exc, exc_info=exc)
    st.error(
        f"Internal error (ref {ref}): {type(exc).__name__} in the console's own code, not a problem of the "
        "cluster. The details are in the server log under this reference; please report it.",
        icon=":material/bug_report:",
    )
    return ref


def run_page(page: Page) -> None:
    """Run the page; what escapes it is shown (a console error) or logged and referenced (a bug).
    Streamlit's own control flow (``st.rerun``, ``st.stop``) is not an ``Exception`` and passes."""
    try:
        page.run()
    except ConsoleError as e:
        st.error(f"{e.message} {e.hint}".strip())
    except Exception as e:
        internal_error(e)
