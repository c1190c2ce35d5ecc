"""The impact model on the fake cluster: bytes across zones (racks as zones, or a rack map), money
with prices and bytes alone without, steady traffic from produce rates (unknown ones said), leaders,
disk peaks per broker and dir, the findings; and the plan and its rollback as mirror images."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from console.access.pricing import impact_settings, limits_of, pricing_of
from console.core.model import BrokerId, ClusterState, LogDir
from console.moves.impact import DAY_S, PRICING_HINT, ImpactLimits, Pricing
from console.moves.impact_columns import impact
from console.plans.diff import diff
from console.plans.plan import Plan, PlanEntry, rollback
from console.plans.rules.codes import CROSS_ZONE_GROWTH, DIR_PEAK_FILL, LEADERS_CONCENTRATED
from console.present.impact import broker_rows
from tests.fakes.cluster import FakeCluster

GB = 10**9


def _fake() -> FakeCluster:
    """Six brokers, two per rack (a, b, c); topic t: three partitions of 1 GB on racks a and b."""
    racks = {0: "a", 1: "b", 2: "c", 3: "a", 4: "b", 5: "c"}
    return FakeCluster(racks, {("t", p): ((0, 1), GB) for p in range(3)} | {("u", 0): ((3, 0), GB)})


def _plan(*entries: tuple[str, int, tuple[int, ...]]) -> Plan:
    return Plan.of([PlanEntry(t, p, tuple(BrokerId(b) for b in r)) for t, p, r in entries])


def test_racks_are_zones_and_bytes_across_them_are_counted_once() -> None:
    state = _fake().snapshot()
    # t-0: 1 (rack b) → 2 (rack c), copied from leader 0 (rack a): across; t-1: 1 → 4 (rack b): from a to b, across;
    # u-0: 0 → 3 (rack a), copied from leader 3 (rack a): within
    d = diff(state, _plan(("t", 0, (0, 2)), ("t", 1, (0, 4))), elect=None)
    im = impact(d)
    assert im.bytes_to_copy == 2 * GB and im.cross_zone_bytes == 2 * GB
    assert {(z.source, z.destination): z.bytes for z in im.zone_pairs} == {("a", "c"): GB, ("a", "b"): GB}
    assert im.once_cost is None and PRICING_HINT in im.text()
    within = impact(diff(state, _plan(("t", 2, (0, 3))), elect=None))
    assert within.bytes_to_copy == GB and within.cross_zone_bytes == 0  # 3 copies from leader 0, both on rack a


def test_a_rack_map_puts_racks_in_one_zone_and_prices_the_bytes() -> None:
    state = _fake().snapshot()
    d = diff(state, _plan(("t", 0, (0, 2)), ("t", 1, (0, 4))), elect=None)
    priced = Pricing("USD", 0.02, (("a", "z1"), ("b", "z1")))
    im = impact(d, priced)
    assert im.cross_zone_bytes == GB  # a → b is one zone now; a → c crosses
    assert im.once_cost == "USD 0.02"
    assert "≈ USD 0.02" in im.headline() and PRICING_HINT not in im.text()
    assert im.to_dict()["cross_zone_cost"] == 0.02 and im.to_dict()["currency"] == "USD"


def test_steady_traffic_from_produce_rates_and_unknown_ones_said() -> None:
    state = _fake().snapshot()
    # u-0: leader 3 (a), follower 0 (a): within now; moved to (3, 1): follower on b crosses after
    d = diff(state, _plan(("u", 0, (3, 1)), ("t", 0, (0, 2))), elect=None)
    im = impact(d, Pricing("USD", 0.01), {"u": 1000.0})
    assert im.steady.before == 0 and im.steady.after == 1000.0 * DAY_S
    assert im.steady.unknown_topics == 1  # t crosses before and after; its rate is not known
    assert "whose produce rate is not in the history" in im.steady_text()
    assert [f.code for f in im.findings] == [CROSS_ZONE_GROWTH]
    unknown = impact(d)
    assert unknown.steady.known_topics == 0 and "not known" in unknown.steady_text()
    assert not any(f.code == CROSS_ZONE_GROWTH for f in unknown.findings)
    touched = {t.topic: t for t in im.topics}
    assert touched["u"].rate_bps == 1000.0 and touched["t"].rate_bps is None
    assert im.topics[0].topic == "u"  # the produced-to first


def test_leaders_that_move_per_broker_and_their_concentration() -> None:
    fake = FakeCluster({b: f"r{b}" for b in range(4)}, {("t", p): ((p % 4, (p + 1) % 4), GB) for p in range(8)})
    state = fake.snapshot()
    plan = _plan(*[("t", p, (0, (p + 1) % 4 or 1)) for p in range(8) if p % 4])
    im = impact(diff(state, plan, elect=None))
    by = {b.broker: b for b in im.leaders}
    assert by[BrokerId(0)].after == 8 and by[BrokerId(0)].gained == 6
    assert im.leader_changes == 6
    assert [f.code for f in im.findings] == [LEADERS_CONCENTRATED]
    assert "6 leader changes" in im.headline()


def test_disk_peaks_per_broker_and_dir_and_the_fill_finding() -> None:
    fake = _fake()
    state = fake.snapshot()
    # every fake dir is 1 TB, all usable: broker 2's made 2 GB with 1.5 GB used, broker 1's 10 GB with 5 used
    sizes = {2: (2 * GB, GB // 2), 1: (10 * GB, 5 * GB)}
    small = tuple(
        replace(b, log_dirs=(LogDir("/data", None, *sizes[b.id]),)) if b.id in sizes else b for b in state.brokers
    )
    state = ClusterState(state.taken_at, small, state.partitions, status=state.status)
    im = impact(diff(state, _plan(("t", 0, (0, 2))), elect=None), limits=ImpactLimits(dir_fill=0.85))
    dirs = {(d.broker, d.path): d for d in im.dirs}
    peak = dirs[(BrokerId(2), "/data")]
    assert (peak.used, peak.peak, peak.after) == (int(1.5 * GB), int(2.5 * GB), int(2.5 * GB))
    assert (dirs[(BrokerId(1), "/data")].peak, dirs[(BrokerId(1), "/data")].after) == (5 * GB, 4 * GB)  # it leaves
    assert [f.code for f in im.findings] == [DIR_PEAK_FILL]
    two = next(b for b in im.brokers if b.broker == 2)
    assert two.disk_peak == GB and two.peak_fill == 1.25
    assert "broker 2's disk peaks at 125 %" in im.headline()


def test_copy_per_broker_at_the_throttle_and_the_bottleneck() -> None:
    state = _fake().snapshot()
    im = impact(diff(state, _plan(("t", 0, (0, 2)), ("t", 1, (0, 4))), elect=None), throttle=10**7)
    b = im.bottleneck
    assert b is not None and b.broker == 0 and b.bytes_out == 2 * GB and b.seconds == 200.0
    assert "Bottleneck: broker 0 sends 2.0 GB: 3 min 20 s at the throttle." in im.text()
    # broker 1 only loses its replicas: nothing to copy, not "under a second" (a walk of the demo met it)
    rows = {r["broker"]: r["at the throttle"] for r in broker_rows(im)}
    assert rows[1] == "nothing to copy" and rows[0] == "3 min 20 s", rows


def test_price_and_limit_settings_name_what_is_wrong() -> None:
    assert pricing_of(None, "[pricing]") == (None, [])
    p, problems = pricing_of({"currency": "EUR", "per_gb_cross_zone": 0.01, "zones": {"r1": "z"}}, "[pricing]")
    assert p == Pricing("EUR", 0.01, (("r1", "z"),)) and not problems
    bad, problems = pricing_of({"currency": "", "per_gb_cross_zone": "cheap", "colour": 1}, "[pricing]")
    assert bad is None and len(problems) == 3 and "colour is not a pricing setting" in problems[0]
    limits, problems = limits_of({"dir_fill_percent": 90, "leader_factor": 0}, "[impact]")
    assert limits.dir_fill == 0.9 and limits.leader_factor == 2.0 and "leader_factor must be" in problems[0]
    secrets = {
        "pricing": {"currency": "USD", "per_gb_cross_zone": 0.02},
        "clusters": {"east": {"pricing": {"zones": {"rack-a": "use1-az1"}}}},
    }
    east, _, problems = impact_settings(secrets, "east")
    assert east == Pricing("USD", 0.02, (("rack-a", "use1-az1"),)) and not problems
    assert impact_settings(secrets, "west")[0] == Pricing("USD", 0.02)


# -- the plan and its rollback: mirror images in bytes ---------------------------------------------
@st.composite
def _worlds(draw: st.DrawFn) -> tuple[FakeCluster, Plan]:
    n = draw(st.integers(2, 7))
    racks = {b: draw(st.sampled_from(["a", "b", "c", None])) for b in range(n)}
    parts = {}
    for p in range(draw(st.integers(1, 8))):
        rf = draw(st.integers(1, min(3, n)))
        parts[("t", p)] = (tuple(draw(st.permutations(range(n)))[:rf]), draw(st.integers(0, 5 * GB)))
    fake = FakeCluster(racks, parts)
    entries = []
    for key in draw(st.lists(st.sampled_from(sorted(parts)), min_size=1, unique=True)):
        rf = draw(st.integers(1, min(3, n)))
        entries.append(PlanEntry(*key, tuple(BrokerId(b) for b in draw(st.permutations(range(n)))[:rf])))
    return fake, Plan.of(entries)


@settings(max_examples=150, deadline=None)
@given(_worlds(), st.sampled_from([Pricing(), Pricing("USD", 0.02, (("a", "z"), ("b", "z")))]))
def test_a_plan_and_its_rollback_are_mirror_images_in_bytes(world: tuple[FakeCluster, Plan], pricing: Pricing) -> None:
    fake, plan = world
    before = fake.snapshot()
    back = rollback(before, plan)
    forward = impact(diff(before, plan), pricing)
    fake.alter_reassignments({e.key: e.replicas for e in plan.entries})
    fake.advance(10**9)  # every copy done
    after = fake.snapshot()
    assert not after.in_flight
    returned = impact(diff(after, back), pricing)
    there = {b.broker: b for b in forward.brokers}
    home = {b.broker: b for b in returned.brokers}
    for broker in set(there) | set(home):
        f, r = there.get(broker), home.get(broker)
        assert (f.bytes_in if f else 0) == (r.removed if r else 0)
        assert (f.removed if f else 0) == (r.bytes_in if r else 0)
        assert (f.disk_before, f.disk_after) == (r.disk_after, r.disk_before) if f and r else True
    zones_in = _by_zone(forward, "bytes_in")
    assert zones_in == _by_zone(returned, "removed")
    assert _by_zone(forward, "removed") == _by_zone(returned, "bytes_in")
    assert forward.bytes_to_copy == sum(b.removed for b in returned.brokers)


def _by_zone(im: object, what: str) -> dict[str | None, int]:
    out: dict[str | None, int] = {}
    for b in im.brokers:  # type: ignore[attr-defined]
        out[b.zone] = out.get(b.zone, 0) + getattr(b, what)
    return {z: v for z, v in out.items() if v}
