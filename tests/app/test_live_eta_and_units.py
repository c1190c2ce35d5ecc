"""AppTest: the Live page says when a move in flight on the sandbox will finish (copy rate, ETA, the
throttle in force), and the Runs and Review pages show rates in units a person reads (on the fake cluster)."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from console.core.format import human_rate
from console.core.model import BrokerId
from tests.app.pages import APP, sign_in
from tests.integration.helpers import (
    clear_throttles,
    make_topic,
    reassign,
    set_broker_rates,
    throttle_topic_all,
    unthrottle_and_wait,
)
from tests.support import wait_for

RATE = 20_000  # B/s: 600 KB take about half a minute


def live_row(at: AppTest, name: str) -> dict[str, object]:
    table = next(d.value for d in at.dataframe if "ETA" in d.value.columns)
    rows = table[table["partition"] == name].to_dict("records")
    assert len(rows) == 1, f"{name} not in {list(table['partition'])}"
    return rows[0]


def test_live_page_shows_rate_eta_and_throttle_of_a_move_in_flight(console_on_sandbox):
    bs = console_on_sandbox.bootstrap_servers
    make_topic(bs, "ut-eta", 1, 1, 600, assignment=[[0]])
    set_broker_rates(bs, [0, 1, 2], RATE)
    throttle_topic_all(bs, "ut-eta")
    reassign(bs, {("ut-eta", 0): [1]})
    try:
        at = AppTest.from_file(APP, default_timeout=60).run()
        assert not at.exception
        labels = [m.label for m in at.metric]
        assert labels.index("ETA (last to finish)") == labels.index("Left to copy") + 1
        # one refresh: no rate observed yet, the headline ETA goes by the throttle and says so
        assert at.metric[labels.index("ETA (last to finish)")].value not in ("measuring…", "unknown")
        assert any("(the throttle)" in c.value for c in at.caption), [c.value for c in at.caption]
        first = live_row(at, "ut-eta-0")
        assert first["ETA"] == first["copy rate"] == "measuring…"  # one refresh: nothing to measure yet
        assert first["leader throttle"] == f"0: {human_rate(RATE)}"
        assert first["follower throttle"] == f"1: {human_rate(RATE)}"
        assert str(first["left to copy"]).endswith("KB")
        rate_metric = labels.index("Copy rate (observed)")

        def measured() -> bool:  # a later refresh: a new snapshot, the growth of broker 1's log measured
            at.run()
            return bool(at.exception) or at.metric[rate_metric].value != "measuring…"

        wait_for(measured, timeout=30, every=1.0, what="a refresh that measured the copy rate")
        assert not at.exception
        later = live_row(at, "ut-eta-0")
        if later["state"] == "reassigning" and later["ETA"] != "copied":
            assert later["ETA"] != "measuring…" and str(later["copy rate"]).endswith("/s")
        eta = at.metric[labels.index("ETA (last to finish)")].value
        assert eta != "measuring…" and "None" not in eta
        assert at.metric[labels.index("Copy rate (observed)")].value.endswith("/s")
    finally:
        unthrottle_and_wait(bs, [0, 1, 2])
        clear_throttles(bs, [0, 1, 2], ["ut-eta"])


def test_runs_and_review_pages_show_rates_in_human_units(fake_cluster, sandbox_users):
    from console.access.auth import Identity
    from console.plans.plan import Plan, PlanEntry
    from console.services import plans as plan_service
    from console.services import runs as run_service
    from console.storage.store import Store

    with fake_cluster.held() as fake:
        fake.create_topic("ut-units", [[0], [1]], size=20 * 1024)
    store = Store()
    state = fake_cluster.snapshot()
    run_id = run_service.start_run(
        store,
        fake_cluster,
        state,
        run_service.RunRequest(
            Identity.cli("ann"),
            Plan.of([PlanEntry("ut-units", 0, (BrokerId(2),))]),
            "units run",
            run_service.RunSettings(rate=10_000_000),
        ),
        users=None,
    )
    plan_id = plan_service.save_plan(
        store, Identity.cli("ann"), state, "test", "units plan", Plan.of([PlanEntry("ut-units", 1, (BrokerId(2),))])
    )
    at = AppTest.from_file(APP, default_timeout=60).run()
    at.switch_page("views/runs.py").run()  # the page's worker drives the run
    assert not at.exception
    runs = at.dataframe[0].value
    assert "throttle B/s" not in runs.columns
    assert list(runs[runs["run"] == run_id]["throttle"]) == ["10.0 MB/s"]
    assert any(f"**Run {run_id}**" in md.value and "throttle 10.0 MB/s" in md.value for md in at.markdown)
    wait_for(lambda: Store().runs.get(run_id).state == "completed", timeout=60, what="the run completed")

    # an operator reviewing a plan: the throttle typed with a unit (or in bytes/s alone) is confirmed in
    # the one unit every page shows (decimal: 10,000 B/s once showed as 9.8 KB/s)
    sign_in(at, "operator")
    at.query_params["plan"] = str(plan_id)
    at.switch_page("views/review.py").run()
    assert not at.exception and at.header[0].value == "Review a plan"
    assert any(c.value == "= 10.0 MB/s per broker (10,000,000 bytes/s)" for c in at.caption)
    at.text_input(key="review.rate").set_value("2 KB/s").run()
    assert any(c.value == "= 2.0 KB/s per broker (2,000 bytes/s)" for c in at.caption)
    at.text_input(key="review.rate").set_value("20000").run()  # a number alone: bytes/s, as in the CLI
    assert any(c.value == "= 20.0 KB/s per broker (20,000 bytes/s)" for c in at.caption)
    at.text_input(key="review.rate").set_value("fast").run()
    assert not at.exception and any("is not a rate" in e.value for e in at.error)
    assert next(b for b in at.button if b.label == "Submit…").disabled
    at.segmented_control(key="review.view").set_value("Movement").run()
    flows = next(d.value for d in at.dataframe if "to copy" in d.value.columns)
    assert list(flows.columns) == ["from broker", "to broker", "replicas", "to copy"]
    assert all(str(v).endswith(("B", "KB", "MB")) for v in flows["to copy"])


def test_a_paused_run_s_eta_counts_its_current_wave_only(fake_cluster, sandbox_users):
    """Met in the browser: a paused run's ETA went on counting the later waves at the throttle, though
    none starts before Resume."""
    from console.access.auth import Identity
    from console.core.states import WaveState
    from console.moves.waves import WaveLimits
    from console.plans.plan import Plan, PlanEntry
    from console.services import runs as run_service
    from console.storage.store import Store

    with fake_cluster.held() as fake:
        fake.create_topic("ut-paused", [[0], [1]], size=50_000_000)  # 50 MB at the fake's 1 KB/s: in flight
    store, ann = Store(), Identity.cli("ann")
    plan = Plan.of([PlanEntry("ut-paused", p, (BrokerId(2),)) for p in (0, 1)])
    run_id = run_service.start_run(
        store,
        fake_cluster,
        fake_cluster.snapshot(),
        run_service.RunRequest(
            ann, plan, "paused run", run_service.RunSettings(rate=10_000_000, limits=WaveLimits(partitions=1))
        ),
        users=None,
    )
    at = AppTest.from_file(APP, default_timeout=60).run()
    at.switch_page("views/runs.py").run()  # the page's worker drives the run
    wait_for(lambda: Store().runs.waves(run_id)[0].state is WaveState.RUNNING, timeout=30, what="wave 1 sent")
    at.run()
    assert "ETA" in [m.label for m in at.metric]  # this wave and the next
    run_service.pause(store, ann, run_id)
    at.run()
    assert not at.exception
    labels = [m.label for m in at.metric]
    assert "ETA (this wave)" in labels and "ETA" not in labels, labels
    assert any("the run is paused: this wave finishes, the next waits for Resume" in c.value for c in at.caption)
