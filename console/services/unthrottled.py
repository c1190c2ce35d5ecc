"""A throttle above what the cluster's broker links carry (its ceiling, ``max_throttle``; default
:data:`console.core.limits.MAX_THROTTLE`) limits nothing: such a run or throttle change is
effectively unthrottled. :func:`console.services.runs.start_run` and
:func:`~console.services.runs.change_throttle` refuse it (audited, nothing sent) unless the operator
says so; the override is recorded with the action's audit entry. The front ends show the same
words (:func:`unthrottled_problem`) before they ask."""

from __future__ import annotations

from collections.abc import Mapping

from console.access.auth import Identity
from console.core.format import human_rate
from console.services.guard import refuse
from console.storage.store import Store

UNTHROTTLED_HINT = (
    "Give a lower rate, or send it anyway (submit or throttle --allow-unthrottled; on the pages: "
    "tick “Send it effectively unthrottled”), which is audited."
)


def unthrottled_problem(rate: int | None, ceiling: int) -> str | None:
    """Why a throttle of ``rate`` bytes/s is effectively none on a cluster whose ceiling is
    ``ceiling`` bytes/s; None at or under it, or for no throttle (None: the operator asked for none)."""
    if rate is None or rate <= ceiling:
        return None
    return (
        f"A throttle of {human_rate(rate)} ({rate:,} bytes/s) is above {human_rate(ceiling)}, the most this "
        "cluster's broker links carry (its max_throttle): it is effectively unthrottled."
    )


def check_ceiling(
    store: Store,
    who: Identity,
    action: str,
    key: str,
    rate: int | None,
    ceiling: int,
    unthrottled_ok: bool,
    asked: Mapping[str, object],
    *,
    plan_hash: str | None = None,
) -> dict[str, object]:
    """Refuse ``action`` (audited; :class:`console.core.errors.NotPermitted` saying why) when
    ``rate`` is above ``ceiling``, unless ``unthrottled_ok``; then what the action's audit entry
    records of the override (empty at or under the ceiling)."""
    problem = unthrottled_problem(rate, ceiling)
    if problem is None:
        return {}
    named: dict[str, object] = {"rate": rate, "max_throttle": ceiling}
    if not unthrottled_ok:
        refuse(store, who, action, key, problem, UNTHROTTLED_HINT, {**asked, **named}, plan_hash=plan_hash)
    return {"unthrottled_ok": True, **named}
