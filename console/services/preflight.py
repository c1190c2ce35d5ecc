"""What a submission would send (:func:`preflight`) and whether the console lets it go
(:meth:`Preflight.refusal`): the rule that decides a submit, written once for every front end.

A submission is refused when the cluster's essential reads failed (Metadata and
ListPartitionReassignments must have answered: without them the plan is checked against a picture
that is not the cluster's) or when the plan has errors that block it (every error, bar the
cordoned destinations the operator allows). :func:`console.services.runs.start_run` applies it,
audited (:func:`check_submit`); the CLI, the pages and notebooks show the same
:class:`Refusal` (its message, hint and findings) before they ask for a confirmation.
"""

from __future__ import annotations

from dataclasses import dataclass

from console.access.auth import Identity
from console.core.calibration import Calibration, Estimate
from console.core.errors import SubmitRefused
from console.core.format import plural
from console.core.model import ClusterState, Finding, Severity, SourceStatus
from console.moves.progress import estimate_run
from console.moves.waves import WaveLimits, plan_waves
from console.plans.diff import diff
from console.plans.plan import Plan, PlanEntry, plan_hash
from console.plans.rules.codes import CORDON_HINT, CORDONED_DESTINATION
from console.plans.validate import blocking, validate
from console.services.guard import REFUSED
from console.storage.store import Store

ESSENTIAL_READS = (("metadata", "Metadata"), ("reassignments", "ListPartitionReassignments"))
"""The parts of a snapshot (:class:`console.core.model.ReadStatus` field, Kafka request) a
submission needs to have answered."""


@dataclass(frozen=True)
class Refusal:
    """Why the console does not start a run, in the words every front end shows."""

    message: str
    hint: str
    findings: tuple[Finding, ...]
    """The plan's blocking errors, or the snapshot's read problems."""
    request: dict[str, object]
    """What the refusal's audit entry adds to what was asked."""

    def error(self) -> SubmitRefused:
        return SubmitRefused(self.message, self.hint, self.findings)


@dataclass(frozen=True)
class Preflight:
    """What submitting ``plan`` against the cluster as it is now would do."""

    findings: list[Finding]
    waves: list[tuple[PlanEntry, ...]]
    bytes_to_copy: int
    estimate: Estimate | None
    """How long copying takes: calibrated from past moves where the destinations have history, else
    at the throttle; None when neither applies (unthrottled, no history) or sizes are unknown."""
    dir_bytes_to_copy: int = 0
    """Bytes copied between the log dirs of a broker (no network), at the log-dir throttle."""
    tiered_topics: tuple[str, ...] = ()
    """The tiered topics the plan copies (over the network or between dirs): their local log only."""
    unread: tuple[str, ...] = ()
    """The essential reads (:data:`ESSENTIAL_READS`) that did not answer: a submission is refused."""
    read_problems: tuple[Finding, ...] = ()
    """What the snapshot says of its failed reads."""
    digest: str = ""
    """:func:`console.plans.plan.plan_hash` of the plan checked ("" when not known)."""

    @property
    def eta_s(self) -> float | None:
        return None if self.estimate is None else self.estimate.seconds

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.severity is Severity.ERROR]

    def blocking(self, allow_cordoned: bool = False) -> list[Finding]:
        """The errors that stop a submission: all of them, bar the cordoned destinations when the
        operator allows them (``submit --allow-cordoned``; :func:`start_run` audits it)."""
        return blocking(self.findings, allow_cordoned)

    @property
    def cordoned(self) -> list[Finding]:
        """Replicas this plan sends to a cordoned broker or log dir (errors the operator may override)."""
        return [f for f in self.findings if f.code == CORDONED_DESTINATION]

    @property
    def warnings(self) -> list[Finding]:
        return [f for f in self.findings if f.severity is Severity.WARNING]

    @property
    def partitions(self) -> int:
        return sum(map(len, self.waves))

    def refusal(self, allow_cordoned: bool = False) -> Refusal | None:
        """Why the console refuses this submission, or None: the rule every front end and
        :func:`console.services.runs.start_run` apply."""
        if self.unread:
            return Refusal(
                f"The cluster's state could not be read in full ({' and '.join(self.unread)} did not answer): "
                "the run was not started and nothing was sent.",
                "Check that the cluster answers and that the console may describe it, then submit again.",
                self.read_problems,
                {"unread": list(self.unread)},
            )
        bad = self.blocking(allow_cordoned)
        if not bad:
            return None
        onto = [f for f in bad if f.code == CORDONED_DESTINATION]
        if len(onto) == len(bad):
            return Refusal(
                f"The plan sends {plural(len(onto), 'replica')} to cordoned brokers or log dirs "
                f"({first_sentence(onto[0])}); Kafka's controller would take them, the console does not: "
                "nothing was sent.",
                CORDON_HINT,
                tuple(bad),
                {"cordoned_destinations": len(onto)},
            )
        return Refusal(
            f"The plan has {plural(len(bad), 'error')} against the cluster as it is now: nothing was sent.",
            "Fix the plan, or review it again (a partition that moved since the review is stale)."
            + (f" Some send replicas to cordoned brokers or log dirs: {CORDON_HINT}" if onto else ""),
            tuple(bad),
            {"errors": len(bad), "codes": sorted({f.code for f in bad})},
        )


def first_sentence(f: Finding) -> str:
    return f.message.split(". ")[0]


def unread(state: ClusterState) -> tuple[str, ...]:
    """The essential reads of ``state`` that did not answer."""
    return tuple(name for part, name in ESSENTIAL_READS if getattr(state.status, part) is not SourceStatus.OK)


def preflight(
    state: ClusterState,
    plan: Plan,
    limits: WaveLimits = WaveLimits(),
    rate: int | None = None,
    calibration: Calibration | None = None,
) -> Preflight:
    d = diff(state, plan)
    waves = plan_waves(state, plan, limits)
    return Preflight(
        validate(state, plan, d),
        waves,
        d.bytes_to_copy,
        estimate_run(state, waves, rate, calibration),
        d.dir_bytes_to_copy,
        tuple(d.copied_topics(state.tiered)),
        unread(state),
        tuple(state.findings),
        plan_hash(plan),
    )


def check_submit(
    store: Store, who: Identity, cluster_id: str, pre: Preflight, allow_cordoned: bool, asked: dict[str, object]
) -> None:
    """Return when the console lets the submission ``pre`` describes go; else record that ``who``
    was refused it on ``cluster_id`` (one audit entry, with ``asked``) and raise
    :class:`console.core.errors.SubmitRefused` with the refusal's words and findings. Nothing is sent."""
    refusal = pre.refusal(allow_cordoned)
    if refusal is None:
        return
    store.audit.record(
        who.name, cluster_id, "submit", {**asked, **refusal.request}, REFUSED, response={"why": refusal.message}
    )
    raise refusal.error()
