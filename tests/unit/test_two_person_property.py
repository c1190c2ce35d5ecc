"""The two-person rule as a property: random sequences of save (a new plan or an overwrite),
rebase, note, approve and submit by one to three people, with and without the rule, across two
clusters, through the services on fake clusters. Whatever the order, a run never starts on a
cluster other than its plan's; with the rule on, it never starts unless someone who authored no
version of the plan (as this test saw them save, overwrite and rebase it) approved exactly the
submitted content on the run's cluster."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from console.access.auth import APPROVER, OPERATOR, Identity, Users
from console.core.errors import ConfigError, NotPermitted, RunOverlap
from console.core.model import BrokerId, ClusterState, cluster_key
from console.core.states import RunState
from console.plans.plan import Plan, PlanEntry, plan_hash
from console.services import plans as plan_service
from console.services import runs as run_service
from console.storage.store import Store
from tests.fakes.cluster import FakeCluster

PEOPLE = ("ann", "bob", "cy")
TARGETS = ((1, 2), (0, 1), (2, 1))
"""What a plan asks of u-0 (on 0,2 on both clusters)."""
NAMES = ("P", "Q")
SCRATCH = "/dev/shm" if Path("/dev/shm").is_dir() else None
"""Each example's store in memory when the system has it (the store syncs every write to disk)."""

person = st.integers(0, 2)
cluster = st.sampled_from((0, 0, 0, 1))  # mostly the first cluster: plans meet there
pick = st.integers(0, 3)
"""Which saved plan, newest first (the plans just saved or brought up to date are the likeliest)."""
OPS = st.one_of(
    st.tuples(st.just("save"), person, cluster, st.sampled_from(NAMES), st.integers(0, 2), st.booleans()),
    st.tuples(st.just("rebase"), person, cluster, pick),
    st.tuples(st.just("note"), person, pick),
    st.tuples(st.just("approve"), person, cluster, pick),
    st.tuples(st.just("submit"), person, cluster, pick, st.booleans()),
)


def ids(*b: int) -> tuple[BrokerId, ...]:
    return tuple(BrokerId(x) for x in b)


@dataclass
class Seen:
    """What the test saw succeed: each plan's cluster and authors (with its parent's, when
    rebased), and each approval (plan, approver, content, cluster)."""

    cluster_of: dict[int, str] = field(default_factory=dict)
    authors: dict[int, set[str]] = field(default_factory=dict)
    approvals: list[tuple[int, str, str, str]] = field(default_factory=list)
    runs: int = 0


def plan_of(target: int, stale: bool) -> Plan:
    return Plan.of([PlanEntry("u", 0, ids(*TARGETS[target]))], {("u", 0): ids(2, 0) if stale else ids(0, 2)})


def act(
    op: tuple[object, ...], store: Store, clusters: list[tuple[FakeCluster, ClusterState]], who: Identity, rule: bool
) -> tuple[str, object]:
    """Do ``op``; what it returned, or the refusal."""
    kind = op[0]
    seen_ids = [s.id for s in store.plans.list()]
    try:
        if kind == "save":
            fake, state = clusters[int(op[2])]  # type: ignore[call-overload]
            return kind, plan_service.save_plan(
                store,
                who,
                state,
                fake.name,
                str(op[3]),
                plan_of(int(op[4]), bool(op[5])),  # type: ignore[call-overload]
            )
        if not seen_ids:
            return "nothing", None
        if kind == "note":
            return kind, plan_service.add_note(store, who, seen_ids[int(op[2]) % len(seen_ids)], "ok")  # type: ignore[call-overload]
        fake, state = clusters[int(op[2])]  # type: ignore[call-overload]
        plan_id = seen_ids[int(op[3]) % len(seen_ids)]  # type: ignore[call-overload]
        if kind == "rebase":
            return kind, plan_service.save_rebased_plan(store, who, state, fake.name, plan_id)
        if kind == "approve":
            run_service.approve(store, who, cluster_key(state, fake.name), plan_id)
            return kind, plan_id
        saved = store.plans.load(plan_id)
        assert saved is not None
        content = plan_of(1, False) if op[4] else saved.plan  # a content other than the saved plan's, or its own
        users = Users(two_person_rule=rule)
        return kind, run_service.start_run(
            store, fake, state, run_service.RunRequest(who, content, "x", plan_id=plan_id), users=users
        )
    except (NotPermitted, ConfigError, RunOverlap) as e:
        return "refused", e


def check_run(store: Store, seen: Seen, run_id: int, plan_id: int, rule: bool) -> None:
    run = store.runs.require(run_id)
    assert run.cluster == seen.cluster_of[plan_id], "a run started on a cluster other than its plan's"
    if rule:
        authors = seen.authors[plan_id]
        assert any(
            p == plan_id and approver not in authors and digest == run.plan_hash and on == run.cluster
            for p, approver, digest, on in seen.approvals
        ), f"run {run_id} of plan {plan_id} started without an approval by a non-author ({authors}) on {run.cluster}"


@settings(max_examples=250, deadline=None)
@given(rule=st.booleans(), people=st.integers(1, 3), ops=st.lists(OPS, min_size=1, max_size=14))
def test_no_run_starts_without_an_approval_by_a_non_author_on_its_cluster(
    rule: bool, people: int, ops: list[tuple[object, ...]]
) -> None:
    with tempfile.TemporaryDirectory(dir=SCRATCH) as tmp:
        store = Store(Path(tmp) / "console.db")
        clusters = []
        for i, cid in enumerate(("cluster-a", "cluster-b")):
            fake = FakeCluster.of(3, {"u": [[0, 2]]})
            fake.cluster_id = cid
            clusters.append((fake, fake.snapshot()))
            assert cluster_key(clusters[i][1], fake.name) == cid
        seen = Seen()
        try:
            for op in ops:
                name = PEOPLE[int(op[1]) % people]  # type: ignore[call-overload]
                who = Identity(name, frozenset({OPERATOR, APPROVER}), "users file")
                kind, got = act(op, store, clusters, who, rule)
                if kind == "save" or kind == "rebase":
                    assert isinstance(got, int)
                    parent = int(op[3]) if kind == "rebase" else None  # type: ignore[call-overload]
                    inherited = set() if parent is None else set(seen.authors[_parent(store, got)])
                    seen.authors.setdefault(got, set()).update(inherited | {name})
                    seen.cluster_of[got] = clusters[int(op[2])][0].cluster_id  # type: ignore[call-overload]
                elif kind == "approve":
                    assert isinstance(got, int)
                    saved = store.plans.load(got)
                    assert saved is not None
                    assert name not in seen.authors[got], "an author approved"
                    on = clusters[int(op[2])][0].cluster_id  # type: ignore[call-overload]
                    assert on == seen.cluster_of[got], "an approval given for another cluster"
                    seen.approvals.append((got, name, plan_hash(saved.plan), on))
                elif kind == "submit":
                    assert isinstance(got, int)
                    seen.runs += 1
                    plan_id = [s.id for s in store.plans.list()]
                    check_run(store, seen, got, plan_id[int(op[3]) % len(plan_id)], rule)  # type: ignore[call-overload]
                    store.runs.set_state(got, RunState.COMPLETED)  # the next submission is not in its way
        finally:
            store.close()


def _parent(store: Store, plan_id: int) -> int:
    saved = store.plans.load(plan_id)
    assert saved is not None and saved.summary.parent_id is not None
    return saved.summary.parent_id
