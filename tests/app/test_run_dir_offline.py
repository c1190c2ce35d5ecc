"""AppTest: a run's log dir move whose target dir went offline (KAFKA-19571) is said on Live (next
to the run, with what to do) and on Runs (the replicas not in the dir the plan asked), not as a
partition the controller rejected."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from console.access.auth import Identity
from console.core.model import DIR_OFFLINE, BrokerId
from console.plans.plan import Plan, PlanEntry
from console.runs.executor import Executor
from console.services import runs as run_service
from console.storage.store import Store
from tests.app.pages import APP, sign_in

D1, D2 = "/data", "/data2"


def test_live_and_runs_say_the_replica_whose_dir_went_offline(fake_cluster, sandbox_users):
    with fake_cluster.held() as fake:
        fake.log_dirs = (D1, D2)
        fake.create_topic("big", [[0], [1]], size=10**12)  # its copies between dirs take for ever
    plan = Plan.of([PlanEntry("big", 0, (BrokerId(0),), (D2,)), PlanEntry("big", 1, (BrokerId(1),), (D2,))])
    store = Store()
    run_id = run_service.start_run(
        store,
        fake_cluster,
        fake_cluster.snapshot(),
        run_service.RunRequest(Identity.cli("ann"), plan, "dirs"),
        users=None,
    )
    ex = Executor(store, fake_cluster, "ann")
    ex.tick(run_id)  # both dirs asked for, the copies start
    with fake_cluster.held() as fake:
        fake.fail_log_dir(0, D2)
    ex.tick(run_id)  # big-0's move is recorded and no longer waited for; big-1 still copies
    store.runs.release(run_id, ex.owner)
    assert [o.name for o in store.runs.outcomes(run_id) if o.code == DIR_OFFLINE] == ["big-0"]

    at = AppTest.from_file(APP, default_timeout=60).run()
    sign_in(at, "operator")
    assert at.header[0].value == "Live reassignments"
    said = [w.value for w in at.warning if "big-0" in w.value]
    assert len(said) == 1 and said[0].startswith(
        f"Run {run_id} (dirs), big-0: the log dir {D2} of broker 0 went offline"
    )
    assert "restart broker 0" in said[0]

    at.switch_page("views/runs.py").run()
    assert not at.exception
    assert not any("rejected by the controller" in e.value for e in at.error)
    assert any(w.value.startswith("1 replica not in the log dir the plan asked") for w in at.warning)
    table = next(d.value for d in at.dataframe if "what happened" in d.value.columns)
    assert list(table["partition"]) == ["big-0"] and "went offline" in table["what happened"][0]
