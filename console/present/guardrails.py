"""What the guardrails hold a run for, in words for every surface and as records for JSON: the
Live page's banner, the top of the run's section on Runs and ``python -m console runs`` say the same
sentence ("Paused by a guardrail since 10:42:13: broker 4, a destination of waves 3–4, is
offline. …"), and ``runs --json`` gives the same concerns as ``held_by``. The executor keeps what
holds each run in the store (:mod:`console.storage.holds`); this reads it back, pure.

Also the guardrails' audit entries in a sentence each (:func:`audit_words`), for the audit log."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from console.core.format import human_rate
from console.core.model import TopicPartition
from console.core.states import RunState
from console.moves.guardrails import GUARDRAIL, Action, Rule
from console.storage.audit import AuditEntry
from console.storage.holds import Held
from console.storage.runs import Run

SHOWN_AT_MOST = 5
"""Held runs the Live page writes out, one line each; the rest are counted."""

_STRENGTH = {Action.PAUSE: 0, Action.HOLD: 1, Action.SLOW: 2}


class Hold(StrEnum):
    """What the guardrails do to a run, as its sentence starts."""

    PAUSED = "paused"
    """A guardrail paused it (no wave is sent until it is resumed)."""
    HELD = "held"
    """No wave is sent while the concern lasts (the run is not paused by a guardrail: it goes on by
    itself once the cause clears, or it was paused or stopped by a person)."""
    SLOWED = "slowed"
    """Its later waves carry one adding move per broker."""


@dataclass(frozen=True)
class HeldBy:
    """One concern a guardrail holds a run for, as ``runs --json`` gives it (``held_by``)."""

    rule: str
    """:class:`~console.moves.guardrails.Rule`'s value: ``destination_gone``, ``under_min_isr``, …"""
    action: str
    """:class:`~console.moves.guardrails.Action`'s value: ``pause``, ``hold``, ``slow``."""
    text: str
    brokers: tuple[int, ...]
    partitions: tuple[str, ...]
    """``topic-partition`` names: for a gone destination, those in flight onto it."""
    since: float
    """When the guardrails started holding the run (epoch seconds)."""

    def to_dict(self) -> dict[str, object]:
        return {
            "rule": self.rule,
            "action": self.action,
            "text": self.text,
            "brokers": list(self.brokers),
            "partitions": list(self.partitions),
            "since": self.since,
        }


@dataclass(frozen=True)
class HoldNotice:
    """What the guardrails hold one active run for, said the same way on every surface."""

    run_id: int
    run_name: str
    state: RunState
    hold: Hold
    since: float
    when: str
    """``since`` as people read it: ``10:42:13`` today, with the date on another day."""
    concerns: tuple[HeldBy, ...]
    """Strongest first; empty when what paused the run has cleared (it still waits to be resumed)."""
    stranded: tuple[TopicPartition, ...]
    """The partitions in flight onto a gone destination: they cannot finish while it is gone (the
    pages offer to cancel exactly these)."""

    @property
    def resumable(self) -> bool:
        """The run is paused: a person may resume it (the guardrails do not pause it again for the
        same concern)."""
        return self.state is RunState.PAUSED

    @property
    def words(self) -> str:
        """``Paused by a guardrail since 10:42:13: broker 4, a destination of wave 2, is offline.``"""
        head = f"{self.hold.value.capitalize()} by a guardrail since {self.when}"
        if not self.concerns:
            return f"{head}; what paused it has cleared since."
        return f"{head}: " + "; ".join(c.text for c in self.concerns) + "."

    @property
    def line(self) -> str:
        """:attr:`words` with the run named: ``Run 7 (decommission 4) paused by a guardrail since …``."""
        return f"Run {self.run_id} ({self.run_name}) " + self.words[0].lower() + self.words[1:]

    @property
    def state_text(self) -> str:
        """The run's state marked: ``paused (guardrail)``."""
        return f"{self.state.value} (guardrail)"

    def held_by(self) -> list[dict[str, object]]:
        return [c.to_dict() for c in self.concerns]


def hold_notice(run: Run, held: Held | None, now: float) -> HoldNotice | None:
    """What the guardrails hold ``run`` for (``held``: its row in the store's holds), or None when
    nothing does: not active, no concern now and not paused by a guardrail."""
    if held is None or not run.active:
        return None
    concerns = tuple(sorted((_held_by(c, held.since) for c in held.concerns), key=_strength))
    if run.state is RunState.PAUSED and held.paused:
        hold = Hold.PAUSED
    elif not concerns:
        return None  # a guardrail paused it, then a person stopped it: nothing holds it now
    elif all(c.action == Action.SLOW for c in concerns):
        hold = Hold.SLOWED
    else:
        hold = Hold.HELD
    stranded = tuple(
        key for c in concerns if c.rule == Rule.DESTINATION_GONE for key in _keys(c.partitions)
    )  # one concern names them all
    return HoldNotice(run.id, run.name, run.state, hold, held.since, when(held.since, now), concerns, stranded)


def hold_notices(runs: Iterable[Run], held: Mapping[int, Held], now: float) -> list[HoldNotice]:
    """:func:`hold_notice` of each of ``runs`` that guardrails hold (``held``: the store's holds of
    those runs, :meth:`~console.storage.holds.RunHolds.shown`), in ``runs``' order."""
    return [n for r in runs if (n := hold_notice(r, held.get(r.id), now)) is not None]


def more_text(notices: Sequence[HoldNotice]) -> str | None:
    """Past :data:`SHOWN_AT_MOST` held runs: ``and 12 more runs held by guardrails (see Runs)``."""
    more = len(notices) - SHOWN_AT_MOST
    if more <= 0:
        return None
    return f"And {more:,} more run{'s' if more > 1 else ''} held by guardrails: each is said on its Runs page."


def when(ts: float, now: float) -> str:
    """``10:42:13`` when ``ts`` is on the day of ``now`` (local time), else ``2025-06-01 10:42:13``."""
    at, today = datetime.fromtimestamp(ts), datetime.fromtimestamp(now)
    return f"{at:%H:%M:%S}" if at.date() == today.date() else f"{at:%Y-%m-%d %H:%M:%S}"


def _held_by(concern: Mapping[str, object], since: float) -> HeldBy:
    brokers = concern.get("brokers")
    partitions = concern.get("partitions")
    return HeldBy(
        str(concern.get("rule", "")),
        str(concern.get("action", "")),
        str(concern.get("text", "")),
        tuple(int(str(b)) for b in brokers) if isinstance(brokers, list) else (),
        tuple(str(p) for p in partitions) if isinstance(partitions, list) else (),
        since,
    )


def _strength(c: HeldBy) -> int:
    return next((n for a, n in _STRENGTH.items() if c.action == a), len(_STRENGTH))


def _keys(names: Iterable[str]) -> list[TopicPartition]:
    keys = []
    for name in names:
        topic, _, number = name.rpartition("-")
        if topic and number.isdigit():
            keys.append((topic, int(number)))
    return keys


# -- the audit log ---------------------------------------------------------------------------------
def audit_words(entry: AuditEntry) -> str:
    """A guardrail's audit entry in a sentence (empty for any other entry): what it saw and did,
    or the throttle it set back and how that went."""
    if entry.action != GUARDRAIL:
        return ""
    asked = _object(entry.request)
    rule = str(asked.get("rule", "")).replace("_", " ")
    head = f"Run {asked.get('run', '?')}, {rule}"
    if "saw" in asked:
        return f"{head}: {asked['saw']} ({entry.outcome})."
    where = f"{asked.get('where', '')}'s {asked.get('key', '')}"
    if entry.outcome == "sending":
        return f"{head}: {where} found {_value(asked.get('seen'))}; setting it back to {_value(asked.get('set'))}."
    said = _object(entry.response or "{}")
    if entry.outcome == "restored":
        return f"{head}: {where} set back to {_value(said.get('after'))} (it was {_value(said.get('before'))})."
    return f"{head}: {where} not set back ({entry.outcome}: {said.get('error', 'no answer')})."


def _object(text: str) -> dict[str, object]:
    try:
        found = json.loads(text)
    except ValueError:
        return {}
    return found if isinstance(found, dict) else {}


def _value(v: object) -> str:
    """A throttle config's value in words: a rate as a rate, none as removed."""
    if v is None:
        return "removed"
    text = str(v)
    return human_rate(int(text)) if text.isdigit() else text
