"""The Drafts page's draft kept in the store as it is edited, per user and cluster.

The session holds the draft (``keys.DRAFT``) and its undo history (``keys.DRAFT_HISTORY``) as
before; every change is written through (:func:`console.services.drafts.autosave_draft` and
friends), and a page load with no draft in the session brings the user's autosaved draft for the
cluster back, with its last undo steps. Only signed-in people (users file or Streamlit's own
sign-in) have an autosave: without a sign-in there is no one to keep the draft for, and visitors
who did not sign in would share one; their draft stays in the tab.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import streamlit as st

from components import deps, keys
from console.access.auth import Identity
from console.core.errors import ConsoleError
from console.plans.plan import Plan
from console.plans.quality import Report
from console.services import drafts as draft_service

AUTOSAVED_SOURCES = ("users file", "oidc", "proxy")


@dataclass(frozen=True)
class Owner:
    user: str
    cluster: str


def owner_of(me: Identity, cluster: str) -> Owner | None:
    return Owner(me.name, cluster) if me.source in AUTOSAVED_SOURCES else None


def _write(what: str, action: Callable[..., None], *args: Any) -> None:
    try:
        action(deps.store(), *args)
    except ConsoleError as e:
        st.session_state[keys.DRAFT_AUTOSAVE_ERROR] = f"The draft could not be autosaved ({what}): {e.message} {e.hint}"
    else:
        st.session_state.pop(keys.DRAFT_AUTOSAVE_ERROR, None)


def sync(me: Identity, cluster: str) -> Owner | None:
    """Whose autosave the session's draft is now; call before reading the draft. When that
    changes (sign-in, sign-out, another cluster): the draft of someone who just signed in is kept
    and saved as theirs; a signed-out user's draft leaves the tab (it stays in the store);
    otherwise the new owner's autosaved draft is loaded (or none)."""
    owner = owner_of(me, cluster)
    before = st.session_state.get(keys.DRAFT_OWNER, "unset")
    if before == owner:
        if (
            owner is not None
            and st.session_state.get(keys.DRAFT) is None
            and not st.session_state.get(keys.DRAFT_HISTORY)
        ):
            _restore(owner)  # another tab may have autosaved one since
        return owner
    st.session_state[keys.DRAFT_OWNER] = owner
    draft: Plan | None = st.session_state.get(keys.DRAFT)
    history: list[Plan | None] = st.session_state.get(keys.DRAFT_HISTORY) or []
    if owner is None:
        if isinstance(before, Owner):  # signed out, here or elsewhere: not for the next person at this screen
            _clear_session()
        return None
    if before is None and draft is not None:  # drafted before signing in: keep it, now autosaved
        st.session_state[keys.DRAFT_BASE] = 0
        _write("adopted", draft_service.autosave_stack, owner.user, owner.cluster, [*history, draft])
        return owner
    _clear_session()
    _restore(owner)
    return owner


def _clear_session() -> None:
    # the last generated plan is the owner's too, and the plan the draft was saved as
    for k in (keys.GEN_RESULT, keys.GEN_NAME, keys.DRAFT_SAVED, keys.DRAFT_NAME):
        st.session_state.pop(k, None)
    st.session_state[keys.DRAFT] = None
    st.session_state[keys.DRAFT_HISTORY] = []
    st.session_state[keys.DRAFT_BASE] = 0
    st.session_state.pop(keys.DRAFT_RESTORED, None)


def _restore(owner: Owner) -> None:
    try:
        saved = deps.store().drafts.load(owner.user, owner.cluster)
    except ConsoleError as e:
        st.session_state[keys.DRAFT_AUTOSAVE_ERROR] = f"The autosaved draft could not be read: {e.message} {e.hint}"
        return
    if saved is None:
        return
    st.session_state[keys.DRAFT] = saved.draft
    st.session_state[keys.DRAFT_HISTORY] = saved.history
    st.session_state[keys.DRAFT_BASE] = saved.base
    st.session_state[keys.DRAFT_RESTORED] = saved.saved_at


def _top() -> int:
    """The position of the session's draft in the autosaved stack."""
    return int(st.session_state.get(keys.DRAFT_BASE, 0)) + len(st.session_state.get(keys.DRAFT_HISTORY) or [])


def pushed(owner: Owner | None) -> None:
    """The session's draft just changed (its history grew by one): save it."""
    if owner is not None:
        _write(
            "change", draft_service.autosave_draft, owner.user, owner.cluster, _top(), st.session_state.get(keys.DRAFT)
        )


def undone(owner: Owner | None) -> None:
    """Undo just took the session's draft one step back."""
    if owner is not None:
        _write("undo", draft_service.autosave_undo, owner.user, owner.cluster, _top())


def discarded(owner: Owner | None) -> None:
    st.session_state[keys.DRAFT_BASE] = 0
    st.session_state.pop(keys.DRAFT_RESTORED, None)
    if owner is not None:
        _write("discard", draft_service.discard_autosave, owner.user, owner.cluster)


def keep_generated(owner: Owner | None, plan: Plan | None, report: Report | None) -> None:
    """The last plan Generate made and its report, kept for the signed-in across reloads (None: none)."""
    if owner is not None:
        _write("generated plan", draft_service.keep_generated, owner.user, owner.cluster, plan, report)


def restore_generated(owner: Owner | None) -> tuple[Plan, Report] | None:
    """The signed-in user's last generated plan and report for the cluster, back in the session."""
    if owner is None:
        return None
    try:
        kept = draft_service.generated(deps.store(), owner.user, owner.cluster)
    except ConsoleError as e:
        st.session_state[keys.DRAFT_AUTOSAVE_ERROR] = f"The last generated plan could not be read: {e.message}"
        return None
    if kept is not None:
        st.session_state[keys.GEN_RESULT] = kept
    return kept
