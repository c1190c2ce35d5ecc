"""Overview and Live name the reassignments another mover has in flight (the console did not start
them), with what is left and since when it has seen them, and Overview says which balancers the
cluster shows signs of, a guess worded as a guess."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from console.core.model import BrokerId
from tests.app.pages import APP
from tests.support import wait_for

CC_TOPIC = "__KafkaCruiseControlPartitionMetricSamples"


def test_overview_and_live_name_another_movers_reassignment_and_the_balancer(fake_cluster) -> None:
    with fake_cluster.held() as fake:
        fake.copy_rate = 1  # the move stays in flight while the pages are read
        fake.alter_reassignments({("clickstream", 0): (BrokerId(1),)})  # someone else's script
        fake.create_topic(CC_TOPIC, [[0]])
    at = AppTest.from_file(APP, default_timeout=60).run()
    at.switch_page("views/overview.py").run()
    assert not at.exception
    # one line, summarised by topic, whatever the number; the partitions and the why in its detail
    (warning,) = [w.value for w in at.warning if "Another mover" in w.value]
    assert warning.startswith(
        "**Another mover is reassigning**: 1 partition (clickstream 1) this console did not start"
    )
    assert "left to copy, first seen " in warning and "\n" not in warning
    (detail,) = [e for e in at.expander if e.label == "Another mover's 1 partition"]
    (why,) = [c.value for c in detail.caption if "Kafka does not say" in c.value]
    assert "First seen by this console at" in why and "a submit is refused while they are in flight unless" in why
    assert detail.dataframe[0].value.to_dict("records")[0] | {"left to copy": "?"} == {
        "partition": "clickstream-0",
        "replicas": "1,0",
        "adding": "1",
        "removing": "0",
        "left to copy": "?",
    }
    assert any(
        c.value == f"Balancer: Cruise Control probably runs on this cluster (a guess from topic {CC_TOPIC}: it may "
        "be left over)."
        for c in at.caption
    )
    at.switch_page("views/live.py").run()
    assert not at.exception
    assert any("1 partition (clickstream 1) this console did not start" in w.value for w in at.warning)


def test_overview_says_no_balancer_and_no_other_mover_on_a_quiet_cluster(fake_cluster) -> None:
    at = AppTest.from_file(APP, default_timeout=60).run()
    at.switch_page("views/overview.py").run()
    assert not at.exception
    assert not [w for w in at.warning if "Another mover" in w.value]
    assert any(
        c.value == "No sign of a known balancer (Cruise Control, Confluent's self-balancing) in the cluster's topics; "
        "broker configs not read."
        for c in at.caption
    )


def test_the_server_ships_the_audit_log_to_the_file_set_in_secrets(fake_cluster, sandbox_users, tmp_path) -> None:
    import json

    from tests.app.pages import sign_in

    path = tmp_path / "audit.jsonl"
    at = AppTest.from_file(APP, default_timeout=60)
    at.secrets["audit_stream"] = {"file": str(path)}
    sign_in(at.run(), "operator")  # a sign-in is audited
    wait_for(
        lambda: path.exists() and path.read_text(), timeout=30, every=0.2, what=f"an audit entry shipped to {path}"
    )
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert lines and lines[0]["id"] == 1 and any(x["user"] == "operator" for x in lines)
    assert [x["id"] for x in lines] == list(range(1, len(lines) + 1))
    assert not [e for e in at.error if "audit_stream" in e.value]


def test_a_broken_audit_stream_setting_is_said_in_the_sidebar(fake_cluster) -> None:
    at = AppTest.from_file(APP, default_timeout=60)
    at.secrets["audit_stream"] = {"topic": "audit", "cluster": "nowhere"}
    at.run()
    assert not at.exception
    assert any(
        "[audit_stream] in secrets.toml: cluster 'nowhere' is not a known cluster (known: test)" in e.value
        for e in at.sidebar.error
    )


def test_the_submit_dialog_names_the_other_move_and_asks_to_confirm(fake_cluster, sandbox_users) -> None:

    from console.access.auth import Identity
    from console.plans.plan import Plan, PlanEntry
    from console.services import plans as plan_service
    from console.storage.store import Store
    from tests.app.pages import sign_in

    with fake_cluster.held() as fake:
        fake.copy_rate = 1
        fake.create_topic("cx", [[0], [1]], size=1024)
        fake.alter_reassignments({("clickstream", 0): (BrokerId(1),)})  # someone else's
    state = fake_cluster.snapshot()
    plan = Plan.of([PlanEntry("cx", 0, (BrokerId(2),))]).with_basis(state)
    plan_id = plan_service.save_plan(Store(), Identity.cli("ann"), state, "test", "onto 2", plan)
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params["plan"] = str(plan_id)
    sign_in(at.run(), "operator")
    at.switch_page("views/review.py").run()
    next(b for b in at.button if b.label == "Submit…").click().run()
    assert not at.exception
    assert any(
        "Another mover is reassigning on this cluster" in w.value and "clickstream-0" in w.value for w in at.warning
    )
    assert next(b for b in at.button if b.label == "Start the run").disabled
    assert at.checkbox(key="actions.submit_other_moves").label == "Submit while other reassignments are in flight"
    # (AppTest does not keep a dialog open across reruns: the override and its audit entry are tested on
    # start_run in tests/unit/test_other_moves.py, and on the sandbox through the CLI)


def test_overview_on_the_real_sandbox_names_the_official_tools_move_and_reads_a_brokers_configs(
    console_on_sandbox, tmp_path
) -> None:
    from tests.integration.helpers import in_flight, make_topic
    from tests.support import official, wait_for, write_plan

    sb = console_on_sandbox
    bs = sb.bootstrap_servers
    make_topic(bs, "om-overview", 1, 1, 3_000, assignment=[[0]])
    plan = write_plan(tmp_path / "theirs.json", [("om-overview", 0, [2])])
    started = official(sb, "--execute", "--reassignment-json-file", str(plan), "--throttle", "20000")
    assert started.returncode == 0, started.stdout + started.stderr
    try:
        wait_for(lambda: in_flight(bs, "om-overview"), timeout=30, what="the official tool's move")
        at = AppTest.from_file(APP, default_timeout=90).run()
        at.switch_page("views/overview.py").run()
        assert not at.exception
        (warning,) = [w.value for w in at.warning if "Another mover" in w.value]
        assert "1 partition (om-overview 1) this console did not start" in warning and "MB left" in warning
        (detail,) = [e for e in at.expander if e.label == "Another mover's 1 partition"]
        assert detail.dataframe[0].value.to_dict("records")[0]["adding"] == "2"
        # a broker's configs were read (Apache Kafka's know no confluent.balancer.*), and no topic points at a balancer
        assert any(
            c.value == "No sign of a known balancer (Cruise Control, Confluent's self-balancing) in the cluster's "
            "topics or broker configs."
            for c in at.caption
        )
    finally:
        cancelled = official(sb, "--cancel", "--reassignment-json-file", str(plan))
        assert cancelled.returncode == 0, cancelled.stdout + cancelled.stderr
        wait_for(lambda: not in_flight(bs, "om-overview"), timeout=60, what="the move cancelled")


def test_live_s_picker_marks_another_movers_partition_and_one_no_longer_in_flight(fake_cluster, sandbox_users) -> None:
    """Issue 38's walk: a chosen partition stays chosen when it leaves the in-flight list (the
    choice is not lost under the operator's hand), marked so, as another mover's partition is."""
    from components import keys
    from tests.app.pages import sign_in

    with fake_cluster.held() as fake:
        fake.copy_rate = 1  # stays in flight until cancelled below
        fake.alter_reassignments({("clickstream", 0): (BrokerId(1),)})  # someone else's script
    at = AppTest.from_file(APP, default_timeout=60).run()
    sign_in(at, "operator")
    at.radio(key=keys.LIVE_CANCEL_SCOPE).set_value("Chosen partitions").run()
    assert not at.exception
    picker = at.multiselect(key=keys.LIVE_CANCEL)
    assert picker.options == ["clickstream-0 · another mover"]
    picker.select("clickstream-0").run()
    with fake_cluster.held() as fake:
        fake.alter_reassignments({("clickstream", 0): None})  # no longer in flight
    at.run()
    assert not at.exception
    picker = at.multiselect(key=keys.LIVE_CANCEL)
    assert picker.options == ["clickstream-0 · no longer in flight"] and picker.value == ["clickstream-0"]
