"""What every part of the executor is given and shares: the step it reports, the config changes
it makes, and its :class:`Ports` (the store, the cluster, who acts, and the audit log). The parts
(a module each) import this and never each other: the executor owns one of each and sequences them."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from console.core.errors import PartiallyApplied
from console.core.model import (
    BrokerId,
    Outcome,
    outcome_word,
    split_outcomes,
)
from console.notify.events import Event
from console.notify.hub import emit
from console.runs.audited import Intent
from console.runs.gateway import ClusterGateway
from console.storage.audit import AuditEntry
from console.storage.runs import Run
from console.storage.store import Store

BrokerChanges = dict[BrokerId, dict[str, str | None]]
"""Config changes per broker (None: delete the key)."""

TopicChanges = dict[str, dict[str, str | None]]
"""Config changes per topic (None: delete the key)."""


@dataclass(frozen=True)
class Step:
    """What one tick did, for progress output."""

    run: Run
    wave: int | None
    did: str


@dataclass(frozen=True)
class Elected:
    """What a run's closing preferred leader election did, once nothing of it is left to send."""

    elected: int
    not_elected: int


@dataclass(frozen=True)
class Ports:
    """What the parts of an executor reach the world through: the store, the cluster (each request
    that changes it fenced by the run's lease: ``fence``), who acts; and the audit log as they write it."""

    store: Store
    cluster: ClusterGateway
    """Fenced: each request that changes the cluster is sent only while the executor holds the lease
    of the run it drives (:mod:`console.runs.lease`)."""
    user: str
    fence: Callable[[], None]
    """Raises :class:`~console.core.errors.LeaseLost` when the executor no longer holds the lease of
    the run it drives (renewing it else); nothing when it drives none."""

    def announce(self, run: Run, action: str, request: object) -> Intent:
        """The intent of a request of ``run`` (see :class:`~console.runs.audited.Intent`), written
        only while the executor holds the run's lease when it drives it."""
        self.fence()
        return Intent.announce(self.store, self.user, run, action, request)

    def record(
        self,
        run: Run,
        action: str,
        request: object,
        outcome: str,
        *,
        ref: int | None = None,
        response: object = None,
    ) -> int:
        """An audit entry about ``run`` that is not the answer of a request sent now."""
        return self.store.audit.record(
            self.user, run.cluster, action, request, outcome, ref=ref, plan_hash=run.plan_hash, response=response
        )

    def orphans(self, run: Run, action: str, wave: int | None = None) -> list[AuditEntry]:
        """This run's ``action`` requests (of ``wave``; None: of any) whose intent was written and
        never answered: the worker that wrote it stopped (killed, or cut off from the store) before
        the answer, so whether it was sent is not known until the cluster is looked at."""
        since = run.created_at - 1.0  # the run's requests come after it was made (a second for clock steps)
        return [e for e in self.store.audit.unanswered(run.cluster, action, since) if _of_run(e, run.id, wave)]

    def resumed(self, run: Run, orphans: Iterable[AuditEntry], response: Mapping[str, object]) -> None:
        """Answer each of ``orphans`` (see :meth:`orphans`) with what the worker that took the run
        over found the cluster showing, and what it sends again (``response``)."""
        for e in orphans:
            self.record(run, e.action, json.loads(e.request), "resumed", ref=e.id, response=dict(response))

    def answered(self, intent: Intent, wave: int, outcomes: list[Outcome]) -> None:
        """The per-partition answer of a request: kept with the wave, and its audit answer."""
        accepted, rejected = split_outcomes(outcomes)
        with self.store.transaction():
            self.store.runs.add_outcomes(intent.run_id, wave, outcomes)
            intent.answer(outcome_word(len(accepted), len(rejected)), [o.to_dict() for o in outcomes])

    def partly_answered(self, intent: Intent, wave: int, e: PartiallyApplied) -> None:
        """A request in batches that stopped part-way: what was answered is kept, and said."""
        with self.store.transaction():
            self.store.runs.add_outcomes(intent.run_id, wave, e.outcomes.values())
            intent.answer("partly sent", {"error": e.message, "outcomes": [o.to_dict() for o in e.outcomes.values()]})

    def notify(self, run: Run, event: Event, detail: str, eta_s: float | None = None) -> None:
        """Tell the team about ``event`` of ``run`` (queued: never waits on a destination)."""
        emit(self.store, event, cluster=run.cluster, who=self.user, detail=detail, run=run.id, eta_s=eta_s)


def _of_run(e: AuditEntry, run_id: int, wave: int | None) -> bool:
    """Whether ``e`` is a request of run ``run_id`` (and of ``wave``, unless None)."""
    request = json.loads(e.request)
    return isinstance(request, dict) and request.get("run") == run_id and (wave is None or request.get("wave") == wave)
