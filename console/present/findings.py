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


HINTS_PER_CODE = 3
"""At most this many distinct hints are listed for one code (the most frequent first)."""


def finding_codes(findings: Iterable[Finding]) -> list[dict[str, object]]:
    """Findings by code, errors first then the most frequent: how many, and what to do in full, once
    per code (its distinct hints, the most frequent first, at most :data:`HINTS_PER_CODE`; empty
    when it has none). One row per (severity, code): a table as long as the codes, however many
    findings there are."""
    n: Counter[tuple[str, str]] = Counter()
    hints: dict[tuple[str, str], Counter[str]] = {}
    for f in findings:
        key = (f.severity.value, f.code)
        n[key] += 1
        if f.hint:
            hints.setdefault(key, Counter())[f.hint] += 1
    rows: list[dict[str, object]] = []
    for (sev, code), k in sorted(n.items(), key=lambda kv: (Severity(kv[0][0]).rank, -kv[1], kv[0][1])):
        said = [h for h, _ in hints.get((sev, code), Counter()).most_common()]
        more = len(said) - HINTS_PER_CODE
        todo = " ".join(said[:HINTS_PER_CODE]) + (f" (and {plural(more, 'other hint')})" if more > 0 else "")
        rows.append({"severity": sev, "code": code, "findings": k, "what to do": todo})
    return rows


def findings_text(findings: Sequence[Finding]) -> str:
    if not findings:
        return "No findings: the plan is valid."
    return "\n".join(
        f"[{f.severity.value}] {f.code}: {f.message}" + (f" ({f.hint})" if f.hint else "") for f in findings
    )
