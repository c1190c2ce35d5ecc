"""AppTest: the History page with no history (what to do), then the history job run from the
page (in a child process), then the tables and charts of a scripted timeline; and the Live
page's ETA from history for a move in flight."""

from __future__ import annotations

import re

from streamlit.testing.v1 import AppTest

from console.storage.store import Store
from tests.app.pages import APP, sign_in
from tests.unit.timeline import timeline, write_states


def test_history_page_updates_and_shows_moves_rates_load_and_incidents(
    fake_cluster, sandbox_users, monkeypatch, tmp_path
):
    monkeypatch.setenv("CONSOLE_HISTORY_DIR", str(tmp_path / "history"))
    write_states(tmp_path / "history" / "snapshots", timeline())
    at = AppTest.from_file(APP, default_timeout=120).run()
    at.switch_page("views/history.py").run()
    assert not at.exception
    # issue 28: the job (Spark, on the server) is for operators: disabled for a guest, with why
    assert at.button(key=keys_update()).disabled
    assert any("guest may not update the history: it needs the operator role" in c.value for c in at.caption)
    sign_in(at, "operator")
    assert any("No history yet" in i.value for i in at.info)
    assert any("does not collect snapshots" in c.value for c in at.caption)
    at.button(key=keys_update()).click().run()
    assert not at.exception
    assert not at.error, [e.value for e in at.error]
    assert [(e.user, e.outcome) for e in Store().audit.entries(action="history-job")] == [
        ("operator", "started"),
        ("operator", "updated"),
    ]
    at.segmented_control(key="history.range").set_value("All").run()
    assert not at.exception
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Moves"] == "6" and metrics["Completed"] == "3" and metrics["Cancelled"] == "1"
    assert metrics["In flight / stuck"] == "2 / 0" and metrics["Median copy rate"].endswith("B/s")
    assert any(c.value.startswith("The history job last ran") for c in at.caption)
    moves = next(d.value for d in at.dataframe if "outcome" in d.value.columns)
    assert set(moves["outcome"]) == {"completed", "cancelled", "in_flight"}
    assert "a-0 → 3" in set(moves["move"])
    rates = next(d.value for d in at.dataframe if "broker throughput" in d.value.columns)
    assert list(rates["to broker"].unique()) == [2, 3]
    incidents = next(d.value for d in at.dataframe if "peak partitions" in d.value.columns)
    assert set(incidents["what"]) == {"truly under-replicated", "reassigning"}
    # times as every page prints them (console.core.format.timestamp: local, no "+00:00")
    times = [*moves["started"], *incidents["started"], *(t for t in incidents["ended"] if t is not None)]
    assert all(isinstance(t, str) and re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d", t) for t in times), times
    assert len(at.get("vega_lite_chart")) == 4
    produced = next(d.value for d in at.dataframe if "produce rate" in d.value.columns)  # the topics' rates
    assert len(produced) and all(r.endswith("B/s") for r in produced["produce rate"])
    at.segmented_control(key="history.measure").set_value("replicas").run()
    assert not at.exception


def keys_update() -> str:
    from components import keys

    return keys.HISTORY_UPDATE


def test_a_collect_setting_that_is_not_a_number_is_named_in_the_sidebar(fake_cluster, monkeypatch, tmp_path):
    monkeypatch.setenv("CONSOLE_COLLECT_EVERY", "often")
    at = AppTest.from_file(APP, default_timeout=60).run()
    assert not at.exception
    assert any("CONSOLE_COLLECT_EVERY='often' is not a number of seconds" in e.value for e in at.sidebar.error)
    assert not (tmp_path / "history").exists(), "nothing collected"
