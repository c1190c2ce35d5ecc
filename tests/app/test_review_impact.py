"""AppTest: Review shows the plan's impact beside its findings: the headline in bytes, how to set
prices without them, money with them (``[pricing]`` in secrets.toml), the disk chart and the zone
pairs, each broker's copy timed at the throttle typed under Submit…"""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from console.core.model import BrokerId
from tests.app.pages import APP, sign_in


def _review(fake_cluster, secrets=None):
    from console.access.auth import Identity
    from console.plans.plan import Plan, PlanEntry
    from console.services import plans as plan_service
    from console.storage.store import Store

    with fake_cluster.held() as fake:
        fake.create_topic("ut-imp", [[0], [0], [1]], size=2_000_000)
    state = fake_cluster.snapshot()
    plan = Plan.of([PlanEntry("ut-imp", p, (BrokerId(2),)) for p in range(3)])
    plan_id = plan_service.save_plan(Store(), Identity.cli("ann"), state, "test", "impact plan", plan)
    at = AppTest.from_file(APP, default_timeout=60)
    for k, v in (secrets or {}).items():
        at.secrets[k] = v
    at.run()
    sign_in(at, "operator")
    at.query_params["plan"] = str(plan_id)
    at.switch_page("views/review.py").run()
    assert not at.exception
    return at


def test_review_shows_the_impact_in_bytes_and_how_to_price_it(fake_cluster, sandbox_users):
    at = _review(fake_cluster)
    assert "Impact" in [h.value for h in at.subheader]
    headline = next(i.value for i in at.info if "This plan" in i.value)
    # racks r0, r1, r2: 6 MB copied to broker 2, every byte into another zone
    assert "copies 6.0 MB, 6.0 MB across zones;" in headline, headline
    assert any("Set prices to see money too" in c.value for c in at.caption)
    at.text_input(key="review.rate").set_value("1 MB/s").run()
    assert any("Bottleneck: broker 2 takes in 6.0 MB: 6 s at the throttle." in c.value for c in at.caption)


def test_the_impact_is_timed_at_the_throttle_under_submit_from_the_first_look(fake_cluster, sandbox_users):
    """Walking the demo: at first the impact said "Type a throttle under Submit… to time each
    broker's copy" (its "at the throttle" column all "—") while 10 MB/s stood typed there, until
    the page ran again."""
    at = _review(fake_cluster)
    assert at.text_input(key="review.rate").value == "10 MB/s"
    said = [c.value for c in at.caption if c.value.startswith("Bottleneck:")]
    assert said == ["Bottleneck: broker 2 takes in 6.0 MB: under a second at the throttle."], said


def test_review_prices_the_impact_with_pricing_in_secrets(fake_cluster, sandbox_users):
    at = _review(fake_cluster, {"pricing": {"currency": "EUR", "per_gb_cross_zone": 10.0}})
    headline = next(i.value for i in at.info if "This plan" in i.value)
    assert "6.0 MB across zones ≈ EUR 0.06" in headline, headline
    assert not any("Set prices" in c.value for c in at.caption)
