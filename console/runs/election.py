"""A run's closing preferred leader election: who to elect, sent in requests of a bounded size,
given up after :data:`ELECTION_ATTEMPTS` unanswered requests."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import partial

from console.core.errors import (
    AuthorizationFailed,
    PartiallyApplied,
    UnsupportedByCluster,
)
from console.core.limits import REQUEST_LIMIT
from console.core.model import (
    DIR_OFFLINE,
    BrokerId,
    ClusterState,
    Outcome,
    SourceStatus,
    TopicPartition,
)
from console.plans.plan import parse_plan
from console.runs.steps import Elected, Ports, Step
from console.storage.runs import ELECTION_WAVE, Run

ELECTION_ATTEMPTS = 10
"""Requests of a run's closing leader election that may go unanswered before the run completes
without it (its waves are done: the election is not worth waiting for forever)."""


class Elector:
    """The closing leader election of a run whose waves completed."""

    def __init__(self, ports: Ports) -> None:
        self.ports = ports
        self.store = ports.store

    def elect(self, run: Run, state: ClusterState) -> Step | Elected:
        """After the last wave: a preferred leader election of the run's partitions whose first
        target replica is in sync but does not lead (not of those an operator cancelled: they went
        back); what it did once nothing is left to send (the run then completes), or a Step while
        the run waits for the next tick.

        Requests carry at most :data:`REQUEST_LIMIT` partitions, each audited ("elect-leaders":
        the intent before it, the answer with per-partition outcomes after it); outcomes are kept
        in wave :data:`ELECTION_WAVE`. Left out: partitions the controller rejected, that are
        gone, or that were moved again since. One whose first replica is out of sync is recorded
        as not elected without a request. A partition the election fails for (or a cluster that
        refuses elections) does not fail the run; a cluster that does not answer is asked again
        at the next tick, up to :data:`ELECTION_ATTEMPTS` requests in all, after which the rest
        is recorded as not elected and the run completes. Elections are idempotent: a worker
        resuming after a request whose answer was never recorded records what leads already and
        sends the rest again."""
        if state.status.metadata is not SourceStatus.OK:  # an empty picture would look like "all gone"
            return Step(run, None, "waiting: Metadata did not answer (needed for the leader election)")
        election = self._election(run, state)
        send = self._give_up_election(run, election)
        self._election_not_sent(run, election, set(send))
        stopped = self._send_election(run, election.preferred, send)
        if stopped is not None:
            return stopped
        answers = self.store.runs.outcomes(run.id, ELECTION_WAVE)
        elected = sum(1 for o in answers if o.accepted)
        return Elected(elected, len(answers) - elected)

    def _election(self, run: Run, state: ClusterState) -> _Election:
        """What the closing election still has to do against ``state``."""
        recorded = {o.key for o in self.store.runs.outcomes(run.id, ELECTION_WAVE)}
        index = state.partition_index
        preferred: dict[TopicPartition, BrokerId] = {}
        leading: set[TopicPartition] = set()
        for key, target in self._taken(run).items():
            p = index.get(key)
            if key in recorded or p is None or not target or p.reassigning or p.replicas[:1] != target[:1]:
                continue  # answered already, gone, or moved since
            if p.leader == target[0]:
                leading.add(key)
            else:
                preferred[key] = target[0]
        unanswered, errors = self._election_log(run)
        return _Election(
            preferred,
            leading,
            unanswered,
            errors,
            already=sorted({k for _, keys in unanswered for k in keys} & leading),
            out_of_sync=sorted(k for k, b in preferred.items() if b not in index[k].isr),
            send=sorted(k for k, b in preferred.items() if b in index[k].isr),
        )

    def _give_up_election(self, run: Run, election: _Election) -> list[TopicPartition]:
        """What to send: nothing once :data:`ELECTION_ATTEMPTS` requests failed (the moves are
        done: the run does not wait forever; the rest is recorded as not elected)."""
        send, errors, preferred = election.send, election.errors, election.preferred
        if not send or len(errors) < ELECTION_ATTEMPTS:
            return send
        why = f"not elected: {len(errors)} attempts failed; the last: {errors[-1]}"
        with self.store.transaction():
            self.store.runs.add_outcomes(
                run.id, ELECTION_WAVE, [Outcome(t, p, False, "NO_ANSWER", why) for t, p in send]
            )
            self.ports.record(
                run,
                "elect-leaders",
                {"run": run.id, "partitions": [[t, p, preferred[(t, p)]] for t, p in send]},
                "given up",
                response={"attempts": len(errors), "error": errors[-1]},
            )
        return []

    def _election_not_sent(self, run: Run, election: _Election, again: set[TopicPartition]) -> None:
        """Record what needs no request: partitions found leading when the run resumed (and the
        answer of the requests a stopped worker never recorded) and those whose preferred replica
        is out of sync."""
        if not election.unanswered and not election.out_of_sync:
            return
        preferred, leading = election.preferred, election.leading
        with self.store.transaction():
            self.store.runs.add_outcomes(
                run.id,
                ELECTION_WAVE,
                [
                    *(
                        Outcome(t, p, True, "ALREADY_ELECTED", "the preferred replica led when the run resumed")
                        for t, p in election.already
                    ),
                    *(
                        Outcome(
                            t,
                            p,
                            False,
                            "PREFERRED_NOT_IN_SYNC",
                            f"not elected: its preferred replica {preferred[(t, p)]} is not in sync",
                        )
                        for t, p in election.out_of_sync
                    ),
                ],
            )
            for intent, keys in election.unanswered:  # the requests of a worker that stopped before their answer
                self.ports.record(
                    run,
                    "elect-leaders",
                    {"run": run.id},
                    "resumed",
                    ref=intent,
                    response={
                        "already_elected": [[t, p] for t, p in keys if (t, p) in leading],
                        "sent_again": [[t, p] for t, p in keys if (t, p) in again],
                    },
                )
            if election.out_of_sync:
                self.ports.record(
                    run,
                    "elect-leaders",
                    {"run": run.id, "partitions": [[t, p, preferred[(t, p)]] for t, p in election.out_of_sync]},
                    "not sent",
                    response={"error": "the preferred replica is not in sync"},
                )

    def _send_election(
        self, run: Run, preferred: dict[TopicPartition, BrokerId], send: list[TopicPartition]
    ) -> Step | None:
        """Send the election of ``send`` in requests of at most :data:`REQUEST_LIMIT` partitions;
        a Step when the run waits for the next tick to send the rest, else None."""
        for start in range(0, len(send), REQUEST_LIMIT):
            chunk = send[start : start + REQUEST_LIMIT]
            request = {"run": run.id, "partitions": [[t, p, preferred[(t, p)]] for t, p in chunk]}
            intent = self.ports.announce(run, "elect-leaders", request)
            try:
                answer = intent.send(
                    partial(self.ports.cluster.elect_leaders, chunk),
                    answered_by_caller=(AuthorizationFailed, UnsupportedByCluster, PartiallyApplied),
                )
            except (AuthorizationFailed, UnsupportedByCluster) as e:  # asking again will not help: none is elected
                code = "CLUSTER_AUTHORIZATION_FAILED" if isinstance(e, AuthorizationFailed) else "UNSUPPORTED_VERSION"
                rest = send[start:]
                with self.store.transaction():
                    self.store.runs.add_outcomes(
                        run.id,
                        ELECTION_WAVE,
                        [Outcome(t, p, False, code, f"{e.message} {e.hint}".strip()) for t, p in rest],
                    )
                    intent.answer("failed", {"error": e.message, "hint": e.hint, "not_elected": len(rest)})
                return None
            except PartiallyApplied as e:  # what was answered is recorded; the next tick sends the rest
                self.ports.partly_answered(intent, ELECTION_WAVE, e)
                if isinstance(e.cause, (AuthorizationFailed, UnsupportedByCluster)):
                    return Step(run, None, f"leader election partly answered: {e.message}")  # the rest: next tick
                raise e.cause from None
            self.ports.answered(
                intent,
                ELECTION_WAVE,
                [
                    answer.get(k) or Outcome(*k, False, "NO_ANSWER", "the controller did not answer for it")
                    for k in chunk
                ],
            )
        return None

    def _taken(self, run: Run) -> dict[TopicPartition, tuple[BrokerId, ...]]:
        """The run's partitions the controller took (neither rejected nor recorded gone), and their targets."""
        out: dict[TopicPartition, tuple[BrokerId, ...]] = {}
        for w in self.store.runs.waves(run.id):
            recorded = self.store.runs.outcomes(run.id, w.number)
            # a replica left out of its log dir (offline) is no refusal: its partition moved all the same
            took = {o.key for o in recorded if o.accepted} - {
                o.key for o in recorded if not o.accepted and o.code != DIR_OFFLINE
            }
            out.update((e.key, e.replicas) for e in parse_plan(w.entries_json).entries if e.key in took)
        return out

    def _election_log(self, run: Run) -> tuple[list[tuple[int, list[TopicPartition]]], list[str]]:
        """From the audit log, this run's "elect-leaders" requests whose answer was never recorded
        (their worker stopped), and the errors of those that failed (the cluster did not answer)."""
        unanswered = [
            (e.id, [(str(t), int(p)) for t, p, *_ in json.loads(e.request).get("partitions", [])])
            for e in self.ports.orphans(run, "elect-leaders")
        ]
        errors = [
            str(json.loads(e.response or "{}").get("error"))
            for e in self.store.audit.entries(run.cluster, "elect-leaders")
            if e.outcome == "failed"
            and (e.response or "").startswith("{")
            and json.loads(e.request).get("run") == run.id
        ]
        return unanswered, errors


@dataclass(frozen=True)
class _Election:
    """What a run's closing election still has to do, against a snapshot."""

    preferred: dict[TopicPartition, BrokerId]
    """Partitions whose preferred (first target) replica does not lead, and that replica."""
    leading: set[TopicPartition]
    """Partitions whose preferred replica leads."""
    unanswered: list[tuple[int, list[TopicPartition]]]
    """Requests a stopped worker sent without recording their answer (intent id, partitions)."""
    errors: list[str]
    """The errors of the requests that failed so far."""
    already: list[TopicPartition]
    """Of the unanswered requests' partitions, those leading now."""
    out_of_sync: list[TopicPartition]
    """Preferred replica not in sync: not sent."""
    send: list[TopicPartition]
    """To send."""
