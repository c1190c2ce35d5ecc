"""The Drafts page's draft, saved as it is edited (scratch work, not audited): :func:`autosave_draft`,
:func:`autosave_undo`, :func:`autosave_stack`, :func:`discard_autosave`, and how many undo steps
are kept (:func:`undo_steps_kept`); the last plan Generate made, with its report, kept across
reloads the same way (:func:`keep_generated`, :func:`generated`)."""

from __future__ import annotations

import json

from console.plans.plan import Plan
from console.plans.quality import Report
from console.storage.store import Store

# -- autosaved drafts --------------------------------------------------------------------------------
UNDO_STEPS_KEPT = 20
UNDO_PARTITIONS_KEPT = 1_000_000
"""At most this many partitions over the undo steps kept (a million-partition draft keeps one)."""


def undo_steps_kept(partitions: int) -> int:
    """How many undo steps are kept below a draft of ``partitions`` partitions."""
    return max(1, min(UNDO_STEPS_KEPT, UNDO_PARTITIONS_KEPT // max(1, partitions)))


def autosave_draft(store: Store, user: str, cluster_id: str, pos: int, plan: Plan | None) -> None:
    """``plan`` is ``user``'s draft for the cluster now, at undo position ``pos`` (the steps
    below it stay for Undo, up to :func:`undo_steps_kept`)."""
    store.drafts.push(user, cluster_id, pos, plan, undo_steps_kept(len(plan) if plan is not None else 0))


def autosave_undo(store: Store, user: str, cluster_id: str, pos: int) -> None:
    """Undo: the step at ``pos`` is the draft again."""
    store.drafts.drop_above(user, cluster_id, pos)


def autosave_stack(store: Store, user: str, cluster_id: str, steps: list[Plan | None], base: int = 0) -> None:
    """Save a whole draft with its undo steps (``steps[-1]`` the draft), from position ``base``
    (a draft started before signing in, adopted by the user who signed in)."""
    top = steps[-1] if steps else None
    keep = undo_steps_kept(len(top) if top is not None else 0)
    kept = steps[-keep - 1 :]
    store.drafts.replace(user, cluster_id, kept, base + len(steps) - len(kept))


def discard_autosave(store: Store, user: str, cluster_id: str) -> None:
    store.drafts.clear(user, cluster_id)


# -- the last generated plan -----------------------------------------------------------------------
def keep_generated(store: Store, user: str, cluster_id: str, plan: Plan | None, report: Report | None) -> None:
    """``plan`` and its ``report`` are the last Generate made for ``user`` on the cluster (None: a
    goal that made no plan; the one before is forgotten)."""
    if plan is None or report is None:
        store.drafts.forget_generated(user, cluster_id)
    else:
        store.drafts.keep_generated(user, cluster_id, plan, json.dumps(report.to_dict()))


def generated(store: Store, user: str, cluster_id: str) -> tuple[Plan, Report] | None:
    """The last plan Generate made for ``user`` on the cluster, with its report, or None."""
    kept = store.drafts.generated(user, cluster_id)
    return None if kept is None else (kept[0], Report.from_dict(json.loads(kept[1])))
