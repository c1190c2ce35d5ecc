"""The console's records in a notebook: short text reprs, HTML (a summary first, a table cut to
20 rows with the total, the app's charts), ``.to_pandas()`` with every row, and the IPython
formatters ``import console`` registers in a kernel."""

from __future__ import annotations

import json
from dataclasses import replace

import pandas as pd
import pytest

from console.core.model import Findings, Severity
from console.moves.impact import Pricing
from console.moves.impact_columns import impact
from console.plans.diff import diff
from console.plans.generate import generate
from console.plans.generators.options import GenerateOptions, Goal
from console.plans.plan import parse_plan
from console.plans.validate import validate
from console.present import notebook
from console.storage.runs import NewRun, RunLimits
from console.storage.store import Store
from tests.unit.strategies import Shape, cluster

STATE = replace(
    cluster(Shape(brokers=6, racks=3, down=1, partitions=120, rf=3, in_flight=0.2, seed=3)),
    name="demo",
    cluster_id="abc",
)


def a_plan():
    ids = sorted(b.id for b in STATE.brokers)
    entries = [
        {
            "topic": p.topic,
            "partition": p.partition,
            "replicas": [ids[(ids.index(b) + 1) % len(ids)] for b in p.replicas],
        }
        for p in STATE.partitions[:40]
    ] + [{"topic": "nope", "partition": 0, "replicas": [ids[0]]}]
    return parse_plan(json.dumps({"version": 1, "partitions": entries}))


def test_text_reprs_are_one_short_line() -> None:
    plan = a_plan()
    made = generate(STATE, GenerateOptions(Goal.DECOMMISSION, (1,)))
    for obj, words in (
        (STATE, "<ClusterState demo: 6 brokers, 120 partitions"),
        (plan, "<Plan: 41 partitions"),
        (diff(STATE, plan), "<PlanDiff: 41 partitions"),
        (validate(STATE, plan), "<Findings: "),
        (made, "<Generated: decommission 1"),
        (made.report, "<Report: decommission 1"),
    ):
        text = repr(obj)
        assert text.startswith(words) and "\n" not in text and len(text) < 400, text


def test_the_state_shows_counts_first_then_what_is_in_flight_and_a_chart() -> None:
    parts = notebook.state_parts(STATE)
    html = parts.html()
    assert "demo (abc)" in html and "KIP-352" in html and "reassigning" in html
    assert html.index("KIP-352") < html.index("<table")
    table = parts.tables[0]  # every partition in flight, of which the first ROWS are built and shown
    frame = table.rows
    assert table.total == len(STATE.in_flight) and {"R", "I", "AR", "RR"} <= set(frame.columns)
    assert len(frame) == min(notebook.ROWS, table.total) and f"showing 20 of {table.total} rows" in html
    assert len(parts.charts) == 2, "the broker × partition picture of what moves, and bytes per broker"
    for chart in parts.charts:  # drawn in the kernel, so they show offline and in exported HTML
        assert (notebook.static_chart(chart) or {}).get("image/svg+xml", "").lstrip().startswith("<svg")
    df = STATE.to_pandas()
    assert len(df) == 120 and int(df.reassigning.sum()) == len(STATE.in_flight)
    assert int(df.under_replicated.sum()) == len(STATE.under_replicated)
    assert len(STATE.brokers_to_pandas()) == 6


def test_big_tables_are_cut_with_the_total_and_to_pandas_has_every_row() -> None:
    plan = a_plan()
    html = notebook.html(plan)
    assert "showing 20 of 41 rows" in html and html.count("<tr>") <= 22
    assert len(plan.to_pandas()) == 41 and plan.to_pandas().replicas.map(len).min() >= 1
    d = diff(STATE, plan)
    shown = notebook.html(d)
    assert "Plan diff: 41 partitions" in shown and "to copy" in shown and "Movement between brokers" in shown
    assert len(d.to_pandas()) == 41 and set(d.to_pandas().kind) >= {"unknown partition"}
    assert len(notebook.diff_parts(d).charts) == 2
    assert set(d.brokers_to_pandas().broker) == {b.id for b in STATE.brokers} | {
        b for e in plan.entries for b in e.replicas
    }


def test_an_impact_shows_its_headline_zone_pairs_brokers_topics_and_the_disk_chart() -> None:
    im = impact(diff(STATE, a_plan()), Pricing("USD", 0.02))
    assert repr(im).startswith("<Impact: copies ") and "\n" not in repr(im)
    parts = notebook.impact_parts(im)
    html = notebook.html(im)
    assert html.index("This plan copies") < html.index("<table") and "USD" in html
    assert [t.caption for t in parts.tables][:2] == ["Copied between zones, once", "Brokers"]
    assert len(parts.charts) == 1 and (notebook.static_chart(parts.charts[0]) or {}).get("image/svg+xml")
    assert "Set prices" in notebook.html(impact(diff(STATE, a_plan())))


def test_findings_lead_with_errors_and_warnings() -> None:
    found = validate(STATE, a_plan())
    assert isinstance(found, Findings) and isinstance(found, list)
    html = notebook.html(found)
    assert "error" in html and "<table" in html
    df = found.to_pandas()
    assert len(df) == len(found) and df.iloc[0].severity == Severity.ERROR.value
    assert Findings().to_pandas().empty and repr(Findings()) == "<Findings: none>"


def test_a_generated_plan_shows_its_report_chart_and_plan() -> None:
    made = generate(STATE, GenerateOptions(Goal.DECOMMISSION, (1,)))
    parts = notebook.generated_parts(made)
    html = parts.html()
    assert "Generated: decommission 1" in html and "least possible" in html and "Balance" in html
    assert parts.charts and len(made.to_pandas()) == len(made.plan)
    per_broker = made.report.to_pandas()
    assert (
        per_broker.set_index("broker").loc[1, "replicas_after"]
        <= per_broker.set_index("broker").loc[1, "replicas_before"]
    )


def test_a_run_shows_its_waves(tmp_path) -> None:
    store = Store(tmp_path / "store.db")
    wave = '{"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[1,2]}]}'
    run_id = store.runs.create(
        NewRun("c1", "drain 4", "ann", wave, wave, "h", [wave, wave], [("t", 0)], 1000, RunLimits(5, 500, None))
    )
    detail = store.runs.detail(run_id)
    assert repr(detail).startswith(f"<Run {run_id} 'drain 4': ")
    html = notebook.html(detail)
    assert "drain 4" in html and "2 waves" in html
    assert detail.to_pandas().partitions.tolist() == [1, 1]


def test_import_console_registers_the_html_with_ipython() -> None:
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    notebook.register(shell)
    html = shell.display_formatter.formatters["text/html"](STATE)
    assert html and "KIP-352" in html
    assert shell.display_formatter.formatters["text/html"](pd.DataFrame()) is not None  # others untouched
    with pytest.raises(KeyError):
        notebook.html(object())


def test_charts_drawn_together_are_the_charts_drawn_one_by_one(monkeypatch) -> None:
    parts = notebook.state_parts(STATE)
    one_by_one = [notebook.static_chart(c) for c in parts.charts]
    assert notebook.static_charts(parts.charts) == one_by_one and len(one_by_one) == 2
    shown: list[object] = []
    import IPython.display as ipd

    monkeypatch.setattr(ipd, "display", lambda obj, **kw: shown.append(obj))
    notebook.show(STATE)  # the HTML, then each chart's SVG in order
    assert shown[1:] == one_by_one and "KIP-352" in shown[0].data


def test_a_long_partition_name_is_cut_in_its_middle_so_its_number_shows() -> None:
    """Vega cuts a label by pixels from its end (the partition number first) and measures every
    label to do it, most of what drawing the SVG costs: the grid's names are cut by characters in
    the middle instead, and short labels (broker ids) are drawn whole."""
    from console.present.charts import NAME_CHARS, replica_grid

    long_topic = "payments.settlement.eu-west-1.ledger-entries-compacted-v2"
    names = [f"{long_topic}-7", f"{long_topic}-12", "short-3"]
    cells = [
        {"partition": n, "broker": str(b), "role": "in sync", "label": "", "in sync": True}
        for n in names
        for b in (1, 2, 1001)
    ]
    bundle = notebook.static_chart(replica_grid(cells, names))
    assert bundle is not None
    svg = bundle["image/svg+xml"]
    labels = [t for t in svg.split(">") if "…" in t or "short-3<" in t]
    assert "short-3</text" in svg and "1001</text" in svg
    cut = [n.split("</text")[0] for n in svg.split(">") if n.endswith("-7</text") or n.endswith("-12</text")]
    assert len(cut) == 2, labels
    assert all(len(c) <= NAME_CHARS and "…" in c and c.startswith("payments.") for c in cut)
    assert cut[0].endswith("-7") and cut[1].endswith("-12")
