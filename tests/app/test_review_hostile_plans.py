"""AppTest, as a guest (nobody signed in): hostile plans pasted on Review and loaded on Drafts are
refused with a clear list of problems, never an exception or an internal-error box (issue 28,
finding 5), and a good pasted plan is reviewed."""

from __future__ import annotations

import json
import time

from streamlit.testing.v1 import AppTest

from tests.app.pages import APP

NESTED = "[" * 100_000 + "]" * 100_000
THOUSAND_BROKERS = json.dumps(
    {"version": 1, "partitions": [{"topic": "orders", "partition": 0, "replicas": list(range(1_000))}]}
)


def review_pasted(text: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    at.switch_page("views/review.py").run()
    assert not at.exception and at.header[0].value == "Review a plan"
    started = time.monotonic()
    at.text_area(key="review.paste").set_value(text).run()
    assert not at.exception
    assert time.monotonic() - started < 20  # AppTest's own cost included; the parse is a fraction of it
    return at


def test_deeply_nested_json_pasted_on_review_is_refused(fake_cluster):
    at = review_pasted(NESTED)
    (error,) = at.error
    assert error.value.startswith("The plan cannot be used:\n\n- the JSON nests lists and objects more than 8 deep")


def test_an_entry_listing_a_thousand_brokers_on_review_is_refused(fake_cluster):
    at = review_pasted(THOUSAND_BROKERS)
    (error,) = at.error
    assert "entry 0 \\(orders\\-0\\): 1,000 replicas, more than the 3 brokers of the cluster" in error.value
    assert not at.dataframe  # nothing was checked against the cluster


def test_a_huge_topic_name_is_cut_on_the_page(fake_cluster):
    at = review_pasted(json.dumps({"partitions": [{"topic": "x" * 1_000_000, "partition": 0, "replicas": [0]}]}))
    (error,) = at.error
    assert "\\(1,000,000 characters\\)" in error.value and len(error.value) < 1_000


def test_a_good_pasted_plan_is_reviewed(fake_cluster):
    at = review_pasted(json.dumps({"partitions": [{"topic": "orders", "partition": 0, "replicas": [2, 1, 0]}]}))
    assert not at.error or "cannot be used" not in at.error[0].value
    assert any(m.label == "Partitions" and m.value == "1" for m in at.metric)


def test_drafts_load_refuses_a_nested_paste(fake_cluster):
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    at.switch_page("views/drafts.py").run()
    assert not at.exception
    next(s for s in at.button_group if s.label == "Start from").set_value("JSON").run()
    next(t for t in at.text_area if t.label == "…or paste it").set_value(NESTED)  # a form: sent with Load
    next(b for b in at.button if b.label == "Load").click().run()
    assert not at.exception
    assert any(e.value.startswith("The plan cannot be used:\n\n- the JSON nests") for e in at.error), [
        e.value for e in at.error
    ] + [t.value for t in at.text_area]


def test_more_entries_than_the_cluster_has_partitions_are_refused_on_review(fake_cluster):
    flood = [{"topic": f"t{i}", "partition": 0, "replicas": [0]} for i in range(20_000)]
    at = review_pasted(json.dumps({"partitions": flood}))
    (error,) = at.error
    assert "20,000 entries, more than the" in error.value and "partitions of the cluster" in error.value
