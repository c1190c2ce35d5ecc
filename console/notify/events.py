"""What the console tells a team about, and the message it sends: one record per event, the same
words for every destination (Apprise turns them into a chat message, a page, an email)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from console.core.format import human_duration


class Event(StrEnum):
    """The events a destination may ask for (its ``events`` list names them by value)."""

    PLAN_AWAITING_APPROVAL = "plan-awaiting-approval"
    """A plan was saved and waits for someone else's approval (who may approve is said)."""
    RUN_STARTED = "run-started"
    WAVE_DONE = "wave-done"
    """Each wave completed: optional, a destination asks for it by name (not in ``DEFAULT_EVENTS``)."""
    RUN_STUCK = "run-stuck"
    """A running wave made no progress for ``CONSOLE_STUCK_AFTER_S``: the stuck diagnosis."""
    RUN_COMPLETED = "run-completed"
    RUN_PARTLY_CANCELLED = "run-partly-cancelled"
    """A run completed but for the partitions an operator cancelled while it ran (named)."""
    RUN_STOPPED = "run-stopped"
    RUN_CANCELLED = "run-cancelled"
    RUN_ABANDONED = "run-abandoned"
    RUN_FAILED = "run-failed"
    GUARDRAIL = "guardrail"
    """A guardrail paused, held, slowed or resumed a run, or set a throttle back (what it saw, what it did)."""
    THROTTLE_LEFT = "throttle-left"
    """A run ended and some throttle it set could not be taken off (the sweep takes it off)."""
    DECOMMISSION_WAITING = "decommission-waiting"
    """A decommission flow reached a step only a person can take (review, shut down, unregister)."""


DEFAULT_EVENTS = frozenset(Event) - {Event.WAVE_DONE}
"""What a destination that names no events gets: everything but each wave."""

_TITLES = {
    Event.PLAN_AWAITING_APPROVAL: "Plan waiting for approval",
    Event.RUN_STARTED: "Run started",
    Event.WAVE_DONE: "Wave done",
    Event.RUN_STUCK: "Run stuck",
    Event.RUN_COMPLETED: "Run completed",
    Event.RUN_PARTLY_CANCELLED: "Run completed, partly cancelled",
    Event.RUN_STOPPED: "Run stopped",
    Event.RUN_CANCELLED: "Run cancelled",
    Event.RUN_ABANDONED: "Run abandoned",
    Event.RUN_FAILED: "Run failed",
    Event.GUARDRAIL: "Guardrail",
    Event.THROTTLE_LEFT: "Throttle left after a run",
    Event.DECOMMISSION_WAITING: "Decommission waiting for a person",
}
_WARNINGS = frozenset({Event.RUN_STUCK, Event.GUARDRAIL, Event.THROTTLE_LEFT, Event.DECOMMISSION_WAITING})
_FAILURES = frozenset({Event.RUN_FAILED})


@dataclass(frozen=True)
class Progress:
    """Where a run stands when the event happens."""

    moved: int
    """Partitions at their target so far."""
    left: int
    """Partitions not there yet."""
    waves_done: int
    waves: int
    eta_s: float | None = None
    cancelled: int = 0
    """Partitions an operator cancelled while the run went on (back to their original replicas)."""


@dataclass(frozen=True)
class Message:
    """One event as sent: to every destination that asked for its kind on its cluster."""

    event: Event
    cluster: str
    """The cluster as people name it."""
    who: str
    """Whoever made it happen (the person, or the console's worker)."""
    detail: str
    """The event in a sentence (the stuck reason, who may approve, which step waits)."""
    run: int | None = None
    run_name: str | None = None
    progress: Progress | None = None
    link: str | None = None
    plan: int | None = None

    @property
    def kind(self) -> str:
        """Apprise's notification type: info, warning or failure."""
        return "failure" if self.event in _FAILURES else "warning" if self.event in _WARNINGS else "info"

    @property
    def title(self) -> str:
        of = f" · run #{self.run}" if self.run is not None else f" · plan #{self.plan}" if self.plan is not None else ""
        return f"[{self.cluster}] {_TITLES[self.event]}{of}"

    @property
    def body(self) -> str:
        lines = [self.detail, f"Cluster: {self.cluster}"]
        if self.run is not None:
            lines.append(f"Run: #{self.run}" + (f" ({self.run_name})" if self.run_name else ""))
        if self.plan is not None:
            lines.append(f"Plan: #{self.plan}")
        lines.append(f"By: {self.who}")
        if (p := self.progress) is not None:
            lines.append(
                f"Moved so far: {p.moved} partition(s); left: {p.left}"
                + (f"; cancelled: {p.cancelled}" if p.cancelled else "")
                + f" ({p.waves_done} of {p.waves} wave(s) done)"
            )
            if p.eta_s is not None:
                lines.append(f"ETA: {human_duration(p.eta_s)}")
        if self.link:
            lines.append(self.link)
        return "\n".join(lines)


def run_link(public_url: str | None, run: int) -> str | None:
    """The run's page on the console (``public_url`` as people reach it), or None without one."""
    return f"{public_url.rstrip('/')}/runs?run={run}" if public_url else None


def plan_link(public_url: str | None, plan: int) -> str | None:
    """The plan on the Review page, or None without a public URL."""
    return f"{public_url.rstrip('/')}/review?plan={plan}" if public_url else None
