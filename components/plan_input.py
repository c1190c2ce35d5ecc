"""A plan a person hands a page (an upload, a paste): read within the console's limits, and why it
cannot be used shown one problem a line."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import streamlit as st

from components.widgets import plain
from console.core.errors import PLAN_FILE_HINT, PlanFormatError
from console.core.limits import MAX_PLAN_BYTES
from console.core.model import ClusterState
from console.plans.plan import Plan, parse_plan


def read_plan(data: bytes | str, state: ClusterState) -> Plan:
    """The plan in ``data``: held to the limits every plan is (console/core/limits.py), with no
    more replicas per entry than ``state`` has brokers and no more entries than it has partitions;
    raises :class:`PlanFormatError`."""
    return parse_plan(data, brokers=len(state.brokers), partitions=len(state.partitions))


class Box(StrEnum):
    """Where a person handed a plan in."""

    UPLOAD = "the uploaded file"
    PASTE = "the pasted text"


@dataclass(frozen=True)
class HandedIn:
    """The plan a person handed in, from the box used last."""

    box: Box
    data: bytes | str
    source: tuple[object, ...]
    """Identifies the plan without reading it (a file's id, the pasted text's digest)."""


def handed_in(upload: Any, pasted: str, key: str) -> HandedIn | None:
    """The plan from the box used last when a file is uploaded and text pasted both (said under
    them), else from the one used; None when neither is. ``key``: the page's session key for what
    each box held at the last run."""
    file = ("upload", upload.file_id) if upload is not None else None
    text = ("paste", hashlib.sha256(pasted.encode(errors="replace")).hexdigest()) if pasted.strip() else None
    before: dict[str, object] = st.session_state.get(key, {})
    last = before.get("last")
    if text is not None and text != before.get("paste"):
        last = Box.PASTE
    elif file is not None and file != before.get("upload"):
        last = Box.UPLOAD
    st.session_state[key] = {"upload": file, "paste": text, "last": last}
    if file is None and text is None:
        return None
    box = Box.PASTE if file is None or (text is not None and last is Box.PASTE) else Box.UPLOAD
    if file is not None and text is not None:
        other = Box.UPLOAD if box is Box.PASTE else Box.PASTE
        st.caption(f"Reading {box.value}, the box used last; {other.value} is left aside.")
    if box is Box.UPLOAD:
        return HandedIn(box, upload.getvalue(), file or ())
    return HandedIn(box, pasted, text or ())


def show_plan_error(e: PlanFormatError, box: Box = Box.UPLOAD) -> None:
    """Why the plan cannot be used: a list, one problem an item, as plain text (names in a plan
    are not Markdown); the hint speaks of pasted text when it was pasted."""
    items = [f"- {plain(p, lines=True)}" for p in e.problems]
    if e.more:
        items.append(f"- and {e.more:,} more {'problem' if e.more == 1 else 'problems'}")
    hint = (
        "Fix the text and paste it again; nothing was read from it."
        if box is Box.PASTE and e.hint == PLAN_FILE_HINT
        else e.hint
    )
    st.error("\n".join(["The plan cannot be used:", "", *items, "", plain(hint, lines=True)]), icon=":material/block:")


def paste_box(label: str = "…or paste it", key: str | None = None) -> str:
    """The paste box of a plan: as long as a plan may be (the check is the console's, with its
    words; the box shows no character counter), and the text in it."""
    text: str = st.text_area(label, height=120, key=key)
    if len(text) > MAX_PLAN_BYTES:
        st.error(f"The pasted text is longer than a plan may be ({MAX_PLAN_BYTES:,} characters): upload it as a file.")
        return ""
    return text
