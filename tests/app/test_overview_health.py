"""Overview names the partitions behind Kafka 4's health counts (KIP-966): a table per group that has
some (under min ISR but electable, offline with nothing electable, truly under-replicated), and the
partitions with eligible leader replicas or last known ones; a healthy cluster shows none of them."""

from __future__ import annotations

from typing import Any

from streamlit.testing.v1 import AppTest

from console.core.model import BrokerId
from tests.app.pages import APP
from tests.fakes.app import AppCluster


def expanders(at: AppTest) -> dict[str, list[dict[str, Any]]]:
    """Each expander of the page with a table (but the log dirs'): its label → the table's rows."""
    return {
        e.label: e.dataframe[0].value.to_dict("records")
        for e in at.expander
        if e.dataframe and not e.label.startswith("Log dirs")
    }


def overview(fake_cluster: AppCluster) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60).run()
    at.switch_page("views/overview.py").run()
    assert not at.exception
    return at


def test_overview_lists_the_partitions_under_min_isr_offline_and_with_elr(fake_cluster: AppCluster) -> None:
    b = BrokerId
    with fake_cluster.held() as fake:
        fake.min_isr["elr"] = 2
        fake.create_topic("elr", [[0, 1], [1, 2]])
        first, second = fake.parts[("elr", 0)], fake.parts[("elr", 1)]
        first.isr, first.elr = [b(0)], [b(1)]  # 1 left the ISR below min ISR: eligible
        second.isr, second.last_known_elr = [b(1)], [b(2)]  # 2 shut down uncleanly while eligible
        fake.create_topic("dark", [[2]])
        gone = fake.parts[("dark", 0)]
        gone.leader, gone.isr = None, []  # no leader, nothing in sync, no ELR: nothing electable
    at = overview(fake_cluster)
    metrics = {m.label: m.value for m in at.metric}
    assert (metrics["Under min ISR"], metrics["Offline, nothing electable"]) == ("2", "1")

    tables = expanders(at)
    assert set(tables) == {
        "Under min ISR: 2 partitions",
        "Offline, nothing electable: 1 partition",
        "Truly under-replicated: 3 partitions",
        "With eligible leader replicas: 2 partitions",
    }
    assert tables["Under min ISR: 2 partitions"] == [
        {
            "partition": "elr-0",
            "R": "0,1",
            "ISR": "0",
            "ELR": "1",
            "last known ELR": "—",
            "min ISR": "2",
            "leader": "0",
        },
        {
            "partition": "elr-1",
            "R": "1,2",
            "ISR": "1",
            "ELR": "—",
            "last known ELR": "2",
            "min ISR": "2",
            "leader": "1",
        },
    ]
    assert tables["Offline, nothing electable: 1 partition"] == [
        {
            "partition": "dark-0",
            "R": "2",
            "ISR": "—",
            "ELR": "—",
            "last known ELR": "—",
            "min ISR": "1",
            "leader": "none",
        }
    ]
    elr = tables["With eligible leader replicas: 2 partitions"]
    assert [(r["partition"], r["R"], r["ISR"], r["ELR"], r["last known ELR"]) for r in elr] == [
        ("elr-0", "0,1", "0", "1", "—"),
        ("elr-1", "1,2", "1", "—", "2"),
    ]
    assert [r["partition"] for r in tables["Truly under-replicated: 3 partitions"]] == ["dark-0", "elr-0", "elr-1"]


def test_a_healthy_cluster_lists_nothing(fake_cluster: AppCluster) -> None:
    at = overview(fake_cluster)
    metrics = {m.label: m.value for m in at.metric}
    assert (metrics["Under min ISR"], metrics["Offline, nothing electable"]) == ("0", "0")
    assert not expanders(at)
    assert not [c for c in at.caption if "Eligible leader replicas" in c.value]  # the fake says nothing of ELR


def test_overview_marks_the_tiered_topics(fake_cluster: AppCluster) -> None:
    with fake_cluster.held() as fake:
        fake.create_topic("cold", [[0, 1]])
        fake.topic_configs["cold"] = {"remote.storage.enable": "true"}
    at = overview(fake_cluster)
    said = [c.value for c in at.caption if c.value.startswith("Tiered storage")]
    assert said == [
        "Tiered storage: 1 topic (cold) with remote.storage.enable=true. A move copies their local log only (what "
        "DescribeLogDirs reports): the bytes to copy, the waves and the estimate count that, and the segments in "
        "remote storage are not copied."
    ]
