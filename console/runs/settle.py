"""What the cluster shows after a request whose answer was lost.

A request that changes the cluster can go out and lose its answer (a timeout, the controller paused
or moving, a connection cut while waiting): the adapters raise
:class:`~console.core.errors.AnswerLost` and send nothing again themselves. The write path then
reads what the cluster shows and says, per partition or per config, **applied** (the cluster shows
what was asked), **not applied** (it shows something else: what is sent again is only that, after
the look, never the request blind) or **not known** (the cluster could not be read: nothing is
sent; the run reconciles at its next step, a cancel is said not known).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from enum import Enum
from functools import partial

from console.adapters.records import Configs
from console.core.errors import AnswerLost, ConsoleError, PartiallyApplied
from console.core.model import BrokerId, Outcome, Partition, SourceStatus, TopicPartition
from console.runs.audited import ANSWER_LOST, Intent
from console.runs.gateway import Changes, ClusterGateway, Targets

APPLIED_UNANSWERED = "APPLIED_UNANSWERED"
"""Outcome code: the answer was lost and the cluster shows the partition as asked."""
LOOKS = 3
"""How many times a request whose answer was lost is looked at (and what it shows not applied sent again)."""


class Settled(str, Enum):
    """What a request whose answer was lost did, by what the cluster shows."""

    APPLIED = "applied"
    """The cluster shows what was asked: nothing is sent again."""
    NOT_APPLIED = "not applied"
    """The cluster shows something else: only what it does not show is sent again."""
    UNKNOWN = "not known"
    """The cluster could not be read: nothing is sent; it is looked at again later."""


def shows(p: Partition | None, target: tuple[BrokerId, ...] | None) -> bool:
    """Whether ``p`` shows ``target`` asked: a cancel (None) when it is not reassigning any more, a
    target when it is reassigning to it or sits at it."""
    if p is None:
        return False
    if target is None:
        return not p.reassigning
    return p.target == target if p.reassigning else p.replicas == target


def _lost_cause(e: AnswerLost | PartiallyApplied) -> AnswerLost | None:
    cause = e.cause if isinstance(e, PartiallyApplied) else e
    return cause if isinstance(cause, AnswerLost) else None


def send_settled(
    cluster: ClusterGateway,
    targets: Targets,
    send: Callable[[Targets], Mapping[TopicPartition, Outcome]],
) -> dict[TopicPartition, Outcome]:
    """``send(targets)`` (AlterPartitionReassignments); when its answer is lost, the partitions the
    cluster then shows as asked are answered :data:`APPLIED_UNANSWERED`, the others sent again, up
    to :data:`LOOKS` looks. Raises :class:`AnswerLost` (in :class:`PartiallyApplied` with what is
    known) when the cluster cannot be read or still does not show them; other errors as ``send``."""
    out: dict[TopicPartition, Outcome] = {}
    pending = dict(targets)
    lost: AnswerLost | None = None
    for _ in range(LOOKS):
        try:
            out.update(send(pending))
            return {k: out[k] for k in targets if k in out}
        except (AnswerLost, PartiallyApplied) as e:
            lost = _lost_cause(e)
            if lost is None:
                raise
            if isinstance(e, PartiallyApplied):
                out.update(e.outcomes)
        state = cluster.snapshot(lean=True)
        if state.status.reassignments is not SourceStatus.OK:
            unknown = AnswerLost(
                f"{lost.message} The cluster could not be read after it (ListPartitionReassignments did not "
                f"answer): whether it was applied is not known.",
                "Look at Live before sending it again; a run looks again at its next step.",
            )
            raise (PartiallyApplied(unknown, out) if out else unknown) from None
        index = state.partition_index
        pending = {k: t for k, t in pending.items() if k not in out}
        for k, t in list(pending.items()):
            if shows(index.get(k), t):
                out[k] = Outcome(
                    k[0], k[1], True, APPLIED_UNANSWERED, "the answer was lost; the cluster shows it applied"
                )
                del pending[k]
        if not pending:
            return {k: out[k] for k in targets if k in out}
    assert lost is not None
    still = AnswerLost(
        f"{lost.message} After {LOOKS} looks the cluster still does not show {len(pending)} of its partitions "
        "as asked: not applied, as far as it shows.",
        "Look at Live; a run looks again at its next step.",
    )
    raise (PartiallyApplied(still, out) if out else still) from None


def configs_shown(got: Configs, brokers: Mapping[BrokerId, Changes], topics: Mapping[str, Changes]) -> bool:
    """Whether the configs the brokers report are the changes asked (a key deleted: not reported)."""
    return all(got.brokers.get(str(b), {}).get(k) == v for b, c in brokers.items() for k, v in c.items()) and all(
        got.topics.get(t, {}).get(k) == v for t, c in topics.items() for k, v in c.items()
    )


def settle_configs(
    cluster: ClusterGateway, brokers: Mapping[BrokerId, Changes], topics: Mapping[str, Changes]
) -> Settled:
    """What a config change whose answer was lost did, by the configs the brokers report now."""
    try:
        got = cluster.describe_configs(tuple(brokers), tuple(topics))
    except ConsoleError:
        return Settled.UNKNOWN
    return Settled.APPLIED if configs_shown(got, brokers, topics) else Settled.NOT_APPLIED


def send_configs(
    cluster: ClusterGateway, intent: Intent, brokers: Mapping[BrokerId, Changes], topics: Mapping[str, Changes]
) -> None:
    """IncrementalAlterConfigs, its answer recorded against ``intent`` (as the names it changed).
    When the answer is lost, the configs the brokers report say applied (answered so), or not
    applied / not known (answered so, and raised: nothing is set again unseen)."""
    answering = intent.answered_as({"brokers": sorted(brokers), "topics": sorted(topics)})
    try:
        answering.send(partial(cluster.alter_configs, brokers, topics), answered_by_caller=(AnswerLost,))
    except AnswerLost as e:
        settled = settle_configs(cluster, brokers, topics)
        if settled is not Settled.APPLIED:
            answering.answer(
                ANSWER_LOST if settled is Settled.UNKNOWN else "failed", {"error": e.message, "applied": settled.value}
            )
            raise
        answering.answer("applied", {"answer": "lost", "applied": "the brokers report it"})
        return
    answering.answer("applied")
