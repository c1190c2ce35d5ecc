"""Drain a log dir: the one goal that places dirs (:meth:`~console.plans.layout.Layout.move_dir`).
A replica moves to another dir of its broker while one has room, else to another broker as a
decommission would move it."""

from __future__ import annotations

from console.core.errors import ClusterUnavailable, ConfigError, GoalImpossible
from console.core.format import human_bytes, plural
from console.core.model import Broker, BrokerId, ClusterState, Severity, replicas_in_dir
from console.plans.generators.context import Bound, Context
from console.plans.layout import Layout


def drain_log_dir(ctx: Context) -> Bound:
    """Empty log dir ``options.log_dir`` of broker ``options.brokers[0]``: each replica in it goes to
    another dir of the same broker while one has room (usable bytes, less what moves into it now),
    biggest replicas first, each into the dir with the most room left (the least data first): so
    the most bytes stay on the broker and the least cross the network. What does not fit goes to
    another broker as a decommission moves it (eligible, not cordoned nor excluded, racks kept).
    Never into the dir drained, a cordoned dir (KIP-1066), an offline dir, or one whose room is not
    known. Every replica leaving the dir is copied, so the lower bound is what leaves it."""
    lay, opts = ctx.lay, ctx.options
    b, path = opts.brokers[0], opts.log_dir or ""
    state = lay.state
    broker = _drained_broker(state, b, path)
    parts = state.partitions
    on_b = [r for r, p in enumerate(parts) if b in p.replicas]
    inside = {p.key for p in replicas_in_dir((parts[r] for r in on_b), broker, path)}
    # the goal is judged on the topics chosen: what the topic filter leaves out is said, not a warning
    rows, left_out = ctx.filtered(r for r in on_b if parts[r].key in inside)
    moving_dirs = {r for r in on_b if any(g.broker == b and g.is_future for g in parts[r].logs)}
    stuck = [r for r in rows if not ctx.movable[r] or r in moving_dirs or b not in lay.reps[r]]
    left = set(stuck)
    movable = [r for r in rows if r not in left]
    where = f"log dir {path} of broker {b}"
    if stuck:
        ctx.note(
            "drain-dir-incomplete",
            Severity.WARNING,
            f"{plural(len(stuck), 'partition')} with a replica in {where} cannot move now (being reassigned or "
            f"moved between dirs, or offline): {_names(lay, stuck)}. The dir will not be empty after this plan.",
            "Generate again once those partitions can move.",
        )
    ctx.note_left_out(left_out, f"in {where}", "the dir will not be empty after it")
    if not rows:
        ctx.note("empty-log-dir", Severity.INFO, f"No replica of the chosen topics is in {where}: nothing to move.")
    room = _dir_room(ctx, broker, path, on_b)
    within: dict[str, list[int]] = {}
    across: list[int] = []
    stays: list[int] = []
    for row in ctx.by_size(movable):  # biggest first
        size = max(lay.size[row], parts[row].size_on(BrokerId(b)) or 0)  # what lands on the disk: its own log
        best = min(room, key=lambda k: (-room[k], k), default=None)
        if best is not None and room[best] >= size:
            lay.move_dir(row, b, best)
            room[best] -= size
            within.setdefault(best, []).append(row)
            continue
        d = ctx.destination(row, leaving=b)
        if d is None or (ctx.rack_aware and lay.rack_count(row, without=b, plus=d) < lay.rack_count(row)):
            stays.append(row)
            continue
        lay.move(row, b, d)
        across.append(row)
    if movable and not within and not across:
        raise GoalImpossible(
            f"No replica in {where} can move: no other dir of the broker may take them (full, cordoned, "
            "offline, or none), and no eligible broker can take them without lowering their racks (every other "
            "one is down, excluded, cordoned or holds them already).",
            "Free space in the broker's other dirs, uncordon a dir, or add brokers.",
        )
    kept = [r for rs in within.values() for r in rs]
    moved = kept + across
    _drain_notes(ctx, where, movable, within, across, stays)
    return (len(moved), sum(lay.size[r] for r in moved)), not stuck and not stays


def _drained_broker(state: ClusterState, b: int, path: str) -> Broker:
    """The broker whose log dir ``path`` is drained, refused when its dirs are unknown or it has no such dir."""
    broker = state.broker(BrokerId(b))
    if broker is None or not broker.log_dirs:
        why = (
            "it is not registered"
            if broker is None or not broker.registered
            else "it is down (only a live broker answers DescribeLogDirs)"
            if not broker.live
            else "they were not read (DescribeLogDirs)"
        )
        raise (ClusterUnavailable if broker is not None and broker.live else ConfigError)(
            f"Broker {b} reports no log dirs: {why}.",
            "Take a snapshot that has them (once the broker answers DescribeLogDirs).",
        )
    dirs = {d.path: d for d in broker.log_dirs}
    drained = dirs.get(path)
    if drained is None:
        raise ConfigError(
            f"Broker {b} has no log dir {path} (its dirs: {', '.join(dirs)}).",
            "Pick one of the broker's log dirs.",
        )
    return broker


def _dir_room(ctx: Context, broker: Broker, path: str, on_b: list[int]) -> dict[str, int]:
    """The other log dirs of ``broker`` that may receive replicas of ``path`` and the bytes each has
    room for (usable bytes less what is being copied into it now); the notes say why others may not."""
    lay, b = ctx.lay, int(broker.id)
    drained = next(d for d in broker.log_dirs if d.path == path)
    where = f"log dir {path} of broker {b}"
    others = [d for d in broker.log_dirs if d.path != path]
    if not others:
        return {}
    if not broker.eligible:
        why = "is not live (or fenced)"
    elif b in ctx.options.exclude_brokers:
        why = "is excluded"
    elif drained.offline:
        why = f"reports {path} offline (DescribeLogDirs: {drained.error}), so its replicas cannot be read there"
    else:
        why = ""
    if why:
        ctx.note(
            "drain-dir-other-brokers",
            Severity.INFO,
            f"Broker {b} {why}: the replicas in {where} go to other brokers (copied from their leaders), "
            "not to its other dirs.",
        )
        return {}
    pending: dict[str, int] = {}
    for r in on_b:
        p = lay.state.partitions[r]
        for g in p.logs:
            if g.broker == b and g.is_future:  # a copy into that dir is under way: it takes its full size
                pending[g.log_dir] = pending.get(g.log_dir, 0) + max(0, (p.size or 0) - g.size)
    room: dict[str, int] = {}
    skipped: list[str] = []
    for d in others:
        if d.offline:
            skipped.append(f"{d.path} is offline")
        elif broker.dir_cordoned(d.path):
            skipped.append(f"{d.path} is cordoned")
        elif d.usable_bytes is None:
            skipped.append(f"{d.path} does not report its free space (DescribeLogDirs before v4)")
        else:
            room[d.path] = d.usable_bytes - pending.get(d.path, 0)
    if skipped:
        ctx.note(
            "drain-dir-skipped-dirs",
            Severity.INFO,
            f"Not a destination on broker {b}: {'; '.join(skipped)}.",
        )
    return room


def _drain_notes(
    ctx: Context, where: str, movable: list[int], within: dict[str, list[int]], across: list[int], stays: list[int]
) -> None:
    """What draining the dir does: how much goes to the broker's other dirs and to other brokers, what stays."""
    lay = ctx.lay
    kept = [r for rs in within.values() for r in rs]
    moved = kept + across

    def size_of(rs: list[int]) -> int:
        return sum(lay.size[r] for r in rs)

    if moved:
        per_dir = ", ".join(f"{plural(len(rs), 'replica')} to {k}" for k, rs in sorted(within.items()))
        ctx.note(
            "drain-dir-moved",
            Severity.INFO,
            f"Of {plural(len(movable), 'replica')} ({human_bytes(size_of(movable))}) that may move out of {where}: "
            f"{len(kept):,} ({human_bytes(size_of(kept))}) to its other dirs"
            + (f" ({per_dir})" if per_dir else "")
            + f", {len(across):,} ({human_bytes(size_of(across))}) to other brokers.",
            "A move between dirs of one broker copies on that broker's disks only (no network, no replication "
            "throttle; replica.alter.log.dirs.io.max.bytes.per.second throttles it).",
        )
    if stays:
        ctx.note(
            "drain-dir-no-room",
            Severity.WARNING,
            f"{plural(len(stays), 'replica')} ({human_bytes(size_of(stays))}) {'stays' if len(stays) == 1 else 'stay'} "
            f"in {where}: no other dir of the broker has room for {'it' if len(stays) == 1 else 'them'} and no "
            f"eligible broker can take {'it' if len(stays) == 1 else 'them'} without lowering the partition's racks: "
            f"{_names(lay, stays)}.",
            "Free space in the broker's other dirs, or add brokers, then generate again.",
        )


def _names(lay: Layout, rows: list[int], most: int = 5) -> str:
    """The partitions of ``rows`` by name, the first ``most`` of them."""
    names = [lay.state.partitions[r].name for r in sorted(rows)[:most]]
    return ", ".join(names) + (f" and {len(rows) - most:,} more" if len(rows) > most else "")
