"""AppTest: a run one of whose partitions an operator cancelled while it ran (Live's chosen
partitions) completes the rest, and the Runs page says so: the run "partly cancelled", its wave
done, "completed, 1 partition cancelled: …", the partition and where it is, and the closing
election of the partitions that moved."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from console.access.auth import Identity
from console.core.model import BrokerId
from console.moves.cancel import plan_cancel
from console.plans.plan import Plan, PlanEntry
from console.runs.executor import Executor
from console.services import cancel as cancel_service
from console.services import runs as run_service
from console.storage.store import Store
from tests.app.pages import APP, sign_in
from tests.support import wait_for


def test_the_runs_page_says_the_run_completed_but_for_the_partition_cancelled(fake_cluster, sandbox_users):
    with fake_cluster.held() as fake:
        fake.create_topic("pc", [[0, 1]] * 3, size=1_000)  # copied at once
        fake.create_topic("pc-big", [[0, 1]], size=4 * 10**11)  # its copy takes for ever, within the disks
    keys = [("pc", 0), ("pc", 1), ("pc", 2), ("pc-big", 0)]
    plan = Plan.of(PlanEntry(t, p, (BrokerId(2), BrokerId(0))) for t, p in keys)
    store = Store()
    run_id = run_service.start_run(
        store,
        fake_cluster,
        fake_cluster.snapshot(),
        run_service.RunRequest(Identity.cli("ann"), plan, "partly", run_service.RunSettings(elect_leaders=True)),
        users=None,
    )
    ex = Executor(store, fake_cluster, "ann", settle_s=0)
    ex.tick(run_id)
    wait_for(lambda: ex.tick(run_id).did == "wave 1: 3 of 4 done", timeout=30, what="three of four moved")
    cluster = store.runs.require(run_id).cluster
    ours = store.runs.active_partitions(cluster)
    seen = plan_cancel(fake_cluster.snapshot(), [("pc-big", 0)], ours)  # Live: "Chosen partitions"
    cancel_service.cancel_seen(store, fake_cluster, Identity.cli("olga"), cluster, seen, ours, wait_s=5)
    assert ex.drive(run_id, every=0.05, timeout=30).state.value == "partly cancelled"

    at = AppTest.from_file(APP, default_timeout=60).run()
    sign_in(at, "viewer")
    at.switch_page("views/runs.py").run()
    assert not at.exception
    runs = next(d.value for d in at.dataframe if "plan hash" in d.value.columns)
    assert (runs["state"][0], runs["waves"][0]) == ("partly cancelled", "1/1")
    assert any(m.value.startswith(f"**Run {run_id}** · partly cancelled") for m in at.markdown)
    said = [i.value for i in at.info if "cancelled" in i.value]
    assert said == [
        "Completed, 1 partition cancelled: pc-big-0: back on their brokers before the run (each one's order below); every other partition "
        "reached its target."
    ]
    table = next(d.value for d in at.dataframe if "what happened" in d.value.columns)
    assert (
        list(table["partition"]) == ["pc-big-0"]
        and table["what happened"][0] == "cancelled: back on 0,1, as before the run"
    )
    waves = next(d.value for d in at.dataframe if "at target" in d.value.columns)
    assert (waves["state"][0], waves["cancelled"][0], waves["rejected"][0]) == ("completed", 1, 0)
    assert any(
        c.value == "Preferred leader election (of the partitions that moved; not of those cancelled): 3 elected, 0 not."
        for c in at.caption
    )
