"""Review's impact panel: what the plan costs and whom it touches, beside the findings."""

from __future__ import annotations

import streamlit as st

from console.core.format import parse_rate
from console.moves.impact import LEADER_NOTE, PRICING_HINT, Impact
from console.present import charts
from console.present import impact as shown


def typed_throttle(value: object) -> int | None:
    """The throttle typed under Submit… (None: none yet, 0 or not a rate)."""
    try:
        return parse_rate(str(value)) or None if value not in (None, "") else None
    except ValueError:
        return None


def impact_panel(im: Impact, problems: list[str]) -> None:
    """The impact's headline, money (or how to price it), the per-broker disk chart and the zone
    pairs side by side, then brokers, log dirs, leaders and the topics touched."""
    st.subheader("Impact")
    st.info(f"**This plan** {im.headline()}.", icon=":material/payments:")
    for problem in problems:
        st.warning(problem, icon=":material/settings:")
    for line in shown.money_lines(im):
        st.markdown(line)
    if not im.pricing.priced:
        st.caption(PRICING_HINT)
    st.caption(im.steady_text())
    left, right = st.columns(2)
    disk = shown.disk_rows(im)
    with left:
        st.markdown("**Disk per broker**: before, at the peak (adding before removing), after")
        if disk:
            st.altair_chart(charts.disk_before_peak_after(disk), width="stretch")
        else:
            st.write("No broker's disk changes.")
    with right:
        st.markdown("**Copied between zones, once**")
        zones = shown.zone_rows(im)
        if zones:
            st.dataframe(zones, hide_index=True, width="stretch")
        else:
            st.write("Nothing is copied over the network.")
    if (b := im.bottleneck) is not None:
        st.caption(
            im.bottleneck_text(b)
            + ("" if b.seconds is not None else " Type a throttle under Submit… to time each broker's copy.")
        )
    rows = shown.broker_rows(im)
    if rows:
        st.dataframe(rows, hide_index=True, width="stretch")
    dirs = shown.dir_rows(im)
    if dirs:
        st.markdown("**Log dirs**")
        st.dataframe(dirs, hide_index=True, width="stretch")
    st.caption(f"{im.leader_changes:,} partitions change leader. {LEADER_NOTE}")
    topics = shown.topic_rows(im)
    if topics:
        more = im.topics_touched - len(topics)
        st.markdown(f"**Topics touched** ({im.topics_touched:,}; the most produced-to first)")
        st.dataframe(topics, hide_index=True, width="stretch")
        if more > 0:
            st.caption(f"And {more:,} more topics.")
