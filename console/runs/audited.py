"""A request to the cluster and its two audit entries (:class:`Intent`, for the services and the executor alike): the intent, written before the request is
sent, and the answer (or the failure), written after it against the intent (``ref``)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TypeVar

from console.core.errors import AnswerLost, ConsoleError, PartiallyApplied
from console.storage.runs import Run
from console.storage.store import Store

R = TypeVar("R")

ANSWER_LOST = "answer lost"
"""The audit outcome of a request whose answer did not come back, the cluster not read after it."""


def failure_word(e: ConsoleError) -> str:
    """The audit outcome of a request that raised ``e``: "answer lost" when its answer did not come
    back (applied or not is not known), else "failed" (nothing of it applied, as far as is known)."""
    cause = e.cause if isinstance(e, PartiallyApplied) else e
    return ANSWER_LOST if isinstance(cause, AnswerLost) else "failed"


@dataclass(frozen=True)
class Intent:
    """A request to the cluster announced in the audit log (entry ``id``, outcome "sending"), to be
    answered once: :meth:`send` answers a failure itself, the caller answers the rest
    (:meth:`answer`). The one way the services and the executor write intent → request → answer."""

    store: Store
    user: str
    cluster: str
    action: str
    request: object
    """What the answers record as asked (see :meth:`answered_as`)."""
    id: int
    plan_hash: str | None = None
    run: Run | None = None
    """The run the request is of (the executor's requests)."""

    @classmethod
    def open(
        cls, store: Store, user: str, cluster: str, action: str, request: object, plan_hash: str | None = None
    ) -> Intent:
        """Write the intent (inside the caller's transaction, when there is one)."""
        entry = store.audit.record(user, cluster, action, request, "sending", plan_hash=plan_hash)
        return cls(store, user, cluster, action, request, entry, plan_hash)

    @classmethod
    def announce(cls, store: Store, user: str, run: Run, action: str, request: object) -> Intent:
        """The intent of a request of ``run``."""
        return dataclasses.replace(cls.open(store, user, run.cluster, action, request, run.plan_hash), run=run)

    @property
    def run_id(self) -> int:
        if self.run is None:
            raise ValueError(f"audit entry {self.id} is not a request of a run")  # a bug
        return self.run.id

    def answered_as(self, request: object) -> Intent:
        """The same intent, its answers recording ``request`` (a shorter form of what was asked)."""
        return dataclasses.replace(self, request=request)

    def answer(self, outcome: str, response: object = None) -> int:
        return self.store.audit.record(
            self.user,
            self.cluster,
            self.action,
            self.request,
            outcome,
            ref=self.id,
            plan_hash=self.plan_hash,
            response=response,
        )

    def failed(self, e: ConsoleError, more: Mapping[str, object] | None = None) -> None:
        """The request failed: nothing of it was applied (as far as the console knows), or, when
        its answer was lost and the cluster could not be read after it, "answer lost" (not known).
        ``more``: what else the answer records (e.g. the batches applied before the failure)."""
        word = failure_word(e)
        lost = {"applied": "not known"} if word == ANSWER_LOST else {}
        self.answer(word, {"error": e.message, "hint": e.hint, **lost, **(more or {})})

    def send(self, request: Callable[[], R], answered_by_caller: tuple[type[ConsoleError], ...] = ()) -> R:
        """Send ``request``; a console error is answered as :meth:`failed` and raised again, except
        those of ``answered_by_caller`` (raised as they are, for the caller to answer)."""
        try:
            return request()
        except answered_by_caller:
            raise
        except ConsoleError as e:
            self.failed(e)
            raise
