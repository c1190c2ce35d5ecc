"""A plan a person hands a page (an upload, a paste): read within the console's limits, and why it
cannot be used shown one problem a line."""

from __future__ import annotations

import streamlit as st

from components.widgets import plain
from console.core.errors import PlanFormatError
from console.core.model import ClusterState
from console.plans.plan import Plan, parse_plan


def read_plan(data: bytes | str, state: ClusterState) -> Plan:
    """The plan in ``data``: held to the limits every plan is (console/core/limits.py), with no
    more replicas per entry than ``state`` has brokers and no more entries than it has partitions;
    raises :class:`PlanFormatError`."""
    return parse_plan(data, brokers=len(state.brokers), partitions=len(state.partitions))


def show_plan_error(e: PlanFormatError) -> None:
    """Why the plan cannot be used: a list, one problem an item, as plain text (names in a plan
    are not Markdown)."""
    items = [f"- {plain(p, lines=True)}" for p in e.problems]
    if e.more:
        items.append(f"- and {e.more:,} more {'problem' if e.more == 1 else 'problems'}")
    st.error(
        "\n".join(["The plan cannot be used:", "", *items, "", plain(e.hint, lines=True)]), icon=":material/block:"
    )
