"""Cordoned brokers and log dirs (KIP-1066) on the in-memory fake cluster: what the snapshot and its
document say, where cordons are not available, the generators leaving cordoned brokers out (known
cases; the property test in test_generate.py holds every goal to it on random clusters), the
``cordoned-destination`` finding and its explicit, audited override, and the cordon and uncordon
services (roles refused and audited, an unsupported cluster refused, a change audited)."""

from __future__ import annotations

import json

import pytest

from console.access.auth import Identity
from console.adapters.records import ApiView, BrokerInfo, BrokerLogDirs
from console.core.cluster_info import CORDON_LEVEL, cordons_supported
from console.core.errors import ConfigError, GoalImpossible, NotPermitted, RequestRefused, UnsupportedByCluster
from console.core.limits import CORDONED_LOG_DIRS
from console.core.model import Broker, BrokerId, ClusterInfo, LogDir, cordon_list, cordon_value
from console.plans.generate import generate
from console.plans.generators.options import GenerateOptions, Goal, Metric
from console.plans.plan import Plan, PlanEntry
from console.plans.rules.codes import CORDONED_DESTINATION, CORDONED_REFUSED
from console.plans.validate import blocking, errors, overridable_only, validate
from console.present.cluster import cordon_text, cordoned_now, log_dir_rows
from console.present.live import broker_rows
from console.present.text import state_text
from console.services import cordons as cordon_service
from console.services import runs as run_service
from console.services.cordons import CORDON, UNCORDON
from console.services.guard import REFUSED
from console.services.preflight import preflight
from console.state.document import load_state, state_json
from console.state.merge import merge, with_info
from console.storage.store import Store
from tests.fakes.cluster import FakeCluster

pytestmark = pytest.mark.usefixtures("no_sleep")

DIRS = ("/k/d1", "/k/d2")
ANN = Identity.cli("ann")


def fake(level: int = 33, brokers: int = 4) -> FakeCluster:
    """Brokers 0..3 with two log dirs each, at ``metadata.version`` ``level``; t has 4 partitions of RF 2."""
    f = FakeCluster.of(brokers, {"t": [(0, 1), (1, 2), (2, 0), (0, 2)]}, size=1_000, log_dirs=DIRS)
    return f.at_level(level)


def cordoned_by_config(f: FakeCluster, broker: int, value: str) -> FakeCluster:
    f.broker_configs.setdefault(BrokerId(broker), {})[CORDONED_LOG_DIRS] = value
    return f


# -- the model ---------------------------------------------------------------------------------------------
def test_a_broker_is_cordoned_by_star_or_by_every_dir_and_unknown_without_a_word() -> None:
    two = (LogDir("/a"), LogDir("/b"))
    assert Broker(BrokerId(1), log_dirs=two, cordoned_log_dirs=("*",)).cordoned is True
    assert Broker(BrokerId(1), log_dirs=two, cordoned_log_dirs=("/a", "/b")).cordoned is True
    partly = Broker(BrokerId(1), log_dirs=two, cordoned_log_dirs=("/a",))
    assert partly.cordoned is False and partly.cordoned_dirs == ("/a",)
    assert Broker(BrokerId(1), log_dirs=two, cordoned_log_dirs=()).cordoned is False
    assert Broker(BrokerId(1), log_dirs=two).cordoned is None  # not read
    # DescribeLogDirs v5 says it per dir, config or not
    flagged = (LogDir("/a", cordoned=True), LogDir("/b", cordoned=True))
    assert Broker(BrokerId(1), log_dirs=flagged).cordoned is True
    assert Broker(BrokerId(1), log_dirs=(LogDir("/a", cordoned=True), LogDir("/b"))).cordoned is None
    assert cordon_list(" /a, /b ,") == ("/a", "/b") and cordon_list(None) == () and cordon_value(["/a", "*"]) == "*"


def test_cordons_are_supported_from_4_3_iv0() -> None:
    assert cordons_supported(fake(CORDON_LEVEL).info) is True
    assert cordons_supported(fake(CORDON_LEVEL - 1).info) is False
    assert cordons_supported(ClusterInfo()) is None


# -- the snapshot and its document ------------------------------------------------------------------------
def test_the_snapshot_and_state_json_say_what_config_and_log_dirs_say() -> None:
    f = cordoned_by_config(cordoned_by_config(fake(), 1, "*"), 2, DIRS[1])
    state = f.snapshot()
    b = state.broker_index
    assert (b[BrokerId(0)].cordoned, b[BrokerId(1)].cordoned, b[BrokerId(2)].cordoned) == (False, True, False)
    assert b[BrokerId(2)].cordoned_dirs == (DIRS[1],)
    doc = json.loads(json.dumps(state_json(state)))
    by_id = {x["id"]: x for x in doc["brokers"]}
    assert by_id[1]["cordoned"] is True and by_id[1]["cordoned_log_dirs"] == ["*"]
    assert [d["cordoned"] for d in by_id[1]["log_dirs"]] == [True, True]
    assert by_id[2]["cordoned"] is False and [d["cordoned"] for d in by_id[2]["log_dirs"]] == [False, True]
    assert by_id[0]["cordoned"] is False and by_id[0]["cordoned_log_dirs"] == []
    assert load_state(json.dumps(state_json(state))) == state  # read back as it was


def test_below_4_3_the_state_says_unknown_and_overview_says_not_available() -> None:
    f = cordoned_by_config(fake(level=CORDON_LEVEL - 1), 1, "*")
    state = f.snapshot()
    assert all(b.cordoned is None and b.cordoned_log_dirs is None for b in state.brokers)
    assert all(x["cordoned"] is None for x in state_json(state)["brokers"])
    assert {r["cordoned"] for r in broker_rows(state)} == {"not available on this cluster"}
    assert {r["cordoned"] for r in log_dir_rows(state)} == {"not available on this cluster"}
    assert load_state(json.dumps(state_json(state))) == state


def test_with_info_clears_what_brokers_report_where_metadata_version_is_below_4_3() -> None:
    api = ApiView(
        brokers=(BrokerInfo(BrokerId(0)),),
        log_dirs=(BrokerLogDirs(BrokerId(0), (LogDir("/a", cordoned=False),), ()),),
        cordons={BrokerId(0): ()},
    )
    state = merge(api, None)
    assert state.brokers[0].cordoned is False
    old, new = fake(CORDON_LEVEL - 1).info, fake(CORDON_LEVEL).info
    assert with_info(state, old).brokers[0].cordoned is None
    assert with_info(state, old).brokers[0].log_dirs[0].cordoned is None
    assert with_info(state, new).brokers[0].cordoned is False
    assert with_info(state, ClusterInfo(read_at=1.0)).brokers[0].cordoned is False  # not known: left as read


def test_overview_and_state_text_say_cordoned_per_broker_and_per_log_dir() -> None:
    f = cordoned_by_config(cordoned_by_config(cordoned_by_config(fake(), 1, "*"), 2, ",".join(DIRS)), 3, DIRS[0])
    state = f.snapshot()
    rows = {r["broker"]: r["cordoned"] for r in broker_rows(state)}
    assert rows == {0: "—", 1: "cordoned", 2: "2 of 2 dirs cordoned", 3: "1 of 2 dirs cordoned"}
    dirs = {(r["broker"], r["log dir"]): r["cordoned"] for r in log_dir_rows(state)}
    assert dirs[(1, DIRS[0])] == dirs[(3, DIRS[0])] == "cordoned" and dirs[(3, DIRS[1])] == "—"
    text = state_text(state)
    assert "cordoned" in text.split("Brokers:")[1].splitlines()[1]  # the brokers table has the column
    assert "2 of 2 dirs cordoned" in text and "1 of 2 dirs cordoned" in text
    assert cordon_text(Broker(BrokerId(9)), None) == "unknown"
    # every cordon in one line, without picking brokers one by one
    assert cordoned_now(state, True) == (
        "Cordoned now: broker 1 (cordoned), broker 2 (2 of 2 dirs cordoned), broker 3 (1 of 2 dirs cordoned)."
    )
    assert cordoned_now(fake().snapshot(), True) == "Cordoned now: no broker or log dir."


# -- generators -----------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "options",
    [
        GenerateOptions(Goal.DECOMMISSION, (0,)),
        GenerateOptions(Goal.REBALANCE, metric=Metric.COUNT),
        GenerateOptions(Goal.REBALANCE, metric=Metric.LEADERS),
        GenerateOptions(Goal.REPLICATION_FACTOR, replication_factor=3, topics=("t",)),
        GenerateOptions(Goal.FIX_RACKS),
        GenerateOptions(Goal.OFFICIAL, brokers=(0, 1, 2, 3), topics=("t",)),
    ],
)
def test_no_goal_sends_a_replica_to_a_cordoned_broker_and_the_report_says_so(options: GenerateOptions) -> None:
    f = cordoned_by_config(cordoned_by_config(fake(), 3, "*"), 2, DIRS[0])
    state = f.snapshot()
    made = generate(state, options)
    for e in made.plan.entries:
        assert 3 not in set(e.replicas) - set(state.partition_index[e.key].replicas)
    said = [x.message for x in made.report.findings]
    assert "Broker 3 is cordoned: never a destination." in said
    assert any("Broker 2 has 1 of 2 log dirs cordoned" in m and "still receives replicas" in m for m in said)
    assert not errors(validate(state, made.plan))


def test_a_partly_cordoned_broker_still_receives_replicas() -> None:
    f = cordoned_by_config(fake(brokers=4), 3, DIRS[0])  # broker 3 holds nothing yet
    made = generate(f.snapshot(), GenerateOptions(Goal.ADD_BROKERS, (3,)))
    assert any(3 in e.replicas for e in made.plan.entries)


def test_filling_a_cordoned_broker_is_impossible_and_says_why() -> None:
    f = cordoned_by_config(fake(), 3, "*")
    with pytest.raises(GoalImpossible, match="Broker 3 is cordoned: never a destination"):
        generate(f.snapshot(), GenerateOptions(Goal.ADD_BROKERS, (3,)))


# -- validation and the override --------------------------------------------------------------------------------
def test_a_plan_onto_a_cordoned_broker_or_dir_is_an_error_the_console_owns() -> None:
    f = cordoned_by_config(cordoned_by_config(fake(30), 3, "*"), 2, DIRS[1])  # Kafka 4.3: its controller takes it
    state = f.snapshot()
    plan = Plan.of(
        [
            PlanEntry("t", 0, (BrokerId(0), BrokerId(3))),  # a replica onto cordoned broker 3
            PlanEntry("t", 1, (BrokerId(1), BrokerId(2)), (DIRS[0], DIRS[1])),  # 2 stays; its dir is cordoned
            PlanEntry("t", 2, (BrokerId(2), BrokerId(3)), (DIRS[0], "any")),  # 2's other dir is fine; 3 is not
        ]
    )
    found = [x for x in validate(state, plan) if x.code == CORDONED_DESTINATION]
    assert [(x.partition, x.severity.value) for x in found] == [(0, "error"), (1, "error"), (2, "error")]
    assert "broker 3 is cordoned" in found[0].message and "Kafka 4.4's refuses one" in found[0].message
    assert "log dir /k/d2 of broker 2 is cordoned" in found[1].message
    assert "--allow-cordoned" in found[0].hint
    assert overridable_only(found) and not blocking(found, allow_cordoned=True) and blocking(found)


def test_submitting_onto_a_cordoned_broker_is_refused_unless_allowed_and_the_override_is_audited(
    store: Store,
) -> None:
    f = cordoned_by_config(fake(30), 3, "*")  # Kafka 4.3: its controller takes it
    state = f.snapshot()
    plan = Plan.of([PlanEntry("t", 0, (BrokerId(0), BrokerId(3)))])
    pre = preflight(state, plan)
    assert [x.code for x in pre.errors] == [CORDONED_DESTINATION] and pre.cordoned
    assert pre.blocking() and not pre.blocking(allow_cordoned=True)
    with pytest.raises(NotPermitted, match="cordoned brokers or log dirs"):
        run_service.start_run(store, f, state, run_service.RunRequest(ANN, plan, "onto 3"), users=None)
    refused = store.audit.entries()[-1]
    assert (refused.action, refused.outcome) == ("submit", REFUSED)
    run_id = run_service.start_run(
        store,
        f,
        state,
        run_service.RunRequest(ANN, plan, "onto 3", run_service.RunSettings(allow_cordoned=True)),
        users=None,
    )
    entry = store.audit.entries()[-1]
    assert entry.action == "submit" and entry.outcome == "run recorded"
    request = json.loads(entry.request) if isinstance(entry.request, str) else entry.request
    assert request["run"] == run_id and request["allow_cordoned"] is True and request["cordoned_destinations"] == 1
    assert "t-0: broker 3 is cordoned" in request["cordoned"][0]


def test_on_kafka_4_4_a_replica_onto_a_wholly_cordoned_broker_is_refused_with_no_override(store: Store) -> None:
    """Met in the browser: Review offered "Submit onto cordoned brokers anyway" on Kafka 4.4, whose
    controller then rejected every such partition (INVALID_REPLICATION_ASSIGNMENT)."""
    f = cordoned_by_config(cordoned_by_config(fake(33), 3, "*"), 2, DIRS[1])  # 4.4-IV2
    state = f.snapshot()
    plan = Plan.of(
        [
            PlanEntry("t", 0, (BrokerId(0), BrokerId(3))),  # onto wholly cordoned broker 3: the controller refuses
            PlanEntry("t", 1, (BrokerId(1), BrokerId(2)), (DIRS[0], DIRS[1])),  # a cordoned dir: put elsewhere
        ]
    )
    found = {x.partition: x for x in validate(state, plan) if x.code in (CORDONED_DESTINATION, CORDONED_REFUSED)}
    assert (found[0].code, found[1].code) == (CORDONED_REFUSED, CORDONED_DESTINATION)
    assert "refuses an explicit reassignment onto a broker whose every log dir is cordoned" in found[0].message
    assert "--allow-cordoned" not in found[0].hint and "uncordon" in found[0].hint
    assert not overridable_only(list(found.values())) and blocking(list(found.values()), allow_cordoned=True)
    pre = preflight(state, plan)
    refusal = pre.refusal(allow_cordoned=True)
    assert refusal is not None and "nothing was sent" in refusal.message
    with pytest.raises(NotPermitted):
        run_service.start_run(
            store,
            f,
            state,
            run_service.RunRequest(ANN, plan, "onto 3", run_service.RunSettings(allow_cordoned=True)),
            users=None,
        )
    assert (store.audit.entries()[-1].action, store.audit.entries()[-1].outcome) == ("submit", REFUSED)
    assert not f.calls_to("alter_partition_reassignments")
    only_dir = Plan.of([plan.entries[1]])  # the dir cordon alone stays the operator's to override
    assert overridable_only(validate(state, only_dir))


# -- the services ---------------------------------------------------------------------------------------------
def audit(store: Store) -> list[tuple[str, str]]:
    return [(e.action, e.outcome) for e in store.audit.entries()]


def test_cordon_and_uncordon_a_broker_audited_with_the_change(store: Store) -> None:
    f = fake()
    report = cordon_service.change(store, f, ANN, CORDON, 1)
    assert report.changed and report.confirmed and f.cordon_entries(1) == ("*",)
    assert f.snapshot().broker_index[BrokerId(1)].cordoned is True
    assert report.summary() == "Cordoned broker 1: cordoned.log.dirs (none) → '*' (read back from the broker)."
    again = cordon_service.change(store, f, ANN, CORDON, 1)
    assert not again.changed and "already" in again.summary()
    back = cordon_service.change(store, f, ANN, UNCORDON, 1)
    assert back.confirmed and f.cordon_entries(1) == () and f.snapshot().broker_index[BrokerId(1)].cordoned is False
    assert audit(store) == [
        ("cordon", "sending"),
        ("cordon", "applied"),
        ("cordon", "unchanged"),
        ("uncordon", "sending"),
        ("uncordon", "applied"),
    ]
    entry = store.audit.entries()[1]
    request = json.loads(entry.request) if isinstance(entry.request, str) else entry.request
    assert request == {"broker": 1, "log_dir": None, "before": [], "after": ["*"]}
    sent = [c.args[0] for c in f.calls_to("alter_configs")]
    assert sent == [{BrokerId(1): {CORDONED_LOG_DIRS: "*"}}, {BrokerId(1): {CORDONED_LOG_DIRS: None}}]


def test_cordon_and_uncordon_one_log_dir(store: Store) -> None:
    f = fake()
    cordon_service.change(store, f, ANN, CORDON, 2, DIRS[0])
    assert f.cordon_entries(2) == (DIRS[0],)
    cordon_service.change(store, f, ANN, CORDON, 2, DIRS[1])
    assert f.cordon_entries(2) == DIRS and f.snapshot().broker_index[BrokerId(2)].cordoned is True
    cordon_service.change(store, f, ANN, UNCORDON, 2, DIRS[0])
    assert f.cordon_entries(2) == (DIRS[1],)
    cordon_service.change(store, f, ANN, CORDON, 2)  # the whole broker
    cordon_service.change(store, f, ANN, UNCORDON, 2, DIRS[1])  # out of "*": the other dir stays cordoned
    assert f.cordon_entries(2) == (DIRS[0],)
    cordon_service.change(store, f, ANN, UNCORDON, 2, DIRS[0])
    assert f.cordon_entries(2) == ()


def test_a_dir_the_broker_does_not_have_or_an_unknown_broker_is_refused_before_anything_is_sent(
    store: Store,
) -> None:
    f = fake()
    with pytest.raises(ConfigError, match=r"Broker 2 has no log dir /nope \(its log dirs: /k/d1, /k/d2\)"):
        cordon_service.change(store, f, ANN, CORDON, 2, "/nope")
    with pytest.raises(ConfigError, match="Broker 9 is not registered"):
        cordon_service.change(store, f, ANN, CORDON, 9)
    assert not f.calls_to("alter_configs")
    # Kafka refuses such a dir too (the fake as the real broker: INVALID_REQUEST)
    with pytest.raises(RequestRefused, match="Missing entries : /nope"):
        f.alter_configs({BrokerId(2): {CORDONED_LOG_DIRS: "/nope"}}, {})


@pytest.mark.parametrize("level", [CORDON_LEVEL - 1, None])
def test_a_cluster_without_cordons_is_refused_audited_and_nothing_is_sent(level: int | None, store: Store) -> None:
    f = fake(level=CORDON_LEVEL - 1) if level is not None else FakeCluster.of(3, {"t": [(0, 1)]})
    with pytest.raises(UnsupportedByCluster) as refused:
        cordon_service.change(store, f, ANN, CORDON, 1)
    if level is not None:
        assert "does not support cordoned log dirs" in refused.value.message and "4.2-IV1" in refused.value.message
    else:
        assert "not known" in refused.value.message
    assert "Nothing was sent." in refused.value.message
    assert not f.calls_to("alter_configs") and audit(store) == [("cordon", REFUSED)]


@pytest.mark.parametrize("action", [CORDON, UNCORDON])
def test_a_viewer_may_not_cordon_or_uncordon(action: str, store: Store, viewer: Identity) -> None:
    f = fake()
    with pytest.raises(NotPermitted, match=f"may not {action}"):
        cordon_service.change(store, f, viewer, action, 1)
    assert audit(store) == [(action, REFUSED)] and not f.calls_to("alter_configs")


def test_a_failed_request_is_audited(store: Store) -> None:
    from console.core.errors import ClusterUnavailable

    f = fake()
    f.fail_next("alter_configs", ClusterUnavailable("no answer", "try again"))
    with pytest.raises(ClusterUnavailable):
        cordon_service.change(store, f, ANN, CORDON, 1)
    assert audit(store) == [("cordon", "sending"), ("cordon", "failed")]


def test_a_broker_down_cannot_be_cordoned(store: Store) -> None:
    f = fake()
    f.stop_broker(2)
    with pytest.raises(ConfigError, match="Broker 2 is not registered"):
        cordon_service.change(store, f, ANN, CORDON, 2, DIRS[0])
    assert not f.calls_to("alter_configs")


def test_the_drafts_replication_factor_edit_never_adds_a_cordoned_broker() -> None:
    from console.plans.drafting import set_replication_factor

    f = cordoned_by_config(fake(), 3, "*")
    state = f.snapshot()
    start = Plan.of([PlanEntry("t", p.partition, p.replicas) for p in state.partitions])
    wider = set_replication_factor(start, state, "t", 3)
    assert all(len(e.replicas) == 3 and BrokerId(3) not in e.replicas for e in wider.entries)
