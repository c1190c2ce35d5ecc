"""Draining a log dir (generate --drain-log-dir): replicas into the broker's other dirs while they
have room, else to other brokers; never into a cordoned or offline dir; what cannot move is left
alone and said. And what an offline log dir makes the console say: a finding about the cluster, an
error for a plan that sends a replica into it."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path

import pytest

from console import cli
from console.access.auth import Identity
from console.adapters.records import BrokerLogDirs
from console.core.errors import ConfigError, GoalImpossible
from console.core.limits import CORDONED_LOG_DIRS
from console.core.model import BrokerId, ClusterState, LogDir, Severity, replicas_in_dir
from console.core.states import RunState
from console.plans.diff import ChangeKind, diff
from console.plans.generate import Generated, generate
from console.plans.generators.options import GenerateOptions, Goal, Metric
from console.plans.logdirs import sends_of
from console.plans.plan import ANY, Plan, PlanEntry, parse_plan
from console.plans.rules.codes import OFFLINE_LOG_DIR, RF_STILL_BELOW_MIN_ISR
from console.plans.validate import errors, validate
from console.runs.executor import Executor
from console.sandbox.config import RACKS
from console.sandbox.demo import DEMO_TOPICS
from console.services import runs as run_service
from console.state.document import state_json
from console.state.merge import LOG_DIR_OFFLINE
from console.state.merge import merge as merge_views
from console.storage.store import Store
from tests.fakes.cluster import FakeCluster
from tests.unit.builders import api

D1, D2, D3 = "/data/d1", "/data/d2", "/data/d3"
OFFLINE = "error 56 (KAFKA_STORAGE_ERROR: the dir is offline)"


def cluster(
    topics: Mapping[str, Sequence[Sequence[int]]],
    *,
    brokers: int = 4,
    racks: Mapping[int, str] | None = None,
    sizes: Mapping[tuple[str, int], int] | None = None,
    dirs: Sequence[str] = (D1, D2),
    room: Mapping[tuple[int, str], int] | None = None,
    cordons: Mapping[int, str] | None = None,
    offline: Sequence[tuple[int, str]] = (),
) -> ClusterState:
    """A snapshot of a fake cluster (``metadata.version`` 4.4-IV2, so cordons are read) whose brokers
    each have ``dirs``, every replica in the first; partition sizes ``sizes`` (1000 bytes unless
    said); ``room``: the usable bytes of (broker, dir) (plenty unless said); ``cordons``: a broker's
    ``cordoned.log.dirs``; ``offline``: the (broker, dir) DescribeLogDirs answers with
    KAFKA_STORAGE_ERROR (it then lists none of the replicas in it)."""
    parts = {(t, i): (tuple(r), (sizes or {}).get((t, i), 1000)) for t, rs in topics.items() for i, r in enumerate(rs)}
    fake = FakeCluster(dict(racks or {b: f"r{b}" for b in range(brokers)}), parts, log_dirs=dirs).at_level(33)
    for b, value in (cordons or {}).items():
        fake.broker_configs.setdefault(BrokerId(b), {})[CORDONED_LOG_DIRS] = value
    state = fake.snapshot()
    room, gone = room or {}, set(offline)
    return replace(
        state,
        brokers=tuple(
            replace(
                b,
                log_dirs=tuple(
                    replace(
                        d,
                        usable_bytes=room.get((b.id, d.path), d.usable_bytes),
                        error=OFFLINE if (b.id, d.path) in gone else None,
                    )
                    for d in b.log_dirs
                ),
            )
            for b in state.brokers
        ),
        partitions=tuple(
            replace(p, logs=tuple(g for g in p.logs if (g.broker, g.log_dir) not in gone)) for p in state.partitions
        ),
    )


def drain(state: ClusterState, broker: int = 0, log_dir: str = D1, **kw: object) -> Generated:
    return generate(state, GenerateOptions(Goal.DRAIN_LOG_DIR, (broker,), log_dir=log_dir, **kw))  # type: ignore[arg-type]


def test_a_drain_of_a_partition_already_below_min_isr_passes_its_own_review() -> None:
    """Review refused a generated drain for a partition of RF 1 under min.insync.replicas=2 although
    the drain does not change its replication factor: now a warning, and no error."""
    state = replace(cluster({"t": [[0], [0, 1]]}), min_insync=(("t", 2),))
    made = drain(state)
    assert {e.topic for e in made.plan.entries} == {"t"} and len(made.plan) == 2
    found = validate(state, made.plan)
    assert not errors(found), [f.message for f in errors(found)]
    assert [f.partition for f in found if f.code == RF_STILL_BELOW_MIN_ISR] == [0]


def finding(made: Generated, code: str) -> str:
    return next(f.message for f in made.report.findings if f.code == code)


def sound(state: ClusterState, made: Generated) -> None:
    """The plan reads back from its JSON as it is, the console's checks find no error in it, and
    each entry that keeps its replicas is a log dir move asking for the dir chosen."""
    again = parse_plan(made.plan.to_json())
    assert again.entries == made.plan.entries
    assert not errors(validate(state, again)), [f.message for f in errors(validate(state, again))]
    kinds = {c.key: c.kind for c in diff(state, again).changes}
    named = {(e.topic, e.partition, d) for e in again.entries if e.log_dirs for d in e.log_dirs if d != ANY}
    assert all(kinds[e.key] is ChangeKind.LOG_DIR for e in again.entries if e.log_dirs)
    assert {(m.topic, m.partition, m.log_dir) for m in sends_of(state, again.entries)} == named


def test_replicas_fill_the_brokers_other_dir_biggest_first_the_rest_go_to_other_brokers() -> None:
    sizes = {("t", i): s for i, s in enumerate((500, 400, 300, 200, 100))}
    state = cluster({"t": [[0, 1], [0, 2], [0, 3], [0, 1], [0, 2]]}, sizes=sizes, room={(0, D2): 650})
    made = drain(state)
    by = {e.partition: e for e in made.plan.entries}
    # 500 fits (150 left), 400, 300 and 200 do not, 100 does: the most bytes stay off the network
    assert {n for n, e in by.items() if e.log_dirs} == {0, 4}
    for n in (0, 4):
        assert by[n].replicas == state.partition_index[("t", n)].replicas and by[n].log_dirs == (D2, ANY)
    for n in (1, 2, 3):
        before = state.partition_index[("t", n)].replicas
        assert by[n].log_dirs is None and by[n].replicas[1:] == before[1:] and by[n].replicas[0] not in before
    assert '"log_dirs":["/data/d2","any"]' in made.plan.to_json()
    r = made.report
    assert r.moved_replicas == r.lower_bound_replicas == 5 and r.moved_bytes == r.lower_bound_bytes == 1500
    assert r.ratio_bytes == 1.0 and r.reached and r.goal == "drain log dir /data/d1 of broker 0"
    said = finding(made, "drain-dir-moved")
    assert "5 replicas (1.5 KB) that may move out of log dir /data/d1 of broker 0" in said
    assert "2 (600 B) to its other dirs (2 replicas to /data/d2), 3 (900 B) to other brokers" in said
    assert next(b for b in r.brokers_after if b.broker == 0).replicas == 2
    sound(state, made)


def test_with_room_every_replica_stays_on_its_broker() -> None:
    state = cluster({"t": [[0, 1], [1, 0], [0, 2]], "u": [[2, 3]]})
    made = drain(state)
    assert len(made.plan) == 3
    assert all(e.log_dirs == tuple(D2 if b == 0 else ANY for b in e.replicas) for e in made.plan.entries)
    assert made.report.brokers_before == made.report.brokers_after  # no broker gains or loses a replica
    assert made.report.moved_replicas == made.report.lower_bound_replicas == 3
    sound(state, made)
    # the other way: nothing lives in d2, so there is nothing to move
    empty = drain(state, log_dir=D2)
    assert not len(empty.plan) and "nothing to move" in finding(empty, "empty-log-dir")


def test_a_cordoned_or_offline_dir_never_receives_nor_a_cordoned_broker() -> None:
    topics = {"t": [[0, 1], [0, 2], [0, 3]]}
    # d2 has the most room but is cordoned: everything goes to d3
    made = drain(cluster(topics, dirs=(D1, D2, D3), room={(0, D3): 10**6}, cordons={0: D2}))
    assert {e.log_dirs for e in made.plan.entries} == {(D3, ANY)}
    assert "/data/d2 is cordoned" in finding(made, "drain-dir-skipped-dirs")
    # d3 offline too: no dir of the broker may receive, so other brokers do, never cordoned broker 3
    state = cluster(topics, dirs=(D1, D2, D3), cordons={0: D2, 3: "*"}, offline=[(0, D3)])
    made = drain(state)
    for e in made.plan.entries:
        arrived = set(e.replicas) - set(state.partition_index[e.key].replicas)
        assert e.log_dirs is None and 0 not in e.replicas and arrived and 3 not in arrived
    assert len(made.plan) == 3
    said = finding(made, "drain-dir-skipped-dirs")
    assert "/data/d2 is cordoned" in said and "/data/d3 is offline" in said
    assert "Broker 3 is cordoned: never a destination." in [f.message for f in made.report.findings]
    sound(state, made)


def test_partitions_in_flight_offline_or_moving_between_dirs_are_left_alone_and_said_so() -> None:
    state = cluster({"t": [[0, 1], [0, 2], [0, 3], [0, 1]]})
    parts = list(state.partitions)
    parts[0] = replace(parts[0], replicas=(0, 1, 2), adding=(2,), removing=(1,))  # being reassigned
    parts[1] = replace(parts[1], leader=None, isr=())  # offline
    moving = parts[2].logs[0]._replace(log_dir=D2, size=10, is_future=True)  # being moved to d2 now
    parts[2] = replace(parts[2], logs=(*parts[2].logs, moving))
    state = replace(state, partitions=tuple(parts))
    made = drain(state)
    assert [e.partition for e in made.plan.entries] == [3]
    said = finding(made, "drain-dir-incomplete")
    assert "3 partitions with a replica in log dir /data/d1 of broker 0 cannot move now" in said
    assert "t-0, t-1, t-2" in said and "will not be empty" in said
    assert not made.report.reached
    assert {"in-flight-left-alone", "offline-left-alone"} <= {f.code for f in made.report.findings}
    sound(state, made)


def test_what_finds_no_room_stays_in_the_dir_and_the_report_says_so() -> None:
    # RF 3 on 3 brokers: no other broker can take a replica; d2 has room for the smaller one only
    sizes = {("t", 0): 700, ("t", 1): 300}
    state = cluster({"t": [[0, 1, 2], [0, 1, 2]]}, brokers=3, sizes=sizes, room={(0, D2): 500})
    made = drain(state)
    assert [(e.partition, e.log_dirs) for e in made.plan.entries] == [(1, (D2, ANY, ANY))]
    said = finding(made, "drain-dir-no-room")
    assert said.startswith("1 replica (700 B) stays in log dir /data/d1 of broker 0") and said.endswith("t-0.")
    r = made.report
    assert not r.reached and r.moved_bytes == r.lower_bound_bytes == 300
    sound(state, made)
    # no room at all: nothing can move, no plan
    with pytest.raises(GoalImpossible, match="No replica in log dir /data/d1 of broker 0 can move"):
        drain(cluster({"t": [[0, 1, 2]]}, brokers=3, room={(0, D2): 10}))
    with pytest.raises(GoalImpossible, match="none"):
        drain(cluster({"t": [[0, 1, 2]]}, brokers=3, dirs=(D1,)))


def test_moves_to_other_brokers_keep_the_racks_a_partition_spans() -> None:
    racks = {0: "a", 1: "a", 2: "b", 3: "b"}
    topics = {"t": [[0, 2], [0, 1]]}
    state = cluster(topics, racks=racks, room={(0, D2): 0})
    made = drain(state)
    by = {e.partition: e.replicas for e in made.plan.entries}
    assert by[0] == (1, 2)  # broker 3 would leave t-0 on one rack
    assert by[1][0] in (2, 3)  # t-1 gains a rack
    sound(state, made)
    # with broker 1 excluded, t-0 can only stay
    made = drain(state, exclude_brokers=(1,))
    assert [e.partition for e in made.plan.entries] == [1]
    assert "without lowering the partition's racks: t-0." in finding(made, "drain-dir-no-room")
    assert made.report.rack_violations_after <= made.report.rack_violations_before


def test_an_offline_dir_drains_to_other_brokers_only() -> None:
    state = cluster({"t": [[0, 1], [0, 2], [3, 0]], "u": [[1, 2]]}, offline=[(0, D1)])
    inside = replicas_in_dir(state.partitions, state.broker_index[BrokerId(0)], D1)
    assert [p.name for p in inside] == ["t-0", "t-1", "t-2"]  # listed in no online dir of broker 0
    made = drain(state)
    assert len(made.plan) == 3 and all(e.log_dirs is None and 0 not in e.replicas for e in made.plan.entries)
    assert "reports /data/d1 offline" in finding(made, "drain-dir-other-brokers")
    sound(state, made)


@pytest.mark.parametrize(
    "options, words",
    [
        (GenerateOptions(Goal.DRAIN_LOG_DIR, (0,), log_dir="/nope"), "no log dir /nope (its dirs: /data/d1, /data/d2)"),
        (GenerateOptions(Goal.DRAIN_LOG_DIR, (0, 1), log_dir=D1), "Name one broker"),
        (GenerateOptions(Goal.DRAIN_LOG_DIR, (0,), log_dir="d1"), "an absolute path"),
        (GenerateOptions(Goal.DRAIN_LOG_DIR, (0,)), "an absolute path"),
        (GenerateOptions(Goal.DRAIN_LOG_DIR, (9,), log_dir=D1), "the broker of the log dir: no broker 9"),
        (GenerateOptions(Goal.DRAIN_LOG_DIR, (3,), log_dir=D1), "Broker 3 reports no log dirs: it is not registered"),
        (GenerateOptions(Goal.REBALANCE, metric=Metric.COUNT, log_dir=D1), "drain-log-dir goal only"),
    ],
)
def test_unusable_input_is_refused_with_a_message(options: GenerateOptions, words: str) -> None:
    fake = FakeCluster.of(4, {"t": [[0, 1], [1, 2], [2, 3]]}, log_dirs=(D1, D2))
    fake.stop_broker(3)
    with pytest.raises(ConfigError, match=words.replace("(", r"\(").replace(")", r"\)")):
        generate(fake.snapshot(), options)


# -- the sandbox's shape: six brokers on three racks, two dirs each, the demo topics ----------------
def sandbox_shaped(data: str = "/tmp/sandbox") -> ClusterState:
    """The demo topics on a six-broker sandbox as ``make demo`` lays it out: broker i on
    ``RACKS[i % 3]`` with log dirs ``<data>/broker-i/d1`` and ``d2`` (Kafka 4.4), replicas spread
    over both dirs; broker 1's d2 with room for a third of what its d1 holds."""
    n = 6
    topics = {t.name: [[(i + j) % n for j in range(t.replication)] for i in range(t.partitions)] for t in DEMO_TOPICS}
    state = cluster(topics, racks={b: RACKS[b % 3] for b in range(n)}, dirs=("/d1", "/d2"))

    def real(b: int, path: str) -> str:
        return f"{data}/broker-{b}{path}"

    parts = tuple(
        replace(p, logs=tuple(g._replace(log_dir=real(g.broker, "/d2" if p.partition % 2 else "/d1")) for g in p.logs))
        for p in state.partitions
    )
    held = sum(g.size for p in parts for g in p.logs if g.log_dir == real(1, "/d1"))
    brokers = tuple(
        replace(
            b,
            log_dirs=tuple(
                replace(d, path=real(b.id, d.path), usable_bytes=held // 3 if (b.id, d.path) == (1, "/d2") else 10**12)
                for d in b.log_dirs
            ),
        )
        for b in state.brokers
    )
    return replace(state, brokers=brokers, partitions=parts)


def test_a_plan_for_the_sandbox_shape_reads_back_and_validates() -> None:
    state = sandbox_shaped()
    made = drain(state, 1, "/tmp/sandbox/broker-1/d1")
    within = [e for e in made.plan.entries if e.log_dirs]
    across = [e for e in made.plan.entries if not e.log_dirs]
    assert within and across
    for e in within:
        assert dict(zip(e.replicas, e.log_dirs or (), strict=True)) == {
            b: "/tmp/sandbox/broker-1/d2" if b == 1 else ANY for b in e.replicas
        }
    assert all(1 not in e.replicas for e in across)
    assert made.report.moved_replicas == made.report.lower_bound_replicas == len(made.plan)
    sound(state, made)


def test_the_cli_drains_a_log_dir_of_a_saved_snapshot(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "state.json"
    path.write_text(json.dumps(state_json(sandbox_shaped())))
    code = cli.main(["generate", "--state-file", str(path), "--drain-log-dir", "1:/tmp/sandbox/broker-1/d1"])
    out = capsys.readouterr()
    assert code == 0, out.err
    plan = parse_plan(out.out)
    assert any(e.log_dirs for e in plan.entries) and "drain log dir /tmp/sandbox/broker-1/d1 of broker 1" in out.err
    for bad, words in (
        ("1:d1", "--drain-log-dir takes BROKER:DIR"),
        ("x:/d1", "BROKER:DIR"),
        ("1:/nope", "no log dir"),
    ):
        code = cli.main(["generate", "--state-file", str(path), "--drain-log-dir", bad])
        out = capsys.readouterr()
        assert code == 2 and words in out.err and not out.out.strip()


# -- an offline log dir ------------------------------------------------------------------------------
def test_an_offline_log_dir_is_a_warning_naming_the_broker_the_dir_and_its_replicas() -> None:
    parts = {("t", 0): ([1, 2], [2], 2), ("t", 1): ([1, 0], [0], 0), ("t", 2): ([1, 2], [1, 2], 1)}
    answers = (
        BrokerLogDirs(BrokerId(0), (LogDir("/d1", None, 10, 10),), (("t", 1, "/d1", 5, False),)),
        BrokerLogDirs(
            BrokerId(1),
            (LogDir("/d1", None, 10, 10), LogDir("/d2", OFFLINE, None, None)),
            (("t", 2, "/d1", 5, False),),  # t-0 and t-1 are in d2, which lists nothing
        ),
        BrokerLogDirs(
            BrokerId(2), (LogDir("/d1", None, 10, 10),), (("t", 0, "/d1", 5, False), ("t", 2, "/d1", 5, False))
        ),
    )
    state = merge_views(api(parts, log_dirs=answers), None)
    offline = [f for f in state.findings if f.code == LOG_DIR_OFFLINE]
    assert len(offline) == 1 and offline[0].severity is Severity.WARNING and offline[0].broker == 1
    assert offline[0].message.startswith(
        f"Log dir /d2 of broker 1 is offline (DescribeLogDirs: {OFFLINE}): it holds 2 replicas: t-0, t-1;"
    )
    assert "KAFKA-19571" in offline[0].hint and "--drain-log-dir 1:/d2" in offline[0].hint
    # every dir online: no such finding
    online = tuple(replace(a, dirs=tuple(replace(d, error=None) for d in a.dirs)) for a in answers)
    assert not [f for f in merge_views(api(parts, log_dirs=online), None).findings if f.code == LOG_DIR_OFFLINE]


def test_a_plan_sending_a_replica_into_an_offline_dir_is_an_error() -> None:
    state = cluster({"t": [[0, 1], [1, 2]]}, offline=[(1, D2)])
    into = Plan.of([PlanEntry("t", 0, (BrokerId(0), BrokerId(1)), (ANY, D2))])
    found = [f for f in validate(state, into) if f.code == OFFLINE_LOG_DIR]
    assert len(found) == 1 and found[0].severity is Severity.ERROR
    assert "t-0: log dir /data/d2 of broker 1 is offline and would receive the replica" in found[0].message
    assert "KAFKA-19571" in found[0].hint
    # the same move into the online dir, or "any", is fine
    for dirs in ((ANY, D1), (ANY, ANY)):
        plan = Plan.of([PlanEntry("t", 0, (BrokerId(0), BrokerId(1)), dirs)])
        assert not [f for f in validate(state, plan) if f.code == OFFLINE_LOG_DIR]
    # and no plan the generator makes names it
    made = drain(state, 1)
    assert made.plan.entries and not errors(validate(state, made.plan))


@pytest.mark.usefixtures("no_sleep")
def test_a_drain_plan_carried_out_on_the_fake_cluster_empties_the_dir(tmp_path: Path) -> None:
    fake = FakeCluster.of(4, {"t": [[0, 1], [0, 2], [1, 2], [3, 0]]}, size=10_000, copy_rate=1_000, log_dirs=(D1, D2))
    state = fake.snapshot()
    room = {(0, D2): 15_000}  # room for one of broker 0's three replicas
    state = replace(
        state,
        brokers=tuple(
            replace(
                b, log_dirs=tuple(replace(d, usable_bytes=room.get((b.id, d.path), d.usable_bytes)) for d in b.log_dirs)
            )
            for b in state.brokers
        ),
    )
    made = drain(state)
    assert sorted(bool(e.log_dirs) for e in made.plan.entries) == [False, False, True]
    store = Store(tmp_path / "console.db")
    run_id = run_service.start_run(
        store,
        fake,
        state,
        run_service.RunRequest(Identity.cli("ann"), made.plan, "drain d1", run_service.RunSettings(rate=5_000)),
        users=None,
    )
    ex = Executor(store, fake, "ann")
    assert ex.drive(run_id, every=0, progress=lambda _s: fake.advance(2), timeout=30).state is RunState.COMPLETED
    after = fake.snapshot()
    broker = after.broker_index[BrokerId(0)]
    assert not replicas_in_dir(after.partitions, broker, D1)
    assert [p.name for p in replicas_in_dir(after.partitions, broker, D2)] == [
        e.name for e in made.plan.entries if e.log_dirs
    ]


def test_the_fleet_job_does_not_drain_a_dir_topic_by_topic(tmp_path: Path) -> None:
    from console.pipeline.jobs import generate_job

    options = GenerateOptions(Goal.DRAIN_LOG_DIR, (1,), log_dir=D1)
    with pytest.raises(ConfigError, match="--per-topic cannot drain a log dir"):
        generate_job(str(tmp_path / "snapshots"), options, str(tmp_path / "out"), per_topic=True)
    assert not (tmp_path / "out").exists()


def test_topics_a_filter_leaves_out_are_information_and_the_goal_is_judged_on_the_topics_chosen() -> None:
    state = cluster({"t": [[0, 1], [0, 2]], "other": [[0, 3]]})
    made = drain(state, topics=("t",))
    assert {e.topic for e in made.plan.entries} == {"t"} and made.report.reached
    assert "drain-dir-incomplete" not in {f.code for f in made.report.findings}
    left = next(f for f in made.report.findings if f.code == "left-out-by-filter")
    assert left.severity is Severity.INFO
    assert left.message == (
        "1 partition of 1 topic the topic filter leaves out (other) has a replica in log dir /data/d1 of broker 0: "
        "this plan moves the chosen topics only, so the dir will not be empty after it."
    )
    sound(state, made)
