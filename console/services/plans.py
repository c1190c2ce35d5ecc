"""Saved plans: :func:`save_plan`, :func:`save_rebased_plan` (a stale plan brought up to date, as
a new version named by :func:`rebased_name`), :func:`add_note` (a review note). Each checks who
acts (:mod:`console.services.guard`) and audits what it saves."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from typing import Literal

from console.access.auth import Identity, load_users
from console.core.errors import ConfigError, ConsoleError, PlanNameTaken
from console.core.model import (
    ClusterState,
    cluster_key,
)
from console.moves.impact import Pricing
from console.notify.events import Event
from console.notify.hub import emit
from console.plans.plan import Plan, plan_hash, rollback
from console.plans.quality import Report
from console.plans.rebase import RebaseOptions, RebaseReport, rebase
from console.services.guard import refuse, require
from console.storage.store import Store


def save_plan(
    store: Store,
    who: Identity,
    state: ClusterState,
    cluster_name: str,
    name: str,
    plan: Plan,
    report: Report | None = None,
    *,
    draft_of: int | Literal["any"] | None = "any",
    pricing: Pricing | None = None,
) -> int:
    """Save a draft (or overwrite the cluster's plan of that name) with its rollback against
    ``state`` and the basis for the stale check, and a generated plan's quality ``report``;
    returns its id. ``who`` needs the operator or the approver role. The rollback names each
    replica's log dir as the official tool of Kafka 4.2 and later does when ``state`` carries what
    the cluster is (``snapshot(info=True)``); without it, every dir is ``any``.

    ``draft_of``: the plan this draft was saved as (None: a new draft). A plan of that name other
    than it is not replaced: :class:`~console.core.errors.PlanNameTaken`, nothing saved. ``"any"``
    replaces whichever plan has the name (a save by name: the command line's ``save --replace``,
    a notebook's). A blank name is :class:`ConfigError`. ``pricing``: the cluster's price table, for
    the impact the approval message heads with (bytes only without it)."""
    key = cluster_key(state, cluster_name)
    detail: dict[str, object] = {"plan": None, "name": name.strip(), "partitions": len(plan)}
    if report is not None:
        detail |= {"generated": report.goal, "moved_replicas": report.moved_replicas, "moved_bytes": report.moved_bytes}
    require(store, who, "save plans", key, detail)
    if not name.strip():
        raise ConfigError("A saved plan needs a name.", "Type a name for it.")
    taken = None if draft_of == "any" else _plan_named(store, state, cluster_name, name)
    if taken is not None and taken != draft_of:
        raise PlanNameTaken(
            f"Plan {taken} is named {name.strip()!r} already: saving would replace its content.",
            "Give it another name.",
            taken,
        )
    user = who.name
    with store.transaction():
        plan_id = store.plans.save(
            name,
            key,
            plan,
            rollback(state, plan),
            user,
            state.fingerprint(),
            report_json=None if report is None else json.dumps(report.to_dict()),
        )
        store.audit.record(user, key, "plan-saved", {**detail, "plan": plan_id}, "saved", plan_hash=plan_hash(plan))
    _awaiting_approval(store, key, user, plan_id, name.strip(), lambda: _impact_headline(state, plan, pricing))
    return plan_id


def _impact_headline(state: ClusterState, plan: Plan, pricing: Pricing | None) -> str:
    """``Plan #N … copies 412.0 GB, 380.0 GB across zones ≈ USD 7.60; …``: what the approver decides on."""
    from console.moves.impact_columns import impact
    from console.plans.diff import diff

    return impact(diff(state, plan, elect=None), pricing).headline()


def _plan_named(store: Store, state: ClusterState, cluster_name: str, name: str) -> int | None:
    """The id of the cluster's saved plan called ``name`` (spaces around it aside), or None: a save
    under that name replaces that plan's content."""
    key, wanted = cluster_key(state, cluster_name), name.strip()
    return next((p.id for p in store.plans.list(key) if p.name == wanted), None)


def _awaiting_approval(
    store: Store, key: str, user: str, plan_id: int, name: str, headline: Callable[[], str] | None = None
) -> None:
    """With the two-person rule on, a saved plan waits for an approval of its content on the
    cluster: the team hears who may give it."""
    try:
        users = load_users()
    except ConsoleError:
        return  # an unreadable users file: said where people sign in; no rule known to wait on
    if users is None or not users.two_person_rule:
        return
    authors = sorted(store.plans.authors(plan_id))
    emit(
        store,
        Event.PLAN_AWAITING_APPROVAL,
        cluster=key,
        who=user,
        detail=f"{user} saved plan #{plan_id} ({name}); it waits for approval. Who may approve: anyone with "
        f"the approver role on this cluster who authored no version of it (not {', '.join(authors) or user})."
        + (f"\nImpact: this plan {headline()}." if headline is not None else ""),
        plan=plan_id,
    )


_UP_TO_DATE = re.compile(r"^(?P<base>.*) \(up to date, v(?P<version>\d+)\)$")


def rebased_name(name: str, taken: Iterable[str]) -> str:
    """``<name> (up to date, vN)``: N one more than any version of the same base name in ``taken``
    (and than ``name``'s own), at least 2; a rebased plan's base name is its parent's."""
    m = _UP_TO_DATE.match(name)
    base, version = (m["base"], int(m["version"])) if m else (name, 1)
    for other in taken:
        o = _UP_TO_DATE.match(other)
        if o and o["base"] == base:
            version = max(version, int(o["version"]))
    return f"{base} (up to date, v{version + 1})"


def save_rebased_plan(
    store: Store,
    who: Identity,
    state: ClusterState,
    cluster_name: str,
    parent_id: int,
    options: RebaseOptions | None = None,
) -> int:
    """Bring saved plan ``parent_id`` up to date against ``state`` (:func:`console.plans.rebase.rebase`:
    the same targets, the current replicas as the basis, optionally without completed or gone
    partitions) and save it as a new plan linked to it, under a new version name (never over
    another plan); returns its id. It saves a plan: ``who`` needs a role that saves plans (the
    ``rebase`` action), the parent must be a plan of this cluster and stale (some partition moved
    since it was drafted), else it is refused (audited). The new plan's authors are the parent's
    and ``who`` (none of them may approve it)."""
    key = cluster_key(state, cluster_name)
    asked = {"from": parent_id}
    require(store, who, "rebase", key, asked)
    parent = store.plans.load(parent_id)
    if parent is None:
        raise ConfigError(f"Plan {parent_id} is not in the store.", "Pick a saved plan.")
    if parent.summary.cluster != key:
        refuse(
            store,
            who,
            "rebase",
            key,
            f"Plan {parent_id} is a plan of cluster {parent.summary.cluster}, not of {key}.",
            "Bring a plan up to date on the cluster it was drafted for.",
            asked,
        )
    report = rebase(state, parent.plan, options)
    if not report.changed:
        refuse(
            store,
            who,
            "rebase",
            key,
            f"Plan {parent_id} is not stale: "
            + (
                "none of its partitions moved since it was drafted."
                if report.has_basis
                else "it records no replicas as drafted, so what moved cannot be told."
            ),
            "Review and submit it as it is; a plan is brought up to date only once the cluster changed under it.",
            asked,
        )
    if not report.plan.entries:
        raise ConfigError(
            f"Nothing is left of plan {parent_id} once brought up to date ({report.counts_text()}).",
            "Nothing to save: keep the completed or gone partitions, or draft a new plan.",
        )
    return _save_rebased(store, who, state, key, parent_id, parent.summary.name, report)


def _save_rebased(
    store: Store, who: Identity, state: ClusterState, key: str, parent_id: int, parent_name: str, report: RebaseReport
) -> int:
    with store.transaction():
        name = rebased_name(parent_name, (s.name for s in store.plans.list(key)))
        plan_id = store.plans.save(
            name, key, report.plan, rollback(state, report.plan), who.name, state.fingerprint(), parent_id=parent_id
        )
        store.audit.record(
            who.name,
            key,
            "plan-rebased",
            {
                "plan": plan_id,
                "from": parent_id,
                "name": name,
                "partitions": len(report.plan),
                "dropped": len(report.dropped),
                "since": {k.value: n for k, n in report.counts.items() if n},
            },
            "saved",
            plan_hash=plan_hash(report.plan),
        )
    return plan_id


NOTE_CHARS = 10_000
"""The longest review note kept (a note is a comment, not a document)."""


def add_note(store: Store, who: Identity, plan_id: int, note: str) -> bool:
    """A review note on a saved plan, by ``who`` at the time the console records; ``who`` needs a
    role that takes part in a review (the ``add notes`` action: operator or approver), else it is
    refused (audited). Audited under the plan's cluster. A blank note is ignored (False); a note
    over :data:`NOTE_CHARS` characters is refused (:class:`ConfigError`)."""
    saved = store.plans.load(plan_id)
    if saved is None:
        raise ConfigError(f"Plan {plan_id} is not in the store.", "Pick a saved plan.")
    key = saved.summary.cluster
    text = note.strip()
    asked = {"plan": plan_id, "note": text if len(text) <= 500 else text[:500] + "…"}
    require(store, who, "add notes", key, asked)
    if not text:
        return False
    if len(text) > NOTE_CHARS:
        raise ConfigError(
            f"The note has {len(text):,} characters; at most {NOTE_CHARS:,} are kept.", "Shorten it and add it again."
        )
    with store.transaction():
        store.plans.add_note(plan_id, who.name, text)
        store.audit.record(
            who.name, key, "note", {"plan": plan_id, "note": text}, "added", plan_hash=plan_hash(saved.plan)
        )
    return True
