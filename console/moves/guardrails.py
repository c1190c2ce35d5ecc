"""The guardrails of a running run: each a pure rule over the snapshot and what the run still has
to do, checked at every step of the run (every poll, seconds apart), that says what it saw and
what the run must do about it. The executor's :class:`console.runs.guard.Guard` applies them and
keeps what they need between polls (since when, how many polls in a row).

The rules, and what each asks:

* **A destination is gone** (:func:`destinations_gone`): a broker the run still has to copy into
  is offline or fenced: pause; the partitions in flight onto it cannot finish.
* **Under min ISR** (:func:`isr_concerns`): a partition of the run, or one with a replica on a
  broker the run copies into or out of, has fewer in-sync replicas than its min ISR while none of
  its replicas is offline (the copy traffic starves its followers): pause. A partition with a
  replica on a dead broker is not counted: it is not the copy's doing, and moving it is the cure.
* **At min ISR**: such a partition has lost every spare in-sync replica (ISR = min ISR < its
  replicas): later waves are cut to one adding move per broker until it recovers.
* **The cluster does not answer** (:func:`read_concern`), or answers only after longer than the
  grace: no wave is sent; past the grace, pause.
* **The throttle is not the one approved** (:func:`throttle_changes`): a rate raised or removed,
  or a replica list emptied, by someone else is set back; a rate lowered by a person is adopted
  and never raised back. :func:`throttle_overruns`: a copy into a broker observed above
  ``overrun_factor`` × its throttle, and above it by more than ``overrun_slack``, for
  ``overrun_polls`` polls while the configs read back right means the throttle is not holding:
  pause.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from itertools import chain, compress
from operator import attrgetter, itemgetter, ne

from console.core.format import human_rate, ids_text, plural
from console.core.limits import FOLLOWER_RATE, LEADER_RATE
from console.core.model import BrokerId, ClusterState, Partition, SourceStatus, TopicPartition
from console.plans.plan import PlanEntry

NAMED_AT_MOST = 5
"""Partitions named in a guardrail's sentence; the rest are counted."""

GUARDRAIL = "guardrail"
"""The audit action of what a guardrail did (the pages and the CLI read those entries back)."""
OVERRUN_SLACK = 1_048_576.0
"""1 MiB/s: what Kafka's replication quota lets through above any rate. A broker checks the quota
before it answers a fetch and counts the bytes after, so a whole fetch response (up to
``replica.fetch.response.max.bytes``, 10 MiB) passes whenever the average over the quota's window
(``replication.quota.window.num`` × ``replication.quota.window.size.seconds``, 11 s) fell below the
rate: up to about 0.95 MiB/s more than the rate, whatever the rate. A throttle of 500 B/s was seen
passing 2.6 KB/s on the sandbox; one of 10 B/s passing 140 MiB/s is a throttle not holding."""
_KEY = itemgetter(0, 1)
"""A plan entry's (topic, partition), at C speed."""
_REPLICAS = itemgetter(2)
"""A plan entry's replicas, at C speed."""


class Rule(StrEnum):
    """A guardrail, by the name it has in settings, the audit log, notifications and metrics."""

    DESTINATION_GONE = "destination_gone"
    """A broker the run still has to copy into is offline or fenced."""
    UNDER_MIN_ISR = "under_min_isr"
    """A partition the copy touches is under its min ISR with no replica offline."""
    AT_MIN_ISR = "at_min_isr"
    """A partition the copy touches has no in-sync replica to spare."""
    CLUSTER_UNREAD = "cluster_unread"
    """The cluster (its metadata or the reassignments in flight) did not answer."""
    THROTTLE_CHANGED = "throttle_changed"
    """A throttle the run set was changed by someone else."""
    THROTTLE_NOT_HOLDING = "throttle_not_holding"
    """Copies run faster than the throttle allows although its configs read back right."""


class Action(StrEnum):
    """What a guardrail asks of the run, strongest first."""

    PAUSE = "pause"
    """No further wave is sent; the run waits for a person (or for the cause to clear, when
    automatic resume is allowed)."""
    HOLD = "hold"
    """No wave is sent at this poll; the run goes on at the next one that is clear."""
    SLOW = "slow"
    """Later waves carry one adding move per broker."""
    RESTORE = "restore"
    """A throttle config is set back to what the run was approved at."""
    ADOPT = "adopt"
    """A throttle lowered by a person is kept: the run goes on at the lower rate."""


@dataclass(frozen=True)
class GuardrailSettings:
    """Per cluster (``[clusters.<name>.guardrails]``): each rule on or off, and its figures."""

    destination_gone: bool = True
    under_min_isr: bool = True
    at_min_isr: bool = True
    cluster_unread: bool = True
    throttle_changed: bool = True
    throttle_not_holding: bool = True
    unread_grace_s: float = 30.0
    """How long the cluster may not answer before the run pauses (no wave is sent meanwhile)."""
    overrun_factor: float = 1.5
    overrun_slack: float = OVERRUN_SLACK
    """Bytes/s a copy may run above its throttle however low the throttle is (see OVERRUN_SLACK)."""
    overrun_polls: int = 2
    auto_resume: bool = False
    """Resume a run a guardrail paused once its cause has been clear for ``clear_for_s``."""
    clear_for_s: float = 60.0

    def on(self, rule: Rule) -> bool:
        return bool(getattr(self, rule.value))


@dataclass(frozen=True)
class Concern:
    """What a guardrail saw, and what it asks."""

    rule: Rule
    action: Action
    text: str
    """In words, for every surface: ``broker 4, a destination of waves 3–4, is offline``."""
    brokers: tuple[BrokerId, ...] = ()
    partitions: tuple[TopicPartition, ...] = ()
    """For a gone destination: the partitions in flight onto it, which cannot finish."""

    def to_dict(self) -> dict[str, object]:
        return {
            "rule": self.rule.value,
            "action": self.action.value,
            "text": self.text,
            "brokers": list(self.brokers),
            "partitions": [f"{t}-{p}" for t, p in self.partitions],
        }


@dataclass(frozen=True)
class RunView:
    """What the rules need of a run: the wave in flight and the waves still to send (their numbers
    and entries), and each partition's replicas before the run."""

    current: tuple[PlanEntry, ...]
    later: tuple[tuple[int, tuple[PlanEntry, ...]], ...]
    """(wave number, entries) of the waves not sent yet, in order."""
    before: Mapping[TopicPartition, Sequence[BrokerId]]

    def adding_later(self) -> dict[BrokerId, list[int]]:
        """Each broker the later waves add replicas onto, and those waves' numbers."""
        waves: dict[BrokerId, list[int]] = {}
        for number, entries in self.later:
            for e in entries:
                for b in set(e.replicas) - set(self.before.get(e.key, ())):
                    waves.setdefault(b, []).append(number)
        return {b: sorted(set(n)) for b, n in waves.items()}


def _named(keys: Sequence[TopicPartition]) -> str:
    names = [f"{t}-{p}" for t, p in keys[:NAMED_AT_MOST]]
    return ", ".join(names) + (f" and {len(keys) - NAMED_AT_MOST:,} more" if len(keys) > NAMED_AT_MOST else "")


def _waves_text(numbers: Sequence[int]) -> str:
    if not numbers:
        return "the wave in flight"
    if len(numbers) == 1:
        return f"wave {numbers[0]}"
    consecutive = list(numbers) == list(range(numbers[0], numbers[-1] + 1))
    return f"waves {numbers[0]}–{numbers[-1]}" if consecutive else "waves " + ", ".join(map(str, numbers))


# -- a destination is gone ----------------------------------------------------------------------------
def destinations_gone(state: ClusterState, view: RunView) -> Concern | None:
    """The brokers the run still copies into (its partitions in flight and its later waves) that are
    offline or fenced; the partitions in flight onto them named (they cannot finish). When every
    broker the cluster copies into and every broker the later waves name is live (nearly always),
    that is all that is looked at (at C speed)."""
    live = {b.id for b in state.brokers if b.live}
    named = set(chain.from_iterable(map(attrgetter("adding"), state.in_flight)))
    for _, entries in view.later:
        named.update(chain.from_iterable(map(_REPLICAS, entries)))
    if named <= live:
        return None
    later = view.adding_later()
    index = moving_index(state)
    stuck: dict[BrokerId, list[TopicPartition]] = {}
    for e in view.current:
        p = index.get(e.key)
        for b in p.adding if p is not None else ():
            if b not in live:
                stuck.setdefault(b, []).append(e.key)
    gone = sorted((set(stuck) | set(later)) - live)
    if not gone:
        return None
    parts = sorted({k for b in gone for k in stuck.get(b, [])})
    words = "; ".join(
        f"broker {b}, a destination of {_waves_text(later.get(b, []))}, is "
        + ("fenced" if any(x.id == b and x.registered for x in state.brokers) else "offline")
        for b in gone
    )
    if parts:
        words += f". In flight onto it: {_named(parts)} (cannot finish while it is gone)"
    return Concern(Rule.DESTINATION_GONE, Action.PAUSE, words, tuple(gone), tuple(parts))


# -- min ISR --------------------------------------------------------------------------------------------
def isr_concerns(state: ClusterState, view: RunView) -> list[Concern]:
    """Under min ISR (pause) and at min ISR (slow) among the partitions the copy touches: the run's
    own, and every partition with a replica on a broker its wave in flight copies into or out of.
    A partition with a replica offline is left out (see the module's docstring).

    Only a partition whose ISR is shorter than its replicas can be either (its min ISR is at most
    its replication factor on Kafka 4, and a higher one counts as equal): those are found at C speed
    (:func:`isr_short`, kept with the snapshot), and only they are asked whether the copy touches
    them, so a poll of a 100,000-partition cluster does not walk every partition in Python."""
    short = state.memo("guardrails.isr_short", isr_short)
    if not short:
        return []
    live = {b.id for b in state.brokers if b.live}
    touched = _touched_brokers(state, view, live)
    own: set[TopicPartition] = set()
    if not live <= touched:  # else every partition whose replicas are all live is touched: no need
        own.update(map(_KEY, view.current))
        for _, w in view.later:
            own.update(map(_KEY, w))
    mins = state.min_insync_index
    targets = {_KEY(e): _REPLICAS(e) for e in view.current}
    under: list[TopicPartition] = []
    at: list[TopicPartition] = []
    for p in short:
        m = mins.get(p.topic)
        if m is None or (p.key not in own and touched.isdisjoint(p.replicas)):
            continue
        if any(b not in live for b in p.replicas):
            continue
        if (target := targets.get(p.key)) is not None and set(target) <= set(p.isr):
            continue  # the wave's own partition, every target replica in sync: the others are leaving
        rf = len(p.replicas) - len(p.adding)  # the original replicas while it moves
        effective = min(m, rf)
        if len(p.isr) < effective:
            under.append(p.key)
        elif len(p.isr) == effective < rf:
            at.append(p.key)
    out = []
    if under:
        keys = sorted(under)
        out.append(
            Concern(
                Rule.UNDER_MIN_ISR,
                Action.PAUSE,
                f"{plural(len(keys), 'partition')} the copy touches {'is' if len(keys) == 1 else 'are'} under "
                f"min ISR with no replica offline: {_named(keys)} (writes with acks=all are refused)",
                partitions=tuple(keys),
            )
        )
    if at:
        keys = sorted(at)
        out.append(
            Concern(
                Rule.AT_MIN_ISR,
                Action.SLOW,
                f"{plural(len(keys), 'partition')} the copy touches {'has' if len(keys) == 1 else 'have'} no in-sync "
                f"replica to spare: {_named(keys)}; later waves carry one adding move per broker until they recover",
                partitions=tuple(keys),
            )
        )
    return out


def isr_short(state: ClusterState) -> tuple[Partition, ...]:
    """The partitions with fewer in-sync replicas than replicas (the adding ones aside): the only
    ones that can be under or at their min ISR. The lengths compared at C speed first (a partition
    whose ISR is as long as R is neither, and it is most of them), the few others in Python."""
    parts = state.partitions
    differ = compress(
        parts, map(ne, map(len, map(attrgetter("isr"), parts)), map(len, map(attrgetter("replicas"), parts)))
    )
    return tuple(p for p in differ if len(p.isr) < len(p.replicas) - len(p.adding))


def moving_index(state: ClusterState) -> dict[TopicPartition, Partition]:
    """The partitions in flight by key (kept with the snapshot): what the rules look up of the
    wave in flight, without indexing every partition of the cluster."""
    return state.memo("guardrails.moving", lambda s: {p.key: p for p in s.in_flight})


def _touched_brokers(state: ClusterState, view: RunView, live: set[BrokerId]) -> set[BrokerId]:
    """The brokers the copy touches: those the wave in flight copies into, out of and from (the
    leader), and those the waves still to send will copy into, out of and from. Once every live
    broker is in, no more are looked for (a partition with a replica on another one is left out
    anyway: that replica is offline)."""
    moving = list(filter(None, map(moving_index(state).get, map(_KEY, view.current))))
    touched: set[BrokerId] = set(chain.from_iterable(map(attrgetter("adding"), moving)))
    touched.update(chain.from_iterable(map(attrgetter("removing"), moving)))
    touched.update(b for b in map(attrgetter("leader"), moving) if b is not None)  # the sources copied from
    for _, entries in view.later:
        for e in entries:
            if len(touched) >= len(live) and live <= touched:
                return touched
            before = view.before.get(e.key, ())
            touched.update(set(before) ^ set(e.replicas))
            touched.update(before[:1])
    return touched


# -- the cluster does not answer ------------------------------------------------------------------------
def read_concern(
    state: ClusterState, unread_since: float | None, grace_s: float, read_s: float = 0.0
) -> Concern | None:
    """The cluster's metadata or its reassignments in flight did not answer, or the whole read took
    ``read_s`` seconds, longer than ``grace_s`` (a picture that old is no picture to act on: brokers
    that hang, a quorum lost, answers from a cache): hold (no wave sent); pause once the cluster has
    not answered in time for longer than ``grace_s``, since ``unread_since`` or, on the first such
    read, since this read began (a read that took longer than the grace pauses at once).

    A step's read is given up at its deadline (:mod:`console.runs.reading`): a cluster that hangs
    gives a picture with every source unavailable within seconds, at every step, and ``read_s``
    runs from when the read still waited for began, so the hold comes at the first step and the
    pause at the grace, counted from when the cluster stopped answering."""
    failed = [
        name
        for name, status in (
            ("Metadata", state.status.metadata),
            ("ListPartitionReassignments", state.status.reassignments),
        )
        if status is not SourceStatus.OK
    ]
    slow = read_s > grace_s
    if not failed and not slow:
        return None
    waited = state.taken_at - (unread_since if unread_since is not None else state.taken_at - read_s)
    late = waited > grace_s
    if failed:
        words = f"{' and '.join(failed)} did not answer" + (
            f" for more than the {grace_s:.0f} s allowed" if late else "; no wave is sent until it does"
        )
    else:  # slow, hence late
        words = (
            f"the cluster has not answered in time for more than the {grace_s:.0f} s allowed (it took {read_s:.0f} s)"
        )
    return Concern(Rule.CLUSTER_UNREAD, Action.PAUSE if late else Action.HOLD, words)


# -- throttles ------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Approved:
    """A throttle config the run set and has not taken off: on a broker (a rate) or a topic (the
    replicas the run added to its list)."""

    kind: str
    """``broker`` or ``topic``."""
    name: str
    key: str
    value: str
    """The rate set (bytes/s), or the replica list entries the run added (comma-separated)."""
    ledger_id: int | None = None
    """Its entry in the run's throttle ledger."""


@dataclass(frozen=True)
class ThrottleFix:
    """A throttle config found other than the run set it, and what is done about it."""

    approved: Approved
    seen: str | None
    action: Action
    """:attr:`Action.RESTORE` (set back) or :attr:`Action.ADOPT` (a lower rate kept)."""

    @property
    def text(self) -> str:
        where = f"broker {self.approved.name}" if self.approved.kind == "broker" else f"topic {self.approved.name}"
        if self.approved.kind == "topic":
            return f"{where}'s {self.approved.key} lost the run's replicas: set back"
        seen = "removed" if self.seen is None else f"set to {human_rate(_rate(self.seen))}"
        approved = human_rate(_rate(self.approved.value))
        if self.action is Action.ADOPT:
            return f"{where}'s {self.approved.key} lowered by a person to {human_rate(_rate(self.seen))} (approved at {approved}): kept"
        return f"{where}'s {self.approved.key} {seen} by someone else: set back to the {approved} approved"


def _rate(value: str | None) -> int:
    try:
        return int(str(value))
    except ValueError:
        return 0


def throttle_changes(state: ClusterState, approved: Iterable[Approved]) -> list[ThrottleFix]:
    """Compare what the run set with what the cluster shows: a broker rate raised, removed or not a
    number is set back, a lower one adopted; a topic list missing replicas the run added is set
    back. Nothing when the configs were not read, and nothing of a broker that is down (its configs
    are not read, and cannot be set: it is judged again once it is back)."""
    if state.status.configs is not SourceStatus.OK:
        return []
    brokers, topics = state.throttles.broker_map(), state.throttles.topic_map()
    live = {str(b.id) for b in state.brokers if b.live}
    fixes = []
    for a in approved:
        if a.kind == "broker":
            if a.name not in live:
                continue
            seen = brokers.get(a.name, {}).get(a.key)
            if seen == a.value:
                continue
            lowered = seen is not None and seen.isdigit() and 0 < int(seen) < _rate(a.value)
            fixes.append(ThrottleFix(a, seen, Action.ADOPT if lowered else Action.RESTORE))
        else:
            seen = topics.get(a.name, {}).get(a.key)
            listed = set(map(str.strip, (seen or "").split(",")))  # at C speed: a run sets thousands
            if "*" in listed or set(a.value.split(",")) <= listed:
                continue
            fixes.append(ThrottleFix(a, seen, Action.RESTORE))
    return fixes


def throttle_overruns(
    into: Mapping[BrokerId, float],
    state: ClusterState,
    approved: Iterable[Approved],
    factor: float,
    slack: float = OVERRUN_SLACK,
) -> list[BrokerId]:
    """The brokers copying in faster than ``factor`` × the follower rate the run set on them and
    faster than that rate + ``slack`` (``into``: the observed copy rate into each broker, bytes/s),
    their configs reading back right."""
    shown = state.throttles.broker_map()
    rates = {
        BrokerId(int(a.name)): _rate(a.value)
        for a in approved
        if a.kind == "broker" and a.key == FOLLOWER_RATE and shown.get(a.name, {}).get(a.key) == a.value
    }
    return sorted(b for b, r in rates.items() if r > 0 and into.get(b, 0.0) > max(factor * r, r + slack))


def overrun_concern(brokers: Sequence[BrokerId], into: Mapping[BrokerId, float], polls: int) -> Concern:
    """The throttle is not holding on ``brokers`` (for ``polls`` polls in a row)."""
    seen = "; ".join(f"broker {b} takes in {human_rate(into.get(b, 0.0))}" for b in brokers)
    return Concern(
        Rule.THROTTLE_NOT_HOLDING,
        Action.PAUSE,
        f"the throttle is not holding on broker {ids_text(brokers)} for {polls} polls although its configs read "
        f"back right ({seen})",
        tuple(brokers),
    )


BROKER_RATES = (LEADER_RATE, FOLLOWER_RATE)
"""The broker rate configs a run sets (the log dir copy's own rate aside)."""
