"""A cluster's guardrails as its ``[clusters.<name>.guardrails]`` table sets them: each rule on or
off (``destination_gone = false``), and their figures (``unread_grace_s``, ``overrun_factor``,
``overrun_slack``, ``overrun_polls``, ``auto_resume``, ``clear_for_s``); what is not set keeps its default
(:class:`console.moves.guardrails.GuardrailSettings`), and so does the environment's cluster."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields
from typing import Any

from console.moves.guardrails import GuardrailSettings

_LIMITS: dict[str, tuple[float, float]] = {
    "unread_grace_s": (0.0, 3600.0),
    "overrun_factor": (1.0, 100.0),
    "overrun_slack": (0.0, 1e12),
    "overrun_polls": (1.0, 100.0),
    "clear_for_s": (0.0, 86_400.0),
}


def guardrail_problems(table: object, where: str) -> list[str]:
    """What is wrong with a guardrails table (each naming the key and what to write)."""
    if table is None:
        return []
    if not isinstance(table, Mapping):
        return [f"{where} is not a table: write [clusters.<name>.guardrails] with keys such as auto_resume = false."]
    known = {f.name: f for f in fields(GuardrailSettings)}
    out = []
    for key, value in table.items():
        f = known.get(str(key))
        if f is None:
            out.append(f"{where}: {key} is not a guardrail setting (known: {', '.join(sorted(known))}).")
        elif f.type == "bool" and not isinstance(value, bool):
            out.append(f"{where}: {key} must be true or false, not {value!r}.")
        elif f.type != "bool" and not _number_within(value, _LIMITS[f.name], f.type == "int"):
            low, high = _LIMITS[f.name]
            out.append(f"{where}: {key} must be a number from {low:g} to {high:g}, not {value!r}.")
    return out


def _number_within(value: object, limits: tuple[float, float], whole: bool) -> bool:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    return limits[0] <= value <= limits[1] and (not whole or float(value).is_integer())


def guardrail_settings(table: Mapping[str, Any] | None) -> GuardrailSettings:
    """The settings a checked table (:func:`guardrail_problems`) asks for; the defaults for the rest."""
    if not table:
        return GuardrailSettings()
    kinds = {f.name: f.type for f in fields(GuardrailSettings)}
    given: dict[str, Any] = {k: (int(v) if kinds[k] == "int" else v) for k, v in table.items() if k in kinds}
    return GuardrailSettings(**given)
