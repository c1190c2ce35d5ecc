"""Validation of a plan against a snapshot, as findings (pure).

An **error** blocks submission (bar the :data:`OVERRIDABLE` ones, which the operator may override
explicitly, audited); a **warning** needs acknowledging; **info** is reported. Each
finding names the partition (or broker), says what is wrong and what to do. The checks cover
what the controller itself would reject with INVALID_REPLICA_ASSIGNMENT (empty list, duplicate
or negative ids, adding replicas on brokers that are not alive), so nothing it would refuse is
ever sent; and one it would take that the console does not: a replica sent to a cordoned broker or
log dir (KIP-1066), which the controller completes (only new topics avoid cordons); and one it
cannot complete: a replica sent to a log dir that is offline.

The checks themselves are the rules of :mod:`console.plans.rules` (written once, run in process
here and on Spark by the review job); this module is their in-process caller and the helpers the
front ends read findings with.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from console.core.model import Broker, ClusterState, Finding, Findings, Severity
from console.plans.diff import PlanDiff, diff
from console.plans.plan import Plan
from console.plans.rules import local
from console.plans.rules.catalog import not_eligible_words
from console.plans.rules.codes import CORDONED_DESTINATION, OVERRIDABLE


def validate(state: ClusterState, plan: Plan, plan_diff: PlanDiff | None = None) -> Findings:
    """Every finding for ``plan`` against ``state``, errors first (then by topic and partition)."""
    return local.review(state, plan, plan_diff if plan_diff is not None else diff(state, plan))


def with_overall(findings: Iterable[Finding], overall: Iterable[Finding]) -> Findings:
    """``findings`` (in order) with more findings about the whole plan or a broker (the impact's):
    each severity's overall ones first within it, as the review orders its own."""
    found, extra = list(findings), list(overall)
    if not extra:
        return Findings(found)
    out = Findings()
    for sev in sorted(Severity, key=lambda s: s.rank):
        out += [f for f in extra if f.severity is sev]
        out += [f for f in found if f.severity is sev]
    return out


def not_eligible_why(broker: Broker) -> str:
    """Why ``broker`` takes no new replica, as far as the snapshot knows: fenced (registered, and
    DescribeCluster says it is fenced), not live (not registered), or not eligible (KIP-841)."""
    return not_eligible_words(broker.registered, broker.fenced is True, broker.live)


def errors(findings: Iterable[Finding]) -> list[Finding]:
    return [f for f in findings if f.severity is Severity.ERROR]


def blocking(findings: Iterable[Finding], allow_cordoned: bool = False) -> list[Finding]:
    """The errors that block a submission: every error, bar the cordoned destinations the operator
    allowed (``allow_cordoned``)."""
    return [f for f in errors(findings) if not (allow_cordoned and f.code == CORDONED_DESTINATION)]


def overridable_only(findings: Iterable[Finding]) -> bool:
    """Whether there are errors and every one of them may be overridden (:data:`OVERRIDABLE`)."""
    found = errors(findings)
    return bool(found) and all(f.code in OVERRIDABLE for f in found)


def counts(findings: Iterable[Finding]) -> dict[str, int]:
    c = Counter(f.severity.value for f in findings)
    return {s.value: c.get(s.value, 0) for s in Severity}
