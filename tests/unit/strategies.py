"""Random clusters and plans for the property tests of the pure core (hypothesis strategies and
seeded builders): clusters of a given :class:`Shape` (many brokers, skewed sizes, some in flight),
and small odd clusters with plans against them (duplicate, negative or huge ids, log dirs, stale
bases)."""

from __future__ import annotations

import random
from dataclasses import dataclass, replace

from hypothesis import strategies as st

from console.core.model import Broker, BrokerId, ClusterState, LogDir, Partition, ReadStatus, ReplicaLog, SourceStatus
from console.plans.plan import ANY, Plan, PlanEntry

OFFLINE = "error 56 (KAFKA_STORAGE_ERROR: the dir is offline)"
"""``LogDir.error`` of an offline dir, as the adapter words it."""


# -- clusters of a shape ---------------------------------------------------------------------------
@dataclass(frozen=True)
class Shape:
    brokers: int
    racks: int
    down: int
    partitions: int
    rf: int
    in_flight: float
    seed: int
    cordoned: int = 0
    """Brokers cordoned as a whole (KIP-1066): each by ``*``, or by every log dir cordoned."""
    partly_cordoned: int = 0
    """Brokers with one of their two log dirs cordoned (they still receive replicas)."""
    log_dirs: int = 0
    """0: the live brokers report no log dirs of their own (replicas in "/d"); 2: each reports "/d"
    (room to spare) and "/e" (room drawn: none, some or plenty), replicas spread over both, a few
    being moved from one to the other (a future replica)."""
    offline_dirs: int = 0
    """With ``log_dirs``: brokers whose "/e" is offline (DescribeLogDirs lists none of its replicas)."""
    min_isr: int = 0
    """0: no topic has ``min.insync.replicas`` read; else topics t0 and t2 have it at this value
    (often above the replication factor of some partitions: a drain or a move must pass review)."""


shapes = st.builds(
    Shape,
    brokers=st.integers(1, 40),
    racks=st.integers(0, 6),
    down=st.integers(0, 3),
    partitions=st.integers(1, 120),
    rf=st.integers(1, 4),
    in_flight=st.sampled_from([0.0, 0.1, 0.3]),
    seed=st.integers(0, 2**16),
    cordoned=st.sampled_from([0, 0, 1, 2]),
    partly_cordoned=st.integers(0, 1),
    log_dirs=st.sampled_from([0, 2, 2]),
    offline_dirs=st.sampled_from([0, 0, 1]),
    min_isr=st.sampled_from([0, 0, 1, 2, 3]),
)


def _cordons(shape: Shape, brokers: tuple[Broker, ...]) -> tuple[Broker, ...]:
    """``brokers`` with ``shape.cordoned`` of them cordoned and ``shape.partly_cordoned`` with one
    dir of two cordoned (drawn from their own random stream: a shape without cordons is the same
    cluster as before cordons existed)."""
    if not shape.cordoned and not shape.partly_cordoned:
        return brokers
    rnd = random.Random(shape.seed ^ 0xC0D0)
    picked = rnd.sample(range(len(brokers)), min(len(brokers), shape.cordoned + shape.partly_cordoned))
    whole, partly = set(picked[: shape.cordoned]), set(picked[shape.cordoned :])
    out = []
    for i, b in enumerate(brokers):
        if i in whole and rnd.random() < 0.5:
            b = replace(
                b, cordoned_log_dirs=("*",), log_dirs=(LogDir("/d", cordoned=True), LogDir("/e", cordoned=True))
            )
        elif i in whole:  # every dir named: cordoned as a whole too
            b = replace(b, cordoned_log_dirs=("/d", "/e"), log_dirs=(LogDir("/d"), LogDir("/e")))
        elif i in partly:
            b = replace(
                b, cordoned_log_dirs=("/e",), log_dirs=(LogDir("/d", cordoned=False), LogDir("/e", cordoned=True))
            )
        out.append(b)
    return tuple(out)


def cluster(shape: Shape) -> ClusterState:
    """A random cluster: skewed (Pareto) sizes, some brokers down (still named by replica lists),
    some partitions in flight, replicas placed anywhere (racks ignored: some partitions break them)."""
    rnd = random.Random(shape.seed)
    n = shape.brokers
    down = set(rnd.sample(range(n), min(shape.down, n - 1)))
    brokers = tuple(
        Broker(
            BrokerId(i),
            "h",
            9092,
            f"r{i % shape.racks}" if shape.racks else None,
            registered=i not in down,
            in_api=i not in down,
        )
        for i in range(n)
    )
    brokers = _cordons(shape, brokers)
    parts = []
    for k in range(shape.partitions):
        topic, p = f"t{k % 4}", k // 4
        rf = min(shape.rf, n)
        r = rnd.sample(range(n), rf)
        if rnd.random() < 0.3:  # a crowded corner
            r = rnd.sample(range(min(n, max(rf, 3))), rf)
        size = int(rnd.paretovariate(1.1) * 1000) if rnd.random() > 0.05 else 0
        target = [BrokerId(b) for b in r]
        replicas, adding, removing = list(target), [], []
        spare = [b for b in range(n) if b not in r]
        if spare and rnd.random() < shape.in_flight:
            new = BrokerId(rnd.choice(spare))
            removing = [target[-1]]
            target = [*target[:-1], new]
            adding = [new]
            replicas = target + removing
        isr = tuple(b for b in replicas if b not in down and b not in adding)
        leader = isr[0] if isr else None
        logs = tuple(ReplicaLog(b, "/d", size) for b in replicas if b not in adding)
        parts.append(Partition(topic, p, tuple(replicas), isr, leader, tuple(adding), tuple(removing), logs=logs))
    brokers, parts = _dirs(shape, brokers, parts)
    status = ReadStatus(SourceStatus.OK, SourceStatus.OK, SourceStatus.OK, SourceStatus.OK)
    mins = tuple((t, shape.min_isr) for t in ("t0", "t2") if shape.min_isr and any(p.topic == t for p in parts))
    return ClusterState(
        1.0, brokers, tuple(sorted(parts, key=lambda p: p.key)), cluster_id="c", status=status, min_insync=mins
    )


PLENTY = 10**15
"""Room enough for any cluster drawn here: a dir with it never runs out."""


def _dirs(
    shape: Shape, brokers: tuple[Broker, ...], parts: list[Partition]
) -> tuple[tuple[Broker, ...], list[Partition]]:
    """``shape.log_dirs``: every live broker reports "/d" and "/e" (keeping its cordons), replicas
    spread over both, some "/e" offline (drawn from their own random stream, as :func:`_cordons`)."""
    if not shape.log_dirs:
        return brokers, parts
    rnd = random.Random(shape.seed ^ 0xD1D5)
    live = [b for b in brokers if b.registered]
    offline = {b.id for b in rnd.sample(live, min(len(live), shape.offline_dirs))}
    out = []
    for b in brokers:
        if not b.registered:
            out.append(b)  # a broker that is down does not answer DescribeLogDirs
            continue
        flags = {d.path: d.cordoned for d in b.log_dirs}
        room = rnd.choice([0, 3000, PLENTY])
        error = OFFLINE if b.id in offline else None
        dirs = (LogDir("/d", None, PLENTY, PLENTY, flags.get("/d")), LogDir("/e", error, PLENTY, room, flags.get("/e")))
        out.append(replace(b, log_dirs=dirs))
    known = {b.id for b in live}
    spread = []
    for p in parts:
        logs = []
        for g in p.logs:
            if g.broker not in known:
                logs.append(g)
                continue
            if rnd.random() < 0.4:
                if g.broker not in offline:
                    logs.append(g._replace(log_dir="/e"))
            else:
                logs.append(g)
                if rnd.random() < 0.05 and g.broker not in offline:  # being moved to "/e" now
                    logs.append(g._replace(log_dir="/e", size=g.size // 2, is_future=True))
        spread.append(replace(p, logs=tuple(logs)))
    return tuple(out), spread


# -- odd clusters and plans ------------------------------------------------------------------------
BROKERS = range(7)
odd_ids = st.sampled_from([-1, 2**31 - 1, 2**31, 2**40])
cordon_flags = st.sampled_from([None, None, False, True])
"""A log dir's cordoned flag as DescribeLogDirs gives it (None: before v5)."""
dir_errors = st.sampled_from([None, None, None, OFFLINE])
"""A log dir's DescribeLogDirs error (None: online)."""
cordon_configs = st.sampled_from([None, None, (), (), ("*",), ("/d",), ("/e",), ("/d", "/e")])
"""A broker's ``cordoned.log.dirs`` (None: not read)."""


@st.composite
def clusters(draw: st.DrawFn) -> ClusterState:
    brokers = []
    for b in BROKERS:
        if draw(st.integers(0, 5)) == 0:
            continue  # not registered: only some replica lists name it
        brokers.append(
            Broker(
                BrokerId(b),
                rack=draw(st.sampled_from([None, "a", "b", "c"])),
                registered=True,
                fenced=draw(st.sampled_from([None, None, True])),
                log_dirs=(
                    LogDir("/d", draw(dir_errors), 10**6, draw(st.sampled_from([None, 10, 10**9])), draw(cordon_flags)),
                    *(
                        (LogDir("/e", draw(dir_errors), 10**6, None, draw(cordon_flags)),)
                        if draw(st.booleans())
                        else ()
                    ),
                ),
                cordoned_log_dirs=draw(cordon_configs),
            )
        )
    parts = []
    for t in ("a", "b"):
        for p in range(draw(st.integers(1, 4))):
            replicas = [
                BrokerId(b) for b in draw(st.lists(st.sampled_from(BROKERS), min_size=1, max_size=5, unique=True))
            ]
            adding: tuple[BrokerId, ...] = ()
            removing: tuple[BrokerId, ...] = ()
            if len(replicas) > 1 and draw(st.booleans()):  # in flight: some adding, some removing
                k = draw(st.integers(1, len(replicas) - 1))
                adding = tuple(replicas[:k])
                removing = tuple(draw(st.lists(st.sampled_from(replicas[k:]), max_size=len(replicas) - k, unique=True)))
            isr = tuple(b for b in replicas if draw(st.booleans()))
            leader = draw(st.sampled_from([None, *replicas]))
            logs = tuple(
                ReplicaLog(BrokerId(b), "/d", draw(st.integers(0, 5000)), draw(st.booleans()))
                for b in replicas
                if draw(st.booleans())
            )
            parts.append(Partition(t, p, tuple(replicas), isr, leader, tuple(adding), tuple(removing), logs=logs))
    min_isr = tuple((t, n) for t in ("a", "b") if (n := draw(st.sampled_from([0, 1, 2, 3]))))
    return ClusterState(0.0, tuple(brokers), tuple(parts), min_insync=min_isr)


@st.composite
def plans_for(draw: st.DrawFn, state: ClusterState) -> Plan:
    keys = [p.key for p in state.partitions] + [("a", 9), ("zz", 0)]
    entries = []
    for t, p in draw(st.lists(st.sampled_from(keys), min_size=1, unique=True)):
        replicas = draw(st.lists(st.one_of(st.sampled_from([*BROKERS, 7]), odd_ids), max_size=5))
        if draw(st.booleans()):
            replicas = list(dict.fromkeys(replicas))
        dirs = None
        if draw(st.integers(0, 3)) == 0:
            dirs = tuple(
                draw(st.sampled_from([ANY, "/d", "/e", "/x"])) for _ in range(len(replicas) + draw(st.integers(0, 1)))
            )
        entries.append(PlanEntry(t, p, tuple(BrokerId(b) for b in replicas), dirs))
    basis = {}
    if draw(st.booleans()):
        basis = {k: p.replicas if draw(st.booleans()) else () for k, p in state.partition_index.items()}
    return Plan.of(entries, basis)
