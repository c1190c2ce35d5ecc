"""The audit log as the pages draw it: who did what and when in a grid, and each entry's request and
response in full below it (a grid cuts long text to its column's width)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import streamlit as st

from components.widgets import plain
from console.core.format import plural
from console.present import guardrails, history
from console.storage.audit import AuditEntry

IN_FULL = 50
"""The latest this many entries shown have their request and response written out in full (the
downloads hold every entry)."""

HIDDEN = ("request", "response")
"""The long columns: written out in full below the grid, not cut in it."""


def audit_log(entries: Sequence[AuditEntry], names: Mapping[str, str]) -> None:
    """``entries`` (oldest first) latest first: a grid of the short columns, then the latest
    :data:`IN_FULL` in full, each entry's request and response as recorded."""
    latest_first = list(reversed(entries))
    rows = history.audit_rows(latest_first, names)
    said = [guardrails.audit_words(a) for a in latest_first]  # a guardrail's entries in a sentence ("what")
    shown_rows = [{**r, "what": w} for r, w in zip(rows, said, strict=True)] if any(said) else rows
    st.dataframe(shown_rows, hide_index=True, width="stretch", column_config=dict.fromkeys(HIDDEN))
    shown = rows[:IN_FULL]
    latest = (
        f"the latest {len(shown)} of {len(rows):,}" if len(rows) > len(shown) else plural(len(rows), "entry", "entries")
    )
    with st.expander(f"Requests and responses in full ({latest})", icon=":material/data_object:"):
        for r, words in zip(shown, said, strict=False):
            st.markdown(
                f"**#{r['id']}** · {r['at']} · {plain(str(r['user']))} · {plain(str(r['action']))} · "
                + plain(str(r["outcome"]))
                + (f" · ref #{r['ref']}" if r["ref"] else "")
            )
            if words:
                st.caption(plain(words))
            st.code(str(r["request"]), language="json", wrap_lines=True)
            if r["response"]:
                st.caption("Response")
                st.code(str(r["response"]), language="json", wrap_lines=True)
