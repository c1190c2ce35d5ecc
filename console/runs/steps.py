"""What every part of the executor shares: the step it reports, the config changes it makes, and
its base (the store, the cluster, who acts, and the audit log), so the parts split by concern
import only this and never each other."""

from __future__ import annotations

import json
import os
import socket
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from console.core.errors import LeaseLost, PartiallyApplied
from console.core.model import (
    BrokerId,
    ClusterState,
    Outcome,
    outcome_word,
    split_outcomes,
)
from console.core.states import RunState
from console.notify.events import Event
from console.notify.hub import emit
from console.plans.plan import PlanEntry
from console.runs.audited import Intent
from console.runs.gateway import ClusterGateway
from console.runs.lease import fenced
from console.storage.audit import AuditEntry
from console.storage.runs import Run
from console.storage.store import Store

STUCK_AFTER_S = float(os.environ.get("CONSOLE_STUCK_AFTER_S", "300"))
"""A running wave that copies nothing and completes nothing for this long flags its run stuck."""

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


class ExecutorBase:
    """The executor's state and audit log; the steps other parts take, declared here."""

    def __init__(
        self,
        store: Store,
        cluster: ClusterGateway,
        user: str,
        settle_s: float = 1.5,
        poll_s: float = 0.5,
        stuck_after_s: float | None = None,
    ) -> None:
        self.store = store
        self.cluster = fenced(cluster, self._fence)
        """The cluster, each request that changes it sent only while this executor holds the lease
        of the run it drives (:mod:`console.runs.lease`)."""
        self.user = user
        self.owner = f"{socket.gethostname()}:{os.getpid()}:{id(self):x}"
        self.driving: int | None = None
        """The run whose step is being taken (its lease checked before every request), or None."""
        self.lease_s = 30.0
        """How long the lease is renewed for (set with :attr:`driving`)."""
        self.settle_s = settle_s
        """How long to look again before taking "left the list away from its target" as a cancel."""
        self.poll_s = poll_s
        """Pause between looks when reconciling a resumed wave or waiting for configs."""
        self.stuck_after_s = STUCK_AFTER_S if stuck_after_s is None else stuck_after_s
        """A running wave with no byte copied and no partition done for this long flags its run stuck."""
        self._min_isr: dict[int, dict[str, int]] = {}
        """Per run, each of its moving topics' ``min.insync.replicas`` as last seen (see :meth:`_min_isr_changes`)."""
        self._copied: dict[int, tuple[int, float]] = {}
        """Per run, the bytes its pending replicas had copied at the last look, and when (for the ETA metric)."""

    def _fence(self) -> None:
        """Before a request of the run being driven: still its lease holder (renewed), or nothing is sent."""
        run_id = self.driving
        if run_id is not None and not self.store.runs.renew(run_id, self.owner, self.lease_s):
            raise LeaseLost(
                f"Run {run_id} is driven by another worker now: this one lost its lease (it was paused or "
                "cut off from the store) and sends nothing more for it.",
                "Nothing was sent; the run goes on with the worker that took it over.",
            )

    # -- the audit log ------------------------------------------------------------------------------
    def _announce(self, run: Run, action: str, request: object) -> Intent:
        """The intent of a request of ``run`` (see :class:`~console.runs.audited.Intent`), written
        only while this executor holds the run's lease when it drives it."""
        self._fence()
        return Intent.announce(self.store, self.user, run, action, request)

    def _record(
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

    def _orphans(self, run: Run, action: str, wave: int | None = None) -> list[AuditEntry]:
        """This run's ``action`` requests (of ``wave``; None: of any) whose intent was written and
        never answered: the worker that wrote it stopped (killed, or cut off from the store) before
        the answer, so whether it was sent is not known until the cluster is looked at."""
        since = run.created_at - 1.0  # the run's requests come after it was made (a second for clock steps)
        return [e for e in self.store.audit.unanswered(run.cluster, action, since) if _of_run(e, run.id, wave)]

    def _resumed(self, run: Run, orphans: Iterable[AuditEntry], response: Mapping[str, object]) -> None:
        """Answer each of ``orphans`` (see :meth:`_orphans`) with what the worker that took the run
        over found the cluster showing, and what it sends again (``response``)."""
        for e in orphans:
            self._record(run, e.action, json.loads(e.request), "resumed", ref=e.id, response=dict(response))

    def _answered(self, intent: Intent, wave: int, outcomes: list[Outcome]) -> None:
        """The per-partition answer of a request: kept with the wave, and its audit answer."""
        accepted, rejected = split_outcomes(outcomes)
        with self.store.transaction():
            self.store.runs.add_outcomes(intent.run_id, wave, outcomes)
            intent.answer(outcome_word(len(accepted), len(rejected)), [o.to_dict() for o in outcomes])

    def _partly_answered(self, intent: Intent, wave: int, e: PartiallyApplied) -> None:
        """A request in batches that stopped part-way: what was answered is kept, and said."""
        with self.store.transaction():
            self.store.runs.add_outcomes(intent.run_id, wave, e.outcomes.values())
            intent.answer("partly sent", {"error": e.message, "outcomes": [o.to_dict() for o in e.outcomes.values()]})

    def _notify(self, run: Run, event: Event, detail: str, eta_s: float | None = None) -> None:
        """Tell the team about ``event`` of ``run`` (queued: never waits on a destination)."""
        emit(self.store, event, cluster=run.cluster, who=self.user, detail=detail, run=run.id, eta_s=eta_s)

    # -- the steps of other parts, declared for those that take them ----------------------------------
    def _finish(
        self,
        run: Run,
        how: RunState,
        unthrottle: bool = True,
        request: dict[str, object] | None = None,
        response: object = None,
        did: str | None = None,
    ) -> Step:
        """End ``run`` as ``how`` (:class:`~console.runs.executor.Executor`)."""
        raise NotImplementedError

    def _unthrottle(self, run: Run, wave: int | None) -> None:
        """Take off what ``run`` set for ``wave`` (None: all of it) (:mod:`console.runs.throttling`)."""
        raise NotImplementedError

    def _dir_moves(self, run: Run, wave: int, state: ClusterState, entries: Iterable[PlanEntry]) -> None:
        """Send the wave's log dir moves (:mod:`console.runs.dirmoves`)."""
        raise NotImplementedError

    def _not_in_dir(self, run: Run) -> list[list[object]]:
        """The run's replicas left out of their log dir (:mod:`console.runs.dirmoves`)."""
        raise NotImplementedError


def _of_run(e: AuditEntry, run_id: int, wave: int | None) -> bool:
    """Whether ``e`` is a request of run ``run_id`` (and of ``wave``, unless None)."""
    request = json.loads(e.request)
    return isinstance(request, dict) and request.get("run") == run_id and (wave is None or request.get("wave") == wave)
