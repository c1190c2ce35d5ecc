"""Findings as a person reads them (pure): rows, counts by code and plain text, errors first."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

from console.core.format import plural
from console.core.model import Finding, Severity


def where(f: Finding) -> str:
    """What a finding is about, in words: ``partition orders-3``, ``topic orders``, ``broker 2``
    (and ``on broker 2`` after a partition); empty for the cluster as a whole."""
    parts = []
    if f.topic is not None:
        parts.append(f"partition {f.topic}-{f.partition}" if f.partition is not None else f"topic {f.topic}")
    if f.broker is not None:
        parts.append(f"broker {f.broker}")
    return " on ".join(parts)


def finding_rows(findings: Iterable[Finding]) -> list[dict[str, object]]:
    """Findings as table rows, errors first: every cell text (empty where nothing applies)."""
    ordered = sorted(findings, key=lambda f: f.severity.rank)
    return [
        {"severity": f.severity.value, "code": f.code, "where": where(f), "message": f.message, "hint": f.hint}
        for f in ordered
    ]


def finding_hints(findings: Iterable[Finding]) -> list[tuple[str, str, str]]:
    """What to do, in full: each distinct (code, hint) once, errors first then the most frequent,
    as (code, ``3 findings``, hint)."""
    seen: dict[tuple[str, str], tuple[Severity, int]] = {}
    for f in findings:
        if f.hint:
            sev, n = seen.get((f.code, f.hint), (f.severity, 0))
            seen[(f.code, f.hint)] = (sev, n + 1)
    ordered = sorted(seen.items(), key=lambda kv: (kv[1][0].rank, -kv[1][1], kv[0][0]))
    return [(code, plural(n, "finding"), hint) for (code, hint), (_, n) in ordered]


def finding_summary(findings: Iterable[Finding]) -> list[dict[str, object]]:
    """How many findings of each code: errors first, then the most frequent."""
    n = Counter((f.severity.value, f.code) for f in findings)
    return [
        {"severity": sev, "code": code, "findings": k}
        for (sev, code), k in sorted(n.items(), key=lambda kv: (Severity(kv[0][0]).rank, -kv[1], kv[0][1]))
    ]


def findings_text(findings: Sequence[Finding]) -> str:
    if not findings:
        return "No findings: the plan is valid."
    return "\n".join(
        f"[{f.severity.value}] {f.code}: {f.message}" + (f" ({f.hint})" if f.hint else "") for f in findings
    )
