"""Every notebook in notebooks/ runs top to bottom in a real Jupyter kernel (nbclient) against the
sandbox, as a reader would run it, and shows the console's records as HTML; the notebooks are
kept in git without outputs."""

from __future__ import annotations

import json
import os
from dataclasses import replace
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from console import connect
from tests.support import point_console_at
from tests.unit.timeline import timeline, write_states

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


def test_there_are_notebooks_and_they_are_kept_without_outputs() -> None:
    assert len(NOTEBOOKS) >= 4
    for path in NOTEBOOKS:
        doc = json.loads(path.read_text())
        for cell in doc["cells"]:
            if cell["cell_type"] == "code":
                assert cell["outputs"] == [] and cell["execution_count"] is None, f"{path.name}: strip its outputs"


def html_of(nb: nbformat.NotebookNode) -> str:
    return "\n".join(
        str(o.get("data", {}).get("text/html", ""))
        for c in nb.cells
        if c.cell_type == "code"
        for o in c.get("outputs", [])
    )


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_the_notebook_runs_against_the_sandbox(demo_sandbox, tmp_path, monkeypatch, path) -> None:
    point_console_at(demo_sandbox, monkeypatch, tmp_path / "data")
    monkeypatch.setenv("CONSOLE_HISTORY_DIR", str(tmp_path / "history"))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep))
    if path.stem == "04-history":  # a history with past moves of this cluster (as `make demo` leaves one)
        with connect(demo_sandbox.bootstrap_servers) as cluster:
            cluster_id = cluster.snapshot().cluster_id
        write_states(tmp_path / "history" / "snapshots", [replace(s, cluster_id=cluster_id) for s in timeline()])
    nb = nbformat.read(path, as_version=4)
    NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    shown = html_of(nb)
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    assert not errors
    # the records display as the console's HTML: a summary and a table
    assert 'class="rc-box"' in shown, path.name
    expected = {
        "01-live-state": "KIP-352",
        "02-review-a-plan": "Plan diff",
        "03-drain-a-broker": "Generated: decommission",
        "04-history": "History of",
    }[path.stem]
    assert expected in shown, path.name
    charts = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if "image/svg+xml" in o.get("data", {})]
    assert charts, f"{path.name}: the charts are drawn (SVG, offline)"
    if path.stem == "04-history":
        said = "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.outputs)
        assert "calibrated from" in said and "6 moves" in shown, said
    nbformat.write(nb, tmp_path / path.name)  # for a look: jupyter nbconvert --to html


def test_the_plan_notebook_reviews_offline_while_the_largest_topic_is_in_flight(demo_sandbox, tmp_path, monkeypatch):
    """Found by running it on `make demo`: with every partition of the largest topic being
    reassigned, the example plan came out empty and parse_plan refused it."""
    from console.state.document import state_json

    with connect(demo_sandbox.bootstrap_servers) as cluster:
        state = cluster.snapshot()
    largest = max(state.topics, key=lambda t: sum(p.size or 0 for p in state.partitions if p.topic == t))
    spare = {p.topic: p for p in state.partitions}
    moving = []
    for p in state.partitions:
        others = [b.id for b in state.brokers if b.id not in p.replicas]
        if p.topic == largest and others:  # adding a replica on a broker it lacks, removing its last one
            p = replace(p, replicas=(*p.replicas, others[0]), adding=(others[0],), removing=(p.replicas[-1],))
        moving.append(p)
    path = tmp_path / "state.json"
    path.write_text(json.dumps(state_json(replace(state, partitions=tuple(moving)))))
    assert all(p.reassigning for p in moving if p.topic == largest) and spare
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep))
    nb = nbformat.read(ROOT / "notebooks" / "02-review-a-plan.ipynb", as_version=4)
    settings = nb.cells[1]
    assert "STATE_FILE = None" in settings.source
    settings.source = settings.source.replace("STATE_FILE = None", f"STATE_FILE = {str(path)!r}")
    NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    shown = html_of(nb)
    assert "Plan diff" in shown and largest not in shown.split("Plan diff")[1].split("</table>")[0]
