"""AppTest against the sandbox: the Live page says when a move in flight will finish (copy rate,
ETA, the throttle in force), and the Runs and Review pages show rates in units a person reads."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from console.core.format import human_rate
from console.core.model import BrokerId
from tests.conftest import point_console_at, wait_for
from tests.integration.helpers import (
    clear_throttles,
    make_topic,
    reassign,
    set_broker_rates,
    throttle_topic_all,
    unthrottle_and_wait,
)

APP = str(Path(__file__).resolve().parents[2] / "app.py")
RATE = 20_000  # B/s: 600 KB take about half a minute


@pytest.fixture
def app_env(sandbox, monkeypatch, tmp_path):
    point_console_at(sandbox, monkeypatch, tmp_path)
    return sandbox


def live_row(at: AppTest, name: str) -> dict[str, object]:
    table = next(d.value for d in at.dataframe if "ETA" in d.value.columns)
    rows = table[table["partition"] == name].to_dict("records")
    assert len(rows) == 1, f"{name} not in {list(table['partition'])}"
    return rows[0]


def test_live_page_shows_rate_eta_and_throttle_of_a_move_in_flight(app_env):
    bs = app_env.bootstrap_servers
    make_topic(bs, "ut-eta", 1, 1, 600, assignment=[[0]])
    set_broker_rates(bs, [0, 1, 2], RATE)
    throttle_topic_all(bs, "ut-eta")
    reassign(bs, {("ut-eta", 0): [1]})
    try:
        at = AppTest.from_file(APP, default_timeout=60).run()
        assert not at.exception
        labels = [m.label for m in at.metric]
        assert labels.index("ETA (all in flight)") == labels.index("Left to copy") + 1
        first = live_row(at, "ut-eta-0")
        assert first["ETA"] == first["copy rate"] == "measuring…"  # one refresh: nothing to measure yet
        assert first["leader throttle"] == f"0: {human_rate(RATE)}"
        assert first["follower throttle"] == f"1: {human_rate(RATE)}"
        assert str(first["left to copy"]).endswith("KB")
        time.sleep(3)  # the next refresh: a new snapshot, the growth of broker 1's log measured
        at.run()
        assert not at.exception
        later = live_row(at, "ut-eta-0")
        if later["state"] == "reassigning" and later["ETA"] != "copied":
            assert later["ETA"] != "measuring…" and str(later["copy rate"]).endswith("/s")
        eta = at.metric[labels.index("ETA (all in flight)")].value
        assert eta != "measuring…" and "None" not in eta
        assert at.metric[labels.index("Copy rate (observed)")].value.endswith("/s")
    finally:
        unthrottle_and_wait(bs, [0, 1, 2])
        clear_throttles(bs, [0, 1, 2], ["ut-eta"])


def test_runs_and_review_pages_show_rates_in_human_units(app_env, tmp_path):
    from console.access.auth import SANDBOX_USERS, Identity, write_users
    from console.plans.plan import Plan, PlanEntry
    from console.services import plans as plan_service
    from console.services import runs as run_service
    from console.state.reader import ClusterReader
    from console.storage.store import Store
    from tests.conftest import settings_for

    bs = app_env.bootstrap_servers
    write_users(tmp_path / "users.json", {n: (pw, list(r)) for n, (pw, r) in SANDBOX_USERS.items()})
    make_topic(bs, "ut-units", 2, 1, 20, assignment=[[0], [1]])
    store = Store()
    with ClusterReader(settings_for(app_env)) as reader:
        state = reader.snapshot()
        run_id = run_service.start_run(
            store,
            reader.gateway(),
            Identity.cli("ann"),
            state,
            Plan.of([PlanEntry("ut-units", 0, (BrokerId(2),))]),
            "units run",
            10_485_760,
            users=None,
        )
        plan_id = plan_service.save_plan(
            store, Identity.cli("ann"), state, "test", "units plan", Plan.of([PlanEntry("ut-units", 1, (BrokerId(2),))])
        )
    try:
        at = AppTest.from_file(APP, default_timeout=60).run()
        at.switch_page("views/runs.py").run()  # the page's worker drives the run
        assert not at.exception
        runs = at.dataframe[0].value
        assert "throttle B/s" not in runs.columns
        assert list(runs[runs["run"] == run_id]["throttle"]) == ["10.0 MB/s"]
        assert any(f"**Run {run_id}**" in md.value and "throttle 10.0 MB/s" in md.value for md in at.markdown)
        wait_for(lambda: Store().runs.get(run_id).state == "completed", timeout=60, what="the run completed")

        # an operator reviewing a plan: the throttle typed in KB/s is confirmed in the unit pages show
        at.text_input(key="auth.user").set_value("operator")
        at.text_input(key="auth.password").set_value(SANDBOX_USERS["operator"][0])
        at.button(key="FormSubmitter:sign_in-Sign in").click().run()
        at.query_params["plan"] = str(plan_id)
        at.switch_page("views/review.py").run()
        assert not at.exception and at.header[0].value == "Review a plan"
        assert any(c.value.startswith("= 9.8 MB/s per broker") for c in at.caption)  # 10,000 KB/s of 1024 bytes
        at.number_input(key="review.rate").set_value(2).run()
        assert any(c.value.startswith("= 2.0 KB/s per broker") for c in at.caption)
        at.segmented_control(key="review.view").set_value("Movement").run()
        flows = next(d.value for d in at.dataframe if "to copy" in d.value.columns)
        assert list(flows.columns) == ["from broker", "to broker", "replicas", "to copy"]
        assert all(str(v).endswith(("B", "KB", "MB")) for v in flows["to copy"])
    finally:
        clear_throttles(bs, [0, 1, 2], ["ut-units"])
