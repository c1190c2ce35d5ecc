"""Overview's view of the replication throttles set now: one table saying of each whether anything
needs it, and what a sweep removed, in words; after a cancel, what another tool left, the command
that removes it and what its removal did (pure)."""

from __future__ import annotations

import shlex
from collections.abc import Iterable, Sequence

from console.core.limits import TOPIC_THROTTLE_KEYS
from console.core.model import BrokerId, ClusterState
from console.moves.throttles import Leftover, LeftoverKind
from console.present.live import throttle_rows, throttle_value_text


def setting_text(key: str, value: str) -> str:
    """A throttle setting's value as Overview lists it: rates human (``9.5 MB/s``); a replica list
    (``0:1,0:2``) with a space after each comma (``0:1, 0:2``), so a long one wraps on the page
    (Kafka reads the list the same with the spaces)."""
    if key in TOPIC_THROTTLE_KEYS:
        return ", ".join(item.strip() for item in value.split(","))
    return throttle_value_text(key, value)


def throttle_table(state: ClusterState, left: Sequence[Leftover], kept: Sequence[Leftover]) -> list[dict[str, str]]:
    """Overview's one table of the throttle configs set now (:func:`console.present.live.throttle_rows`),
    each with whether anything needs it: ``left over`` (nothing in flight needs it: the sweep
    removes it), ``cluster default, kept`` (set on purpose for every broker), or ``in use``."""

    def named(lo: Leftover) -> tuple[str, str]:
        where = "cluster default (every broker)" if lo.kind is LeftoverKind.CLUSTER_DEFAULT else lo.where
        return where, lo.key

    leftover, default = {named(lo) for lo in left}, {named(lo) for lo in kept}
    return [
        {
            **row,
            "value": setting_text(row["config"], row["value"]),
            "needed": "left over: nothing in flight needs it"
            if (row["entity"], row["config"]) in leftover
            else "cluster default, kept"
            if (row["entity"], row["config"]) in default
            else "in use",
        }
        for row in throttle_rows(state)
    ]


def setting_line(lo: Leftover) -> str:
    """``broker 2: follower.replication.throttled.rate (5.0 MB/s)``."""
    return f"{lo.where}: {lo.key} ({setting_text(lo.key, lo.value)})"


def removed_text(removed: Sequence[Leftover]) -> str:
    """What a sweep removed, one setting a line: ``broker 2: follower.replication.throttled.rate (5.0 MB/s)``."""
    return "  \n".join(setting_line(lo) for lo in removed)


def setting_rows(settings: Iterable[Leftover]) -> list[dict[str, str]]:
    """One row per setting, as a sweep's confirmation lists them (on, config, value)."""
    return [{"on": lo.where, "config": lo.key, "value": setting_text(lo.key, lo.value)} for lo in settings]


def sweep_command(settings: Iterable[Leftover], connection: Sequence[str] = ()) -> str:
    """The command that removes exactly ``settings`` (topic and broker throttles nothing in flight
    needs and no run of the console set): ``python -m console throttle --sweep --topic t --broker 1``."""
    chosen = list(settings)
    topics = sorted({lo.name for lo in chosen if lo.kind is LeftoverKind.TOPIC})
    brokers = sorted({int(lo.name) for lo in chosen if lo.kind is LeftoverKind.BROKER})
    args = [*(f"--topic {shlex.quote(t)}" for t in topics), *(f"--broker {b}" for b in brokers)]
    return " ".join(["python -m console throttle --sweep", *args, *(shlex.quote(c) for c in connection)])


def cleared_lines(
    removed: Sequence[Leftover],
    still_set: Sequence[Leftover],
    unconfirmed: Sequence[Leftover],
    needed_now: Sequence[Leftover] = (),
    gone_already: Sequence[Leftover] = (),
) -> list[str]:
    """What a removal of the throttles another tool left did, a line each: removed (read back),
    still set, sent but not confirmed, kept (something in flight needs it now), gone already."""
    lines = [f"Removed (read back from the brokers): {setting_line(lo)}" for lo in removed]
    lines += [f"Still set after the removal: {lo.where}: {lo.key}" for lo in still_set]
    lines += [f"Sent, but not confirmed (could not be read back): {lo.where}: {lo.key}" for lo in unconfirmed]
    lines += [f"Kept, not sent: {lo.where}: {lo.key} (something in flight needs it now)" for lo in needed_now]
    lines += [f"Not sent: {lo.where}: {lo.key} (no longer set)" for lo in gone_already]
    return lines or ["Nothing to remove."]


def involved_text(topics: Sequence[str], brokers: Sequence[BrokerId]) -> str:
    """``topic t (brokers 0,1,2)``: where a cancel's leftover throttles were looked for."""
    return f"{'topic' if len(topics) == 1 else 'topics'} {', '.join(topics)} (brokers {','.join(map(str, brokers))})"
