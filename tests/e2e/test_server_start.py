"""A console server started with `streamlit run serve.py` drives its clusters' unfinished runs from
its start: a run left by a server that stopped (or by a worker that let go) goes on, and its
guardrails are checked, before anyone opens a page. The worker used to start with the first page
that chose the cluster: after a restart at night nothing drove the run until someone looked."""

from __future__ import annotations

import pytest

from console.core.states import RunState
from console.plans.plan import Plan, PlanEntry
from console.state.reader import ClusterReader
from console.storage.store import Store
from tests.integration.helpers import first_wave_sent, make_topic
from tests.support import settings_for, wait_for


@pytest.fixture
def run_left_behind(sandbox, tmp_path, monkeypatch) -> int:
    """A run in the data dir's store whose first wave is in flight and which no worker drives."""
    monkeypatch.setenv("CONSOLE_DATA_DIR", str(tmp_path))
    topic = "e2e-driven-from-the-start"
    make_topic(sandbox.bootstrap_servers, topic, 2, 1, 20, assignment=[[0], [1]])
    with ClusterReader(settings_for(sandbox)) as reader:
        plan = Plan.of([PlanEntry(topic, p, ((p + 1) % 3,)) for p in range(2)])
        return first_wave_sent(Store(), reader.gateway(), reader.snapshot(), plan, "left behind", None)


def test_a_server_drives_a_run_left_behind_before_any_page_is_opened(run_left_behind, app_url) -> None:
    # no page opened: only the server's start can have started the cluster's worker
    wait_for(
        lambda: Store().runs.get(run_left_behind).state == RunState.COMPLETED,
        timeout=120,
        what="the run completed by the server's worker",
    )
