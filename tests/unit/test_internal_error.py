"""A bug in a page shows an internal-error box with a reference to the log line, never "cluster
unavailable"; a console error that escapes a page shows its message and hint."""

from __future__ import annotations

import logging
import re

import pytest
from streamlit.testing.v1 import AppTest


def _buggy_page() -> None:
    from components.errors import run_page

    class Page:
        def run(self) -> None:
            raise AttributeError("'NoneType' object has no attribute 'partitions'")

    run_page(Page())


def _refused_page() -> None:
    from components.errors import run_page
    from console.core.errors import NotPermitted

    class Page:
        def run(self) -> None:
            raise NotPermitted("The author of a plan cannot approve it.", "Ask someone else with the approver role.")

    run_page(Page())


def _stopping_page() -> None:
    import streamlit as st

    from components.errors import run_page

    class Page:
        def run(self) -> None:
            st.write("before")
            st.stop()

    run_page(Page())


def test_a_bug_in_a_page_is_an_internal_error_with_a_reference(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.ERROR, logger="console.app"):
        at = AppTest.from_function(_buggy_page, default_timeout=30).run()
    assert not at.exception
    shown = at.error[0].value
    found = re.match(r"Internal error \(ref ([0-9A-F]{6})\): AttributeError ", shown)
    assert found, shown
    assert "unavailable" not in shown.lower() and "did not answer" not in shown
    logged = [r for r in caplog.records if r.name == "console.app"]
    assert len(logged) == 1 and found.group(1) in logged[0].getMessage()
    assert logged[0].exc_info is not None and logged[0].exc_info[0] is AttributeError  # the traceback is in the log


def test_a_console_error_that_escapes_a_page_shows_its_message_and_hint(caplog: pytest.LogCaptureFixture) -> None:
    at = AppTest.from_function(_refused_page, default_timeout=30).run()
    assert not at.exception
    assert at.error[0].value == "The author of a plan cannot approve it. Ask someone else with the approver role."
    assert not [r for r in caplog.records if r.name == "console.app"]


def test_streamlits_own_control_flow_passes_through() -> None:
    at = AppTest.from_function(_stopping_page, default_timeout=30).run()
    assert not at.exception and not at.error
    assert at.markdown[0].value == "before"
