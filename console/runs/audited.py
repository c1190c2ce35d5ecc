"""A request to the cluster and its two audit entries: the intent, written before the request is
sent, and the answer (or the failure), written after it against the intent (``ref``)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
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
    """A request of ``run`` announced in the audit log (entry ``id``, outcome "sending"), to be
    answered once: :meth:`send` answers a failure itself, the caller answers the rest."""

    store: Store
    user: str
    run: Run
    action: str
    request: object
    """What the answers record as asked (see :meth:`answered_as`)."""
    id: int

    @classmethod
    def announce(cls, store: Store, user: str, run: Run, action: str, request: object) -> Intent:
        """Write the intent (inside the caller's transaction, when there is one)."""
        entry = store.audit.record(user, run.cluster, action, request, "sending", plan_hash=run.plan_hash)
        return cls(store, user, run, action, request, entry)

    def answered_as(self, request: object) -> Intent:
        """The same intent, its answers recording ``request`` (a shorter form of what was asked)."""
        return dataclasses.replace(self, request=request)

    def answer(self, outcome: str, response: object = None) -> int:
        return self.store.audit.record(
            self.user,
            self.run.cluster,
            self.action,
            self.request,
            outcome,
            ref=self.id,
            plan_hash=self.run.plan_hash,
            response=response,
        )

    def failed(self, e: ConsoleError) -> None:
        """The request failed: nothing of it was applied (as far as the console knows), or, when
        its answer was lost and the cluster could not be read after it, "answer lost" (not known)."""
        word = failure_word(e)
        self.answer(
            word, {"error": e.message, "hint": e.hint, **({"applied": "not known"} if word == ANSWER_LOST else {})}
        )

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
