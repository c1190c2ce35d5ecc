"""What the guardrails hold a run for, where the Live and Runs pages show it: the words
(:mod:`console.present.guardrails`), and what can be done about it there: cancel exactly the
partitions that cannot finish (the cancel dialog, on those), and resume the run (the service checks
the role and audits it)."""

from __future__ import annotations

import streamlit as st

from components import actions, deps, keys, widgets
from console.access.settings import ConnectionSettings
from console.core.errors import ConsoleError
from console.core.format import plural
from console.present.guardrails import HoldNotice
from console.services import runs as run_service


def notice(settings: ConnectionSettings, held: HoldNotice, page: str, link: bool) -> None:
    """``held`` said on ``page`` (its widget keys' prefix), with the run named and a link to its Runs
    page when ``link``; under it "Cancel these…" for partitions in flight onto a gone destination,
    and "Resume" for a paused run (both shown to everyone, and off with the reason for who may not)."""
    st.warning(widgets.plain(held.line if link else held.words), icon=":material/shield:")
    if not (link or held.stranded or held.resumable):
        return
    me = widgets.identity()
    place = iter(st.columns([1, 1, 1, 3]))  # what is shown, side by side from the left
    if link:
        next(place).page_link("views/runs.py", label=f"Open run {held.run_id}", query_params={"run": str(held.run_id)})
    if held.stranded and next(place).button(
        "Cancel these…",
        icon=":material/cancel:",
        key=f"{page}.held_cancel.{held.run_id}",
        disabled=not me.can("cancel"),
        help=f"Cancel the {plural(len(held.stranded), 'partition')} in flight onto the broker that is gone: "
        "back to their original replicas. The dialog shows exactly what is sent."
        if me.can("cancel")
        else widgets.refusal(me, "cancel"),
    ):
        actions.freeze_cancel(settings, list(held.stranded), False)
        st.rerun()  # the whole page: its top opens the dialog on exactly these partitions
    if held.resumable and next(place).button(
        "Resume",
        icon=":material/play_arrow:",
        key=f"{page}.held_resume.{held.run_id}",
        disabled=not me.can("resume"),
        help="Send the next wave: the guardrails do not pause the run again for what holds it now, only for "
        "something new."
        if me.can("resume")
        else widgets.refusal(me, "resume"),
    ):
        try:
            run_service.resume(deps.store(), me, held.run_id)
        except ConsoleError as e:
            st.error(f"{e.message} {e.hint}")
            return
        st.session_state[keys.LAST_ACTION] = (
            f"Run {held.run_id} resumed by {me.name}: its next wave is sent at its worker's next step."
        )
        st.rerun()
