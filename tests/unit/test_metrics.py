"""The metrics: a scrape of the console's registry over a store (parsed with prometheus-client's
own parser) says the runs, what is left, stuck flags, throttles and failures as the store holds
them; the Grafana dashboard in docs/ queries only names the console exports."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from console.access.auth import Identity
from console.core.errors import ConfigError
from console.core.model import BrokerId
from console.core.states import RunState
from console.metrics.collector import StoreCollector
from console.metrics.instruments import REGISTRY
from console.metrics.server import parse_address
from console.moves.waves import WaveLimits
from console.plans.plan import Plan, PlanEntry
from console.services import runs as run_service
from console.storage.store import Store
from tests.fakes.cluster import FakeCluster

DASHBOARD = Path(__file__).resolve().parents[2] / "docs" / "grafana-dashboard.json"
SUFFIXES = {"counter": ("_total", "_created"), "histogram": ("_bucket", "_sum", "_count", "_created"), "gauge": ("",)}
PROMQL_WORDS = {"sum", "by", "rate", "increase", "histogram_quantile", "time", "le", "label_values", "without"}
LABELS = {"cluster", "state", "run", "event", "outcome", "mover", "owner"}
"""The labels the console's metrics carry (grouped by in the queries)."""


def store_text(store: Store) -> str:
    """A scrape of a collector over ``store`` alone."""
    registry = CollectorRegistry()
    registry.register(StoreCollector(store))
    return generate_latest(registry).decode()


def scrape(store: Store) -> dict[str, list[tuple[dict[str, str], float]]]:
    """Sample name → (labels, value), of the collector over ``store``."""
    out: dict[str, list[tuple[dict[str, str], float]]] = {}
    for family in text_string_to_metric_families(store_text(store)):
        out.setdefault(family.name, [])
        for s in family.samples:
            out.setdefault(s.name, []).append((s.labels, s.value))
    return out


def exported_names(store: Store) -> set[str]:
    """Every sample name the console can export: the console's registry (instruments) and the
    collector over a store, each family's samples by its type."""
    text = generate_latest(REGISTRY).decode() + store_text(store)
    return {f.name + suffix for f in text_string_to_metric_families(text) for suffix in SUFFIXES.get(f.type, ("",))}


def test_a_scrape_says_the_runs_as_the_store_holds_them(tmp_path: Path) -> None:
    store = Store(tmp_path / "c.db")
    fake = FakeCluster.of(4, {"t": [(0, 1), (1, 2)], "u": [(2, 0)]})
    plan = Plan.of([PlanEntry("t", 0, (BrokerId(3), BrokerId(1))), PlanEntry("t", 1, (BrokerId(3), BrokerId(2)))])
    who = Identity.cli("ann")
    running = run_service.start_run(
        store,
        fake,
        fake.snapshot(),
        run_service.RunRequest(who, plan, "a", run_service.RunSettings(limits=WaveLimits(1))),
        users=None,
    )
    store.runs.note_progress(running, "0:0", 0.0)
    store.runs.set_stuck(running, "no progress for 6 min: broker 3 is down")
    other = Plan.of([PlanEntry("u", 0, (BrokerId(1), BrokerId(0)))])
    ended = run_service.start_run(store, fake, fake.snapshot(), run_service.RunRequest(who, other, "b"), users=None)
    store.runs.set_state(ended, RunState.ABANDONED)
    store.runs.ledger_add(running, 1, "broker", "3", "follower.replication.throttled.rate", None, "1000")
    store.notifications.add(fake.cluster_id, running, "run-stuck", "json://127.0.0.1:9/…", 3, "refused")
    got = scrape(store)
    key = fake.cluster_id
    runs = {(labels["state"], v) for labels, v in got["console_runs"] if labels["cluster"] == key}
    assert ("running", 1) in runs and ("abandoned", 1) in runs and ("completed", 0) in runs
    assert ("partly cancelled", 0) in runs  # every state a label, the new ones too
    run = {"cluster": key, "run": str(running)}
    assert got["console_run_partitions_left"] == [(run, 2)]
    assert got["console_run_stuck"] == [(run, 1)]
    assert got["console_run_waves"] == [(run, 2)] and got["console_run_waves_sent"] == [(run, 0)]
    assert got["console_throttles_set"] == [({"cluster": key}, 1)]
    assert got["console_notification_failures_recorded"] == [({"cluster": key, "event": "run-stuck"}, 1)]
    store.close()


def test_every_metric_the_dashboard_queries_is_one_the_console_exports(tmp_path: Path) -> None:
    dashboard = json.loads(DASHBOARD.read_text(encoding="utf-8"))
    exprs = [t["expr"] for p in dashboard["panels"] for t in p["targets"]]
    exprs += [v["query"] for v in dashboard["templating"]["list"] if v["type"] == "query"]
    names = [re.findall(r"\b[a-zA-Z_:][a-zA-Z0-9_:]*(?=\s*[{(]|\s*/|\s*\)|\s*,|\s*$)", e) for e in exprs]
    used = {n for found in names for n in found if n.startswith("console_")}
    assert all(any(n.startswith("console_") for n in found) for found in names), "a query with no console metric"
    unknown = {n for found in names for n in found if not n.startswith("console_")} - PROMQL_WORDS - LABELS
    assert not unknown, f"names in the queries neither PromQL's nor the console's: {sorted(unknown)}"
    store = Store(tmp_path / "c.db")
    exported = exported_names(store)
    store.close()
    assert used <= exported, f"queried but not exported: {sorted(used - exported)}"
    families = {re.sub(r"_(total|bucket|sum|count)$", "", n) for n in used}
    assert len(families) >= 15, sorted(families)  # every family the console exports has a panel


@pytest.mark.parametrize("text", ["9464", "host:", "h:70000", "h:port", "h:-1"])
def test_a_bad_metrics_address_is_refused_with_an_example(text: str) -> None:
    with pytest.raises(ConfigError, match="host:port"):
        parse_address(text)


def test_a_metrics_address_reads_as_host_and_port() -> None:
    assert str(parse_address(":9464")) == "127.0.0.1:9464" and str(parse_address("0.0.0.0:1")) == "0.0.0.0:1"
