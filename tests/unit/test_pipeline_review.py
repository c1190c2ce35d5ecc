"""The review job on Spark gives the in-process review's answers, row for row, on random clusters and
random plans (unknown topics, partitions and brokers, log dirs, RF changes,
no-ops, reorders, partitions in flight, brokers down or fenced, min ISR, racks, free space): the diff per
partition, per broker and per flow, the findings in order, the waves, the ETA and the rollback JSON.
The findings are the two runners of one rules engine (console.plans.rules: in process, and over
Arrow batches inside Spark) giving the same findings in the same order.
All clusters go through one Spark job, as a fleet would."""

from __future__ import annotations

import json
import random
from dataclasses import replace
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from console.core.errors import ConfigError, PlanFormatError
from console.core.model import Broker, BrokerId, ClusterInfo, ClusterState, LogDir, Partition, ReplicaLog
from console.moves.impact import Pricing
from console.moves.impact_columns import impact
from console.moves.waves import WaveLimits, plan_estimate, plan_waves
from console.pipeline.jobs import review_job
from console.pipeline.review_steps import ImpactSettings
from console.pipeline.snapshots import canonical, cluster_dir
from console.pipeline.spark import SparkSettings
from console.plans.diff import diff
from console.plans.plan import Plan, PlanEntry, parse_plan, rollback
from console.plans.rules.codes import (
    BROKER_NOT_ELIGIBLE,
    CORDONED_DESTINATION,
    DIR_PEAK_FILL,
    FENCED_WHY,
    OFFLINE_LOG_DIR,
    RACK_SPREAD_REDUCED,
    RACKS_UNDERUSED,
    SOURCE_ON_FENCED,
    TIERED_LOCAL_ONLY,
)
from console.plans.validate import validate
from console.present.review import tiered_moving
from console.state.document import state_from_doc
from tests.fakes.cluster import FakeCluster
from tests.unit.builders import cluster_info
from tests.unit.strategies import Shape, cluster
from tests.unit.timeline import T0, write_states

CLUSTERS = 10
THROTTLE = 1_000


def random_cluster(seed: int) -> ClusterState:
    rnd = random.Random(seed)
    state = cluster(
        Shape(
            brokers=rnd.randint(1, 9),
            racks=rnd.randint(0, 4),
            down=rnd.randint(0, 2),
            partitions=rnd.randint(1, 60),
            rf=rnd.randint(1, 3),
            in_flight=rnd.choice([0.0, 0.2, 0.5]),
            seed=seed,
        )
    )
    state = random_fenced(random.Random(seed ^ 0xFE2CED), state)
    brokers = tuple(random_dirs(rnd, b) for b in state.brokers)
    brokers += (Broker(BrokerId(50 + seed), rack="r0", registered=False),)  # known, not registered
    min_isr = tuple((t, rnd.randint(1, 3)) for t in state.topics if rnd.random() < 0.6)
    # where each replica lives: two dirs, now and then an intra-broker move (a future log), a log
    # without a dir or not reported; half the fleet runs Kafka 4.4 (whose rollback names the dirs),
    # the rest 4.1, 3.9 or a release not read
    partitions = tuple(replace(p, logs=random_logs(rnd, p.logs)) for p in state.partitions)
    info = [cluster_info(33), cluster_info(29), cluster_info(27), cluster_info(None, "3.9"), ClusterInfo()][
        seed % 5 if seed % 2 else 0
    ]
    return canonical(
        replace(
            state,
            brokers=brokers,
            partitions=partitions,
            info=info,
            tiered_topics=tuple(t for t in state.topics if rnd.random() < 0.3),
            min_insync=min_isr,
            cluster_id=f"cl-{seed}",
            name=f"cluster {seed}",
            taken_at=T0 + seed,
        )
    )


def random_fenced(rnd: random.Random, state: ClusterState) -> ClusterState:
    """Most clusters run Kafka 4 and say which brokers are fenced (KIP-1073): one or two of their
    registered brokers are (stopped: out of every ISR, leading nothing; a partition whose ISR had
    only them has no leader), the others are not; the rest do not say (drawn from their own random
    stream: the cluster is otherwise the one drawn before fenced brokers were)."""
    registered = [b.id for b in state.brokers if b.registered]
    if len(registered) < 2 or rnd.random() < 0.25:
        return state
    fenced = set(rnd.sample(registered, rnd.randint(1, min(2, len(registered) - 1))))

    def part(p: Partition) -> Partition:
        isr = tuple(b for b in p.isr if b not in fenced)
        leader = p.leader if p.leader not in fenced else next(iter(isr), None)
        return replace(p, isr=isr, leader=leader)

    return replace(
        state,
        brokers=tuple(replace(b, fenced=b.id in fenced) if b.registered else b for b in state.brokers),
        partitions=tuple(part(p) for p in state.partitions),
    )


def random_dirs(rnd: random.Random, b: Broker) -> Broker:
    """Two log dirs (or none reported), the first sized now and then; cordons as Kafka 4.3+ reports
    them (the whole broker, one dir by config or by DescribeLogDirs v5) or not known; now and then an
    offline dir."""
    if rnd.random() >= 0.7:
        return replace(b, log_dirs=(), cordoned_log_dirs=rnd.choice([None, (), ("*",)]))
    offline = "error 56 (KAFKA_STORAGE_ERROR: the dir is offline)" if rnd.random() < 0.3 else None
    cordoned = rnd.choice([None, None, False, True])  # as DescribeLogDirs v5 says of /data/b
    usable = rnd.choice([None, 10**9, 500])
    return replace(
        b,
        log_dirs=(
            # sized when its free space is known (the impact's disk peaks; 500 B free: past the fill)
            LogDir("/data/a", total_bytes=None if usable is None else 2 * 10**9, usable_bytes=usable),
            LogDir("/data/b", error=offline, cordoned=cordoned),
        ),
        cordoned_log_dirs=rnd.choice([None, (), (), ("*",), ("/data/a",)]),
    )


def random_logs(rnd: random.Random, logs: tuple[ReplicaLog, ...]) -> tuple[ReplicaLog, ...]:
    out: list[ReplicaLog] = []
    for log in logs:
        roll = rnd.random()
        if roll < 0.05:
            continue  # not reported
        here = rnd.choice(["/data/a", "/data/b"]) if roll > 0.1 else ""
        out.append(log._replace(log_dir=here))
        if rnd.random() < 0.1:
            out.append(ReplicaLog(log.broker, "/data/c", rnd.randint(0, log.size), True))
    return tuple(out)


def random_plan(state: ClusterState, seed: int) -> Plan:
    rnd = random.Random(seed * 7 + 1)
    ids = [int(b.id) for b in state.brokers]
    entries: dict[tuple[str, int], dict[str, Any]] = {}
    for p in state.partitions:
        roll = rnd.random()
        if roll < 0.3:
            continue
        if roll < 0.4:
            target = list(p.original)  # no change, or back to the original when in flight
        elif roll < 0.5:
            target = list(reversed(p.original))
        else:
            k = max(1, min(len(ids), len(p.replicas) + rnd.choice([-1, 0, 0, 0, 1])))
            target = rnd.sample(ids, k)
        if rnd.random() < 0.05:
            target = [999, *target[1:]]
        entry: dict[str, Any] = {"topic": p.topic, "partition": p.partition, "replicas": target}
        if rnd.random() < 0.15:
            entry["log_dirs"] = [rnd.choice(["any", "/data/a", "/data/b", "/nowhere"]) for _ in target]
        entries[(p.topic, p.partition)] = entry
    entries[("missing-topic", 0)] = {"topic": "missing-topic", "partition": 0, "replicas": ids[:1]}
    if state.partitions:
        t = state.partitions[0].topic
        entries[(t, 10_000)] = {"topic": t, "partition": 10_000, "replicas": ids[:1]}
    return parse_plan(json.dumps({"version": 1, "partitions": list(entries.values())}))


@pytest.fixture(scope="module")
def reviewed(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, tuple[ClusterState, Plan]], Any, Path]:
    root = tmp_path_factory.mktemp("review")
    fleet = {}
    plans = {}
    older = []
    for seed in range(CLUSTERS):
        state = random_cluster(seed)
        plan = random_plan(state, seed)
        key = state.cluster_id or ""
        fleet[key] = (state, plan)
        path = root / f"plan-{seed}.json"
        path.write_text(plan.to_json())
        plans[key] = str(path)
        older.append(replace(state, taken_at=state.taken_at - 3600, partitions=state.partitions[:1]))
    write_states(root / "snapshots", older + [s for s, _ in fleet.values()])  # the last snapshot is reviewed
    result = review_job(
        str(root / "snapshots"),
        plans,
        str(root / "out"),
        SparkSettings(master="local[2]"),
        throttle=THROTTLE,
        priced=ImpactSettings(PRICING, {key: rates_of(state) for key, (state, _) in fleet.items()}),
    )
    return fleet, result, root / "out"


PRICING = Pricing("USD", 0.02, (("r0", "z01"), ("r1", "z01")))
"""Racks r0 and r1 in one zone, the others zones of their own."""


def rates_of(state: ClusterState) -> dict[str, float]:
    """A produce rate for every other topic (the others unknown)."""
    return {t: 1_000.0 * (i + 1) for i, t in enumerate(state.topics) if i % 2 == 0}


def test_the_diff_per_partition_is_the_in_process_one(reviewed) -> None:
    fleet, _result, out = reviewed
    table = pd.read_parquet(out / "partitions")
    for key, (state, plan) in fleet.items():
        got = table[table.cluster == key].sort_values("idx")
        d = diff(state, plan)
        want = [
            (
                c.kind.value,
                list(c.current),
                list(c.target),
                list(c.adding),
                list(c.removing),
                c.leader_before,
                c.leader_after,
                c.in_flight,
                c.size,
                c.bytes_to_copy,
            )
            for c in d.changes
        ]
        have = [
            (
                r.kind,
                list(r.current),
                list(r.target),
                list(r.adding),
                list(r.removing),
                None if pd.isna(r.leader_before) else int(r.leader_before),
                None if pd.isna(r.leader_after) else int(r.leader_after),
                bool(r.in_flight),
                None if pd.isna(r.size) else int(r.size),
                int(r.bytes_to_copy),
            )
            for r in got.itertuples()
        ]
        assert have == want, key


def test_brokers_and_flows_are_the_in_process_ones(reviewed) -> None:
    fleet, _, out = reviewed
    brokers, flows = pd.read_parquet(out / "brokers"), pd.read_parquet(out / "flows")
    for key, (state, plan) in fleet.items():
        d = diff(state, plan)
        got = brokers[brokers.cluster == key].drop(columns="cluster")
        have = [tuple(None if pd.isna(v) else v for v in r) for r in got.itertuples(index=False)]
        want = [
            (
                int(b.broker),
                b.rack,
                b.known,
                b.replicas_before,
                b.replicas_after,
                b.arriving,
                b.leaving,
                b.leaders_before,
                b.leaders_after,
                b.bytes_before,
                b.bytes_after,
                b.bytes_in,
                b.bytes_out,
            )
            for b in sorted(d.brokers, key=lambda b: b.broker)
        ]
        assert have == want, key
        f = flows[flows.cluster == key]
        assert [
            tuple(int(x) for x in r) for r in f[["source", "destination", "replicas", "bytes"]].itertuples(index=False)
        ] == sorted((int(x.source), int(x.destination), x.replicas, x.bytes) for x in d.flows), key


def test_findings_are_the_in_process_ones_in_the_same_order(reviewed) -> None:
    fleet, _, out = reviewed
    table = pd.read_parquet(out / "findings")
    codes = set()
    cordoned: list[str] = []
    not_eligible: list[str] = []
    for key, (state, plan) in fleet.items():
        got = table[table.cluster == key].sort_values("rank")
        have = [
            (
                r.code,
                r.severity,
                None if pd.isna(r.topic) else r.topic,
                None if pd.isna(r.partition) else int(r.partition),
                None if pd.isna(r.broker) else int(r.broker),
                r.message,
                r.hint,
            )
            for r in got.itertuples()
        ]
        want = [
            (f.code, f.severity.value, f.topic, f.partition, f.broker, f.message, f.hint) for f in validate(state, plan)
        ]
        assert have == want, key
        codes |= {w[0] for w in want}
        cordoned += [w[5] for w in want if w[0] == CORDONED_DESTINATION]
        not_eligible += [w[5] for w in want if w[0] == BROKER_NOT_ELIGIBLE]
    assert len(codes) >= 12, f"the random plans exercise most checks: {sorted(codes)}"
    assert {TIERED_LOCAL_ONLY, CORDONED_DESTINATION, OFFLINE_LOG_DIR, SOURCE_ON_FENCED} <= codes
    assert any("is cordoned (cordoned.log.dirs)" in m for m in cordoned)  # a whole broker
    assert any(": log dir /data/" in m for m in cordoned)  # one of its dirs
    assert any(FENCED_WHY in m for m in not_eligible)  # a replica added on a fenced broker
    assert any(" is not live;" in m for m in not_eligible)  # and on one the cluster does not register


def test_the_impact_is_the_in_process_one(reviewed) -> None:
    """The Spark review's impact (topic counts over its Arrow batches, the brokers' sums, the flows,
    the log dirs) is the in-process review's on the same plan: every figure and finding."""
    fleet, result, out = reviewed
    crossing = steady = dirs = peaks = 0
    for key, (state, plan) in fleet.items():
        want = impact(diff(state, plan), PRICING, rates_of(state), THROTTLE)
        have = json.loads((out / "impact" / f"{cluster_dir(key)}.json").read_text())
        doc = json.loads(json.dumps(want.to_dict() | {"findings": [f.to_dict() for f in want.findings]}))
        per_day = "steady_cross_zone_bytes_per_day"  # sums of floats, topic by topic: alike to rounding
        assert have.pop(per_day) == pytest.approx(doc.pop(per_day)), key
        assert have == doc, key
        assert json.loads((out / "_review.json").read_text())["inputs"]["clusters"][key]["impact"] == want.headline()
        crossing += want.cross_zone_bytes > 0
        steady += want.steady.known_topics > 0
        dirs += len(want.dirs) > 0
        peaks += any(f.code == DIR_PEAK_FILL for f in want.findings)
    assert crossing and steady and dirs and peaks, "the plans cross zones, on topics with rates, onto sized dirs"
    assert any("impact: copies " in line for line in result.summary)


def test_waves_eta_and_rollback_are_the_in_process_ones(reviewed) -> None:
    fleet, result, out = reviewed
    table = pd.read_parquet(out / "partitions")
    manifest = json.loads((out / "_review.json").read_text())
    dirs_named = 0
    for key, (state, plan) in fleet.items():
        got = table[(table.cluster == key) & table.wave.notna()].sort_values("idx")
        have: dict[int, list[tuple[str, int]]] = {}
        for r in got.itertuples():
            have.setdefault(int(r.wave), []).append((r.topic, int(r.partition)))
        assert list(have.values()) == [[e.key for e in w] for w in plan_waves(state, plan)], key
        eta = manifest["inputs"]["clusters"][key]["eta_seconds"]
        want = plan_estimate(state, plan, THROTTLE)
        assert (eta is None and want is None) or eta == pytest.approx(want), key
        tiered = manifest["inputs"]["clusters"][key]["tiered_topics"]
        assert tiered == tiered_moving(diff(state, plan), state.tiered), key
        assert (out / f"rollback-{cluster_dir(key)}.json").read_text() == rollback(state, plan).to_json(), key
        named = sum(e.log_dirs is not None for e in rollback(state, plan).entries)
        dirs_named += named
        assert named == 0 or state.info.feature("metadata.version") is not None, key
    assert len(result.summary) == CLUSTERS
    assert dirs_named, "some rollbacks name log dirs (the fleet's Kafka 4.2 and later clusters)"


def test_a_plan_for_a_cluster_not_in_the_history_or_unusable_is_refused(reviewed, tmp_path) -> None:
    fleet, _, out = reviewed
    snapshots = str(out.parent / "snapshots")
    some = next(iter(fleet))
    with pytest.raises(ConfigError, match="not in the history"):
        review_job(
            snapshots, {"nope": str(out.parent / "plan-0.json")}, str(tmp_path / "o"), SparkSettings(master="local[2]")
        )
    with pytest.raises(ConfigError, match=r"clusters .*say which one"):
        review_job(
            snapshots, {None: str(out.parent / "plan-0.json")}, str(tmp_path / "o"), SparkSettings(master="local[2]")
        )
    bad = tmp_path / "bad.json"
    bad.write_text('{"version":1,"partitions":[{"topic":"t","partition":"x"}]}')
    with pytest.raises(PlanFormatError):
        review_job(snapshots, {some: str(bad)}, str(tmp_path / "o"), SparkSettings(master="local[2]"))
    with pytest.raises(ConfigError, match="No snapshot of"):
        review_job(
            snapshots,
            {some: str(out.parent / "plan-0.json")},
            str(tmp_path / "o"),
            SparkSettings(master="local[2]"),
            at=T0 - 10 * 3600,
        )
    assert not (tmp_path / "o").exists() or not any(p for p in (tmp_path / "o").iterdir() if not p.name.startswith("."))


def test_racks_are_found_when_every_broker_id_falls_in_the_same_slot(tmp_path) -> None:
    """The rack checks find each broker's rack in a hash table of 2n + 1 slots (n brokers with a
    rack): broker ids that are all multiples of 2n + 1 share one slot, and still give validate's findings."""
    base = cluster(Shape(brokers=7, racks=3, down=1, partitions=60, rf=3, in_flight=0.0, seed=5))
    step = 2 * sum(b.rack is not None for b in base.brokers) + 1

    def m(b: BrokerId) -> BrokerId:
        return BrokerId(int(b) * step + 3 * step)

    def ms(bs: tuple[BrokerId, ...]) -> tuple[BrokerId, ...]:
        return tuple(m(b) for b in bs)

    state = canonical(
        replace(
            base,
            brokers=tuple(replace(b, id=m(b.id)) for b in base.brokers),
            partitions=tuple(
                replace(
                    p,
                    replicas=ms(p.replicas),
                    isr=ms(p.isr),
                    leader=None if p.leader is None else m(p.leader),
                    adding=ms(p.adding),
                    removing=ms(p.removing),
                    logs=tuple(log._replace(broker=m(log.broker)) for log in p.logs),
                    elr=ms(p.elr),
                    last_known_elr=ms(p.last_known_elr),
                )
                for p in base.partitions
            ),
            cluster_id="slots",
            taken_at=T0,
        )
    )
    plan = random_plan(state, 5)
    (tmp_path / "plan.json").write_text(plan.to_json())
    write_states(tmp_path / "snapshots", [state])
    review_job(
        str(tmp_path / "snapshots"),
        {"slots": str(tmp_path / "plan.json")},
        str(tmp_path / "out"),
        SparkSettings(master="local[2]"),
    )
    got = pd.read_parquet(tmp_path / "out" / "findings").sort_values("rank")
    want = validate(state, plan)
    assert [(r.code, r.message) for r in got.itertuples()] == [(f.code, f.message) for f in want]
    assert {RACK_SPREAD_REDUCED, RACKS_UNDERUSED} & {f.code for f in want}, "the plan exercises the rack checks"


def test_fenced_brokers_give_the_in_process_findings_and_an_older_snapshot_none(tmp_path) -> None:
    """Kafka 4: a stopped broker stays registered, fenced (KIP-1073). A plan adding a replica there is
    told the broker is fenced, not "not live"; one moving a replica off it is warned that its data
    cannot be copied from there (naming the leader the new replicas copy from, or that there is none);
    a reorder is not. The job says so as the in-process review does. A snapshot stored before the
    cluster said which brokers are fenced (no ``fenced`` in its header) reads as not known: neither
    finding, by the job as in process."""
    base = cluster(Shape(brokers=4, racks=0, down=0, partitions=6, rf=2, in_flight=0.0, seed=3))
    fenced = BrokerId(3)
    b = [BrokerId(i) for i in range(4)]
    layout = [  # replicas, leader
        ((b[0], b[1]), b[0]),
        ((b[0], b[1]), b[0]),
        ((b[0], fenced), b[0]),
        ((fenced, b[1]), None),
        ((b[0], fenced), b[0]),
        ((b[1], fenced), b[1]),
    ]
    state = canonical(
        replace(
            base,
            brokers=tuple(replace(x, fenced=x.id == fenced) for x in base.brokers),
            partitions=tuple(
                replace(p, replicas=ids, isr=tuple(x for x in ids if x != fenced), leader=leader, logs=())
                for p, (ids, leader) in zip(base.partitions, layout, strict=True)
            ),
            cluster_id="fenced",
            taken_at=T0,
        )
    )
    ps = state.partitions
    plan = Plan.of(
        [
            PlanEntry(ps[0].topic, ps[0].partition, (b[0], fenced)),  # onto it
            PlanEntry(ps[1].topic, ps[1].partition, (b[0], fenced)),
            PlanEntry(ps[2].topic, ps[2].partition, (b[0], b[2])),  # off it, the leader stays
            PlanEntry(ps[3].topic, ps[3].partition, (b[1], b[2])),  # off it, no leader
            PlanEntry(ps[4].topic, ps[4].partition, (fenced, b[0])),  # a reorder: nothing is copied
            PlanEntry(ps[5].topic, ps[5].partition, (b[2], b[0])),  # off it, the leader moves
        ]
    )
    older = replace(state, cluster_id="older", brokers=tuple(replace(x, fenced=None) for x in state.brokers))
    (tmp_path / "plan.json").write_text(plan.to_json())
    write_states(tmp_path / "snapshots", [state, older])
    # the older snapshot's header as a console that did not store ``fenced`` wrote it
    (path,) = (tmp_path / "snapshots" / "headers").glob(f"cluster={cluster_dir('older')}/*/*.parquet")
    header = pq.read_table(path)
    doc = json.loads(header.column("header")[0].as_py())
    for x in doc["brokers"]:
        del x["fenced"]
    old = json.dumps(doc, separators=(",", ":"))
    pq.write_table(header.set_column(header.schema.get_field_index("header"), "header", pa.array([old])), path)
    assert all(x.fenced is None for x in state_from_doc(json.loads(old), ()).brokers)
    review_job(
        str(tmp_path / "snapshots"),
        {"fenced": str(tmp_path / "plan.json"), "older": str(tmp_path / "plan.json")},
        str(tmp_path / "out"),
        SparkSettings(master="local[2]"),
    )
    table = pd.read_parquet(tmp_path / "out" / "findings")
    for key, s in (("fenced", state), ("older", older)):
        got = table[table.cluster == key].sort_values("rank")
        want = validate(s, plan)
        assert [(r.code, r.severity, r.topic, r.partition, r.message, r.hint) for r in got.itertuples()] == [
            (f.code, f.severity.value, f.topic, f.partition, f.message, f.hint) for f in want
        ], key
    said = [f.message for f in validate(state, plan) if f.code == BROKER_NOT_ELIGIBLE]
    assert len(said) == 2 and all("broker 3 is fenced (registered but fenced" in m for m in said)
    warned = [((f.topic, f.partition), f.message) for f in validate(state, plan) if f.code == SOURCE_ON_FENCED]
    assert [k for k, _ in warned] == [ps[2].key, ps[3].key, ps[5].key]
    assert "copy from the leader, broker 0." in warned[0][1] and "a leader, and it has none." in warned[1][1]
    assert not {BROKER_NOT_ELIGIBLE, SOURCE_ON_FENCED} & {f.code for f in validate(older, plan)}


def test_copies_between_log_dirs_count_in_the_waves_and_the_eta_as_in_process(tmp_path) -> None:
    """A plan that only moves replicas between the log dirs of their brokers copies no byte over the
    network, yet each broker copies its replica's log between its dirs: the job counts those bytes
    in the waves (limited by bytes) and in the ETA (at the log-dir throttle), as a run does."""
    mb = 1000 * 1000
    state = canonical(
        replace(
            FakeCluster.of(4, {"t": [[0, 1], [1, 2], [0, 2]]}, size=10 * mb, log_dirs=("/k/d1", "/k/d2")).snapshot(),
            cluster_id="dirs",
            taken_at=T0,
        )
    )
    plan = Plan.of(
        [
            PlanEntry("t", 0, (BrokerId(0), BrokerId(1)), ("/k/d2", "any")),
            PlanEntry("t", 1, (BrokerId(1), BrokerId(2)), ("any", "/k/d2")),
        ]
    )
    limits = WaveLimits(bytes=15 * mb)
    (tmp_path / "plan.json").write_text(plan.to_json())
    write_states(tmp_path / "snapshots", [state])
    review_job(
        str(tmp_path / "snapshots"),
        {"dirs": str(tmp_path / "plan.json")},
        str(tmp_path / "out"),
        SparkSettings(master="local[2]"),
        throttle=mb,
        limits=limits,
    )
    said = json.loads((tmp_path / "out" / "_review.json").read_text())["inputs"]["clusters"]["dirs"]
    assert len(plan_waves(state, plan, limits)) == 2
    assert said["waves"] == 2
    assert said["eta_seconds"] == pytest.approx(plan_estimate(state, plan, mb, limits)) == pytest.approx(20.0)
