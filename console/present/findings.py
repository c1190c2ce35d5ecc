"""Findings as a person reads them (pure): rows, counts by code and plain text, errors first."""

from __future__ import annotations

from collections import Counter
from typing import Iterable, Sequence

from console.core.model import Finding, Severity


def finding_rows(findings: Iterable[Finding]) -> list[dict[str, object]]:
    rows = [f.to_dict() for f in findings]
    rows.sort(key=lambda r: Severity(r["severity"]).rank)
    return rows



def finding_summary(findings: Iterable[Finding]) -> list[dict[str, object]]:
    """How many findings of each code: errors first, then the most frequent."""
    n = Counter((f.severity.value, f.code) for f in findings)
    return [{"severity": sev, "code": code, "findings": k}
            for (sev, code), k in sorted(n.items(), key=lambda kv: (Severity(kv[0][0]).rank, -kv[1], kv[0][1]))]



def findings_text(findings: Sequence[Finding]) -> str:
    if not findings:
        return "No findings: the plan is valid."
    return "\n".join(
        f"[{f.severity.value}] {f.code}: {f.message}" + (f" ({f.hint})" if f.hint else "")
        for f in findings)
