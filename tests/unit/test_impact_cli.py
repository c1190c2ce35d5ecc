"""``validate`` carries the plan's impact: ``--json`` its figures (bytes, and money with
``--pricing``), the text on stderr; a pricing file with a mistake is named and its prices left out."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from console import cli
from console.cli.exits import Exit
from console.state.document import state_json
from tests.fakes.cluster import FakeCluster

GB = 10**9


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    racks = {0: "a", 1: "b", 2: "c", 3: "a"}
    fake = FakeCluster(racks, {("t", p): ((0, 1), GB) for p in range(2)})
    state = tmp_path / "state.json"
    state.write_text(json.dumps(state_json(fake.snapshot())))
    plan = tmp_path / "plan.json"
    plan.write_text(
        json.dumps(
            {
                "version": 1,
                "partitions": [
                    {"topic": "t", "partition": 0, "replicas": [0, 2]},  # b → c, copied from 0 on a: across
                    {"topic": "t", "partition": 1, "replicas": [0, 3]},  # copied from 0 to 3, both on a
                ],
            }
        )
    )
    return state, plan


def _validate(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = cli.main(["validate", *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_validate_json_carries_the_impact_in_bytes_without_prices(files, capsys):
    state, plan = files
    code, out, _ = _validate(capsys, "--state-file", str(state), str(plan), "--json")
    assert code == Exit.OK
    im = json.loads(out)["impact"]
    assert (im["bytes_to_copy"], im["cross_zone_bytes"]) == (2 * GB, GB)
    assert im["priced"] is False and im["cross_zone_cost"] is None and im["currency"] is None
    assert [(z["source"], z["destination"], z["bytes"]) for z in im["zone_pairs"]] == [("a", "a", GB), ("a", "c", GB)]
    assert im["headline"].startswith("copies 2.0 GB, 1.0 GB across zones;")


def test_validate_prices_the_impact_with_a_pricing_file_and_times_it_at_the_throttle(files, tmp_path, capsys):
    state, plan = files
    prices = tmp_path / "prices.toml"
    prices.write_text('[pricing]\ncurrency = "USD"\nper_gb_cross_zone = 0.02\n[pricing.zones]\nc = "a"\n')
    code, out, _ = _validate(
        capsys, "--state-file", str(state), str(plan), "--json", "--pricing", str(prices), "--throttle", "10MB/s"
    )
    im = json.loads(out)["impact"]
    assert code == Exit.OK and im["cross_zone_bytes"] == 0 and im["cross_zone_cost"] == 0  # rack c is in zone a
    assert next(b for b in im["brokers"] if b["broker"] == 0)["seconds"] == 200.0
    prices.write_text('[pricing]\ncurrency = "USD"\nper_gb_cross_zone = 0.02\n')
    code, out, err = _validate(capsys, "--state-file", str(state), str(plan), "--pricing", str(prices))
    assert code == Exit.OK and "≈ USD 0.02" in err and "Impact: copies 2.0 GB" in err


def test_a_pricing_file_with_a_mistake_is_named_and_its_prices_left_out(files, tmp_path, capsys):
    state, plan = files
    prices = tmp_path / "prices.toml"
    prices.write_text('[pricing]\ncurrency = "USD"\nper_gb_cross_zone = "two cents"\n')
    code, out, err = _validate(capsys, "--state-file", str(state), str(plan), "--json", "--pricing", str(prices))
    assert code == Exit.OK and json.loads(out)["impact"]["priced"] is False
    assert "per_gb_cross_zone must be the price of a GB" in err
    prices.write_text("[pricing\n")
    code, _, err = _validate(capsys, "--state-file", str(state), str(plan), "--pricing", str(prices))
    assert code == Exit.UNUSABLE and "is not TOML" in err
