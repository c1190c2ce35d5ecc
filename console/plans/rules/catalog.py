"""Every check of a plan entry, once: the rules both runners evaluate (in this order, which is the
order of a partition's findings within a severity).

To add a finding: its code in :mod:`console.plans.rules.codes`, then a :class:`Rule` here (a
condition over the batch's columns and the words of one hit) in :data:`RULES`; a column the
condition needs goes into :class:`~console.plans.rules.batch.EntryBatch` and both runners fill it.
A finding about the whole plan or a broker is a function of the review's totals in
:mod:`console.plans.rules.overall`."""

from __future__ import annotations

import numpy as np

from console.core.limits import INT32_MAX
from console.core.model import Severity
from console.plans.columns import PAD, Bools, Ints
from console.plans.diff import ChangeKind
from console.plans.plan import ANY
from console.plans.rules import codes as C
from console.plans.rules.batch import BrokerTable, EntryBatch
from console.plans.rules.engine import Hits, Rule, Said, cells, listed, rows

ERROR, WARNING, INFO = Severity.ERROR, Severity.WARNING, Severity.INFO


def _ids(ids: list[int]) -> str:
    return ",".join(map(str, ids)) or "none"


# -- the shape of each entry: what the controller rejects with INVALID_REPLICA_ASSIGNMENT


def _empty(b: EntryBatch, t: BrokerTable) -> Hits:
    return rows(b.target_len == 0)


def _negative(b: EntryBatch, t: BrokerTable) -> Hits:
    real = b.target != PAD
    return rows((real & ((b.target < 0) | (b.target > INT32_MAX))).any(axis=1))


def _duplicate(b: EntryBatch, t: BrokerTable) -> Hits:
    ordered = np.sort(b.target, axis=1)
    return rows(((ordered[:, 1:] == ordered[:, :-1]) & (ordered[:, 1:] != PAD)).any(axis=1))


def _dirs_length(b: EntryBatch, t: BrokerTable) -> Hits:
    n = b.target_len.tolist()
    return listed([(i, 0) for i, d in b.log_dirs.items() if len(d) != n[i]])


SHAPE = (
    Rule(
        (C.EMPTY_REPLICAS,),
        ERROR,
        _empty,
        lambda b, t, i, j: (C.EMPTY_REPLICAS, f"{b.name(i)}: the replica list is empty.", "Give at least one broker."),
    ),
    Rule(
        (C.NEGATIVE_BROKER,),
        ERROR,
        _negative,
        lambda b, t, i, j: (
            C.NEGATIVE_BROKER,
            f"{b.name(i)}: invalid broker id in {b.targets(i)}.",
            f"Broker ids are integers from 0 to {INT32_MAX}.",
        ),
    ),
    Rule(
        (C.DUPLICATE_BROKER,),
        ERROR,
        _duplicate,
        lambda b, t, i, j: (
            C.DUPLICATE_BROKER,
            f"{b.name(i)}: duplicate broker in {b.targets(i)}.",
            "Each broker may hold one replica of a partition.",
        ),
    ),
    Rule(
        (C.LOG_DIRS_LENGTH,),
        ERROR,
        _dirs_length,
        lambda b, t, i, j: (
            C.LOG_DIRS_LENGTH,
            f"{b.name(i)}: {len(b.log_dirs[i])} log dirs for {b.target_len[i]} replicas.",
            'Give one log dir (or "any") per replica.',
        ),
    ),
)


# -- what does not exist, and where replicas are added


def _unknown(b: EntryBatch, t: BrokerTable, i: int, j: int) -> Said:
    topic = b.topic[i]
    if b.topic_partitions[i] == PAD:
        return (
            C.UNKNOWN_TOPIC,
            f"Topic {topic} does not exist.",
            "Check the name (topic names are case-sensitive) or remove its entries.",
        )
    return (
        C.UNKNOWN_PARTITION,
        f"Partition {b.name(i)} does not exist ({topic} has {b.topic_partitions[i]} partitions).",
        "Remove the entry; add partitions with kafka-topics.sh --alter first if intended.",
    )


def not_eligible_words(registered: bool, fenced: bool, live: bool) -> str:
    """Why a broker takes no new replica: fenced (registered, and DescribeCluster says it is
    fenced), not live (not registered), or not eligible (KIP-841)."""
    if registered and fenced:
        return C.FENCED_WHY
    return "is not live" if not live else "is not eligible for new replicas (KIP-841)"


def _adding(b: EntryBatch, t: BrokerTable, i: int, j: int) -> Said:
    broker = int(b.target[i, j])
    at = int(t.at(np.array([broker], np.int64))[0])
    if at < 0:
        return (
            C.UNKNOWN_BROKER,
            f"{b.name(i)}: broker {broker} is unknown to the cluster.",
            "Use the id of a broker in the cluster's broker list.",
        )
    why = not_eligible_words(bool(t.registered[at]), bool(t.fenced[at]), bool(t.live[at]))
    return (
        C.BROKER_NOT_ELIGIBLE,
        f"{b.name(i)}: broker {broker} {why}; the controller refuses adding a replica there "
        "(or the reassignment would stall).",
        "Wait until the broker is back, or pick another broker.",
    )


def on_cordoned(b: EntryBatch, t: BrokerTable) -> Bools:
    """Cells adding a replica on a cordoned broker (KIP-1066)."""
    if not t.cordoned.any():
        return np.zeros(b.target.shape, np.bool_)
    out: Bools = b.adding & t.flag(t.cordoned, b.target)
    return out


def _cordoned(b: EntryBatch, t: BrokerTable, i: int, j: int) -> Said:
    said = f"{b.name(i)}: broker {b.target[i, j]} is cordoned (cordoned.log.dirs) and would receive a replica. "
    if t.refuses_cordoned:
        return C.CORDONED_REFUSED, said + C.CORDON_REFUSED_WHY, C.CORDON_REFUSED_HINT
    return C.CORDONED_DESTINATION, said + C.CORDON_WHY, C.CORDON_HINT


WHERE = (
    Rule((C.UNKNOWN_TOPIC, C.UNKNOWN_PARTITION), ERROR, lambda b, t: rows(~b.known), _unknown),
    Rule(
        (C.UNKNOWN_BROKER, C.BROKER_NOT_ELIGIBLE),
        ERROR,
        lambda b, t: cells(b.adding & ~t.flag(t.eligible, b.target)),
        _adding,
    ),
    # Kafka 4.3's controller takes an explicit reassignment onto a cordoned broker, the console does
    # not (unless overridden); 4.4's refuses it: no override then
    Rule((C.CORDONED_DESTINATION, C.CORDONED_REFUSED), ERROR, lambda b, t: cells(on_cordoned(b, t)), _cordoned),
)


# -- named log dirs (an unnamed, "any", or unreported one is not checked)


def _named(b: EntryBatch, t: BrokerTable) -> list[tuple[int, int, int, str, bool]]:
    """Each named dir of a known entry on a broker that reports its dirs: row, cell, broker, path,
    and whether the broker has that dir."""
    return b.once("named dirs", lambda: _named_dirs(b, t))


def _named_dirs(b: EntryBatch, t: BrokerTable) -> list[tuple[int, int, int, str, bool]]:
    out = []
    for i, dirs in b.log_dirs.items():
        if not b.known[i]:
            continue
        for j, (broker, path) in enumerate(zip(b.targets(i), dirs, strict=False)):
            has = t.log_dirs.get(broker)
            if path != ANY and has:
                out.append((i, j, broker, path, path in has))
    return out


def _arrives(b: EntryBatch, i: int, j: int, path: str) -> bool:
    """Whether the replica in cell ``j`` arrives in ``path`` (it is not there already)."""
    now = b.dir_now.get(i)
    return now is None or now[j] != path


def _cordoned_dirs(b: EntryBatch, t: BrokerTable) -> Hits:
    said = on_cordoned(b, t)  # said once, for the broker
    return listed(
        [
            (i, j)
            for i, j, broker, path, has in _named(b, t)
            if has and path in t.cordoned_dirs.get(broker, ()) and not said[i, j] and _arrives(b, i, j, path)
        ]
    )


def _offline_dirs(b: EntryBatch, t: BrokerTable) -> Hits:
    return listed(
        [
            (i, j)
            for i, j, broker, path, has in _named(b, t)
            if has and path in t.dir_errors.get(broker, {}) and _arrives(b, i, j, path)
        ]
    )


def _dir_of(b: EntryBatch, i: int, j: int) -> tuple[str, int]:
    return b.log_dirs[i][j], int(b.target[i, j])


DIRS = (
    Rule(
        (C.UNKNOWN_LOG_DIR,),
        ERROR,
        lambda b, t: listed([(i, j) for i, j, _, _, has in _named(b, t) if not has]),
        lambda b, t, i, j: (
            C.UNKNOWN_LOG_DIR,
            f"{b.name(i)}: broker {_dir_of(b, i, j)[1]} has no log dir {_dir_of(b, i, j)[0]}.",
            'Use one of the log dirs the broker reports (DescribeLogDirs), or "any".',
        ),
    ),
    Rule(
        (C.CORDONED_DESTINATION,),
        ERROR,
        _cordoned_dirs,
        lambda b, t, i, j: (
            C.CORDONED_DESTINATION,
            f"{b.name(i)}: log dir {_dir_of(b, i, j)[0]} of broker {_dir_of(b, i, j)[1]} is cordoned and would "
            "receive the replica. " + C.CORDON_WHY,
            C.CORDON_HINT,
        ),
    ),
    Rule(
        (C.OFFLINE_LOG_DIR,),
        ERROR,
        _offline_dirs,
        lambda b, t, i, j: (
            C.OFFLINE_LOG_DIR,
            f"{b.name(i)}: log dir {_dir_of(b, i, j)[0]} of broker {_dir_of(b, i, j)[1]} is offline and would "
            f"receive the replica (DescribeLogDirs: {t.dir_errors[_dir_of(b, i, j)[1]][_dir_of(b, i, j)[0]]}).",
            C.OFFLINE_DIR_HINT,
        ),
    ),
)


# -- each known partition that changes (an unchanged one only says so)


def _fenced_cells(b: EntryBatch, t: BrokerTable) -> Bools:
    """Cells of the original replicas on a fenced broker (KIP-1073)."""
    if not t.fenced.any():
        return np.zeros(b.current.shape, np.bool_)
    return b.once("fenced", lambda: t.flag(t.fenced, b.current))


def _on_fenced(b: EntryBatch, t: BrokerTable, i: int, j: int) -> Said:
    there = [x for x, f in zip(b.currents(i), _fenced_cells(b, t)[i].tolist(), strict=False) if f]
    leader = int(b.leader_before[i])
    who = f"the leader, broker {leader}" if leader != PAD else "a leader, and it has none"
    return (
        C.SOURCE_ON_FENCED,
        f"{b.name(i)}: its replica on broker {_ids(there)} sits on a fenced broker (KIP-1073): its data "
        f"cannot be copied from there; the new replicas copy from {who}.",
        "Start the broker again if its copy is the one needed; otherwise acknowledge.",
    )


def _leader_moves(b: EntryBatch, t: BrokerTable) -> Hits:
    la = b.leader_after
    return rows(b.live & ~b.is_kind(ChangeKind.REORDER) & (la != PAD) & (la != b.target[:, 0]))


STATE = (
    Rule(
        (C.NO_CHANGE,),
        INFO,
        lambda b, t: rows(b.is_kind(ChangeKind.NONE)),
        lambda b, t, i, j: (
            C.NO_CHANGE,
            f"{b.name(i)} already has replicas {_ids(b.targets(i))}: skipped.",
            "Nothing to do; it is left out of the submission.",
        ),
    ),
    Rule(
        (C.REORDER_ONLY,),
        INFO,
        lambda b, t: rows(b.is_kind(ChangeKind.REORDER)),
        lambda b, t, i, j: (
            C.REORDER_ONLY,
            f"{b.name(i)}: only the order changes ({_ids(b.currents(i))} → {_ids(b.targets(i))}); "
            "it completes at once.",
            "The leader does not move without a preferred leader election.",
        ),
    ),
    Rule(
        (C.LEADER_NEEDS_ELECTION,),
        INFO,
        _leader_moves,
        lambda b, t, i, j: (
            C.LEADER_NEEDS_ELECTION,
            f"{b.name(i)}: broker {b.leader_after[i]} stays leader; the preferred leader becomes {b.target[i, 0]}.",
            "Run a preferred leader election after the move to make it lead.",
        ),
    ),
    Rule(
        (C.ALREADY_REASSIGNING,),
        WARNING,
        lambda b, t: rows(b.live & b.in_flight),
        lambda b, t, i, j: (
            C.ALREADY_REASSIGNING,
            f"{b.name(i)} is already being reassigned: the controller keeps its original replicas "
            f"{_ids(b.currents(i))} and drops adding replicas that are not in the new target.",
            "Acknowledge, or wait for the current reassignment to finish (or cancel it) first.",
        ),
    ),
    Rule(
        (C.SOURCE_ON_FENCED,),
        WARNING,
        lambda b, t: rows(b.live & ~b.is_kind(ChangeKind.REORDER) & _fenced_cells(b, t).any(axis=1)),
        _on_fenced,
    ),
    Rule(
        (C.OFFLINE_NOW,),
        WARNING,
        lambda b, t: rows(b.live & (b.leader_before == PAD)),
        lambda b, t, i, j: (
            C.OFFLINE_NOW,
            f"{b.name(i)} has no leader now: nothing can be copied.",
            "Bring a replica back first; the new replicas cannot catch up without a leader.",
        ),
    ),
    Rule(
        (C.RF_CHANGE,),
        WARNING,
        lambda b, t: rows(b.live & (b.target_len != b.current_len)),
        lambda b, t, i, j: (
            C.RF_CHANGE,
            f"{b.name(i)}: the replication factor changes from {b.current_len[i]} to {b.target_len[i]}.",
            "Acknowledge if intended; the official tool changes it the same way.",
        ),
    ),
)


# -- min ISR: fewer replicas than min ISR after the plan is an error where the plan lowers the
# replication factor (the partition then refuses acks=all writes); a warning where it was below
# already and the plan does not lower it (refusing the plan protects nothing)


def _below(b: EntryBatch) -> Bools:
    out: Bools = b.live & (b.min_isr != PAD) & (b.target_len < b.min_isr)
    return out


MIN_ISR = (
    Rule(
        (C.RF_BELOW_MIN_ISR,),
        ERROR,
        lambda b, t: rows(_below(b) & (b.target_len < b.current_len)),
        lambda b, t, i, j: (
            C.RF_BELOW_MIN_ISR,
            f"{b.name(i)}: {b.target_len[i]} replicas is fewer than min.insync.replicas={b.min_isr[i]}; "
            "Kafka completes such a move, and the partition then refuses writes with acks=all.",
            "Keep at least min.insync.replicas replicas, or lower the topic's min.insync.replicas first.",
        ),
    ),
    Rule(
        (C.RF_STILL_BELOW_MIN_ISR,),
        WARNING,
        lambda b, t: rows(_below(b) & ~(b.target_len < b.current_len)),
        lambda b, t, i, j: (
            C.RF_STILL_BELOW_MIN_ISR,
            f"{b.name(i)} has {b.current_len[i]} replicas now, fewer than min.insync.replicas={b.min_isr[i]}, and "
            f"{b.target_len[i]} after this plan: it refuses writes with acks=all before and after (the plan does "
            "not cause that).",
            "Acknowledge; raise its replication factor (or lower min.insync.replicas) to let it take acks=all writes.",
        ),
    ),
    Rule(
        (C.BELOW_MIN_ISR_NOW,),
        WARNING,
        lambda b, t: rows(b.live & (b.min_isr != PAD) & (b.in_sync < b.min_isr)),
        lambda b, t, i, j: (
            C.BELOW_MIN_ISR_NOW,
            f"{b.name(i)} is below min ISR now ({b.in_sync[i]} of {b.min_isr[i]} in sync).",
            "Fix the partition's health before moving it, unless the move is the fix.",
        ),
    ),
)


# -- racks: how many different racks hold the replicas before and after


def _racks(b: EntryBatch, t: BrokerTable) -> tuple[Ints, Ints]:
    """How many racks each entry's replicas span before and after."""
    return b.once("racks", lambda: (t.racks_spanned(b.current), t.racks_spanned(b.target)))


def _reduced(b: EntryBatch, t: BrokerTable) -> Bools:
    """Fewer racks than before, beyond what fewer replicas force (RF 3 → 2 spans at most 2 racks);
    not said of a target naming a broker the cluster does not know (it has no rack to count: the
    unknown broker is the error)."""
    before, after = _racks(b, t)
    out: Bools = b.live & ~_names_unknown(b, t) & (before > 0) & (after < np.minimum(before, b.target_len))
    return out


def _names_unknown(b: EntryBatch, t: BrokerTable) -> Bools:
    """Entries whose target names a broker the cluster does not know."""
    return b.once("names unknown", lambda: ((b.target != PAD) & (t.at(b.target) < 0)).any(axis=1))


def _underused(b: EntryBatch, t: BrokerTable) -> Hits:
    if not t.available_racks:
        return rows(np.zeros(len(b), np.bool_))
    after = _racks(b, t)[1]
    judged = b.live & ~_names_unknown(b, t) & ~_reduced(b, t)
    return rows(judged & (after < np.minimum(b.target_len, t.available_racks)))


def _spans(b: EntryBatch, t: BrokerTable, i: int) -> tuple[int, int]:
    before, after = b.once("racks lists", lambda: tuple(x.tolist() for x in _racks(b, t)))
    return before[i], after[i]


RACKS = (
    Rule(
        (C.RACK_SPREAD_REDUCED,),
        WARNING,
        lambda b, t: rows(_reduced(b, t)),
        lambda b, t, i, j: (
            C.RACK_SPREAD_REDUCED,
            f"{b.name(i)}: replicas spread over {_spans(b, t, i)[1]} racks instead of {_spans(b, t, i)[0]}.",
            "Pick brokers in different racks so a rack failure cannot take the partition down.",
        ),
    ),
    Rule(
        (C.RACKS_UNDERUSED,),
        WARNING,
        _underused,
        lambda b, t, i, j: (
            C.RACKS_UNDERUSED,
            f"{b.name(i)}: {b.target_len[i]} replicas on {_spans(b, t, i)[1]} racks while {t.available_racks} "
            "are available.",
            "Spread the replicas over more racks.",
        ),
    ),
)


# -- a plan drafted against an older snapshot

STALENESS = (
    Rule(
        (C.STALE,),
        ERROR,
        lambda b, t: listed([(i, 0) for i in sorted(b.stale)]),
        lambda b, t, i, j: (
            C.STALE,
            f"{b.name(i)} changed since the plan was drafted: replicas were {_ids(list(b.stale[i][0]))}, "
            f"now {_ids(list(b.stale[i][1]))}.",
            "Review the plan again against the current cluster.",
        ),
    ),
)

RULES: tuple[Rule, ...] = SHAPE + WHERE + DIRS + STATE + MIN_ISR + RACKS + STALENESS
"""Every rule about a plan entry, in the order its findings are shown within a severity."""
