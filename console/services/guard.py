"""Who may do what, checked where it happens: every service that changes a cluster or the store
calls :func:`require` before it writes or sends anything.

A refusal writes one audit entry (outcome ``refused``: who, which action, which cluster, why) and
raises :class:`console.core.errors.NotPermitted`; nothing else is written and nothing is sent.
Roles are per cluster: an identity signed in on the pages holds its roles on the cluster it was
looked up for (``Identity.on``) and is only a viewer on any other, so a page cannot act on one
cluster with the roles of another. Pages check the same rule to decide what to show
(``Identity.can``); the command line acts with every role on every cluster (``Identity.cli``: the
cluster's ACLs decide).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import NoReturn, TypeVar

from console.access.auth import NEEDS, NEEDS_ONE_OF, OPEN_TO_ALL, Identity
from console.core.errors import NotPermitted
from console.runs.audited import Intent
from console.storage.store import Store

R = TypeVar("R")

REFUSED = "refused"
"""The outcome of the audit entry of a refused action."""


def require(
    store: Store,
    who: Identity,
    action: str,
    cluster_id: str,
    request: Mapping[str, object] | None = None,
    *,
    plan_hash: str | None = None,
) -> None:
    """Return when ``who`` may do ``action`` (a name of :data:`console.access.auth.NEEDS`,
    :data:`~console.access.auth.NEEDS_ONE_OF` or :data:`~console.access.auth.OPEN_TO_ALL`); else
    refuse it (:func:`refuse`). ``request`` says what was asked, for the audit entry."""
    if action not in NEEDS and action not in NEEDS_ONE_OF and action not in OPEN_TO_ALL:
        raise ValueError(f"no role rule for the action {action!r}")  # a bug: every action has its rule
    if who.can(action, cluster_id):
        return
    need = " or ".join(NEEDS_ONE_OF.get(action, ())) or NEEDS[action]
    refuse(
        store,
        who,
        action,
        cluster_id,
        who.why_not(action, cluster_id),
        f"Sign in as someone with the {need} role, or ask one to do it.",
        request,
        plan_hash=plan_hash,
    )


def refuse(
    store: Store,
    who: Identity,
    action: str,
    cluster_id: str,
    why: str,
    hint: str,
    request: Mapping[str, object] | None = None,
    *,
    plan_hash: str | None = None,
) -> NoReturn:
    """Record that ``who`` was refused ``action`` on ``cluster_id`` (one audit entry) and raise
    :class:`NotPermitted` with ``why`` and ``hint``."""
    store.audit.record(
        who.name, cluster_id, action, dict(request or {}), REFUSED, plan_hash=plan_hash, response={"why": why}
    )
    raise NotPermitted(why, hint)


def audited_send(
    store: Store, who: Identity, cluster_id: str, action: str, request: Mapping[str, object], send: Callable[[], R]
) -> tuple[R, Intent]:
    """``send()`` a request to the cluster with its intent in the audit log first ("sending"); a
    console error is recorded against the intent (:meth:`Intent.failed`) and raised again.
    Returns the answer and the intent, for the caller to :meth:`~Intent.answer`."""
    intent = Intent.open(store, who.name, cluster_id, action, request)
    return intent.send(send), intent
