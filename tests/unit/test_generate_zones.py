"""Generators that know the price: least cross-zone bytes (a tie-breaker, then a weight) for
decommission and the balance goals, and the impact in the generators' report (the fake, the CLI)."""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path

import pytest

from console import cli
from console.core.errors import ConfigError
from console.core.model import ClusterState
from console.moves.impact import Pricing
from console.moves.impact_columns import impact
from console.plans.diff import diff
from console.plans.generate import generate
from console.plans.generators.options import GenerateOptions, Goal, Metric
from console.plans.quality import Report
from console.state.document import state_json
from tests.fakes.cluster import FakeCluster

GB = 10**9


def _across(state: ClusterState, options: GenerateOptions, pricing: Pricing | None = None) -> int:
    made = generate(state, options)
    return impact(diff(state, made.plan), pricing or Pricing(zones=options.zones)).cross_zone_bytes


def _drained_leader() -> ClusterState:
    """t-0 led by broker 0 (rack a), follower 1 (rack b); brokers 2 (c), 3 (a), 4 (c) empty: draining 0,
    3 is the only destination in the leader's zone, and all three are as loaded."""
    return FakeCluster({0: "a", 1: "b", 2: "c", 3: "a", 4: "c"}, {("t", 0): ((0, 1), GB)}).snapshot()


def test_a_decommission_copies_within_the_leaders_zone_when_destinations_are_alike() -> None:
    state = _drained_leader()
    current = [_across(state, GenerateOptions(Goal.DECOMMISSION, (0,), seed=s)) for s in range(8)]
    assert max(current) == GB  # without the preference, the seed's tie-break sends it across a zone
    for s in range(8):
        options = GenerateOptions(Goal.DECOMMISSION, (0,), seed=s, zone_weight=0.0)
        made = generate(state, options)
        assert 3 in made.plan.entries[0].replicas
        assert _across(state, options) == 0


def test_a_rack_map_puts_two_racks_in_one_zone_for_the_generator() -> None:
    # t-0 led by 1 (rack b1): draining 0, brokers 2 (b2) and 3 (c) are fresh racks alike; b1 and b2 are zone zb
    state = FakeCluster({0: "a", 1: "b1", 2: "b2", 3: "c"}, {("t", 0): ((1, 0), GB)}).snapshot()
    zones = (("b1", "zb"), ("b2", "zb"))
    for s in range(6):
        options = GenerateOptions(Goal.DECOMMISSION, (0,), seed=s, zone_weight=0.0, zones=zones)
        assert set(generate(state, options).plan.entries[0].replicas) == {1, 2}
        assert _across(state, options) == 0
    # racks as zones: both destinations cross, and the preference changes nothing of the plan
    plain = [generate(state, GenerateOptions(Goal.DECOMMISSION, (0,), seed=s)).plan for s in range(6)]
    asked = [generate(state, GenerateOptions(Goal.DECOMMISSION, (0,), seed=s, zone_weight=0.0)).plan for s in range(6)]
    assert plain == asked


def test_the_weight_trades_balance_for_bytes_across_zones() -> None:
    # draining 0 (rack a, leads t-0 of 1 GB): 3 (rack a) holds four more replicas than 2 (rack c)
    parts = {("t", 0): ((0, 1), GB)} | {("u", p): ((3, 4), GB // 10) for p in range(4)}
    state = FakeCluster({0: "a", 1: "b", 2: "c", 3: "a", 4: "b"}, parts).snapshot()
    tie = GenerateOptions(Goal.DECOMMISSION, (0,), zone_weight=0.0)
    assert 2 in generate(state, tie).plan.entries[0].replicas  # not alike: the least loaded, across
    assert _across(state, tie) == GB
    heavy = replace(tie, zone_weight=1000.0)
    assert 3 in generate(state, heavy).plan.entries[0].replicas
    assert _across(state, heavy) == 0


def _crowded() -> ClusterState:
    """Brokers 0–2 (racks a, b, c) hold 60 partitions of RF 2, each led in turn by one of them;
    3–5 (racks a, b, c) are new and empty."""
    racks = {0: "a", 1: "b", 2: "c", 3: "a", 4: "b", 5: "c"}
    parts = {("t", p): (((p % 3), (p + 1) % 3), (p + 1) * 10**7) for p in range(60)}
    return FakeCluster(racks, parts).snapshot()


@pytest.mark.parametrize(
    "options",
    [GenerateOptions(Goal.ADD_BROKERS, (3, 4, 5)), GenerateOptions(Goal.REBALANCE, metric=Metric.COUNT)],
    ids=["add brokers", "rebalance count"],
)
def test_the_balance_goals_copy_fewer_bytes_across_zones_at_the_same_balance(options: GenerateOptions) -> None:
    state = _crowded()
    before, after = generate(state, options), generate(state, replace(options, zone_weight=0.0))
    assert after.report.moved_replicas == before.report.moved_replicas
    assert after.report.spreads["after"]["replicas"] == before.report.spreads["after"]["replicas"]
    assert after.report.reached == before.report.reached
    assert _across(state, replace(options, zone_weight=0.0)) < _across(state, options)
    assert after.report.goal.endswith("(least cross-zone bytes)")


def test_without_racks_the_preference_says_the_zones_are_unknown() -> None:
    state = FakeCluster({0: None, 1: None, 2: None}, {("t", 0): ((0, 1), GB)}).snapshot()
    made = generate(state, GenerateOptions(Goal.DECOMMISSION, (0,), zone_weight=0.0))
    assert any(f.code == "zones-unknown" for f in made.report.findings)
    assert made.plan == generate(state, GenerateOptions(Goal.DECOMMISSION, (0,))).plan


@pytest.mark.parametrize(
    "options, words",
    [
        (GenerateOptions(Goal.DECOMMISSION, (0,), zone_weight=-1.0), "from 0 to 1000"),
        (GenerateOptions(Goal.DECOMMISSION, (0,), zone_weight=math.nan), "from 0 to 1000"),
        (GenerateOptions(Goal.FIX_RACKS, zone_weight=0.0), "not fix racks"),
        (GenerateOptions(Goal.REBALANCE, metric=Metric.LEADERS, zone_weight=1.0), "not rebalance leaders"),
    ],
)
def test_a_preference_that_cannot_be_used_is_refused(options: GenerateOptions, words: str) -> None:
    with pytest.raises(ConfigError, match=words):
        generate(_drained_leader(), options)


def test_the_report_carries_the_impact_and_keeps_it_when_saved() -> None:
    state = _drained_leader()
    made = generate(state, GenerateOptions(Goal.DECOMMISSION, (0,), seed=1))
    im = impact(diff(state, made.plan), Pricing("USD", 0.02))
    report = made.report.with_impact(im.summary())
    assert report.impact is not None and report.impact.bytes_to_copy == GB
    assert "Impact: copies 1.0 GB" in report.text() and "bytes across zones" in report.text()
    back = Report.from_dict(json.loads(json.dumps(report.to_dict())))
    assert back.impact == report.impact
    assert Report.from_dict(made.report.to_dict()).impact is None


def test_generate_takes_the_preference_and_reports_the_impact(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    state_file, report, pricing = tmp_path / "state.json", tmp_path / "report.json", tmp_path / "pricing.toml"
    state_file.write_text(json.dumps(state_json(_drained_leader())))
    pricing.write_text('[pricing]\ncurrency = "USD"\nper_gb_cross_zone = 0.02\n')
    argv = ["generate", "--state-file", str(state_file), "--decommission", "0", "--report-json", str(report)]
    for seed in range(8):
        code = cli.main([*argv, "--least-cross-zone", "--pricing", str(pricing), "--seed", str(seed)])
        err = capsys.readouterr().err
        assert code == 0, err
        doc = json.loads(report.read_text())
        assert doc["goal"] == "decommission 0 (least cross-zone bytes)"
        assert doc["impact"]["cross_zone_bytes"] == 0 and doc["impact"]["currency"] == "USD"
        assert "Impact: copies 1.0 GB, 0 B across zones ≈ USD 0.00" in err
    assert cli.main([*argv, "--least-cross-zone", "4"]) == 0
    assert json.loads(report.read_text())["goal"] == "decommission 0 (least cross-zone bytes, weight 4)"
    capsys.readouterr()
    assert cli.main(["generate", "--state-file", str(state_file), "--fix-racks", "--least-cross-zone"]) == 2
    assert "Least cross-zone bytes applies to decommission" in capsys.readouterr().err
